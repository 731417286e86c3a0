"""A whole night, as `make nightly` runs it: the figure the README states, with the machine.

Run: `python -m pipeline.bench nightly` (or `make bench`). It runs `numbermatch nightly` for the
committed night's date, generating every puzzle (10 Levels x 6 Stages on the ramp curve,
`--no-stock`; a night drawn from the stock generates only its
shortfall, see `bench stock`), with every core, into a temp folder, in a fresh process as a user would, and prints the wall-clock time, the CPU time of the
job and its worker processes, the cores it had, the load the machine was under (another job on a
shared machine slows a night down), and the phases from its run.log. The baseline in the same run
is the bare interpreter's start (`python -c pass`), which the wall time is printed against.

Then the figures issue 35 asks of the night from scratch under the default rating version
(`backends`), same run: the same night with the compiled core; in pure Python
(`NUMBERMATCH_PUREPYTHON=1`) on its first `PURE_LEVELS` Levels, against the compiled core on the
same Levels (a pure-Python night under version 4's game counts takes the better part of an hour:
the output says which Levels it ran), the CPU ratio (target 10) and whether the two bundles are
byte-identical; and the same night as `checkout.RATING_BASELINE` (the pure-Python code of
version 3, before the compiled core) ran it, checked out into a temporary worktree: the CPU
ratio (target 3).

Then the night `make nightly` runs in a fresh clone: the default night (the `campaign` curve from
the committed stock, continuing the committed nights, with the stock's refill after it), on a
copy of the committed `generated/`: its wall time, and its CPU split into the night and the
refill, as the job prints them. docs/nightly.md quotes this run; the README links there.

Then the night on the shipped `campaign` curve (`--no-stock`), as it runs and as the code of
`checkout.NIGHTLY_BASELINE` (checked out from this repository's history into a temporary
worktree, run with this interpreter) ran it, same run: the CPU of each, their ratio, and each one's total deviation from
the curve (it must be no larger now); each twice, taking turns, the least CPU of each counting.
Then once more with the simulated players as they were
before they remembered positions (`tests/reference_players.py`, also in the forked workers): the CPU ratio, and whether the two bundles are byte-identical (they must be: the
players play the same games).
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline.bench.checkout import (
    NIGHTLY_BASELINE,
    RATING_BASELINE,
    commit_checked_out,
    reference_players_module,
)
from pipeline.engine.backend import PURE_ENV, describe
from pipeline.rating.tiers import RATING_VERSION

DATE = "2026-11-29"  # the committed night's date and seed
NIGHT = ["--levels", "10", "--stages", "6", "--curve", "ramp", "--no-stock"]  # everything generated
PURE_LEVELS = (
    2  # the Levels of NIGHT the pure-Python backend plays (the compiled core too, to compare)
)
CAMPAIGN = ["--levels", "10", "--stages", "6", "--curve", "campaign", "--no-stock"]
# the same command line, with the reference players swapped in (they reach the forked workers)
WITH_REFERENCE = (
    "import sys; from pipeline.bench.checkout import reference_players; from pipeline.cli import main\n"
    "with reference_players(): sys.argv[0] = 'numbermatch'; main()"
)


def machine() -> str:
    """What the figure was measured on: CPU model, cores, memory, OS."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{model}, {os.cpu_count()} cores{memory}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def _timed(
    argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) for one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    command = Path(sys.executable).with_name("numbermatch")
    bare, _ = _timed([sys.executable, "-c", "pass"])
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="nm-bench-nightly-") as tmp:
        wall, cpu = _timed([str(command), "nightly", "--date", DATE, *NIGHT, "--out", tmp])
        log = (Path(tmp) / DATE / "run.log").read_text(encoding="utf-8").splitlines()
    print(f"   machine: {machine()}; load average {load:.1f} before the run")
    print(
        f"   nightly --date {DATE} {' '.join(NIGHT)} (all cores): wall {wall:.1f} s, CPU {cpu:.1f} s"
        f" ({cpu / wall:.2f} cores busy on average); bare `python -c pass` {bare * 1000:.0f} ms ({wall / bare:.0f}x)"
    )
    for line in log[1:]:
        print(f"     {line}")
    make_nightly(command)
    backends(command)
    campaign(command)


NEXT = "2026-12-01"  # the night after the committed ones: what `make nightly` makes next


def make_nightly(command: Path) -> None:
    """The default night from the committed stock, with its refill, as `make nightly` runs it in
    a fresh clone (its date fixed to the one after the committed nights, so runs compare)."""
    repo = Path(__file__).resolve().parents[2]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="nm-bench-make-nightly-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", "HEAD", "generated"],
            capture_output=True,
        )
        if archive.returncode != 0:
            print("   make nightly: skipped (no git history here to take the committed stock from)")
            return
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            [str(command), "nightly", "--date", NEXT, "--out", f"{tmp}/generated"],
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = done.stderr.splitlines()
    split = next((ln.split("stock: CPU: ", 1)[1] for ln in lines if "stock: CPU: " in ln), "?")
    refill = next((ln.split(": ", 1)[1] for ln in lines if "refill took" in ln), "no refill")
    print(
        f"   make nightly (= nightly --date {NEXT}: campaign, from the committed stock, then the"
        f" refill; all cores; load {load:.1f} before): wall {wall:.1f} s, CPU {cpu:.1f} s ({split};"
        f" {refill.removeprefix('stock: ')})"
    )


