"""Start-up time of the CLI: engine commands (typer-free fast path), a typer command, `--help`
(every command module), each against `python -c pass` measured in the same run.

Target: the engine commands (`show`, `moves`, `apply`) start in under 0.1 s. Each figure is the
fastest of N interleaved runs, so background load affects every row alike.
"""

from __future__ import annotations

import subprocess
import sys
import time

RUNS = 10
TARGET = 0.1


def _cli(*args: str) -> list[str]:
    code = f"import sys; sys.argv = ['numbermatch', *{list(args)!r}]; from pipeline.cli import main; main()"
    return [sys.executable, "-c", code]


def main() -> None:
    cases = {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "numbermatch show 123456789/98765": _cli("show", "123456789/98765"),
        "numbermatch moves 1.......9/3.5 --json": _cli("moves", "1.......9/3.5", "--json"),
        "numbermatch apply 19 0,0-0,1": _cli("apply", "19", "0,0-0,1"),
        "numbermatch solve 19 (typer, one module)": _cli("solve", "19"),
        "numbermatch --help (every module)": _cli("--help"),
    }
    best = {name: float("inf") for name in cases}
    for _ in range(RUNS):
        for name, cmd in cases.items():
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            best[name] = min(best[name], time.perf_counter() - start)
    base = best["python -c pass (baseline)"]
    for name, seconds in best.items():
        print(f"   {name:<44} {1000 * seconds:7.1f} ms  {seconds / base:5.1f}x baseline")
    engine = max(best[n] for n in list(cases)[1:4])
    verdict = "met" if engine < TARGET else "NOT met (a loaded machine inflates every row; compare the ratios)"
    print(f"   slowest engine command {1000 * engine:.1f} ms: target < {1000 * TARGET:.0f} ms {verdict}")
