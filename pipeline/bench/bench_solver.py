"""Solver benchmark: fixed, seeded board sets; the solver against the plain DFS baseline, same process.

Sets (random digits from `random.Random(SEED)`; 0-add sets keep only boards whose value classes
are all even): 32- and 36-cell boards at 0 adds, 27-35-cell boards with 1-3 adds, and the
proof-heavy sets: the first 32- and 36-cell even boards of the stream that turn out unsolvable,
plus a 36-cell board the previous solver left `unknown` after 3 million nodes (plain search needs
3.8 million states, about 75 s, to refute it), and the residual proofs: unsolvable boards whose
root passes the pairing test, so that the proof is a real search (the weak spot, about 1.1x before
`order.winning_pairs`). The baseline (`baseline.py`) gets a node cap;
ratios are over the boards both finish, and a capped baseline is only a lower bound on its time.
Every answer is cross-checked: certificates replay, and the baseline agrees where it finishes.

Budget choice (DEFAULT_BUDGET_NODES = 5,000,000, about 50 s at the plain search's ~100,000
nodes/s): scanning 13,600 random 32/36-cell even boards at 0 adds (seeds 11 and 12), 1,324 were
unsolvable; all but about 25 were refuted at the root, and the slowest proof took 1.84 million
nodes (21 s). Solvable boards took at most a few thousand nodes; 65,000 random 20-35-cell boards
with 1 add averaged 1.5 ms, the slowest 11,385 nodes (1.2 s). (Those figures predate
`order.winning_pairs`; with it the slowest of the 23 residual proofs here takes under 90,000 nodes.)
"""

from __future__ import annotations

import random
import statistics
import time

from pipeline.bench.baseline import BaselineCapped, baseline_solve
from pipeline.engine.board import CLASS, format_board, parse
from pipeline.engine.stage import replay
from pipeline.solver.search import SOLVED, UNSOLVABLE, solve

SEED = 20261129
PER_SET = 8
PROOFS_32 = 4
PROOFS_36 = 6
BASELINE_CAP = 1_000_000
OLD_UNKNOWN = "764919949/244814644/772852366/665988294"
# Unsolvable boards whose root passes the pairing test, so the proof is a search: about 1-2% of
# the unsolvable 32/36-cell even boards (found by scanning seeds 11 and 12 of this generator).
SEARCH_PROOFS = (
    "354859778/654396656/198886495/75712",
    "654125827/915424366/299348569/396843932",
    "563981774/912521862/941311459/95896",
    "882795189/918378226/256962361/32123",
    "676977667/458353741/813645325/935878583",
    # Found by scanning 20,000 boards of `random.Random(101)` (32 or 36 cells): the slowest of
    # the 20 that passed the root test (up to 1.9 million nodes and 25 s here) include these.
    "952144111/296141824/669199113/95167",
    "598374874/812823998/912678215/91431",
    "233884138/935888184/237257668/466574895",
    # Every board that passes the root test and is not solved among the first 6,153 boards of
    # `_board(random.Random(102), 32 or 36 alternately, even)`, then the first 6,973 of
    # `random.Random(103)`: no selection. (Three of them, at 1021, 3483 and 5113 of seed 102, the
    # solver before `order.winning_pairs` left `unknown` after 400,000 nodes.)
    "962796616/644346947/516937844/787225748",
    "331738544/227843176/534448278/223755472",
    "879479825/342943631/237572242/936552897",
    "933611589/366521223/459732414/865948383",
    "258681873/328119522/381813133/24871",
    "389594386/121386258/338922979/987363117",
    "763212758/965391914/452769855/69752",
    "661533376/173742337/556468896/759776632",
    "255321367/582457238/989318248/51954",
    "382937263/677397814/451119615/932463124",
    "915377288/497341733/957173761/39362",
    "642335215/686122626/857488283/121822542",
    "336735479/465142619/368957534/877927575",
    "846332123/954166618/919748965/19585",
    "615247535/418692226/444395756/379519814",
)
RESIDUAL = "proofs left to search (pairing test passes at the root)"


def _board(rng: random.Random, n: int, even: bool) -> bytes:
    while True:
        cells = bytes(rng.randint(1, 9) for _ in range(n))
        counts = [0] * 6
        for v in cells:
            counts[CLASS[v]] += 1
        if not even or not any(c & 1 for c in counts):
            return cells


def _proofs(rng: random.Random, n: int, count: int) -> list[tuple[bytes, int]]:
    found: list[tuple[bytes, int]] = []
    while len(found) < count:
        cells = _board(rng, n, True)
        if solve(cells, 0).status == UNSOLVABLE:
            found.append((cells, 0))
    return found


