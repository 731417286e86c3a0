"""Dask versus the process pool: validated puzzles per second, same run, same seed, 2 workers each.

Run: `python -m pipeline.bench dask`. Generates a small night's tier mix (every tier of the
nightly job's plans, COUNT puzzles each, seeds as the nightly derives them) once on a process
pool of 2 workers and once on `local:2` (a LocalCluster of 2 single-threaded worker processes),
in alternating rounds so a shared machine's load falls on both alike. A puzzle counts when the
validator accepts its file; both runs must give the same puzzles. Throughput is puzzles per
wall-clock second of generation; the cluster's start-up is printed apart (a real night starts
it once). Then a sizing table: workers needed for a night of 1,000 / 10,000 / 100,000 puzzles
within an hour, from the measured per-worker (= per-core) throughput on this mix.
"""

from __future__ import annotations

import math
import resource
import time

from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.generation.executors import DaskExecutor, Executor, PoolExecutor, connect
from pipeline.generation.generator import GenerateParams, generate
from pipeline.generation.requests import TIER_PLANS, stream_seed
from pipeline.validator import validate_texts

WORKERS = 2
COUNT = 3  # puzzles per tier per round
ROUNDS = 2
SEED = 2026
NIGHTS = (1_000, 10_000, 100_000)
HOUR = 3600.0


def _mix(round_: int) -> list[GenerateParams]:
    return [
        GenerateParams(
            cells=plan.cells,
            adds=plan.adds,
            tier=tier,
            strategy=plan.strategy,
            seed=stream_seed(SEED + round_, tier),
        )
        for tier, plan in TIER_PLANS.items()
    ]


def _cpu_self() -> float:
    """CPU seconds of the calling process (a Dask worker, when run there)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _cpu(executor: Executor) -> float:
    """CPU seconds of this process and the executor's workers (pool workers once reaped)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = _cpu_self() + kids.ru_utime + kids.ru_stime
    if isinstance(executor, DaskExecutor):
        total += sum(executor.client.run(_cpu_self).values())
    return total


def _night(executor: Executor, round_: int) -> tuple[list[Puzzle], float, float, int]:
    """(puzzles, wall seconds, CPU seconds, attempts) for one round of the mix on `executor`."""
    puzzles: list[Puzzle] = []
    attempts = 0
    start, cpu = time.perf_counter(), _cpu(executor)
    for params in _mix(round_):
        result = generate(COUNT, params, executor=executor, exclude_ids={p.id for p in puzzles})
        puzzles.extend(result.puzzles)
        attempts += result.attempts
    return puzzles, time.perf_counter() - start, _cpu(executor) - cpu, attempts


def _valid(puzzles: list[Puzzle]) -> int:
    report = validate_texts((f"{p.id}.yaml", dump_yaml(p.to_document())) for p in puzzles)
    bad = {problem.file for problem in report.problems}
    return sum(1 for p in puzzles if f"{p.id}.yaml" not in bad)


def main() -> None:
    started = time.perf_counter()
    dask = connect(f"local:{WORKERS}")
    startup = time.perf_counter() - started
    pool = PoolExecutor(WORKERS)
    totals: dict[str, list[float]] = {
        "pool": [0, 0.0, 0.0, 0],
        "dask": [0, 0.0, 0.0, 0],
    }  # valid, wall s, CPU s, attempts
    try:
        for r in range(ROUNDS):
            runs = {}
            for name, executor in (
                (("pool", pool), ("dask", dask)) if r % 2 == 0 else (("dask", dask), ("pool", pool))
            ):
                puzzles, seconds, cpu, attempts = _night(executor, r)
                runs[name] = puzzles
                t = totals[name]
                t[0] += _valid(puzzles)
                t[1] += seconds
                t[2] += cpu
                t[3] += attempts
            assert [p.to_document() for p in runs["pool"]] == [
                p.to_document() for p in runs["dask"]
            ], "outputs differ"
    finally:
        dask.close()
    rate = {name: t[0] / t[1] for name, t in totals.items()}
    per_cpu = {name: t[0] / t[2] for name, t in totals.items()}
    print(
        f"   {ROUNDS} rounds x {len(TIER_PLANS)} tiers x {COUNT} puzzles, seed {SEED}, {WORKERS} workers each;"
        f" identical puzzles; rate = validated puzzles / wall s (CPU s: workers and this process)"
    )
    for name in ("pool", "dask"):
        n_valid, wall, cpu_s, n_attempts = totals[name]
        label = f"process pool ({WORKERS})" if name == "pool" else f"dask local:{WORKERS}"
        print(
            f"   {label:<17} {n_valid:>3.0f} valid, {n_attempts:>4.0f} attempts, {wall:6.1f} s wall {cpu_s:6.1f} s CPU:"
            f" {rate[name]:.3f} puzzles/s, {per_cpu[name]:.3f} per CPU s"
        )
    print(
        f"   dask / pool throughput: {rate['dask'] / rate['pool']:.2f}x wall (target >= 0.90),"
        f" {per_cpu['dask'] / per_cpu['pool']:.2f}x per CPU s; LocalCluster start-up {startup:.1f} s (not counted)"
    )
    per_core = per_cpu["dask"]
    print(
        f"   sizing from {per_core:.3f} puzzles per CPU s (= per busy core) on Dask, this tier mix:"
    )
    for night in NIGHTS:
        workers = math.ceil(night / (per_core * HOUR))
        print(
            f"     {night:>7,} puzzles in an hour: {workers:>4} single-threaded workers (one core each)"
        )
