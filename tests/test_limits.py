"""Bounded work (`pipeline.limits`): every size, count and worker number has an upper bound, named
in docs/limits.md; parsing is linear, a FIFO never blocks, workers die with their parent, a lock
names its holder."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pipeline import limits
from pipeline.engine.board import parse
from pipeline.errors import NumberMatchError
from pipeline.formats.puzzle import puzzle_id
from pipeline.jobs.nightly import NightlyError, NightlyOptions, run_nightly
from pipeline.validator import validate_paths, validate_texts
from tests.helpers import codes, edited, one_line_error, run

REPO = Path(__file__).resolve().parent.parent
VALID = Path(__file__).parent / "fixtures" / "validator" / "valid"
PUZZLE = (VALID / "puzzle.yaml").read_text(encoding="utf-8")


def test_board_parsing_is_linear_and_errors_stay_short() -> None:
    big = "/".join(["123456789"] * 49_000) + "/12x"  # ~490 KB: was 28 s
    start = time.perf_counter()
    with pytest.raises(NumberMatchError) as caught:
        parse(big)
    assert time.perf_counter() - start < 1.0
    assert len(str(caught.value)) < 300
    near = "/".join(["123456789"] * 440) + "/12x"  # within the length limit, bad at the end
    with pytest.raises(NumberMatchError, match="row 440 has 'x'") as caught:
        parse(near)
    assert len(str(caught.value)) < 300


def test_moves_stream_with_a_million_character_line_is_quick() -> None:
    start = time.perf_counter()
    result = run("moves", "-", input="1" * 1_000_000 + "\n19\n")
    assert time.perf_counter() - start < 10
    assert result.exit_code == 1
    first, second = (json.loads(line) for line in result.output.splitlines())
    assert "error" in first and len(first["board"]) < 300 and len(first["error"]) < 300
    assert second == {"board": "19", "pairs": ["0,0-0,1"]}


def test_a_huge_board_in_a_file_is_one_short_problem() -> None:
    big = "/".join(["123456789"] * 49_000) + "/12x"
    problems = validate_texts(
        [("x.yaml", edited(PUZZLE, "board: 719473731/547335153", f"board: {big}"))]
    ).problems
    assert problems and all(len(p.message) < 400 for p in problems)


def test_adds_cannot_grow_a_board_without_bound(tmp_path: Path) -> None:
    text = edited(PUZZLE, "adds: 1", "adds: 40")
    text = edited(text, "id: nm1-ad6b87a055dd", f"id: {puzzle_id('719473731/547335153', 40)}")
    text = text.replace("- 0,4-1,4\n", "- 0,4-1,4\n" + "- +\n" * 40, 1)
    assert "NM208" in codes(text)  # adds above limits.MAX_ADDS
    result = run("apply", "12", *["+"] * 40, "--adds", "40")
    assert result.exit_code == 2 and "--adds" in one_line_error(result)
    result = run("apply", "123456789/123456789", *["+"] * 16, "--adds", "16")
    assert result.exit_code == 1 and "limit" in one_line_error(result)


@pytest.mark.parametrize(
    "args",
    [
        ["moves", "/".join(["123456789"] * 3334)],  # 30,000 cells: took 2 GB
        ["solve", "/".join(["123456789"] * 1112)],  # 10,000 cells: MemoryError
        ["rate", "/".join(["123456789"] * 1112)],
        ["solve", "/".join(["123456789"] * 112)],  # 1,008: past the solver's own limit
        ["rate", "/".join(["123456789"] * 34)],  # 306: past the rating's
    ],
)
def test_board_size_limits_per_command(args: list[str]) -> None:
    start = time.perf_counter()
    result = run(*args)
    assert time.perf_counter() - start < 10
    assert result.exit_code == 1 and "limit" in one_line_error(result)


@pytest.mark.parametrize(
    "args",
    [
        ["nightly", "--levels", "1000000"],
        ["nightly", "--stages", "100000"],
        ["nightly", "--jobs", "1000"],
        ["generate", "--cells", "20", "--adds", "1", "--jobs", "1000"],
        ["generate", "--cells", "20", "--adds", "1", "--count", "100000000"],
        ["rate", "12", "--playouts", "100000000"],
    ],
)
def test_sizes_and_workers_have_upper_bounds(args: list[str], tmp_path: Path) -> None:
    result = run(*args, "--out", str(tmp_path)) if args[0] != "rate" else run(*args)
    assert result.exit_code == 2, result.output
    one_line_error(result)
    assert list(tmp_path.iterdir()) == []


def test_library_bounds_too(tmp_path: Path) -> None:
    with pytest.raises(NightlyError, match="limit"):
        run_nightly(
            NightlyOptions(
                date=dt.date(2026, 3, 2), seed=1, levels=limits.MAX_LEVELS + 1, out=tmp_path
            )
        )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_validate_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    (tmp_path / "ok.yaml").write_text(PUZZLE)
    start = time.perf_counter()
    report = validate_paths([tmp_path])
    assert time.perf_counter() - start < 10
    assert [(Path(p.file).name, p.code) for p in report.problems] == [("pipe.yaml", "NM101")]


_CHILD = textwrap.dedent("""
    import multiprocessing, os, sys, time
    from pipeline.procs import die_with_parent
    def nap(_):
        time.sleep(60)
    if __name__ == "__main__":
        ctx = multiprocessing.get_context("fork")
        pool = ctx.Pool(2, initializer=die_with_parent, initargs=(os.getpid(),))
        pool.map_async(nap, range(2))
        time.sleep(0.5)
        print(" ".join(str(p.pid) for p in pool._pool), flush=True)
        time.sleep(60)
