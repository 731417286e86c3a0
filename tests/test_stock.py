"""The stock across nights: the canonical key, the index, NM321 repeats, nights drawn from stock."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.engine.board import format_board, parse
from pipeline.engine.canonical import canonical_key, class_layout
from pipeline.engine.rules import legal_pairs
from pipeline.formats.index import LevelIndex, index_file, is_stock_path
from pipeline.formats.night import STOCK_ADD, STOCK_MOVE, STOCK_TAKEN
from pipeline.formats.puzzle import Puzzle, dump_yaml, puzzle_id
from pipeline.generation import requests
from pipeline.jobs import nightly
from pipeline.jobs.nightly import NightlyOptions, run_nightly
from pipeline.jobs.nightly import run as nightly_run
from pipeline.stock import night as stock_night
from pipeline.stock.store import counts, prune, put, stock_path
from pipeline.validator import validate_paths
from tests import reference
from tests.helpers import run

pytestmark = pytest.mark.nightly  # most of these run the nightly job

FIXTURES = Path(__file__).parent / "fixtures" / "validator" / "valid"
DAY = dt.date(2026, 3, 1)
MIRROR = str.maketrans("123456789", "987654321")


def mirrored(board: str) -> str:
    return board.translate(MIRROR)


# --- the canonical key --------------------------------------------------------------------


def test_a_mirror_and_any_1_9_relabelling_share_the_key_and_play_alike() -> None:
    rng = random.Random(27)
    for _ in range(200):
        values = [
            rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 9)) for _ in range(rng.randint(1, 40))
        ]
        board = format_board(bytes(values))
        # relabel a random subset of cells within their class (1<->9, 2<->8, ...)
        relabelled = "".join(
            str(10 - int(ch)) if ch in "12346789" and rng.random() < 0.5 else ch for ch in board
        )
        for other in (mirrored(board), relabelled):
            assert canonical_key(other, 2) == canonical_key(board, 2)
            assert class_layout(other) == class_layout(board)
            grid, grid2 = reference.from_text(board), reference.from_text(other)
            assert reference.legal_pairs(grid) == reference.legal_pairs(
                grid2
            )  # the naive rules agree
            assert legal_pairs(parse(other)) == legal_pairs(parse(board))


def test_the_key_tells_apart_other_layouts_adds_and_rulesets(no_diagonals: Any) -> None:
    base = canonical_key("123456789/135", 1)
    assert canonical_key("123456789/136", 1) != base  # 5 -> 6: another class
    assert canonical_key("123456789/135", 2) != base
    assert canonical_key("123456789/135", 1, no_diagonals) != base
    assert base.startswith("nmc1-") and len(base) == len("nmc1-") + 16
    assert canonical_key("987654321/975", 1) == base  # the mirror (5 stays 5)


# --- planted repeats: NM321 ---------------------------------------------------------------


def _bundle(tmp: Path, name: str, bundle_id: str, change: Any = None) -> Path:
    doc = yaml.safe_load((FIXTURES / "bundle.yaml").read_text())
    doc["id"] = bundle_id
    for level in doc["levels"]:
        for stage in level["stages"]:
            if change is not None:
                p = stage["puzzle"]
                p["board"] = change(p["board"])
                p["id"] = puzzle_id(p["board"], p["adds"], p["ruleset"])
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_yaml(doc))
    return path


def _first_puzzle() -> Puzzle:
    doc = yaml.safe_load((FIXTURES / "bundle.yaml").read_text())
    return Puzzle.from_dict(doc["levels"][0]["stages"][0]["puzzle"])


def test_validate_refuses_a_planted_repeat_naming_both_files(tmp_path: Path) -> None:
    first = _bundle(tmp_path, "2026-03-01/bundle.yaml", "night-1")
    second = _bundle(tmp_path, "2026-03-02/bundle.yaml", "night-2")
    report = validate_paths([tmp_path])
    found = [p for p in report.problems if p.code == "NM321"]
    assert found and len(found) == len(report.problems) == 4  # each Stage of the second night
    for p in found:
        assert p.file == str(second) and str(first) in p.message and "the same board" in p.message
        assert "shipped twice" in p.message and p.path.endswith(".board") and p.line


def test_validate_refuses_a_planted_mirror_naming_both_files(tmp_path: Path) -> None:
    first = _bundle(tmp_path, "a/bundle.yaml", "night-1")
    second = _bundle(tmp_path, "b/bundle.yaml", "night-2", mirrored)
    report = validate_paths([tmp_path])
    assert [p.code for p in report.problems] == ["NM321"] * 4, report.problems
    for p in report.problems:
        assert p.file == str(second) and str(first) in p.message and "relabelled copy" in p.message


def test_a_shipped_puzzle_still_in_stock_is_a_repeat_and_stock_only_is_not(tmp_path: Path) -> None:
    puzzle = _first_puzzle()
    put(tmp_path, [puzzle], DAY)
    assert validate_paths([tmp_path]).ok  # a stock puzzle alone ships nothing
    bundle = _bundle(tmp_path, "2026-03-01/bundle.yaml", "night-1")
    problems = validate_paths([tmp_path]).problems
    assert [p.code for p in problems] == ["NM321"]
    assert "shipped and still in stock" in problems[0].message
    assert {problems[0].file, problems[0].message.split(" at ")[1].split(":")[0]} == {
        str(bundle),
        str(stock_path(tmp_path, puzzle)),
    }


def test_pre_commit_catches_a_repeat_of_the_whole_repository_from_one_changed_file(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    first = _bundle(repo, "levels/2026-03-01/bundle.yaml", "night-1")
    changed = _bundle(repo, "levels/2026-03-02/bundle.yaml", "night-2", mirrored)
    assert validate_paths([changed]).ok  # alone, the file is fine
    report = validate_paths([changed], against=repo)
    assert [p.code for p in report.problems] == ["NM321"] * 4
    assert all(str(repo / "levels/2026-03-01/bundle.yaml") in p.message for p in report.problems)
    assert index_file(repo).is_file() and sorted(p.name for p in repo.iterdir()) == [
        "levels"
    ]  # nothing left in the folder
    first.unlink()  # the index follows the files: the repeat is gone
    assert validate_paths([changed], against=repo).ok
    # the hook passes the changed files and the repository root
    hook = yaml.safe_load((Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text())[0]
    assert "--against ." in hook["entry"]


# --- the index ----------------------------------------------------------------------------


def test_the_index_reads_only_what_changed_and_rebuilds_a_corrupt_file(tmp_path: Path) -> None:
    puzzle = _first_puzzle()
    put(
        tmp_path,
        [Puzzle(mirrored(puzzle.board), puzzle.adds, puzzle.solution, puzzle.difficulty)],
        DAY,
    )
    _bundle(tmp_path, "n1/bundle.yaml", "night-1")  # ships a relabelled copy of the stock puzzle
    assert put(tmp_path, [puzzle], DAY) == []  # the stock takes no copy of a shipped puzzle
    with LevelIndex(tmp_path) as index:
        first = index.refresh()  # put() brought it up to date: nothing to read
        assert (first.files, first.read, first.dropped) == (2, 0, 0) and len(index.entries()) == 5
        assert len(index.repeats()) == 1 and index.stock() == []  # shipped: not offered
    _bundle(
        tmp_path, "n1/bundle.yaml", "night-1", lambda b: b.replace("7", "6")
    )  # edited: another layout
    with LevelIndex(tmp_path) as index:
        again = index.refresh()
        assert again.read == 1 and index.repeats() == [] and len(index.stock()) == 1
    index_file(tmp_path).write_bytes(b"not a database" * 100)
    with LevelIndex(tmp_path) as index:
        assert index.refresh().read == 2 and len(index.stock()) == 1
    with sqlite3.connect(index_file(tmp_path)) as db:  # damaged tables: rebuilt silently
        db.execute("DROP TABLE entries")
    with LevelIndex(tmp_path) as index:
        assert index.refresh().read == 2 and len(index.entries()) == 5


def test_the_stock_layout_is_recognised_only_in_its_place() -> None:
    assert is_stock_path(("generated", "stock", "1", "27x3", "nm1-0.yaml"))
    assert not is_stock_path(("stock", "tests", "x.yaml")) and not is_stock_path(
        ("stock", "1", "a", "x.yaml")
    )


def test_prune_says_what_it_drops_and_keeps_the_oldest_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    puzzle = _first_puzzle()
    put(tmp_path / "old", [puzzle], DAY)
    (stale,) = prune(
        tmp_path / "old", force=True
    )  # the fixture was rated by an older rating version
    assert "rated by rating version 1; the current version is" in stale.reason
    monkeypatch.setattr("pipeline.stock.store.RATING_VERSION", 1)  # now it is current
    root = tmp_path / "new"
    copy = Puzzle(mirrored(puzzle.board), puzzle.adds, puzzle.solution, puzzle.difficulty)
    put(root, [puzzle], DAY)
    # a second copy written by hand (put itself refuses a key already in stock)
    later = stock_path(root, copy)
    later.write_text(dump_yaml({**copy.to_document(), "provenance": {"stocked": "2026-03-09"}}))
    bad = later.parent / "nm1-000000000000.yaml"
    bad.write_text("schema_version: 1\nkind: puzzle\n")
    assert put(root, [copy], DAY) == []
    dropped = prune(root, force=True)
    reasons = {d.path.name: d.reason for d in dropped}
    assert set(reasons) == {later.name, bad.name}
    assert (
        "a copy of" in reasons[later.name]
        and reasons[bad.name].startswith("invalid: ")
        and ": NM2" in reasons[bad.name]
    )
    assert stock_path(root, puzzle).is_file() and not later.exists() and not bad.exists()
    with LevelIndex(root) as index:
        index.refresh()
        (group,) = counts(index.stock())
    assert group.total == 1 and group.name == "1/18x1" and group.tiers == {puzzle.tier: 1}


# --- nights from the stock ----------------------------------------------------------------


def _naive_pick(
    candidates: list[Any], targets: list[float], wanted: int, within: float | None
) -> tuple[list[Any], list[float]]:
    left, chosen, uncovered, rounds = list(candidates), [], [], 0
    while len(chosen) < wanted:
        took = 0
        for t in sorted(targets):
            if len(chosen) < wanted:
                near = [e for e in left if within is None or abs(e.score - t) <= within]
                if not near:
                    uncovered += [t] if rounds == 0 else []
                    continue
                best = min(near, key=lambda e: (abs(e.score - t), e.stocked, e.id))
                left.remove(best)
                chosen.append(best)
                took += 1
        rounds += 1
        if not took:
            break
    return chosen, uncovered


def test_the_night_takes_the_nearest_then_the_oldest_as_a_naive_search_does() -> None:
    from pipeline.formats.index import Entry

    rng = random.Random(5)
    for _ in range(600):
        entries = [
            Entry(
                f"s/{k}",
                "",
                "stock",
                f"k{k}",
                f"nm1-{k:012x}",
                1,
                27,
                3,
                "easy",
                float(rng.randint(0, 12)),
                f"2026-01-{rng.randint(1, 3):02d}",
            )
            for k in range(rng.randint(0, 12))
        ]
        targets = [
            rng.uniform(0, 12) if rng.random() < 0.5 else float(rng.randint(0, 12))
            for _ in range(rng.randint(1, 4))
        ]
        wanted = rng.randint(0, 14)
        within = rng.choice([None, 0.0, 1.0, 2.5])
        assert stock_night.pick(entries, targets, wanted, within) == _naive_pick(
            entries, targets, wanted, within
        )
        if within is None:
            assert (
                stock_night.choose(entries, targets, wanted)
                == _naive_pick(entries, targets, wanted, None)[0]
            )


def _rated(puzzle: Puzzle, score: float, board: str) -> Puzzle:
    return Puzzle(
        board, puzzle.adds, puzzle.solution, {**puzzle.difficulty, "score": score}, puzzle.ruleset
    )


def test_a_night_takes_a_stock_puzzle_only_within_its_stages_band_and_only_one_stocked_before_it(
    tmp_path: Path,
) -> None:
    """The stock gave the nearest puzzle however far (a second night deviated
    244.6 points from its curve against 67.6 generated), and a rerun must not see what was
    stocked after its night."""
    base = _first_puzzle()
    boards = [format_board(bytes(random.Random(k).choices(range(1, 10), k=18))) for k in range(5)]
    near, far, later = (
        _rated(base, 40.0, boards[0]),
        _rated(base, 41.0 + requests.TOLERANCE, boards[1]),
        _rated(base, 41.0, boards[2]),
    )
    put(tmp_path, [near, far], DAY)
    put(tmp_path, [later], DAY + dt.timedelta(days=1))  # stocked on the night's own date: after it
    tier = base.tier
    drawn = stock_night.draw(
        tmp_path,
        {tier: [40.0, 40.5]},
        {tier: 3},
        1,
        (DAY + dt.timedelta(days=1)).isoformat(),
        within=requests.TOLERANCE,
    )
    assert [p.id for p in drawn.puzzles[tier]] == [near.id]
    assert drawn.uncovered == {tier: [40.5]}  # the second Stage: generated, aimed at its target
    anywhere = stock_night.draw(tmp_path, {tier: [40.0, 40.5]}, {tier: 3}, 1)
    assert {p.id for p in anywhere.puzzles[tier]} == {
        near.id,
        far.id,
        later.id,
    } and anywhere.uncovered == {}


MID = """\
schema_version: 1
kind: curves
curves:
- name: mid
  shape: {start: {tier: medium, at: 0.5}, finish: {tier: medium, at: 0.5}}
