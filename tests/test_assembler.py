"""The Level assembler: optimal placement along a curve, variety, refusals, bundles; `assemble`
reads YAML as the validator does and writes only what it accepts."""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.atomic import WriteRefused
from pipeline.formats.curves import CurveError, Target, at, builtin_names
from pipeline.formats.puzzle import Puzzle
from pipeline.jobs.assembler import AssemblyError, assemble, assign, digit_layout, slot_cost
from pipeline.jobs.bundle import bundle_document, bundle_text, write_bundle
from pipeline.jobs.curve_specs import targets, tier_needs
from pipeline.rating.tiers import TIER_NAMES, tier_for
from pipeline.schemas import schema_hint
from pipeline.validator import validate_paths
from tests.helpers import one_line_error, run

VALID = Path(__file__).parent / "fixtures" / "validator" / "valid"
BUNDLE = (VALID / "bundle.yaml").read_text(encoding="utf-8")

# Boards by layout: each list holds boards with one value-class pattern.
LAYOUT_A = ["19", "91", "11", "99"]
LAYOUT_B = ["28", "82", "22", "88"]
LAYOUT_C = ["37", "73", "33", "77"]


def make(board: str, score: float, adds: int = 0) -> Puzzle:
    return Puzzle(
        board=board,
        adds=adds,
        solution=("0,0-0,1",),
        difficulty={"tier": tier_for(score), "score": score},
    )


