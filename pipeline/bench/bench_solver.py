"""Solver benchmark: fixed, seeded board sets; the solver against the plain DFS baseline, same process.

Sets (random digits from `random.Random(SEED)`; 0-add sets keep only boards whose classes are all
even): 32- and 36-cell boards at 0 adds, 27-35-cell boards with 1-3 adds, and a proof set: the
first 32-cell even boards of the stream that the solver proves unsolvable (bounded search).
The baseline gets a node cap; ratios are reported over the boards both finish.
"""

from __future__ import annotations

import random
import statistics
import time

from ..board import CLASS, format_board
from ..solver import SOLVED, UNSOLVABLE, solve
from .baseline import BaselineCapped, baseline_solve

SEED = 20261129
PER_SET = 8
PROOFS = 6
BASELINE_CAP = 400_000
PROOF_SEARCH_CAP = 300_000


def _board(rng: random.Random, n: int, even: bool) -> bytes:
    while True:
        cells = bytes(rng.randint(1, 9) for _ in range(n))
        counts = [0] * 6
        for v in cells:
            counts[CLASS[v]] += 1
        if not even or not any(c & 1 for c in counts):
            return cells


def _sets() -> dict[str, list[tuple[bytes, int]]]:
    rng = random.Random(SEED)
    sets = {
        "32 cells, 0 adds": [(_board(rng, 32, True), 0) for _ in range(PER_SET)],
        "36 cells, 0 adds": [(_board(rng, 36, True), 0) for _ in range(PER_SET)],
        "27-35 cells, 1-3 adds": [(_board(rng, rng.randint(27, 35), False), rng.randint(1, 3)) for _ in range(PER_SET)],
    }
    proofs = []
    while len(proofs) < PROOFS:
        cells = _board(rng, 32, True)
        if solve(cells, 0, budget_nodes=PROOF_SEARCH_CAP).status == UNSOLVABLE:
            proofs.append((cells, 0))
    sets["proofs (32 cells, 0 adds, unsolvable)"] = proofs
    return sets


def _run_set(name: str, boards: list[tuple[bytes, int]]) -> tuple[float, float]:
    print(f"  {name}")
    ours_t, base_t, ratios, ours_nodes = [], [], [], 0
    both_ours = both_base = 0.0
    for cells, adds in boards:
        r = solve(cells, adds)
        t0 = time.perf_counter()
        try:
            ok, bn = baseline_solve(cells, adds, BASELINE_CAP)
            bt = time.perf_counter() - t0
            assert ok == (r.status == SOLVED), format_board(cells)
            base = f"{bt:7.3f} s {bn:>8} nodes"
            both_ours += r.seconds
            both_base += bt
            ratios.append(bt / max(r.seconds, 1e-6))
            base_t.append(bt)
        except BaselineCapped:
            base = f"   capped at {BASELINE_CAP} nodes"
        ours_t.append(r.seconds)
        ours_nodes += r.nodes
        print(f"    {format_board(cells):<40} +{adds} {r.status:<10} {r.seconds:7.3f} s {r.nodes:>8} nodes | baseline {base}")
    total = sum(ours_t)
    print(
        f"    median {statistics.median(ours_t):.3f} s, total {total:.2f} s, {ours_nodes / max(total, 1e-9):,.0f} nodes/s;"
        f" baseline median {statistics.median(base_t) if base_t else float('nan'):.3f} s;"
        f" ratio on boards both finish: total {both_base / max(both_ours, 1e-9):.1f}x,"
        f" median {statistics.median(ratios) if ratios else float('nan'):.1f}x"
    )
    return both_ours, both_base


def main() -> None:
    start = time.perf_counter()
    sets = _sets()
    print(f"  (benchmark sets built in {time.perf_counter() - start:.1f} s, seed {SEED})")
    ours = base = 0.0
    for name, boards in sets.items():
        o, b = _run_set(name, boards)
        ours += o
        base += b
    print(f"  all sets, boards both finish: solver {ours:.2f} s, baseline {base:.2f} s, ratio {base / max(ours, 1e-9):.1f}x")