"""


def _night(out: Path, day: dt.date, **kw: Any) -> NightlyOptions:
    args: dict[str, Any] = dict(levels=1, stages=2, curve="flat", stock=True, keep={}, jobs=1)
    args.update(kw)
    return NightlyOptions(date=day, seed=nightly.default_seed(day), out=out, **args)


def _keys(out: Path) -> list[str]:
    keys = []
    for bundle in sorted(out.glob("*/bundle.yaml")):
        doc = yaml.safe_load(bundle.read_text())
        keys += [
            canonical_key(s["puzzle"]["board"], s["puzzle"]["adds"])
            for lv in doc["levels"]
            for s in lv["stages"]
        ]
    return keys


def _stock_files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "stock").rglob("*.yaml"))}


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    out = tmp_path_factory.mktemp("stock-nights")
    first = run_nightly(_night(out, DAY))
    second = run_nightly(_night(out, DAY + dt.timedelta(days=1)))
    return out, first, second


def test_the_second_night_draws_from_the_stock_and_generates_only_the_shortfall(
    two_nights: tuple[Path, Any, Any],
) -> None:
    out, first, second = two_nights
    st1, st2 = first.tiers["medium"], second.tiers["medium"]
    assert (st1.from_stock, st1.generated) == (0, 3)  # need 2 + spare 1, all made
    # the one left over if it is near enough a Stage's target (none refilled), then the rest
    assert st2.from_stock == 2 - st2.short and st2.generated == requests.shortfall(st2.short) > 0
    report = (out / (DAY + dt.timedelta(days=1)).isoformat() / "report.md").read_text()
    assert (
        "## Stock" in report
        and f"({st2.from_stock} puzzles drawn: medium {st2.from_stock})" in report
    )
    assert (
        f"only the shortfall (medium: {st2.short} Stage(s) with no stock puzzle near their target)"
        in report
    )
    keys = _keys(out)
    assert len(keys) == len(set(keys)) == 4
    assert validate_paths([out]).ok
    assert (
        not list(out.glob("*/pool"))
        and not list(out.glob("*/.stock-move.json"))
        and not list(out.glob("*/.stock-add"))
    )
    assert len(list(out.glob("*/.stock-taken.json"))) == 2  # what each night took, for a rerun
    with LevelIndex(out) as index:
        index.refresh()
        assert not index.stock_keys() & index.shipped_keys()


@pytest.fixture(scope="module")
def default_nights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    """Two nights with the default refill: after each, what the next night needs."""
    out = tmp_path_factory.mktemp("default-nights")
    first = run_nightly(_night(out, DAY, keep=None))
    second = run_nightly(_night(out, DAY + dt.timedelta(days=1), keep=None, first_level=2))
    return out, first, second


def test_the_refill_makes_what_the_next_night_needs_so_it_generates_nothing_and_keeps_to_its_curve(
    default_nights: tuple[Path, Any, Any],
) -> None:
    """The refill after a night generated tier-wide puzzles the next
    night then drew far from its targets; now it aims at the next night's Stage targets."""
    out, first, second = default_nights
    (line,) = [x for x in first.stock_lines if x.startswith("refill medium for")]
    assert (
        f"for {(DAY + dt.timedelta(days=1)).isoformat()} (Levels 2-2): " in line
        and " of 2 Stage(s) covered" in line
    )
    st = second.tiers["medium"]
    assert (st.generated, st.attempts) == (0, 0) and st.from_stock >= 2
    for placement in second.assembly.placements:
        # every Stage as close to its target as the generator makes it
        assert abs(placement.puzzle.rated.score - placement.target.score) <= requests.TOLERANCE
    keys = _keys(out)
    assert len(keys) == len(set(keys)) == 4 and validate_paths([out]).ok


