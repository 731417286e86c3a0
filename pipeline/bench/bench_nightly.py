"""A whole night, as `make nightly` runs it: the figure the README states, with the machine.

Run: `python -m pipeline.bench nightly` (or `make bench`). It runs `numbermatch nightly` for the
committed night's date, generating every puzzle (10 Levels x 6 Stages on the ramp curve,
`--no-stock`; a night drawn from the stock generates only its
shortfall, see `bench stock`), with every core, into a temp folder, in a fresh process as a user would, and prints the wall-clock time, the CPU time of the
job and its worker processes, the cores it had, the load the machine was under (another job on a
shared machine slows a night down), and the phases from its run.log. The baseline in the same run
is the bare interpreter's start (`python -c pass`), which the wall time is printed against.
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

DATE = "2026-11-29"  # the committed night's date and seed
NIGHT = ["--levels", "10", "--stages", "6", "--curve", "ramp", "--no-stock"]  # everything generated


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


def _timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) for one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    print(f"   nightly --date {DATE} {' '.join(NIGHT)} (all cores): wall {wall:.1f} s, CPU {cpu:.1f} s"
          f" ({cpu / wall:.2f} cores busy on average); bare `python -c pass` {bare * 1000:.0f} ms ({wall / bare:.0f}x)")
    for line in log[1:]:
        print(f"     {line}")


if __name__ == "__main__":
    main()
