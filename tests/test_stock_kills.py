"""`kill -9` of the stock's commands at every point they change the disk (tests/killpoints.py).

`stock refill` and `stock prune` run on a copy of a small stock beside a shipped night, each
killed by SIGKILL at one point: every file the command has no business changing is still there
with its bytes (a valid puzzle is never lost, a shipped night never touched); the stock then
validates, lists, and holds no puzzle twice and none already shipped; the same command run again
ends where one never killed ends, file for file; and the next night runs on what the kill left.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pipeline.formats.index import LevelIndex
from pipeline.formats.puzzle import Puzzle, dump_yaml, puzzle_id
from pipeline.stock.store import stock_path
from tests import killpoints
from tests.helpers import run

pytestmark = [pytest.mark.slow, pytest.mark.nightly]

NIGHT = "2026-03-01"
NEXT_NIGHT = ("nightly", "--date", "2026-03-02", "--levels", "1", "--stages", "2")
SMALL = ("--curve", "flat", "-j", "1")
REFILL = ("stock", "refill", "--tier", "medium", "--cells", "30", "--adds", "2", "--count", "3")
MIRROR = str.maketrans("123456789", "987654321")


@pytest.fixture(scope="module")
def shipped_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One shipped night of one Level of two Stages, and the stock it left (its unused puzzles
    and the refill for the next night)."""
    out = tmp_path_factory.mktemp("kills") / "out"
    made = run("nightly", "--date", NIGHT, "--levels", "1", "--stages", "2", "--out", out, *SMALL)
    assert made.exit_code == 0, made.output
    assert killpoints.stock_files(out), "the night left no stock to protect"
    return out


def copy_of(out: Path, to: Path, warm: bool = True) -> Path:
    """A copy of a nights folder, its index brought up to date (as it is between commands), or
    with none yet (`warm` False: the command builds it)."""
    shutil.copytree(out, to, symlinks=True)
    if warm:
        with LevelIndex(to) as index:
            index.refresh()
    return to


def next_night_runs(out: Path, ignore: set[str]) -> None:
    """The next night publishes on what a kill left, and ships nothing twice."""
    result = run(*NEXT_NIGHT, "--out", out, *SMALL)
    assert result.exit_code == 0, result.output
    problems = killpoints.stock_problems(out, ignore)
    assert not problems, problems


def killed_at_each_point(
    base: Path,
    tmp: Path,
    args: tuple[str, ...],
    kept: set[str] | None = None,
    *,
    warm: bool = True,
    most: int | None = None,
) -> tuple[int, int]:
    """Run `numbermatch ARGS --out <copy>` killed at each of its points in turn and check what
    each kill left (module docstring). `kept`: the files that must survive with their bytes
    (default: every file); the others are the ones the command may drop, left out of the checks
    of what a kill left. `warm` False: no index yet; `most`: kill at that many points spread
    over them (None: at each). Returns (points, kills checked)."""
    whole = copy_of(base, tmp / "whole", warm)
    done = killpoints.points([*args, "--out", whole], log=tmp / "log")
    assert done.returncode == 0, done.stderr
    final = killpoints.visible_files(whole)
    before = killpoints.visible_files(base)
    must_keep = {rel: before[rel] for rel in (kept if kept is not None else before)}
    droppable = set(before) - set(must_keep)
    total = len(done.points)
    chosen = killpoints.spread(total, most or total)
    for n in chosen:
        case = tmp / f"k{n}"
        out = copy_of(base, case / "out", warm)
        cut = killpoints.run_to([*args, "--out", out], n, log=case / "log")
        where = f"killed at point {n} of {total} ({cut.points[-1] if cut.points else '?'})"
        assert cut.killed and len(cut.points) == n, (where, cut.returncode, cut.stderr)
        left = killpoints.visible_files(out)
        lost = sorted(rel for rel, data in must_keep.items() if left.get(rel) != data)
        assert not lost, f"{where}: lost or changed {lost}"
        problems = killpoints.stock_problems(out, droppable)
        assert not problems, f"{where}: {problems}"
        again = copy_of(out, case / "again")
        rerun = run(*args, "--out", again)
        assert rerun.exit_code == 0, f"{where}: the rerun failed: {rerun.output}"
        assert killpoints.visible_files(again) == final, f"{where}: the rerun ends elsewhere"
        next_night_runs(out, droppable)
        shutil.rmtree(case)
    problems = killpoints.stock_problems(whole)
    assert not problems, f"the whole run: {problems}"
    return total, len(chosen)