def test_a_forced_rerun_of_a_stock_night_is_byte_identical(
    tmp_path: Path, default_nights: tuple[Path, Any, Any]
) -> None:
    """A rerun drew from a stock its own first run had changed (what it took
    gone, what it and later nights stocked there)."""
    out = tmp_path / "out"
    shutil.copytree(default_nights[0], out)
    days = [DAY, DAY + dt.timedelta(days=1)]
    made = {
        day: {
            name: (out / day.isoformat() / name).read_bytes()
            for name in ("bundle.yaml", "report.md", "report.html")
        }
        for day in days
    }
    for first_level, day in enumerate(days, start=1):
        run_nightly(_night(out, day, keep=None, first_level=first_level, force=True))
        for name, data in made[day].items():
            assert (out / day.isoformat() / name).read_bytes() == data, f"{day} {name} changed"
        keys = _keys(out)
        assert len(keys) == len(set(keys)) == 4 and validate_paths([out]).ok
        assert not list(out.glob("*/.stock-move.json"))


def test_a_rerun_never_ships_a_puzzle_a_later_night_took_meanwhile(
    tmp_path: Path, default_nights: tuple[Path, Any, Any]
) -> None:
    """A rerun after the generator changed can make again a puzzle that a later night has since
    shipped; it places the night without it (here a later bundle is planted shipping the
    first night's Stage 1)."""
    out = tmp_path / "out"
    shutil.copytree(default_nights[0], out)
    doc = yaml.safe_load((out / DAY.isoformat() / "bundle.yaml").read_text())
    taken = doc["levels"][0]["stages"][0]["puzzle"]
    doc["id"], doc["first_level"] = "later", 9
    doc["levels"] = [{"level": 9, "stages": [{**doc["levels"][0]["stages"][0], "stage": 1}]}]
    (out / "2026-03-09").mkdir()
    (out / "2026-03-09" / "bundle.yaml").write_text(dump_yaml(doc))
    run_nightly(_night(out, DAY, keep=None, force=True))
    rerun = yaml.safe_load((out / DAY.isoformat() / "bundle.yaml").read_text())
    assert taken["id"] not in {s["puzzle"]["id"] for lv in rerun["levels"] for s in lv["stages"]}
    assert validate_paths([out]).ok  # no repeat shipped, none shipped and still in stock


