"""Generator throughput: validated puzzles per second per core, 27 and 35 cells, every tier.

Run: `python -m pipeline.bench generator`. For each board size and tier it generates a few
puzzles with every core and prints puzzles per CPU second (= per second per core when the
cores are busy; CPU time of the main process and its workers, so a shared machine does not
skew it), the attempts it took and the acceptance rate. The baseline is the `random` strategy; the `constructive`
strategy is measured on the same targets and printed as a ratio (it is cheaper per attempt
but its boards skew easy, so it may not reach the harder tiers within its attempt bound: `-`).
Each accepted puzzle is re-checked here: its certificate must replay to the empty board.
A last line compares one worker with all of them on the same target: wall time and CPU time
(same puzzles, by design).
"""

from __future__ import annotations

import os
import resource
import time

from pipeline.engine.board import parse
from pipeline.engine.stage import replay
from pipeline.generation.generator import GenerateParams, GenerateResult, GenerationError, generate
from pipeline.rating.tiers import TIER_NAMES

SIZES = (27, 35)
COUNT = 4
# adds per tier: more adds make a Stage easier (odd boards need at least one)
ADDS = {"easy": 3, "medium": 2, "hard": 1, "expert": 1}
CONSTRUCTIVE_MAX_ATTEMPTS = 80
SCALING_COUNT = 12


def _cpu() -> float:
    """CPU seconds of this process and its reaped workers (the machine may be shared)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _run(
    cells: int,
    tier: str,
    strategy: str,
    jobs: int,
    max_attempts: int | None = None,
    count: int = COUNT,
) -> tuple[GenerateResult | None, float]:
    params = GenerateParams(
        cells=cells,
        adds=ADDS[tier],
        tier=tier,
        strategy=strategy,
        seed=2026,
        max_attempts=max_attempts,
    )
    start = _cpu()
    try:
        result = generate(count, params, jobs=jobs)
    except GenerationError:
        return None, _cpu() - start
    cpu = _cpu() - start
    for p in result.puzzles:
        assert replay(parse(p.board), p.solution, p.adds)[0] == b"", p.id
        assert p.tier == tier
    return result, cpu


def main() -> None:
    jobs = os.cpu_count() or 1
    print(f"   {COUNT} puzzles per target, {jobs} workers, seed 2026; rate = puzzles / CPU s")
    print(
        f"   {'cells':>5} {'adds':>4} {'tier':<7} {'random/s/core':>13} {'attempts':>8} {'accept':>7}"
        f" {'constructive/s/core':>19} {'ratio':>6}"
    )
    for cells in SIZES:
        for tier in TIER_NAMES:
            base, base_cpu = _run(cells, tier, "random", jobs)
            other, other_cpu = _run(cells, tier, "constructive", jobs, CONSTRUCTIVE_MAX_ATTEMPTS)
            if base is None:
                print(f"   {cells:>5} {ADDS[tier]:>4} {tier:<7} {'-':>13}")
                continue
            base_rate = len(base.puzzles) / base_cpu
            line = (
                f"   {cells:>5} {ADDS[tier]:>4} {tier:<7} {base_rate:>13.3f} {base.attempts:>8}"
                f" {100 * base.acceptance_rate:>6.1f}%"
            )
            if other is not None:
                other_rate = len(other.puzzles) / other_cpu
                line += f" {other_rate:>19.3f} {other_rate / base_rate:>5.2f}x"
            else:
                line += f" {'-':>19} {'-':>6}"
            print(line, flush=True)
    if jobs > 1:
        walls, cpus, results = [], [], []
        for j in (1, jobs):
            start = time.perf_counter()
            result, cpu = _run(27, "hard", "random", j, count=SCALING_COUNT)
            walls.append(time.perf_counter() - start)
            cpus.append(cpu)
            results.append(result)
        assert (
            results[0] is not None
            and results[1] is not None
            and results[0].puzzles == results[1].puzzles
        )
        print(
            f"   27 cells hard x{SCALING_COUNT}: 1 worker {walls[0]:.1f} s wall ({cpus[0]:.1f} s CPU), "
            f"{jobs} workers {walls[1]:.1f} s wall ({cpus[1]:.1f} s CPU): speedup {walls[0] / walls[1]:.2f}x, "
            "identical puzzles"
        )