""")


@pytest.mark.skipif(sys.platform != "linux", reason="checks processes through /proc")
def test_pool_workers_die_with_their_parent(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    proc = subprocess.Popen(
        [sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    workers = [int(pid) for pid in proc.stdout.readline().split()]
    assert len(workers) == 2
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in workers):
        assert time.monotonic() < deadline, "a pool worker outlived its parent"
        time.sleep(0.05)
    assert b"Traceback" not in proc.stderr.read() if proc.stderr else True


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/locks")
def test_the_lock_refusal_names_the_holder(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(tmp_path)!r}, os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('locked', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        with pytest.raises(NightlyError, match=f"process {holder.pid} holds the lock"):
            run_nightly(
                NightlyOptions(date=dt.date(2026, 3, 2), seed=1, levels=1, stages=1, out=tmp_path)
            )
    finally:
        holder.kill()
        holder.wait()
    fd = os.open(tmp_path, os.O_RDONLY)  # released with its holder
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_the_docs_list_every_limit() -> None:
    """docs/limits.md (linked from the README) holds the table `python -m pipeline.limits` prints,
    which names every constant in pipeline/limits.py."""
    import pipeline.atomic

    section = (REPO / "docs" / "limits.md").read_text(encoding="utf-8")
    begin, end = (
        "(generated: `python -m pipeline.limits`; a test checks it) -->\n",
        "<!-- limits:end -->",
    )
    assert section.split(begin, 1)[1].split(end, 1)[0] == limits.limits_table(), (
        "run: python -m pipeline.limits"
    )
    constants = {
        name
        for name, value in vars(limits).items()
        if name.isupper() and isinstance(value, (int, float, str)) and not isinstance(value, bool)
    }
    named = {name for row in limits.LIMITS for name in row.names}
    assert constants - named == set(), "add a row to limits.LIMITS for each new limit"
    assert f"{pipeline.atomic.LOCK_WAIT_SECONDS:g} s" in section
    for name in (
        "MAX_CELLS",
        "MAX_SOLVE_CELLS",
        "MAX_RATE_CELLS",
        "MAX_ADDS",
        "MAX_LEVELS",
        "MAX_STAGES",
        "MAX_JOBS",
        "MAX_FILE_BYTES",
        "MAX_PLAYOUTS",
        "MAX_COUNT",
        "MAX_CURVES",
        "MAX_PLAY_LINE",
    ):
        value = getattr(limits, name)
        shown = f"{value:,}" if name != "MAX_FILE_BYTES" else f"{value // (1024 * 1024)} MiB"
        assert shown in section, (name, shown)


def test_the_generators_stops_in_the_table_are_the_codes() -> None:
    """The generation rows of the table (kept as text: pipeline.limits may not import the
    generator) say what the code does: the pilot, the climb's steps, its two stops, node budgets."""
    from pipeline.generation import climb, generator, strategies
    from pipeline.solver.budgets import DEFAULT_SOLVE_NODES

    rows = [row for row in limits.LIMITS if row.what.startswith("generating")]
    values = [row.value for row in rows]
    whats = " ".join(row.what for row in rows)
    steps, branch = strategies.DEEP_CLIMB
    assert f"{climb.START_DRAWS} / {climb.STEPS} / {climb.BRANCH}; {steps:,} / {branch}" in values
    assert f"{generator.PILOT_ATTEMPTS}; 1,000 + 200 per puzzle asked" in values
    assert generator.GenerateParams(cells=27, adds=2).attempt_limit(3) == 1000 + 200 * 3
    assert f"{DEFAULT_SOLVE_NODES:,}" in values
    assert str(generator.SCREEN_BUDGET) in values
    assert values.count(str(strategies.CLIMB.reach_pilot)) == 2
    assert whats.count(f"more than {generator.SCREEN_REACH:g} points") == 2
    assert f"from {strategies.DEEP_FROM:g} (expert)" in whats
    fitted = strategies.SCREEN_ADDS
    assert whats.count(f"{fitted.start}-{fitted.stop - 1}") == 3
    beyond = " ".join(r.beyond for r in rows)
    assert f"more than {generator.SCORE_SLACK:g} points" in beyond
    assert (
        f"unscreened from {climb.OFFER_BELOW:g} points under the window's low end, "
        "`generation.climb.OFFER_BELOW`" in beyond
    )
    assert f"there on {climb.OFFER_HELD} draws in a row, `OFFER_HELD`" in beyond


@pytest.mark.slow
def test_a_big_file_without_aliases_is_not_blamed_on_aliases() -> None:
    from pipeline.formats.loader import load_text

    text = "x: [" + ",".join(["1"] * 1_000_001) + "]\n"
    [problem] = load_text(text, "big.yaml").problems
    assert (
        problem.code == "NM107"
        and "aliases" not in problem.message
        and "more than 1,000,000 values" in problem.message
    )
    bomb = (
        "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    )
    [problem] = load_text(bomb, "bomb.yaml").problems
    assert "once aliases are expanded" in problem.message