def test_what_is_stocked_after_a_night_is_dated_with_it_so_its_rerun_never_sees_it(
    tmp_path: Path,
) -> None:
    from pipeline.stock.store import stock_day

    today = dt.date(2026, 12, 1)
    assert stock_day(tmp_path, today) == today  # no night yet
    for name in ("2026-11-29", "2026-11-30", ".2026-12-05.tmp-x", "notes"):
        (tmp_path / name).mkdir()
    assert stock_day(tmp_path, today) == dt.date(2026, 11, 30)  # the latest night, not today
    assert stock_day(tmp_path, dt.date(2026, 11, 1)) == dt.date(
        2026, 11, 30
    )  # nights made ahead of their date


def test_the_refill_keeps_a_level_so_the_next_night_generates_nothing(
    tmp_path: Path, two_nights: tuple[Path, Any, Any]
) -> None:
    out = tmp_path / "out"
    shutil.copytree(two_nights[0], out)
    refilled = run_nightly(_night(out, DAY + dt.timedelta(days=2), keep={"medium": 6}))
    assert any(
        line.startswith("refill medium for ") for line in refilled.stock_lines
    )  # the next night's, first
    assert any(
        line.startswith("refill medium:") and "kept at 6" in line for line in refilled.stock_lines
    )
    assert len(_stock_files(out)) == 6
    result = run_nightly(_night(out, DAY + dt.timedelta(days=3)))
    st = result.tiers["medium"]
    assert (st.generated, st.attempts) == (0, 0) and st.from_stock >= 2
    report = (out / (DAY + dt.timedelta(days=3)).isoformat() / "report.md").read_text()
    assert "made tonight: 0 puzzles, only the shortfall: the stock covered every tier" in report
    assert len(_stock_files(out)) == 4 and validate_paths([out]).ok
    keys = _keys(out)
    assert len(keys) == len(set(keys)) == 8


