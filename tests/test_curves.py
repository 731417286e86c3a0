"""Curves as designers' data: the curve file format, its validation, its expansion, and the
assembler filling a curve with a boss Stage and per-Level constraints optimally; curves files
capped, read once, never mistaken for puzzles, and naming each other in a cycle refused."""

from __future__ import annotations

import itertools
import os
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.formats.curves import (
    BUILTIN_FILE,
    CURVE_METAVAR,
    CurveError,
    Target,
    at,
    builtin_curves,
    builtin_names,
    parse_curves,
    stretched,
)
from pipeline.formats.puzzle import Puzzle
from pipeline.jobs.assembler import AssemblyError, assemble, assign, digit_layout
from pipeline.jobs.curve_specs import load_curve, targets
from pipeline.limits import MAX_STAGES
from pipeline.rating.tiers import tier_for
from pipeline.validator import validate_paths
from tests.helpers import one_line_refusal, run
from tests.test_assembler import brute_force, make

# --- the built-in curves are files, expanded to exactly the targets of the old code ---------


def _legacy_ends(level: int) -> tuple[float, float]:
    """The ramp's ends as the code computed them before curves were files (kept as the reference)."""
    keep = (1.0 - 0.20) ** level
    return at("easy", 0.90 - (0.90 - 0.40) * keep), at("hard", 0.95 - (0.95 - 0.60) * keep)


def _legacy_fraction(stage: int, stages: int) -> float:
    return 1.0 if stages == 1 else stage / (stages - 1)


def _legacy_ramp(level: int, stage: int, stages: int) -> float:
    start, end = _legacy_ends(level)
    return start + (end - start) * _legacy_fraction(stage, stages)


def _legacy_sawtooth(level: int, stage: int, stages: int) -> float:
    start, end = _legacy_ends(level)
    if stages < 4:
        return _legacy_ramp(level, stage, stages)
    first = (stages + 1) // 2
    if stage < first:
        return start + (end - start) * 0.6 * _legacy_fraction(stage, first)
    low = start + (end - start) * 0.3
    return low + (end - low) * _legacy_fraction(stage - first, stages - first)