def spread(i: int) -> float:
    """Scores spread over easy, medium and hard (in turn), whatever the tier thresholds are."""
    return at(("easy", "medium", "hard")[i % 3], 0.1 + 0.2 * (i // 3 % 5))


def varied(i: int) -> str:
    """Boards whose layouts vary within each tier of `spread`."""
    return (LAYOUT_A, LAYOUT_B, LAYOUT_C)[i // 3 % 3][i % 4]


def brute_force(
    slots: list[Target], pool: list[Puzzle], least: Mapping[int, int] | None = None
) -> int | None:
    """The least total cost over every valid placement, or None when there is none; `least`:
    Level -> minimum of distinct digit layouts in it."""
    best = None
    for chosen in itertools.permutations(pool, len(slots)):
        if any(p.tier != t.tier for p, t in zip(chosen, slots)):
            continue
        layouts = [digit_layout(p.board) for p in chosen]
        if any(a == b for a, b in itertools.pairwise(layouts)):
            continue
        if any(
            len({layouts[s] for s, t in enumerate(slots) if t.level == lv}) < n
            for lv, n in (least or {}).items()
        ):
            continue
        cost = sum(slot_cost(p.difficulty["score"], t.score) for p, t in zip(chosen, slots))
        best = cost if best is None else min(best, cost)
    return best


def placement_cost(slots: list[Target], chosen: list[Puzzle]) -> int:
    return sum(slot_cost(p.difficulty["score"], t.score) for p, t in zip(chosen, slots))


# --- digit layout -------------------------------------------------------------------------


def test_layout_is_the_value_class_pattern() -> None:
    assert digit_layout("19.28.5.6/5") == "11.22.5.4/5"
    assert digit_layout("123456789/46") == "123454321/44"
    assert digit_layout("19") == digit_layout("91") != digit_layout("28")


# --- optimal placement --------------------------------------------------------------------


def test_greedy_is_not_optimal_but_the_assembler_is() -> None:
    # Greedy (each slot in turn takes its nearest) would give slot 0 the 20 (cost 0) and leave
    # slot 1 the 10 (cost 12); the optimum swaps them: 10 at slot 0 (10) + 20 at slot 1 (2) = 12.
    slots = [Target(0, 0, 20.0), Target(0, 1, 22.0)]
    pool = [make("19", 20.0), make("28", 10.0)]
    cost, chosen, _ = assign(slots, pool)
    assert cost == brute_force(slots, pool) == 1200
    assert [p.difficulty["score"] for p in chosen] == [10.0, 20.0]


def test_variety_forbids_the_same_layout_twice_in_a_row() -> None:
    slots = [Target(0, i, s) for i, s in enumerate([10.0, 12.0, 14.0])]
    # The cheapest placement would put the two layout-A puzzles side by side.
    pool = [make("19", 10.0), make("91", 12.0), make("28", 14.0), make("37", 24.0)]
    cost, chosen, nodes = assign(slots, pool)
    layouts = [digit_layout(p.board) for p in chosen]
    assert all(a != b for a, b in itertools.pairwise(layouts))
    assert cost == brute_force(slots, pool)
    assert nodes > 1  # the root matching had a conflict to branch on


def test_variety_applies_across_the_level_boundary() -> None:
    # Easy: layouts A and C; hard: A and B. Only the order A-B-C-A works, since the last
    # Stage of Level 1 and the first of Level 2 count as neighbours.
    easy, hard = at("easy", 0.4), at("hard", 0.6)
    pool = [make("19", easy), make("91", hard, adds=1), make("28", hard), make("37", easy)]
    result = assemble(pool, levels=2, stages=2, curve="ramp")
    layouts = [digit_layout(p.puzzle.board) for p in result.placements]
    assert layouts == ["11", "22", "33", "11"]
    slots = [t for row in targets("ramp", 2, 2) for t in row]
    assert result.cost == brute_force(slots, pool)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([5.0, 15.0, 20.0, 30.0, 45.0, 55.0]), min_size=2, max_size=4),
    st.lists(
        st.tuples(st.sampled_from([0.0, 10.0, 20.0, 24.0, 26.0, 40.0, 60.0]), st.integers(0, 2)),
        min_size=2,
        max_size=6,
    ),
)
def test_assignment_matches_brute_force(
    target_scores: list[float], specs: list[tuple[float, int]]
) -> None:
    slots = [Target(0, i, s) for i, s in enumerate(target_scores)]
    layout_sets = [LAYOUT_A, LAYOUT_B, LAYOUT_C]
    pool = {}
    for n, (score, layout) in enumerate(specs):
        p = make(layout_sets[layout][n % 4], score, adds=n)
        pool[p.id] = p
    pool_list = list(pool.values())
    best = brute_force(slots, pool_list)
    if best is None:
        with pytest.raises(AssemblyError):
            assign(slots, pool_list)
        return
    cost, chosen, _ = assign(slots, pool_list)
    assert cost == best == placement_cost(slots, chosen)
    assert len({p.id for p in chosen}) == len(chosen)
    assert all(p.tier == t.tier for p, t in zip(chosen, slots))
    layouts = [digit_layout(p.board) for p in chosen]
    assert all(a != b for a, b in itertools.pairwise(layouts))


def test_placement_does_not_depend_on_input_order() -> None:
    pool = [make(varied(i), spread(i), adds=i) for i in range(12)]
    first = assemble(pool, levels=2, stages=3, curve="ramp")
    second = assemble(list(reversed(pool)), levels=2, stages=3, curve="ramp")
    assert [p.puzzle.id for p in first.placements] == [p.puzzle.id for p in second.placements]


# --- refusals -----------------------------------------------------------------------------


def test_refuses_a_tier_short_of_puzzles_and_says_what_is_missing() -> None:
    pool = [
        make("19", at("easy", 0.3)),
        make("28", at("easy", 0.4)),
        make("37", at("medium", 0.3)),
        make("46", at("medium", 0.5)),
        make("19", at("hard", 0.5), adds=2),
    ]
    with pytest.raises(AssemblyError) as info:
        assemble(pool, levels=2, stages=3, curve="ramp")
    message = str(info.value)
    assert "curve ramp needs" in message and "2 levels x 3 stages" in message
    need = tier_needs("ramp", 2, 3)
    assert f"needs {need['hard']} hard puzzles for 2 levels x 3 stages; have 1 (" in message


def test_refuses_when_every_puzzle_shares_one_layout() -> None:
    pool = [make(board, 10.0 + n, adds=n) for n, board in enumerate(LAYOUT_A)]
    with pytest.raises(AssemblyError, match="same digit layout"):
        assign([Target(0, 0, 10.0), Target(0, 1, 12.0)], pool)


def test_refuses_a_puzzle_given_twice() -> None:
    with pytest.raises(AssemblyError, match="given twice"):
        assemble([make("19", 10.0), make("19", 10.0)], levels=1, stages=1, curve="flat")


def test_refuses_a_puzzle_without_a_score() -> None:
    bad = Puzzle(board="19", adds=0, solution=(), difficulty={"tier": "easy"})
    with pytest.raises(AssemblyError, match="no difficulty score"):
        assemble([bad], levels=1, stages=1, curve="flat")


def test_refuses_an_unknown_curve_and_an_empty_shape() -> None:
    with pytest.raises(CurveError, match="unknown curve"):
        targets("zigzag", 1, 1)
    with pytest.raises(CurveError):
        targets("ramp", 0, 3)


# --- curves -------------------------------------------------------------------------------


@pytest.mark.parametrize("curve", builtin_names())
def test_curve_targets_are_scores_with_their_tiers(curve: str) -> None:
    for row in targets(curve, 4, 6):
        for t in row:
            assert 0.0 <= t.score <= 100.0 and t.tier in TIER_NAMES and t.tier == tier_for(t.score)


def test_ramp_rises_ends_hard_and_each_level_starts_a_little_higher() -> None:
    rows = targets("ramp", 12, 5)
    for row in rows:
        scores = [t.score for t in row]
        assert scores == sorted(scores) and row[0].tier == "easy" and row[-1].tier == "hard"
    starts = [row[0].score for row in rows]
    ends = [row[-1].score for row in rows]
    assert all(a < b for a, b in itertools.pairwise(starts))  # never a plateau, however many Levels
    assert all(a < b for a, b in itertools.pairwise(ends))


def test_sawtooth_dips_mid_level() -> None:
    scores = [t.score for t in targets("sawtooth", 1, 6)[0]]
    peak = max(range(3), key=lambda i: scores[i])
    assert scores[peak + 1] < scores[peak] and scores[-1] == max(scores)


# --- bundles ------------------------------------------------------------------------------


def small_assembly():
    pool = [make(varied(i), spread(i), adds=i) for i in range(9)]
    return assemble(pool, levels=2, stages=2, curve="ramp")


def test_bundle_document_has_the_agreed_shape_and_key_order() -> None:
    doc = bundle_document(small_assembly(), bundle_id="b1", seed=7, params={"curve": "ramp"})
    assert list(doc) == ["schema_version", "kind", "id", "ruleset", "generator", "levels"]
    assert doc["kind"] == "bundle" and doc["generator"]["seed"] == 7
    assert [lv["level"] for lv in doc["levels"]] == [1, 2]
    stage = doc["levels"][0]["stages"][0]
    assert list(stage) == ["stage", "target_score", "puzzle"] and stage["stage"] == 1
    assert list(stage["puzzle"]) == ["id", "ruleset", "board", "adds", "solution", "difficulty"]
    ids = [s["puzzle"]["id"] for lv in doc["levels"] for s in lv["stages"]]
    assert len(ids) == len(set(ids)) == 4


def test_bundle_text_is_byte_identical_for_the_same_inputs(tmp_path: Path) -> None:
    doc1 = bundle_document(small_assembly(), bundle_id="b1", seed=7, params={"curve": "ramp"})
    doc2 = bundle_document(small_assembly(), bundle_id="b1", seed=7, params={"curve": "ramp"})
    write_bundle(tmp_path / "a.yaml", doc1)
    write_bundle(tmp_path / "b.yaml", doc2)
    assert (tmp_path / "a.yaml").read_bytes() == (tmp_path / "b.yaml").read_bytes()
    assert yaml.safe_load((tmp_path / "a.yaml").read_text()) == doc1


def test_schema_hint_is_relative_inside_the_repo_and_absent_outside(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parent.parent
    if (repo / "schemas" / "bundle.schema.json").exists():
        assert (
            schema_hint("bundle", repo / "generated" / "2026-01-01")
            == "../../schemas/bundle.schema.json"
        )
        assert schema_hint("puzzle", repo / "generated") == "../schemas/puzzle.schema.json"
    assert schema_hint("bundle", tmp_path) is None


def test_a_failed_write_leaves_the_old_bundle_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "bundle.yaml"
    doc = bundle_document(small_assembly(), bundle_id="b1", seed=7, params={})
    write_bundle(target, doc)
    before = target.read_bytes()

    def broken_fsync(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(WriteRefused, match="disk full"):
        write_bundle(target, bundle_document(small_assembly(), bundle_id="b2", seed=8, params={}))
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["bundle.yaml"]  # no temp file left behind
    assert "id: b1" in bundle_text(doc)


def test_validator_and_assemble_read_yaml_the_same_way(tmp_path: Path) -> None:
    """A tab at the end of the first line: libyaml takes it, pure PyYAML does not. Whatever the
    validator decides, the assembler (same loader) must not crash on a file it accepted."""
    lines = BUNDLE.split("\n")
    lines[1] += "\t"
    path = tmp_path / "tab.yaml"
    path.write_text("\n".join(lines))
    checked = run("validate", str(path))
    result = run(
        "assemble",
        str(path),
        "--levels",
        "1",
        "--stages",
        "1",
        "--curve",
        "flat",
        "--out",
        str(tmp_path / "b.yaml"),
    )
    if checked.exit_code == 0:
        assert "validation problem" not in result.output
    else:
        assert result.exit_code == 1 and "validation problem" in result.output


@pytest.mark.parametrize("bad", ["../x", "", "a b", "x\ny", "a" * 200, "-x", "é"])
def test_assemble_refuses_bad_bundle_ids_up_front(tmp_path: Path, bad: str) -> None:
    out = tmp_path / "b.yaml"
    result = run(
        "assemble",
        str(VALID / "bundle.yaml"),
        "--levels",
        "1",
        "--stages",
        "1",
        "--curve",
        "flat",
        "--out",
        str(out),
        "--id",
        bad,
    )
    assert result.exit_code == 2
    assert "--id" in one_line_error(result)
    assert not out.exists() and not (tmp_path / "x").exists()


def test_assemble_writes_only_what_the_validator_accepts(tmp_path: Path) -> None:
    out = tmp_path / "b.yaml"
    result = run(
        "assemble",
        str(VALID / "bundle.yaml"),
        "--levels",
        "1",
        "--stages",
        "1",
        "--curve",
        "flat",
        "--out",
        str(out),
        "--id",
        "good-id.1",
    )
    assert result.exit_code == 0, result.output
    assert validate_paths([out]).ok


def test_assemble_json_is_one_summary_object(night: Path, tmp_path: Path) -> None:
    import json

    out = tmp_path / "b.yaml"
    args = [str(night / "pool"), str(night / "bundle.yaml"), "--levels", "1", "--stages", "2"]
    args += ["--curve", "flat"]
    result = run("assemble", *args, "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    doc = yaml.safe_load(out.read_text())
    assert data["out"] == str(out) and data["id"] == doc["id"] and data["levels"] == 1
    assert [p["id"] for p in data["placed"]] == [
        s["puzzle"]["id"] for s in doc["levels"][0]["stages"]
    ]
    assert [p["stage"] for p in data["placed"]] == ["L1.S1", "L1.S2"]
    said = run("assemble", *args, "--out", str(tmp_path / "c.yaml")).stderr
    assert f"total deviation {data['deviation']:.2f} points" in said