def test_the_refill_starts_no_batch_past_its_time_bound(
    tmp_path: Path, two_nights: tuple[Path, Any, Any]
) -> None:
    out = tmp_path / "out"
    shutil.copytree(two_nights[0], out)
    result = run_nightly(
        _night(out, DAY + dt.timedelta(days=2), keep={"medium": 40}, refill_seconds=0.0)
    )
    (line,) = [line for line in result.stock_lines if line.startswith("refill medium:")]
    assert "0 made from 0 attempts" in line and "short (time bound 0 s)" in line


def test_a_night_killed_before_its_publish_leaves_the_stock_as_it_was(
    tmp_path: Path, two_nights: tuple[Path, Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    shutil.copytree(two_nights[0], out)
    before = _stock_files(out)

    def killed(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(nightly_run, "publish", killed)
    with pytest.raises(KeyboardInterrupt):
        run_nightly(_night(out, DAY + dt.timedelta(days=2)))
    assert _stock_files(out) == before
    assert not (out / (DAY + dt.timedelta(days=2)).isoformat()).exists()


def test_a_night_killed_after_its_publish_has_its_stock_move_finished_by_the_next_run(
    tmp_path: Path, two_nights: tuple[Path, Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    shutil.copytree(two_nights[0], out)
    real = nightly_run.publish

    def killed_after(staging: Path, final: Path) -> None:
        real(staging, final)
        raise KeyboardInterrupt

    monkeypatch.setattr(nightly_run, "publish", killed_after)
    day = DAY + dt.timedelta(days=2)
    with pytest.raises(KeyboardInterrupt):
        run_nightly(_night(out, day))
    assert (out / day.isoformat() / STOCK_MOVE).is_file()  # published, stock move pending
    with LevelIndex(out) as index:  # meanwhile the stock offers nothing the night ships
        index.refresh()
        assert not {e.key for e in index.stock()} & index.shipped_keys(), (
            "pending night still offered"
        )
    assert stock_night.finish(out) and stock_night.finish(out) == []
    assert validate_paths([out]).ok and not (out / day.isoformat() / STOCK_MOVE).exists()


def test_two_nights_racing_on_one_stock_never_take_the_same_puzzle(
    tmp_path: Path, two_nights: tuple[Path, Any, Any]
) -> None:
    out = tmp_path / "out"
    shutil.copytree(two_nights[0], out)
    job = tmp_path / "job.yaml"
    job.write_text(MID + "job: {curve: mid, levels: 1, stages: 1, keep: {medium: 0}}\n")
    days = [(DAY + dt.timedelta(days=n)).isoformat() for n in (5, 6)]
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pipeline.cli",
                "nightly",
                "--job",
                str(job),
                "--out",
                str(out),
                "--date",
                day,
                "-j",
                "1",
            ],
            cwd=Path(__file__).parent.parent,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for day in days
    ]
    results = [(r.wait(timeout=300), r.communicate()) for r in runs]
    for code, (_, err) in results:
        assert code == 0 or "another nightly run is writing" in err, err
    assert any(code == 0 for code, _ in results)
    keys = _keys(out)
    assert len(keys) == len(set(keys)) and validate_paths([out]).ok


# --- the stock command --------------------------------------------------------------------


def test_stock_refill_is_deterministic_and_stock_shows_counts_and_a_histogram(
    tmp_path: Path,
) -> None:
    import json

    args = [
        "stock",
        "refill",
        "--tier",
        "easy",
        "--cells",
        "18",
        "--adds",
        "2",
        "--count",
        "3",
        "--seed",
        "4",
        "-j",
    ]
    first = run(*args, "1", "--out", str(tmp_path / "a"))
    second = run(*args, "2", "--out", str(tmp_path / "b"))
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    files = sorted((tmp_path / "a" / "stock" / "1" / "18x2").iterdir())
    assert len(files) == 3 and all(
        f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes()
        for f in files
    )
    # a tier is asked for: the search strategy, as generate and the nightly's refill use
    assert {yaml.safe_load(f.read_text())["provenance"]["strategy"] for f in files} == {"search"}
    shown = run("stock", "--out", str(tmp_path / "a"), "--json")
    doc = json.loads(shown.stdout)
    assert (
        doc["total"] == 3
        and doc["groups"][0]["tiers"] == {"easy": 3}
        and sum(doc["groups"][0]["histogram"].values()) == 3
    )
    text = run("stock", "--out", str(tmp_path / "a")).stdout
    assert "1/18x2: 3 (easy 3)" in text and "score   0  10" in text
    again = run(*args, "1", "--out", str(tmp_path / "a"))  # same seed: the same boards, none new
    assert again.exit_code == 0 and "0 new easy puzzle(s)" in again.output
    files[0].write_text(files[0].read_text().replace("adds: 2", "adds: 3"))
    refused = run("stock", "prune", "--out", str(tmp_path / "a"))  # 1 of 3: more than 10%
    assert refused.exit_code == 1 and f"would drop {files[0]}: invalid: " in refused.stdout
    assert "would drop 1 of 3 puzzle files, more than 10%" in refused.output and files[0].exists()
    pruned = run("stock", "prune", "--out", str(tmp_path / "a"), "--force")
    assert (
        pruned.exit_code == 0
        and f"{files[0]}: invalid: " in pruned.stdout
        and "NM303" in pruned.stdout
        and not files[0].exists()
    )


def test_swap_takes_from_the_stock_never_a_shipped_copy_and_gives_the_old_one_back(
    tmp_path: Path, two_nights: tuple[Path, Any, Any]
) -> None:
    out = tmp_path / "out"
    shutil.copytree(two_nights[0], out)
    first, second = (out / (DAY + dt.timedelta(days=n)).isoformat() / "bundle.yaml" for n in (0, 1))
    shipped = Puzzle.from_dict(
        yaml.safe_load(first.read_text())["levels"][0]["stages"][0]["puzzle"]
    )
    copy = Puzzle(mirrored(shipped.board), shipped.adds, shipped.solution, shipped.difficulty)
    planted = stock_path(out, copy)  # a relabelled copy of a shipped puzzle, planted in the stock
    planted.write_text(dump_yaml(copy.to_document()))
    refused = run("swap", str(second), "L1.S1", "--with", copy.id)
    assert refused.exit_code == 1 and f"already shipped at {first}:L1.S1" in refused.output
    planted.unlink()
    before = set(_stock_files(out))
    old = yaml.safe_load(second.read_text())["levels"][0]["stages"][0]["puzzle"]["id"]
    done = run("swap", str(second), "L1.S1")
    assert done.exit_code == 0, done.output
    new = yaml.safe_load(second.read_text())["levels"][0]["stages"][0]["puzzle"]["id"]
    assert f"{new}.yaml" in before and set(_stock_files(out)) == before - {f"{new}.yaml"} | {
        f"{old}.yaml"
    }
    assert "back in the stock" in done.output and validate_paths([out]).ok


def test_swap_from_the_stock_never_loses_the_old_puzzle_and_waits_for_no_lock(
    tmp_path: Path, two_nights: tuple[Path, Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old puzzle is in the stock before the bundle is written: a swap killed after the write
    leaves both puzzles somewhere (NM321 names the one in two places), never one in neither; a
    swap while the nights' folder is locked (a night running) is refused with nothing written."""
    from pipeline.jobs import curate as stock_swap
    from pipeline.jobs.publish import locked

    out = tmp_path / "out"
    shutil.copytree(two_nights[0], out)
    second = out / (DAY + dt.timedelta(days=1)).isoformat() / "bundle.yaml"
    before, text = set(_stock_files(out)), second.read_bytes()
    missing = run(
        "swap", str(second), "L1.S1", "--with", "nm1-000000000000"
    )  # its messages say where it looked
    assert missing.exit_code == 1 and "no such puzzle in the stock" in missing.output
    with locked(out):
        busy = run("swap", str(second), "L1.S1")
    assert (
        busy.exit_code == 1
        and "the stock is in use" in busy.output
        and "Traceback" not in busy.output
    )
    assert second.read_bytes() == text and set(_stock_files(out)) == before

    def killed(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt  # the process dies right after the bundle is written

    monkeypatch.setattr(stock_swap, "remove_keys", killed)
    old = yaml.safe_load(second.read_text())["levels"][0]["stages"][0]["puzzle"]["id"]
    run("swap", str(second), "L1.S1")
    new = yaml.safe_load(second.read_text())["levels"][0]["stages"][0]["puzzle"]["id"]
    assert new != old and set(_stock_files(out)) == before | {
        f"{old}.yaml"
    }  # both kept: nothing lost
    assert [p.code for p in validate_paths([out]).problems] == ["NM321"]


def test_the_studio_never_offers_a_relabelled_copy_of_a_shipped_puzzle(night_copy: Path) -> None:
    pytest.importorskip(
        "starlette", reason="the studio's web packages are not installed (pip install -e '.[test]')"
    )
    from starlette.testclient import TestClient

    from pipeline.studio.app import create_app

    bundle = night_copy / "2026-01-02" / "bundle.yaml"
    first = yaml.safe_load(bundle.read_text())["levels"][0]["stages"][0]["puzzle"]
    shipped = Puzzle.from_dict(first)
    copy = Puzzle(mirrored(shipped.board), shipped.adds, shipped.solution, shipped.difficulty)
    (night_copy / "2026-01-02" / "pool" / f"{copy.id}.yaml").write_text(
        dump_yaml(copy.to_document())
    )
    client = TestClient(create_app(night_copy), base_url="http://127.0.0.1:8765")
    page = client.get("/swap", params={"path": "2026-01-02/bundle.yaml", "at": "1.1"}).text
    assert 'class="offers"' in page and f'data-id="{copy.id}"' not in page
    assert (
        f"{copy.id} (or a relabelled copy) is already shipped at 2026-01-02/bundle.yaml:L1.S1"
        in page
    )


def _refresh_in_a_process(root: str, file: str, out: Any) -> None:
    try:
        with LevelIndex(root, file=file) as ix:
            ix.refresh()
            out.put(len(ix.entries()))
    except BaseException as exc:
        out.put(repr(exc))


def test_processes_creating_one_index_at_once_all_get_the_files(tmp_path: Path) -> None:
    """Two swaps at once both refresh a new index file: creating its tables raced (one saw
    'attempt to write a readonly database' or 'cannot rollback' tracebacks)."""
    import multiprocessing

    root = str(Path(__file__).resolve().parent.parent / "generated")
    ctx = multiprocessing.get_context("fork")
    for round_ in range(8):
        file = str(tmp_path / f"index-{round_}.sqlite")
        out = ctx.Queue()
        procs = [
            ctx.Process(target=_refresh_in_a_process, args=(root, file, out)) for _ in range(3)
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        seen = [out.get(timeout=10) for _ in procs]
        assert all(isinstance(n, int) and n > 0 for n in seen), seen
        assert len(set(seen)) == 1, seen


# --- a stock reached through a symbolic link ----------------------------------------------

REPO_GENERATED = Path(__file__).parent.parent / "generated"


def _linked_stock(tmp: Path, source: Path = REPO_GENERATED) -> tuple[Path, Path]:
    """`tmp/out` holding the nights of `source`, its `stock` a link to `tmp/shared` (a copy of
    the source's stock kept elsewhere)."""
    out, shared = tmp / "out", tmp / "shared"
    shutil.copytree(source, out, ignore=shutil.ignore_patterns("stock"))
    shutil.copytree(source / "stock", shared)
    (out / "stock").symlink_to(shared, target_is_directory=True)
    return out, shared


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*.yaml"))}


def test_a_linked_stock_is_counted_validated_and_never_pruned_away(tmp_path: Path) -> None:
    """With `generated/stock` a link, `stock` showed 0 puzzles, `validate` skipped it, and `stock
    prune` deleted all 82 valid puzzles ("not in the stock's layout"), exit 0."""
    out, shared = _linked_stock(tmp_path)
    before = _files(shared)
    plain = run("stock", "--out", str(REPO_GENERATED), "--json")
    linked = run("stock", "--out", str(out), "--json")
    assert linked.exit_code == 0 and '"total": 0' not in linked.stdout
    assert linked.stdout.replace(str(out), "X") == plain.stdout.replace(str(REPO_GENERATED), "X")
    assert validate_paths([out]).ok
    bundle = next(out.glob("*/bundle.yaml"))
    shipped = Puzzle.from_dict(
        yaml.safe_load(bundle.read_text())["levels"][0]["stages"][0]["puzzle"]
    )
    copy = Puzzle(mirrored(shipped.board), shipped.adds, shipped.solution, shipped.difficulty)
    planted = stock_path(out, copy)
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text(stock_night.stock_text(copy, DAY, out))
    found = [p for p in validate_paths([out]).problems if p.code == "NM321"]
    assert found and str(bundle) in found[0].message
    dry = run("stock", "prune", "--out", str(out), "--dry-run")
    assert (
        dry.exit_code == 0 and dry.stdout.count("\n") == 1 and f"{planted}: already" in dry.stdout
    )
    assert planted.exists()
    pruned = run("stock", "prune", "--out", str(out))
    assert pruned.exit_code == 0 and "dropped 1 puzzle(s)" in pruned.output
    assert not planted.exists() and _files(shared) == before  # every valid puzzle kept
    assert (out / "stock").is_symlink()


def test_prune_never_drops_a_valid_puzzle_for_where_it_lies_and_guards_its_share(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    shutil.copytree(REPO_GENERATED / "stock", out / "stock")
    stray = out / "stock" / "1" / "elsewhere"  # a valid puzzle outside the layout: kept
    stray.mkdir()
    moved = next((out / "stock" / "1" / "27x3").glob("*.yaml"))
    shutil.move(moved, stray / moved.name)
    assert prune(out) == [] and (stray / moved.name).is_file()
    files = sorted((out / "stock").rglob("*.yaml"))
    for f in files[: len(files) // 5]:  # a fifth of the stock edited badly
        f.write_text(f.read_text().replace("adds: ", "adds: 1"))
    before = _files(out)
    refused = run("stock", "prune", "--out", str(out))
    assert refused.exit_code == 1 and refused.stdout.count("would drop ") == len(files) // 5
    assert f"would drop {len(files) // 5} of {len(files)} puzzle files, more than 10%" in (
        refused.output
    )
    assert _files(out) == before
    forced = run("stock", "prune", "--out", str(out), "--force")
    assert forced.exit_code == 0 and len(_files(out)) == len(files) - len(files) // 5


def test_nights_and_swaps_use_a_linked_stock_as_their_own(
    tmp_path: Path, two_nights: tuple[Path, Any, Any]
) -> None:
    out, shared = _linked_stock(tmp_path, two_nights[0])
    before = _files(shared)
    day = DAY + dt.timedelta(days=2)
    result = run_nightly(_night(out, day, keep=None))  # with a refill: puzzles go in
    assert result.tiers["medium"].from_stock > 0, "the night did not see the linked stock"
    taken = {
        row["id"] + ".yaml"
        for row in json.loads((out / day.isoformat() / STOCK_TAKEN).read_text())["taken"]
    }
    after = set(_files(shared))
    assert taken <= set(before) and not taken & after  # what it shipped left the linked stock
    assert after - set(before), result.stock_lines  # the refill went into the linked folder
    keys = _keys(out)
    assert len(keys) == len(set(keys)) and validate_paths([out]).ok
    assert (out / "stock").is_symlink() and not list(out.glob("*/.stock-add"))
    bundle = out / day.isoformat() / "bundle.yaml"
    old = yaml.safe_load(bundle.read_text())["levels"][0]["stages"][0]["puzzle"]["id"]
    stocked = set(_files(shared))
    done = run("swap", str(bundle), "L1.S1")
    assert done.exit_code == 0, done.output
    new = yaml.safe_load(bundle.read_text())["levels"][0]["stages"][0]["puzzle"]["id"]
    assert set(_files(shared)) == stocked - {f"{new}.yaml"} | {f"{old}.yaml"}
    assert validate_paths([out]).ok


def test_a_night_finishes_its_stock_move_into_a_stock_on_another_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, shared = _linked_stock(tmp_path)
    puzzle = _first_puzzle()
    night = out / "2026-12-01"
    staged = night / STOCK_ADD / stock_path(Path(), puzzle)
    staged.parent.mkdir(parents=True)
    staged.write_text(stock_night.stock_text(puzzle, DAY, out))
    (night / STOCK_MOVE).write_text(
        json.dumps({"take": [], "add": [staged.relative_to(night).as_posix()]})
    )
    real = os.replace

    def across_devices(src: Any, dst: Any) -> None:
        if ".stock-add" in str(src):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real(src, dst)

    monkeypatch.setattr(os, "replace", across_devices)
    assert stock_night.finish(out) == ["2026-12-01: 0 puzzle(s) left the stock, 1 went in"]
    target = shared / stock_path(Path(), puzzle).relative_to("stock")
    assert target.read_text() == stock_night.stock_text(puzzle, DAY, out)
    assert not (night / STOCK_ADD).exists() and not (night / STOCK_MOVE).exists()


def test_stock_puzzles_a_night_finds_invalid_are_set_aside_and_the_shortfall_generated(
    tmp_path: Path, two_nights: tuple[Path, Any, Any]
) -> None:
    """Stock scores edited by hand (NM310) stopped every night: "generate: nothing: the stock
    covered every tier", "validate: 0 of 3", then assemble failed, naming neither the files nor
    what to do. Now the night moves them out of the draw, names them, and generates instead."""
    import re

    out = tmp_path / "out"
    shutil.copytree(two_nights[0], out)
    edited = sorted((out / "stock").rglob("*.yaml"))
    assert edited
    for f in edited:
        f.write_text(
            re.sub(
                r"^  score: ([0-9.]+)$",
                lambda m: f"  score: {float(m.group(1)) + 0.5:.2f}",
                f.read_text(),
                count=1,
                flags=re.M,
            )
        )
    before = {f.name: f.read_bytes() for f in edited}
    day = DAY + dt.timedelta(days=2)
    result = run_nightly(_night(out, day))
    asides = [line for line in result.log_lines if line.startswith("set aside ")]
    assert asides and all("NM310" in line for line in asides)
    assert result.tiers["medium"].from_stock == 0 and result.tiers["medium"].generated >= 2
    log = (out / day.isoformat() / "run.log").read_text()
    report = (out / day.isoformat() / "report.md").read_text()
    aside = out / "stock" / ".aside"
    moved = {f.name: f.read_bytes() for f in aside.rglob("*.yaml")}
    assert moved and set(moved) <= set(before)  # moved, never deleted, bytes kept
    assert all(moved[name] == before[name] for name in moved)
    for name in moved:
        assert name in log and name in report and "out of the stock's draw" in report
    assert validate_paths([out]).ok
    again = run_nightly(_night(out, day + dt.timedelta(days=1)))  # and the next night runs
    assert not [line for line in again.log_lines if line.startswith("set aside ")]
    assert {f.name for f in aside.rglob("*.yaml")} == set(moved)