LEGACY = {
    "ramp": _legacy_ramp,
    "sawtooth": _legacy_sawtooth,
    "flat": lambda level, stage, stages: at("medium", 0.5),
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_each_builtin_curve_expands_from_its_file_to_exactly_the_old_targets(name: str) -> None:
    fn = LEGACY[name]
    for levels, stages in itertools.product((1, 2, 10, 30), range(1, 13)):
        expected = [[round(fn(lv, s, stages), 2) for s in range(stages)] for lv in range(levels)]
        assert [[t.score for t in row] for row in targets(name, levels, stages)] == expected, (
            levels,
            stages,
        )
    # a night that continues at Level 11 gets exactly what Levels 11.. of one long bundle get
    rows = targets(name, 5, 6, first_level=11)
    assert [[t.score for t in row] for row in rows] == [
        [round(fn(lv, s, 6), 2) for s in range(6)] for lv in range(10, 15)
    ]
    assert [row[0].level for row in rows] == list(range(10, 15))


def test_the_shipped_curve_file_validates_and_names_the_builtins() -> None:
    report = validate_paths([BUILTIN_FILE])
    assert report.ok, report.problems
    assert {"ramp", "sawtooth", "flat"} <= set(builtin_names())
    assert builtin_curves()["ramp"].shape is not None
    assert "|".join([*builtin_names(), "FILE[:NAME]"]) == CURVE_METAVAR  # what --help shows


@pytest.mark.parametrize("name", sorted(builtin_names()))
def test_a_builtin_curve_serves_any_level_shape(name: str) -> None:
    """A built-in curve gives every number of Stages per Level up to the limit, for the first
    Levels (campaign's written tutorial Level among them) and later ones, within its own
    constraints; its written Levels keep their first and last targets."""
    curve = builtin_curves()[name]
    for stages, first in itertools.product(range(1, MAX_STAGES + 1), (1, 2, 3, 30)):
        rows = curve.targets(2, stages, first)
        assert [len(row) for row in rows] == [stages, stages]
        for row in rows:
            assert not curve.level_constraints(row[0].level, stages).problems([t.tier for t in row])
    for level, written in enumerate(curve.levels):
        scores = [round(p.value, 2) for p in written.stages]
        for stages in range(2, 40):
            row = [t.score for t in curve.targets(1, stages, level + 1)[0]]
            assert (row[0], row[-1]) == (scores[0], scores[-1]), stages
            assert Counter(t.tier for t in curve.targets(1, stages, level + 1)[0])[
                tier_for(scores[-1])
            ] <= max(1, Counter(tier_for(x) for x in scores)[tier_for(scores[-1])])


def test_stretching_a_written_level_reads_the_line_and_keeps_a_tier_change_in_place() -> None:
    easy_to_medium = [at("easy", 0.2), at("easy", 0.6), at("medium", 0.2)]
    assert stretched(easy_to_medium, 3) == easy_to_medium
    assert stretched(easy_to_medium, 1) == [easy_to_medium[-1]]
    five = stretched(easy_to_medium, 5)
    # inside easy the line between the written targets; across the change the earlier target
    assert five[:3] == [
        easy_to_medium[0],
        (easy_to_medium[0] + easy_to_medium[1]) / 2,
        easy_to_medium[1],
    ]
    assert five[3:] == [easy_to_medium[1], easy_to_medium[2]]
    assert stretched(easy_to_medium, 5) == five  # deterministic


@pytest.mark.slow  # a night generated from scratch, rated by version 4
def test_the_default_night_takes_any_stages_and_levels(tmp_path: Path) -> None:
    """`nightly --levels 2 --stages 4` with the default curve (campaign, whose first Level is
    written with 6 Stages) makes the night instead of refusing it in setup; the tutorial Level
    keeps its shape: easy Stages rising to one medium."""
    from pipeline.jobs.nightly import NIGHT_CURVE

    out = tmp_path / "o"
    args = ["nightly", "--date", "2026-01-15", "--levels", "2", "--stages", "4"]
    result = run(*args, "--out", str(out), "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert f"2 levels x 4 stages, curve {NIGHT_CURVE}" in result.output
    doc = yaml.safe_load((out / "2026-01-15" / "bundle.yaml").read_text(encoding="utf-8"))
    assert [len(level["stages"]) for level in doc["levels"]] == [4, 4]
    tiers = [s["puzzle"]["difficulty"]["tier"] for s in doc["levels"][0]["stages"]]
    assert tiers == ["easy", "easy", "easy", "medium"]


# --- the format -----------------------------------------------------------------------------


def curve_doc(*curves: dict, job: dict | None = None) -> dict:
    doc: dict = {"schema_version": 1, "kind": "curves", "curves": list(curves)}
    if job is not None:
        doc["job"] = job
    return doc


def test_explicit_levels_take_scores_tiers_and_tier_positions_then_the_shape_continues() -> None:
    curve = parse_curves(
        curve_doc(
            {
                "name": "tutorial",
                "levels": [
                    [10, "easy", {"tier": "medium", "at": 0.25}],
                    {"stages": [{"score": 20}, "medium", "hard"]},
                ],
                "shape": {"start": "medium", "finish": "hard"},
            }
        )
    )["tutorial"]
    rows = [[t.score for t in row] for row in curve.targets(3, 3)]
    assert rows[0] == [10.0, round(at("easy", 0.5), 2), round(at("medium", 0.25), 2)]
    assert rows[1] == [20.0, round(at("medium", 0.5), 2), round(at("hard", 0.5), 2)]
    assert rows[2] == [
        round(at("medium", 0.5), 2),
        round((at("medium", 0.5) + at("hard", 0.5)) / 2, 2),
        round(at("hard", 0.5), 2),
    ]


def test_a_curve_refuses_what_it_cannot_give() -> None:
    only = parse_curves(curve_doc({"name": "short", "levels": [["easy", "hard"]]}))["short"]
    with pytest.raises(CurveError, match="Level 2 was asked for"):
        only.targets(2, 2)
    with pytest.raises(CurveError, match="Level 1 is written with 2 stage") as refused:
        only.targets(1, 3)
    # a designer's written Level keeps its shape, and the refusal says so and what to do
    assert "keep their shape" in str(refused.value) and "only the built-in curves stretch" in str(
        refused.value
    )
    boss = parse_curves(
        curve_doc(
            {
                "name": "b",
                "shape": {
                    "start": "easy",
                    "finish": "hard",
                    "boss": {"stage": 5, "tier": "expert"},
                },
            }
        )
    )["b"]
    with pytest.raises(CurveError, match="boss stage 5 does not exist"):
        boss.targets(1, 4)
    strict = parse_curves(
        curve_doc(
            {
                "name": "s",
                "shape": {"start": "easy", "finish": "hard"},
                "constraints": {"at_least": {"expert": 1}},
            }
        )
    )["s"]
    with pytest.raises(CurveError, match="Level 1's targets give 0 expert stage"):
        strict.targets(1, 3)
    with pytest.raises(CurveError, match="unknown curve"):
        load_curve("zigzag")


def test_a_boss_stage_and_a_rise_across_levels() -> None:
    curve = parse_curves(
        curve_doc(
            {
                "name": "boss",
                "shape": {
                    "start": {"tier": "easy", "at": 0.2},
                    "finish": {"tier": "hard", "at": 0.5},
                    "rise": {
                        "start": {"tier": "medium", "at": 0.5},
                        "finish": {"tier": "expert", "at": 0.9},
                        "step": 0.1,
                    },
                    "boss": {"stage": -1, "tier": "expert", "at": 0.5, "from_level": 3},
                },
            }
        )
    )["boss"]
    rows = curve.targets(8, 5)
    assert [row[-1].tier for row in rows[:2]] == ["hard", "hard"]
    assert all(row[-1].score == round(at("expert", 0.5), 2) for row in rows[2:])
    for a, b in itertools.pairwise(
        rows
    ):  # every Stage's target rises (or holds) from Level to Level
        assert all(x.score <= y.score for x, y in zip(a, b))
    assert (
        curve.shape is not None and tier_for(curve.shape.ends(20)[1]) == "expert"
    )  # the finish climbs into expert


# --- validation: line and column --------------------------------------------------------------

BAD_CURVES = """\
schema_version: 1
kind: curves
curves:
- name: weekly
  shape:
    start: {tier: easy, at: 1.5}
    finish: hardest
    dips:
    - {at: 0.6, peak: 0.5, to: 0.7}
- name: weekly
  levels:
  - [easy, 101]
job: {curve: nowhere}
"""


def test_validate_refuses_a_bad_curve_file_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "curves.yaml"
    path.write_text(BAD_CURVES)
    found = {(p.line, p.column, p.code) for p in validate_paths([path]).problems}
    assert (6, 29, "NM208") in found  # at: 1.5 is out of range
    assert (12, 12, "NM208") in found  # a score of 101
    result = run(*["validate", str(path)])
    assert result.exit_code != 0
    assert f"{path}:6:29" in result.output and "Traceback" not in result.output


def test_validate_reports_what_the_schema_cannot_say_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "curves.yaml"
    path.write_text(BAD_CURVES.replace("at: 1.5", "at: 0.5").replace("101", "hard"))
    problems = validate_paths([path]).problems
    by_line = {(p.line, p.column): p.message for p in problems}
    assert "unknown tier 'hardest'" in by_line[(7, 13)]
    assert "defined twice" in by_line[(10, 9)]
    assert "neither in this file nor built in" in by_line[(13, 14)]
    assert {p.code for p in problems} == {"NM320"}
    path.write_text(
        BAD_CURVES.replace("at: 1.5", "at: 0.5")
        .replace("finish: hardest", "finish: hard")
        .replace("- name: weekly\n  levels", "- name: daily\n  levels")
        .replace("101", "hard")
        .replace("nowhere", "daily")
    )
    by_line = {(p.line, p.column): p.message for p in validate_paths([path]).problems}
    assert list(by_line) == [(9, 32)] and "must be below `peak`" in by_line[(9, 32)]


def test_validate_checks_that_the_job_can_be_made(tmp_path: Path) -> None:
    path = tmp_path / "curves.yaml"
    path.write_text(
        yaml.safe_dump(
            curve_doc(
                {
                    "name": "boss",
                    "shape": {
                        "start": "easy",
                        "finish": "hard",
                        "boss": {"stage": 7, "tier": "expert"},
                    },
                },
                job={"curve": "boss", "levels": 2, "stages": 6},
            ),
            sort_keys=False,
        )
    )
    problems = validate_paths([path]).problems
    assert [(p.code, p.path) for p in problems] == [("NM320", "$.job")]
    assert (
        "boss stage 7 does not exist in a Level of 6 stages" in problems[0].message
        and problems[0].line
    )


def test_a_job_file_needs_no_curves_of_its_own_but_needs_one_of_the_two(tmp_path: Path) -> None:
    """A game that fixes its Stage settings writes only `job:` (a built-in curve at 35 cells, 5
    adds); a file with neither `curves:` nor `job:` is one missing field, named as such."""
    from pipeline.jobs.nightly.options import read_job

    job = tmp_path / "job.yaml"
    job.write_text(
        "schema_version: 1\nkind: curves\n"
        "job: {curve: campaign, levels: 2, stages: 4, cells: 35, adds: 5}\n"
    )
    assert validate_paths([job]).problems == []
    assert read_job(job) == {"curve": "campaign", "levels": 2, "stages": 4, "cells": 35, "adds": 5}
    empty = tmp_path / "empty.yaml"
    empty.write_text("schema_version: 1\nkind: curves\n")
    problems = validate_paths([empty]).problems
    assert [(p.code, p.line, p.path) for p in problems] == [("NM203", 1, "$.curves")]
    assert problems[0].message == "missing required field: one of 'curves', 'job'"


def test_assemble_names_the_bad_curve_file_line(tmp_path: Path) -> None:
    path = tmp_path / "curves.yaml"
    path.write_text(BAD_CURVES)
    result = run(
        *[
            "assemble",
            str(tmp_path),
            "--levels",
            "1",
            "--stages",
            "1",
            "--curve",
            f"{path}:weekly",
            "--out",
            str(tmp_path / "b.yaml"),
        ]
    )
    assert (
        result.exit_code == 1
        and f"{path}:6:29" in result.output
        and "Traceback" not in result.output
    )


# --- the assembler on a curve with a boss and per-Level constraints ---------------------------

LAYOUTS = [
    ["19", "91", "11", "99"],
    ["28", "82", "22", "88"],
    ["37", "73", "33", "77"],
    ["46", "64", "44", "66"],
]


def boss_curve(layouts: int) -> dict:
    return curve_doc(
        {
            "name": "boss",
            "shape": {
                "start": {"tier": "easy", "at": 0.3},
                "finish": {"tier": "easy", "at": 0.7},
                "boss": {"stage": -1, "tier": "hard", "at": 0.5},
            },
            "constraints": {"layouts": layouts, "at_least": {"hard": 1}, "at_most": {"hard": 1}},
        }
    )


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 3),
    st.lists(
        st.tuples(st.sampled_from([3.0, 9.0, 15.0, 21.0, 27.0]), st.integers(0, 3)),
        min_size=3,
        max_size=5,
    ),
    st.lists(
        st.tuples(st.sampled_from([0.1, 0.5, 0.9]), st.integers(0, 3)), min_size=1, max_size=2
    ),
)
def test_a_boss_curve_with_layout_constraints_is_filled_optimally(
    least: int, easy: list[tuple[float, int]], hard: list[tuple[float, int]]
) -> None:
    curve = parse_curves(boss_curve(least))["boss"]
    pool: dict[str, Puzzle] = {}
    for n, (score, layout) in enumerate(easy):
        p = make(LAYOUTS[layout][n % 4], score, adds=n)
        pool[p.id] = p
    for n, (where, layout) in enumerate(hard):
        p = make(LAYOUTS[layout][n % 4], at("hard", where), adds=10 + n)
        pool[p.id] = p
    stages = 3
    rows = curve.targets(1, stages)
    slots = [t for row in rows for t in row]
    assert slots[-1].tier == "hard" and all(t.tier == "easy" for t in slots[:-1])
    best = brute_force(slots, list(pool.values()), {0: least})
    if best is None:
        with pytest.raises(AssemblyError):
            assemble(pool.values(), levels=1, stages=stages, curve=curve)
        return
    result = assemble(pool.values(), levels=1, stages=stages, curve=curve)
    assert result.cost == best
    layouts = [digit_layout(p.puzzle.board) for p in result.placements]
    assert len(set(layouts)) >= least


