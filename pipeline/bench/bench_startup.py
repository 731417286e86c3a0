"""Start-up time of every command against `python -c pass`, measured in the same run.

Target (issue 23.3): each command's fixed cost at most 0.1 s over bare Python: `numbermatch
--help`, `COMMAND --help` for every command, and `solve`, `rate`, `validate FILE`, `generate`,
`play`, `render` on the smallest input they take (a two-cell board, one puzzle file), so what is
left is start-up, not work. Each row is the median of RUNS runs, the rows interleaved so that
background load shifts every row alike; one warm-up run per row first. Python writes its
bytecode caches as on any user's second run (PYTHONDONTWRITEBYTECODE is dropped for the runs:
without the caches every row would measure compiling the package).

Each row shows wall time and CPU time (user + system of the command's process). On an idle
machine they agree (start-up is one busy thread); on a loaded one the wall clock mostly measures
the other processes, so there the verdict falls back to the CPU time and says so.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline.cli import COMMANDS

RUNS = int(os.environ.get("STARTUP_RUNS", "10"))  # STARTUP_RUNS=3 for a quick look
TARGET = 0.1  # seconds over `python -c pass`
BASELINE = "python -c pass (baseline)"
ROOT = Path(__file__).resolve().parents[2]


def _numbermatch() -> list[str]:
    """The console script next to this Python (what users run), else the same entry point by -c."""
    script = Path(sys.executable).parent / "numbermatch"
    if script.is_file():
        return [str(script)]
    return [
        sys.executable,
        "-c",
        "import sys; from pipeline.cli import main; sys.argv[0] = 'numbermatch'; main()",
    ]


def _puzzle_file(folder: Path) -> Path | None:
    """One committed puzzle file (a night's pool or the stock), copied to `folder`."""
    pools = sorted((ROOT / "generated").glob("**/nm*-*.yaml"))
    if not pools:
        return None
    return Path(shutil.copy(pools[-1], folder / "puzzle.yaml"))


def cases(folder: Path) -> dict[str, tuple[list[str], str | None]]:
    """Row name -> (command line, stdin)."""
    nm = _numbermatch()
    rows: dict[str, tuple[list[str], str | None]] = {
        BASELINE: ([sys.executable, "-c", "pass"], None)
    }
    rows["numbermatch --help"] = ([*nm, "--help"], None)
    for name in COMMANDS:
        rows[f"numbermatch {name} --help"] = ([*nm, name, "--help"], None)
    rows["numbermatch solve 19"] = ([*nm, "solve", "19"], None)
    rows["numbermatch rate 19 --playouts 1"] = ([*nm, "rate", "19", "--playouts", "1"], None)
    puzzle = _puzzle_file(folder)
    if puzzle is not None:
        rows["numbermatch validate PUZZLE.yaml"] = ([*nm, "validate", str(puzzle)], None)
    out = folder / "generated"
    # one attempt rebuilt and written (attempt 0 of seed 1 at 18 cells is a puzzle today)
    rows["numbermatch generate --attempt 0 --playouts 1"] = (
        [
            *nm,
            "generate",
            "--cells",
            "18",
            "--adds",
            "1",
            "--seed",
            "1",
            "--strategy",
            "random",
            "--attempt",
            "0",
            "--playouts",
            "1",
            "--out",
            str(out),
        ],
        None,
    )
    rows["numbermatch play 19 (q)"] = ([*nm, "play", "19"], "q\n")
    rows["numbermatch render 19 --out -"] = ([*nm, "render", "19", "--out", "-"], None)
    return rows


def _run(cmd: list[str], stdin: str | None, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run: the CPU time (user + system, the child's own) is
    what a loaded machine changes least."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        cmd,
        input=stdin,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["COLUMNS"] = "80"
    with tempfile.TemporaryDirectory(prefix="nm-startup-") as tmp:
        folder = Path(tmp)
        rows = cases(folder)
        times: dict[str, list[float]] = {name: [] for name in rows}
        cpu: dict[str, list[float]] = {name: [] for name in rows}
        for cmd, stdin in rows.values():  # warm-up: bytecode caches, file system caches
            _run(cmd, stdin, env, folder)
        for _ in range(RUNS):
            for name, (cmd, stdin) in rows.items():
                shutil.rmtree(
                    folder / "generated", ignore_errors=True
                )  # generate writes a fresh file each run
                wall, used = _run(cmd, stdin, env, folder)
                times[name].append(wall)
                cpu[name].append(used)
    median = {name: statistics.median(t) for name, t in times.items()}
    median_cpu = {name: statistics.median(t) for name, t in cpu.items()}
    base, base_cpu = median[BASELINE], median_cpu[BASELINE]
    load = os.getloadavg()[0]
    print(
        f"   median of {RUNS} runs each, wall clock and CPU (user + system); {os.cpu_count()} cores, load average {load:.1f}"
    )
    print(
        f"   target: at most {1000 * TARGET:.0f} ms over the baseline (wall; on a loaded machine read the CPU column)"
    )
    print(f"   {'':<46} {'wall':>9}  {'over':>9}  {'ratio':>5}  {'CPU':>8}  {'over':>9}")
    loaded = load >= (os.cpu_count() or 1)
    over = []
    for name in median:
        extra, extra_cpu = median[name] - base, median_cpu[name] - base_cpu
        if name == BASELINE:
            verdict = ""
        elif extra <= TARGET:
            verdict = "ok"
        elif loaded and extra_cpu <= TARGET:
            verdict = "ok by CPU (wall: load)"
        else:
            verdict = "OVER"
            over.append(name)
        print(
            f"   {name:<46} {1000 * median[name]:6.1f} ms  +{1000 * extra:5.1f} ms  {median[name] / base:4.1f}x"
            f"  {1000 * median_cpu[name]:5.1f} ms  +{1000 * extra_cpu:5.1f} ms  {verdict}"
        )
    worst_cpu = max(median_cpu[n] - base_cpu for n in median if n != BASELINE)
    print(
        f"   {len(median) - 1 - len(over)} of {len(median) - 1} commands within {1000 * TARGET:.0f} ms of bare Python"
        f"{' (by CPU time: the machine is loaded)' if loaded else ''}; the most CPU over bare Python: {1000 * worst_cpu:.0f} ms"
    )
