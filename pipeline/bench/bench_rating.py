"""Rating benchmark: what rating version 2 costs against version 1, in the same run.

1. Time per rating at the defaults (27 cells / 1 add and 35 cells / 3 adds, random boards):
   version 1 (three players) against version 2 (six players), as a ratio.
2. Generation throughput at the nightly job's tier plans (`TIER_PLANS`): puzzles per CPU second
   per tier with the generator rating by version 1, then by version 2 (same seeds, one process),
   and the ratio.

Whether the score orders boards for players it does not use is `make rating-study`
(`pipeline/bench/study_rating.py`): it takes minutes, so it is not part of `make bench`.
"""

from __future__ import annotations

import random
import time
from functools import partial

import pipeline.rating.score as score_module
from pipeline.generation.generator import GenerateParams, GenerationError, generate
from pipeline.levels.nightly import TIER_PLANS
from pipeline.rating.score import rate

TIMING_BOARDS = 10
GENERATE_COUNT = 3


def _time(boards: list[tuple[bytes, int]], version: int) -> float:
    start = time.process_time()
    for cells, adds in boards:
        rate(cells, adds, version=version)
    return (time.process_time() - start) / len(boards)


def _throughput(tier: str, version: int) -> tuple[float, int, int]:
    """(puzzles per CPU second, puzzles, attempts) generating GENERATE_COUNT puzzles of `tier`."""
    plan = TIER_PLANS[tier]
    params = GenerateParams(cells=plan.cells, adds=plan.adds, tier=tier, strategy=plan.strategy, seed=2026)
    original = score_module.rate
    score_module.rate = partial(original, version=version)  # the generator imports it at call time
    start = time.process_time()
    try:
        result = generate(GENERATE_COUNT, params, jobs=1)
    except GenerationError:
        return 0.0, 0, 0
    finally:
        score_module.rate = original
    cpu = time.process_time() - start
    return len(result.puzzles) / cpu, len(result.puzzles), result.attempts


def main() -> None:
    for cells_n, adds in ((27, 1), (35, 3)):
        rng = random.Random(cells_n * 10 + adds)
        boards = [(bytes(rng.randint(1, 9) for _ in range(cells_n)), adds) for _ in range(TIMING_BOARDS)]
        v1, v2 = _time(boards, 1), _time(boards, 2)
        print(f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''} ({TIMING_BOARDS} boards, CPU): "
              f"version 1 {v1 * 1000:.0f} ms, version 2 {v2 * 1000:.0f} ms per rating; x{v2 / v1:.2f}", flush=True)
    print(f"   generation at the nightly tier plans ({GENERATE_COUNT} puzzles per tier, 1 process, seed 2026):")
    print(f"   {'tier':<7} {'cells':>5} {'adds':>4} {'v1 puzzles/CPU s':>17} {'attempts':>8} {'v2 puzzles/CPU s':>17} {'attempts':>8} {'v2/v1':>6}")
    for tier, plan in TIER_PLANS.items():
        r1, _, a1 = _throughput(tier, 1)
        r2, _, a2 = _throughput(tier, 2)
        ratio = f"{r2 / r1:.2f}" if r1 and r2 else "-"
        print(f"   {tier:<7} {plan.cells:>5} {plan.adds:>4} {r1:>17.3f} {a1:>8} {r2:>17.3f} {a2:>8} {ratio:>6}", flush=True)