def backends(command: Path) -> None:
    """The night from scratch under the default rating version: with the compiled core, in pure
    Python (`NUMBERMATCH_PUREPYTHON=1`) and the compiled core on its first `PURE_LEVELS` Levels,
    and as `RATING_BASELINE` ran it (pure Python, rating version 3), same run."""
    load = os.getloadavg()[0]
    pure_env = {**os.environ, PURE_ENV: "1"}
    compiled_env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    few = [*NIGHT]
    few[few.index("--levels") + 1] = str(PURE_LEVELS)
    with tempfile.TemporaryDirectory(prefix="nm-bench-backends-") as tmp:
        night = [str(command), "nightly", "--date", DATE]
        full = _timed([*night, *NIGHT, "--out", f"{tmp}/c"], env=compiled_env)
        fast = _timed([*night, *few, "--out", f"{tmp}/c-few"], env=compiled_env)
        slow = _timed([*night, *few, "--out", f"{tmp}/py-few"], env=pure_env)
        same = (Path(tmp) / "c-few" / DATE / "bundle.yaml").read_bytes() == (
            Path(tmp) / "py-few" / DATE / "bundle.yaml"
        ).read_bytes()
        with commit_checked_out(RATING_BASELINE, f"{tmp}/code") as code:
            then = (
                None
                if code is None
                else _timed(
                    [sys.executable, "-m", "pipeline.cli", "nightly", "--date", DATE, *NIGHT]
                    + ["--out", f"{tmp}/then"],
                    cwd=str(code),
                    env=compiled_env,
                )
            )
    print(
        f"   nightly --date {DATE} {' '.join(NIGHT)}, rating version {RATING_VERSION} (all cores,"
        f" load {load:.1f} before):"
    )
    print(f"     {describe()}: CPU {full[1]:.1f} s (wall {full[0]:.1f} s)")
    print(
        f"     pure Python on the first {PURE_LEVELS} of its Levels (--levels {PURE_LEVELS}; the"
        f" whole night, at this ratio, about {slow[1] * full[1] / fast[1] / 60:.0f} CPU minutes): CPU {slow[1]:.1f} s (wall {slow[0]:.1f} s)"
        f" against the compiled core's {fast[1]:.1f} s on the same Levels: x{slow[1] / fast[1]:.1f}"
        f" less CPU compiled (target 10); bundles {'byte-identical' if same else 'DIFFER'}"
    )
    if then is None:
        print(
            f"     as {RATING_BASELINE} ran it: skipped (no git history here to check it out from)"
        )
        return
    print(
        f"     as {RATING_BASELINE} ran it (pure Python, rating version 3): CPU {then[1]:.1f} s"
        f" (wall {then[0]:.1f} s): x{then[1] / full[1]:.2f} less CPU now (target 3)"
    )


def _night(
    argv: list[str], out: str, options: list[str] = CAMPAIGN, cwd: str | None = None
) -> tuple[float, float, bytes, str]:
    """(wall, CPU, bundle bytes, the assembler's run.log line) of one night into `out`."""
    wall, cpu = _timed([*argv, "nightly", "--date", DATE, *options, "--out", out], cwd=cwd)
    night = Path(out) / DATE
    assemble = next(
        (
            line
            for line in (night / "run.log").read_text(encoding="utf-8").splitlines()
            if line.startswith("assemble:")
        ),
        "assemble: ?",
    )
    return wall, cpu, (night / "bundle.yaml").read_bytes(), assemble


def _deviation(assemble: str) -> str:
    return assemble.split("total deviation ", 1)[-1].split(",", 1)[0]


def campaign(command: Path) -> None:
    """The campaign night now, as `NIGHTLY_BASELINE` ran it, and with the reference players, same run."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="nm-bench-campaign-") as tmp:
        # each twice, taking turns, and the one with the least CPU of each: a shared machine's
        # speed drifts by a tenth within a minute, and a drift only ever adds CPU
        runs = [
            (_night([str(command)], f"{tmp}/now{k}"), _before(f"{tmp}/before{k}", f"{tmp}/code"))
            for k in range(2)
        ]
        now = min((r[0] for r in runs), key=lambda r: r[1])
        found = [r[1] for r in runs if r[1] is not None]
        then = min(found, key=lambda r: r[1]) if found else None
        reference = (
            _night([sys.executable, "-c", WITH_REFERENCE], f"{tmp}/reference")
            if reference_players_module() is not None
            else None
        )
    print(
        f"   nightly --date {DATE} {' '.join(CAMPAIGN)} (all cores, load {load:.1f} before; the least CPU of 2"
        f" runs, each way): CPU {now[1]:.1f} s (wall {now[0]:.1f} s), total deviation {_deviation(now[3])}"
    )
    if then is None:
        print(
            f"     as {NIGHTLY_BASELINE} ran it: skipped (no git history here to check it out from)"
        )
    else:
        print(
            f"     as {NIGHTLY_BASELINE} ran it (the day issue 25 was filed): CPU {then[1]:.1f} s (wall {then[0]:.1f} s),"
            f" total deviation {_deviation(then[3])}: x{then[1] / now[1]:.2f} less CPU now (target: 3)"
        )
    if reference is None:
        print("     with the reference players: skipped (tests/reference_players.py is not here)")
        return
    print(
        f"     with the reference players: CPU {reference[1]:.1f} s: x{reference[1] / now[1]:.2f} less CPU now;"
        f" bundles {'byte-identical' if now[2] == reference[2] else 'DIFFER'}"
    )


def _before(out: str, code: str) -> tuple[float, float, bytes, str] | None:
    """The campaign night as `NIGHTLY_BASELINE` made it (its code checked out into `code`), or None without git history."""
    with commit_checked_out(NIGHTLY_BASELINE, code) as checked_out:
        if checked_out is None:
            return None
        options = [o for o in CAMPAIGN if o != "--no-stock"]
        return _night([sys.executable, "-m", "pipeline.cli"], out, options, cwd=code)


if __name__ == "__main__":
    main()