def test_layout_minimum_changes_the_optimum() -> None:
    # Without the minimum the cheapest placement is A B A; with 3 distinct layouts it must use C.
    slots = [Target(0, 0, 10.0), Target(0, 1, 12.0), Target(0, 2, 14.0)]
    pool = [make("19", 10.0), make("28", 12.0), make("91", 14.0), make("37", 20.0)]
    free, _, _ = assign(slots, pool)
    cost, chosen, nodes = assign(slots, pool, min_layouts={0: 3})
    assert free == 0 and cost == brute_force(slots, pool, {0: 3}) == 600 and nodes > 1
    assert len({digit_layout(p.board) for p in chosen}) == 3


def test_an_unfillable_curve_is_refused_naming_level_slots_and_tier() -> None:
    curve = parse_curves(boss_curve(1))["boss"]
    pool = [make(LAYOUTS[i % 4][i // 4], 5.0 + i, adds=i) for i in range(8)] + [
        make("46", at("hard", 0.5), adds=20)
    ]
    with pytest.raises(AssemblyError) as info:
        assemble(pool, levels=3, stages=3, curve=curve, first_level=4)
    message = str(info.value)
    assert "needs 3 hard puzzles" in message and "have 1" in message
    assert "short: Level 5 stage 3, Level 6 stage 3 (hard)" in message
    with pytest.raises(AssemblyError, match="Level 1 needs 4 distinct digit layouts"):
        assemble(
            pool[:2] + pool[4:6] + pool[-1:],
            levels=1,
            stages=5,
            curve=parse_curves(
                curve_doc(
                    {
                        "name": "v",
                        "shape": {
                            "start": "easy",
                            "finish": "easy",
                            "boss": {"stage": 5, "tier": "hard"},
                        },
                        "constraints": {"layouts": 4},
                    }
                )
            )["v"],
        )


def test_assemble_cli_takes_a_curve_file_and_records_it(tmp_path: Path) -> None:
    puzzles = tmp_path / "puzzles"
    puzzles.mkdir()
    from pipeline.formats.puzzle import dump_yaml
    from pipeline.generation.generator import GenerateParams, generate

    made = generate(4, GenerateParams(cells=14, adds=2, seed=5, playouts=8), jobs=1).puzzles
    for p in made:
        (puzzles / f"{p.id}.yaml").write_text(dump_yaml(p.to_document()))
    tiers = [p.tier for p in made]
    curves = tmp_path / "curves.yaml"
    curves.write_text(
        yaml.safe_dump(
            curve_doc(
                {
                    "name": "mine",
                    "levels": [
                        [{"tier": t, "at": 0.5} for t in tiers[:2]],
                        [{"tier": t, "at": 0.5} for t in tiers[2:4]],
                    ],
                },
                {"name": "other", "shape": {"start": "easy", "finish": "easy"}},
            ),
            sort_keys=False,
        )
    )
    out = tmp_path / "bundle.yaml"
    result = run(
        *[
            "assemble",
            str(puzzles),
            "--levels",
            "1",
            "--stages",
            "2",
            "--first-level",
            "2",
            "--curve",
            f"{curves}:mine",
            "--out",
            str(out),
        ]
    )
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(out.read_text())
    assert doc["first_level"] == 2 and [lv["level"] for lv in doc["levels"]] == [2]
    assert doc["generator"]["params"]["curve"] == f"{curves}:mine"
    assert doc["generator"]["params"]["curve_definition"]["name"] == "mine"
    assert validate_paths([out]).ok
    result = run(
        *[
            "assemble",
            str(puzzles),
            "--levels",
            "1",
            "--stages",
            "2",
            "--curve",
            str(curves),
            "--out",
            str(out),
        ]
    )
    assert result.exit_code == 1 and "name one as" in result.output


def test_bundles_number_levels_from_first_level(tmp_path: Path) -> None:
    from pipeline.jobs.bundle import bundle_document, write_bundle

    pool = [make("19", at("easy", 0.4)), make("28", at("hard", 0.6))]
    doc = bundle_document(assemble(pool, levels=1, stages=2), bundle_id="b", seed=1, params={})
    assert "first_level" not in doc and doc["levels"][0]["level"] == 1
    later = assemble(pool, levels=1, stages=2, first_level=7)
    doc = bundle_document(later, bundle_id="b", seed=1, params={})
    assert doc["first_level"] == 7 and doc["levels"][0]["level"] == 7
    path = write_bundle(tmp_path / "b.yaml", doc)
    problems = validate_paths([path]).problems
    assert all(
        p.code != "NM312" for p in problems
    )  # numbered from first_level (other checks: fake certificates)
    doc["levels"][0]["level"] = 1
    path = write_bundle(tmp_path / "b.yaml", doc)
    assert any(
        p.code == "NM312" and "from first_level" in p.message
        for p in validate_paths([path]).problems
    )


_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 200),
    st.floats(-2, 200, allow_nan=False),
    st.sampled_from(["easy", "hard", "expert", "x", "-1"]),
)
_KEYS = st.sampled_from(
    [
        "name",
        "levels",
        "shape",
        "start",
        "finish",
        "rise",
        "step",
        "dips",
        "at",
        "peak",
        "to",
        "boss",
        "stage",
        "tier",
        "score",
        "from_level",
        "constraints",
        "layouts",
        "at_least",
        "at_most",
        "stages",
        "curve",
    ]
)
_VALUE = st.recursive(
    _LEAF,
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(_KEYS, c, max_size=5)),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_VALUE, max_size=3), st.one_of(st.none(), _VALUE))
@example(curves=[{"name": "easy", "levels": True}], job=None)  # once crashed layer 3 (NM100)
@example(curves=[{"name": "a", "levels": True}], job={"curve": "a"})
def test_any_curve_document_gets_problems_never_a_crash(curves: list, job: object) -> None:
    from pipeline.validator import validate_texts

    doc: dict = {"schema_version": 1, "kind": "curves", "curves": curves}
    if job is not None:
        doc["job"] = job
    report = validate_texts([("c.yaml", yaml.safe_dump(doc))])
    assert all(p.line is not None for p in report.problems)