@pytest.mark.parametrize("warm", [True, False], ids=["index", "no-index"])
def test_a_refill_killed_at_any_point_loses_nothing_and_the_next_night_runs(
    shipped_night: Path, tmp_path: Path, warm: bool
) -> None:
    """Each point with the index up to date; without one (the command builds it: kills inside
    its SQLite transaction), a dozen points spread over them."""
    args = (*REFILL, "--seed", "11", "-j", "1")
    total, checked = killed_at_each_point(
        shipped_night, tmp_path, args, warm=warm, most=None if warm else 8
    )
    assert total >= 24, f"only {total} points: too few to be a test of the refill"
    print(
        f"stock refill ({'index' if warm else 'no index'}): killed at {checked} of {total} points"
    )


def _plant(out: Path) -> set[str]:
    """Give the stock what prune drops, for each stock file: a copy that does not validate and a
    later relabelled copy; and a relabelled copy of each shipped puzzle. Returns the planted
    files (relative paths)."""
    planted = set()
    bundle = yaml.safe_load((out / NIGHT / "bundle.yaml").read_text())
    shipped = [dict(s["puzzle"]) for lv in bundle["levels"] for s in lv["stages"]]
    stocked = [yaml.safe_load(data) for data in killpoints.stock_files(out).values()]
    for k, doc in enumerate(stocked):
        bad = stock_path(out, Puzzle.from_dict(doc)).with_name(f"nm1-{k:012x}.yaml")
        bad.write_text(dump_yaml(doc).replace("adds: ", "adds: 1", 1))
        planted.add(bad.relative_to(out).as_posix())
    for source, day in [(d, "2026-03-09") for d in stocked] + [(d, "2026-02-01") for d in shipped]:
        copy = dict(source)
        copy["board"] = copy["board"].translate(MIRROR)
        copy["id"] = puzzle_id(copy["board"], copy["adds"], copy["ruleset"])
        copy["provenance"] = {**copy.get("provenance", {}), "stocked": day}
        path = stock_path(out, Puzzle.from_dict(copy))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_yaml(copy))
        planted.add(path.relative_to(out).as_posix())
    return planted


@pytest.mark.parametrize("warm", [True, False], ids=["index", "no-index"])
def test_a_prune_killed_at_any_point_never_deletes_a_valid_puzzle(
    shipped_night: Path, tmp_path: Path, warm: bool
) -> None:
    base = tmp_path / "planted"
    shutil.copytree(shipped_night, base, symlinks=True)
    planted = _plant(base)
    dry = run("stock", "prune", "--out", base, "--dry-run")
    assert dry.exit_code == 0 and dry.stdout.count("\n") == len(planted), dry.output
    kept = set(killpoints.visible_files(base)) - planted
    args = ("stock", "prune", "--force")
    total, checked = killed_at_each_point(
        base, tmp_path, args, kept, warm=warm, most=None if warm else 8
    )
    assert total >= len(planted) >= 8, f"{total} points, {len(planted)} planted"
    print(f"stock prune ({'index' if warm else 'no index'}): killed at {checked} of {total} points")


def test_prune_drops_the_temp_file_of_a_refill_killed_mid_write(
    shipped_night: Path, tmp_path: Path
) -> None:
    """A kill between a stock file's temp write and its link leaves a hidden temp file no
    command read or removed; prune (under the lock every stock writer holds) drops it, and only
    it."""
    out = copy_of(shipped_night, tmp_path / "out")
    args = [*REFILL, "--seed", "11", "-j", "1", "--out", out]
    labels = killpoints.points(args, log=tmp_path / "log").points
    n = next(
        k for k, label in enumerate(labels, 1) if label.startswith("link ") and ".tmp" in label
    )
    shutil.rmtree(out)
    out = copy_of(shipped_night, out)
    assert killpoints.run_to(args, n, log=tmp_path / "log").killed
    (temp,) = [p for p in (out / "stock").rglob(".*.tmp")]
    before = killpoints.visible_files(out)
    dry = run("stock", "prune", "--out", out, "--dry-run")
    assert (
        dry.exit_code == 0 and dry.stdout == f"{temp}: the temp file of a write that was killed\n"
    )
    assert run("stock", "prune", "--out", out).exit_code == 0
    assert not temp.exists() and killpoints.visible_files(out) == before
