"""Rating benchmark: what the current rating version costs against the earlier ones, same run.

1. Time per rating at the defaults (27 cells / 1 add and 35 cells / 3 adds, random boards):
   versions 1 (three players, traps), 2 (six players, traps) and 3 (seven players, more games for
   the cheap ones, no traps), with the ratio of the current version to version 2.
2. Generation throughput at the nightly job's tier plans (`TIER_PLANS`): puzzles per CPU second
   per tier with the generator rating by version 2, then by the current version (same seeds, one
   process; each version's own tier table), and the ratio.

Whether the score orders boards for players it does not use is `make rating-study`
(`research/study_rating.py`): it takes minutes, so it is not part of `make bench`.
"""

from __future__ import annotations

import random
import time
from functools import partial

import pipeline.rating.score as score_module
from pipeline.generation.generator import GenerateParams, GenerationError, generate
from pipeline.jobs.nightly import TIER_PLANS
from pipeline.rating.score import rate
from pipeline.rating.tiers import RATING_VERSION

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
        t = {v: _time(boards, v) for v in (1, 2, RATING_VERSION)}
        print(f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''} ({TIMING_BOARDS} boards, CPU): "
              + ", ".join(f"version {v} {ms * 1000:.0f} ms" for v, ms in t.items())
              + f" per rating; version {RATING_VERSION} / version 2 x{t[RATING_VERSION] / t[2]:.2f}", flush=True)
    new = RATING_VERSION
    print(f"   generation at the nightly tier plans ({GENERATE_COUNT} puzzles per tier, 1 process, seed 2026):")
    print(f"   {'tier':<7} {'cells':>5} {'adds':>4} {'v2 puzzles/CPU s':>17} {'attempts':>8} {f'v{new} puzzles/CPU s':>17} {'attempts':>8} {f'v{new}/v2':>6}")
    for tier, plan in TIER_PLANS.items():
        r1, _, a1 = _throughput(tier, 2)
        r2, _, a2 = _throughput(tier, new)
        ratio = f"{r2 / r1:.2f}" if r1 and r2 else "-"
        print(f"   {tier:<7} {plan.cells:>5} {plan.adds:>4} {r1:>17.3f} {a1:>8} {r2:>17.3f} {a2:>8} {ratio:>6}", flush=True)