def test_a_bad_curve_file_is_refused_in_one_line_naming_the_place(tmp_path: Path) -> None:
    from pipeline.jobs.curve_specs import read_curve_file

    bad = tmp_path / "curves.yaml"
    bad.write_text("kind: curves\nschema_version: 1\ncurves: [1, 2]\nextra: !!int 3\n")
    with pytest.raises(CurveError) as caught:
        read_curve_file(bad)
    message = str(caught.value)
    assert "\n" not in message and f"{bad}:" in message


def test_every_problem_of_one_curve_is_reported(tmp_path: Path) -> None:
    """A curve with two NM320 problems (an unknown tier in its shape's finish and a
    dip that rises) reported only the first; a bad Level target and bad constraints beside them too."""
    path = tmp_path / "curves.yaml"
    path.write_text(BAD_CURVES.replace("at: 1.5", "at: 0.5").replace("101", "hard"))
    by_line = {(p.line, p.column): p.message for p in validate_paths([path]).problems}
    assert "unknown tier 'hardest'" in by_line[(7, 13)]
    assert "must be below `peak`" in by_line[(9, 32)]
    doc = curve_doc(
        {
            "name": "many",
            "levels": [
                ["easy", "easiest"],
                {
                    "stages": ["hard"],
                    "constraints": {"at_least": {"hard": 2}, "at_most": {"hard": 1}},
                },
            ],
            "shape": {
                "start": "easy",
                "finish": "hard",
                "dips": [{"at": 0.5, "peak": 0.1, "to": 0.2}, {"at": 0.2, "peak": 0.3, "to": 0.1}],
            },
            "constraints": {"at_most": {"hard": 1}, "at_least": {"hard": 2}},
        }
    )
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    problems = validate_paths([path]).problems
    assert {p.code for p in problems} == {"NM320"}
    assert sorted(p.path for p in problems) == sorted(
        [
            "$.curves[0].levels[0][1]",
            "$.curves[0].levels[1].constraints.at_most.hard",
            "$.curves[0].shape.dips[0].to",
            "$.curves[0].constraints.at_most.hard",
        ]
    )


