"""Rating benchmark: what the current rating version costs against the earlier ones, same run.

Backends first: CPU per rating at 27 cells / 2 adds, 30/2, 36/1 and 35/5 (random boards) with the
compiled core and in pure Python (`NUMBERMATCH_PUREPYTHON=1`), each in a fresh process, taking
turns, the least of two runs each counting; the ratio, the players' moves per CPU second, the
machine and its load, and whether every rating came out the same.

0. Time per rating (27 cells / 2 adds and 36 cells / 1 add, the nightly's sizes, random boards)
   with the simulated players as they are and as they were before they remembered positions
   (`tests/reference_players.py`, from the checkout), the ratio, and whether every rating came out the same.
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

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from functools import partial
from typing import Any

import pipeline.rating.score as score_module
from pipeline.bench.bench_nightly import machine
from pipeline.bench.checkout import reference_players, reference_players_module
from pipeline.engine.backend import PURE_ENV, describe
from pipeline.generation.generator import GenerateParams, GenerationError, generate
from pipeline.generation.requests import TIER_PLANS
from pipeline.rating.score import rate
from pipeline.rating.tiers import RATING_VERSION

TIMING_BOARDS = 10
GENERATE_COUNT = 3
BACKEND_SIZES = ((27, 2), (30, 2), (36, 1), (35, 5))
_CHILD = (
    "import json, sys; from pipeline.bench.bench_rating import ratings_cpu; "
    "print(json.dumps(ratings_cpu(int(sys.argv[1]), int(sys.argv[2]))))"
)


def ratings_cpu(cells_n: int, adds: int) -> dict[str, Any]:
    """CPU per rating (seconds) and the players' moves per rating over TIMING_BOARDS random
    boards, the backend, and a digest of the ratings (run in a child process per backend)."""
    rng = random.Random(cells_n * 10 + adds)
    boards = [bytes(rng.randint(1, 9) for _ in range(cells_n)) for _ in range(TIMING_BOARDS)]
    rate(boards[0], adds)  # warm: the ray tables, the first imports of the solver
    cpu = moves = 0.0
    digest = hashlib.sha256()
    for cells in boards:
        start = time.process_time()
        rating = rate(cells, adds).to_json()
        cpu += time.process_time() - start
        moves += sum(p["playouts"] * p["mean_moves"] for p in rating["players"].values())
        digest.update(json.dumps(rating, sort_keys=True).encode())
    return {
        "cpu": cpu / len(boards),
        "moves": moves / len(boards),
        "backend": describe(),
        "digest": digest.hexdigest(),
    }


def _child(cells_n: int, adds: int, pure: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if pure:
        env[PURE_ENV] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(cells_n), str(adds)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, Any] = json.loads(out.stdout)
    return found


def backends() -> None:
    """The compiled core against pure Python, per size, same run."""
    print(
        f"   backends: CPU per rating, {TIMING_BOARDS} random boards a size, a fresh process per"
        f" backend, the least of 2 runs each, taking turns; machine: {machine()};"
        f" load average {os.getloadavg()[0]:.1f} before"
    )
    for cells_n, adds in BACKEND_SIZES:
        runs = [(_child(cells_n, adds, False), _child(cells_n, adds, True)) for _ in range(2)]
        fast = min((r[0] for r in runs), key=lambda r: r["cpu"])
        slow = min((r[1] for r in runs), key=lambda r: r["cpu"])
        same = len({r["digest"] for pair in runs for r in pair}) == 1
        label = "compiled" if "compiled" in fast["backend"] else "NOT COMPILED (pure Python)"
        print(
            f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''}:"
            f" {label} {fast['cpu'] * 1000:.1f} ms ({fast['moves'] / fast['cpu'] / 1e6:.2f} M moves/s),"
            f" pure Python {slow['cpu'] * 1000:.0f} ms ({slow['moves'] / slow['cpu'] / 1e6:.2f} M moves/s):"
            f" x{slow['cpu'] / fast['cpu']:.1f} (target 30); ratings {'identical' if same else 'DIFFER'}",
            flush=True,
        )
    print(f"   load average {os.getloadavg()[0]:.1f} after")


def _time(boards: list[tuple[bytes, int]], version: int) -> float:
    start = time.process_time()
    for cells, adds in boards:
        rate(cells, adds, version=version)
    return (time.process_time() - start) / len(boards)


def _throughput(tier: str, version: int) -> tuple[float, int, int]:
    """(puzzles per CPU second, puzzles, attempts) generating GENERATE_COUNT puzzles of `tier`."""
    plan = TIER_PLANS[tier]
    params = GenerateParams(
        cells=plan.cells, adds=plan.adds, tier=tier, strategy=plan.strategy, seed=2026
    )
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


def players_against_reference() -> None:
    """The current players against the reference players, one rating after the other."""
    if reference_players_module() is None:
        print(
            "   rate with the reference players: skipped (tests/reference_players.py is not here)"
        )
        return
    for cells_n, adds in ((27, 2), (36, 1)):
        rng = random.Random(cells_n * 10 + adds)
        boards = [bytes(rng.randint(1, 9) for _ in range(cells_n)) for _ in range(TIMING_BOARDS)]
        now: list[float] = []
        before: list[float] = []
        same = True
        for cells in boards:  # alternated, so a change in the machine's load hits both alike
            start = time.process_time()
            rating = rate(cells, adds).to_json()
            now.append(time.process_time() - start)
            with reference_players():
                start = time.process_time()
                same = same and rate(cells, adds).to_json() == rating
                before.append(time.process_time() - start)
        print(
            f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''} ({TIMING_BOARDS} boards, CPU per rating):"
            f" {sum(now) / len(now) * 1000:.0f} ms; with the reference players {sum(before) / len(before) * 1000:.0f} ms:"
            f" x{sum(before) / sum(now):.2f}; ratings {'identical' if same else 'DIFFER'}",
            flush=True,
        )


def main() -> None:
    backends()
    players_against_reference()
    for cells_n, adds in ((27, 1), (35, 3)):
        rng = random.Random(cells_n * 10 + adds)
        boards = [
            (bytes(rng.randint(1, 9) for _ in range(cells_n)), adds) for _ in range(TIMING_BOARDS)
        ]
        t = {v: _time(boards, v) for v in (1, 2, RATING_VERSION)}
        print(
            f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''} ({TIMING_BOARDS} boards, CPU): "
            + ", ".join(f"version {v} {ms * 1000:.0f} ms" for v, ms in t.items())
            + f" per rating; version {RATING_VERSION} / version 2 x{t[RATING_VERSION] / t[2]:.2f}",
            flush=True,
        )
    new = RATING_VERSION
    print(
        f"   generation at the nightly tier plans ({GENERATE_COUNT} puzzles per tier, 1 process, seed 2026):"
    )
    print(
        f"   {'tier':<7} {'cells':>5} {'adds':>4} {'v2 puzzles/CPU s':>17} {'attempts':>8} {f'v{new} puzzles/CPU s':>17} {'attempts':>8} {f'v{new}/v2':>6}"
    )
    for tier, plan in TIER_PLANS.items():
        r1, _, a1 = _throughput(tier, 2)
        r2, _, a2 = _throughput(tier, new)
        ratio = f"{r2 / r1:.2f}" if r1 and r2 else "-"
        print(
            f"   {tier:<7} {plan.cells:>5} {plan.adds:>4} {r1:>17.3f} {a1:>8} {r2:>17.3f} {a2:>8} {ratio:>6}",
            flush=True,
        )