def _sets() -> dict[str, list[tuple[bytes, int]]]:
    rng = random.Random(SEED)
    sets = {
        "32 cells, 0 adds": [(_board(rng, 32, True), 0) for _ in range(PER_SET)],
        "36 cells, 0 adds": [(_board(rng, 36, True), 0) for _ in range(PER_SET)],
        "27-35 cells, 1-3 adds": [
            (_board(rng, rng.randint(27, 35), False), rng.randint(1, 3)) for _ in range(PER_SET)
        ],
    }
    sets["proofs, 32 cells, 0 adds"] = _proofs(rng, 32, PROOFS_32)
    sets["proofs, 36 cells, 0 adds"] = _proofs(rng, 36, PROOFS_36) + [(parse(OLD_UNKNOWN), 0)]
    sets[RESIDUAL] = [(parse(b), 0) for b in SEARCH_PROOFS]
    return sets


def _run_set(name: str, boards: list[tuple[bytes, int]]) -> tuple[float, float]:
    print(f"  {name}")
    ours_t, base_t, ratios, ours_nodes, capped = [], [], [], 0, 0
    both_ours = both_base = 0.0
    both_t: list[float] = []  # the solver's times on the boards the baseline finishes
    for cells, adds in boards:
        r = solve(cells, adds)
        if r.moves is not None:
            assert replay(cells, r.moves, adds)[0] == b"", format_board(cells)
        t0 = time.perf_counter()
        try:
            ok, bn = baseline_solve(cells, adds, BASELINE_CAP)
            bt = time.perf_counter() - t0
            assert ok == (r.status == SOLVED) and r.status in (SOLVED, UNSOLVABLE), format_board(
                cells
            )
            base = f"{bt:7.3f} s {bn:>8} nodes  ({bt / max(r.seconds, 1e-6):,.0f}x)"
            both_ours += r.seconds
            both_base += bt
            both_t.append(r.seconds)
            ratios.append(bt / max(r.seconds, 1e-6))
            base_t.append(bt)
        except BaselineCapped:
            bt = time.perf_counter() - t0
            capped += 1
            base = f"capped at {BASELINE_CAP} nodes after {bt:.1f} s (>{bt / max(r.seconds, 1e-6):,.0f}x)"
        ours_t.append(r.seconds)
        ours_nodes += r.nodes
        print(
            f"    {format_board(cells):<40} +{adds} {r.status:<10} {r.seconds:7.3f} s {r.nodes:>7} nodes | baseline {base}"
        )
    total = sum(ours_t)
    print(
        f"    median {statistics.median(ours_t):.4f} s, total {total:.3f} s, {ours_nodes / max(total, 1e-9):,.0f} nodes/s;"
        f" baseline median {statistics.median(base_t) if base_t else float('nan'):.3f} s ({capped} capped);"
        f" ratio on the {len(ratios)} boards both finish: total {both_base / max(both_ours, 1e-9):,.1f}x,"
        f" median {statistics.median(ratios) if ratios else float('nan'):,.1f}x"
    )
    if name == RESIDUAL and ratios:
        ours_med, base_med = statistics.median(both_t), statistics.median(base_t)
        print(
            f"    residual proofs, the {len(ratios)} of {len(boards)} boards both finish: solver total {both_ours:.3f} s,"
            f" median {ours_med:.3f} s; baseline total {both_base:.3f} s, median {base_med:.3f} s;"
            f" ratio of totals {both_base / max(both_ours, 1e-9):,.1f}x, of medians {base_med / max(ours_med, 1e-9):,.1f}x,"
            f" median per-board ratio {statistics.median(ratios):,.1f}x (target: 10x)"
        )
    return both_ours, both_base


def main() -> None:
    start = time.perf_counter()
    sets = _sets()
    print(
        f"  (benchmark sets built in {time.perf_counter() - start:.1f} s, seed {SEED}, baseline cap {BASELINE_CAP} nodes)"
    )
    ours = base = 0.0
    proof_ours = proof_base = 0.0
    for name, boards in sets.items():
        o, b = _run_set(name, boards)
        ours += o
        base += b
        if name.startswith("proofs,"):
            proof_ours += o
            proof_base += b
    print(
        f"  proof sets (32/36 cells, seeded), boards both finish: solver {proof_ours:.3f} s, baseline {proof_base:.2f} s, ratio {proof_base / max(proof_ours, 1e-9):,.0f}x"
    )
    print(
        f"  all sets, boards both finish: solver {ours:.3f} s, baseline {base:.2f} s, ratio {base / max(ours, 1e-9):,.0f}x"
    )