# --- curves files beside puzzles, their caps, and curves files naming each other -------------

CURVES = """\
schema_version: 1
kind: curves
curves:
- name: gentle
  description: Easy all the way.
  shape:
    start: {tier: easy, at: 0.3}
    finish: {tier: easy, at: 0.6}
"""


def test_a_curves_file_in_a_puzzle_folder_is_skipped_and_refused_when_named(
    night_to_edit: Path,
) -> None:
    """`KeyError: 'board'` came from assemble and swap while validate said all valid."""
    (night_to_edit / "pool" / "gentle.yaml").write_text(CURVES)
    assert run("validate", str(night_to_edit / "pool" / "gentle.yaml")).exit_code == 0
    result = run(
        "assemble",
        str(night_to_edit),
        "--levels",
        "1",
        "--stages",
        "4",
        "--curve",
        "ramp",
        "--out",
        str(night_to_edit / "again.yaml"),
    )
    assert result.exit_code == 0, result.output
    assert run("swap", str(night_to_edit / "bundle.yaml"), "L1.S2").exit_code == 0
    one_line_refusal(
        run(
            "assemble",
            str(night_to_edit / "pool" / "gentle.yaml"),
            "--levels",
            "1",
            "--stages",
            "1",
            "--out",
            str(night_to_edit / "x.yaml"),
        ),
        "gentle.yaml: is a curves file, not puzzles",
    )


def _curves(n: int) -> str:
    return "schema_version: 1\nkind: curves\ncurves:\n" + "".join(
        f"- name: c{i}\n  description: d\n  shape:\n    start: {{tier: easy, at: 0.3}}\n    finish: {{tier: easy, at: 0.6}}\n"
        for i in range(n)
    )


def test_a_curves_file_is_capped_by_curves_and_by_size(tmp_path: Path, night_to_edit: Path) -> None:
    """100,000 schema-valid curves took validate 13-26 s and 440 MB."""
    import time

    from pipeline import limits
    from pipeline.validator import validate_paths

    ok = tmp_path / "ok.yaml"
    ok.write_text(_curves(limits.MAX_CURVES))
    assert validate_paths([ok]).ok
    many = tmp_path / "many.yaml"
    many.write_text(_curves(limits.MAX_CURVES + 1))
    [problem] = validate_paths([many]).problems
    assert (
        problem.code == "NM104"
        and f"holds {limits.MAX_CURVES + 1} curves; a curves file holds at most" in problem.message
    )
    huge = tmp_path / "huge.yaml"
    huge.write_text(_curves(20_000))  # ~2 MB, 200,000 values: refused before it is parsed
    started = time.monotonic()
    [problem] = validate_paths([huge]).problems
    assert (
        problem.code == "NM104" and "curves files are limited to 262,144 bytes" in problem.message
    )
    result = run(
        "assemble",
        str(night_to_edit),
        "--levels",
        "1",
        "--stages",
        "1",
        "--curve",
        f"{huge}:c1",
        "--out",
        str(tmp_path / "x.yaml"),
    )
    one_line_refusal(result, "curves files are limited to 262,144 bytes")
    assert time.monotonic() - started < 5


def test_a_curves_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`assemble --curve` validated the file, then read it again."""
    import pipeline.formats.loader as loader
    from pipeline.jobs.curve_specs import load_curve

    f = tmp_path / "c.yaml"
    f.write_text(_curves(3))
    reads: list[str] = []
    real = loader.load_file
    monkeypatch.setattr(
        "pipeline.jobs.curve_specs.load_file",
        lambda path, name=None: reads.append(str(path)) or real(path, name),
    )
    assert load_curve(f"{f}:c1").name == "c1"
    assert reads == [str(f)]


def test_curve_files_naming_each_other_are_a_cycle_not_a_crash(
    tmp_path: Path, night_to_edit: Path
) -> None:
    (tmp_path / "a:x").write_text(
        _curves(1).replace("c0", "a") + 'job: {curve: "b:y", levels: 1, stages: 1}\n'
    )
    (tmp_path / "b:y").write_text(
        _curves(1).replace("c0", "b") + 'job: {curve: "a:x", levels: 1, stages: 1}\n'
    )
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = run(
            "assemble",
            str(night_to_edit),
            "--levels",
            "1",
            "--stages",
            "1",
            "--curve",
            "a:x",
            "--out",
            "x.yaml",
        )
    finally:
        os.chdir(cwd)
    one_line_refusal(result, "curve files name each other in a cycle: 'a:x' -> 'b:y' -> 'a:x'")


def test_refresh_on_a_curves_file_says_it_is_a_curves_file(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(_curves(1))
    result = run("puzzle", "--refresh", str(f))
    assert result.exit_code == 1 and f"{f}: is a curves file, not a puzzle file" in result.output
    assert "board" not in result.output
