"""Engine speed: legal-pair generation against a naive all-pairs baseline, each rule function
of the backend that runs against the pure Python reference (`rules.PURE`) in the same run, and
the CLI stream.

Run: `python -m pipeline.bench engine`.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from pipeline.engine.backend import describe
from pipeline.engine.board import CLASS, format_board
from pipeline.engine.rules import PURE, add_numbers, legal_pairs, pair_problem, remove_pair


def naive_pairs(cells: bytes) -> list[tuple[int, int]]:
    """Baseline: test every pair of active cells with the explicit path check."""
    active = [i for i, v in enumerate(cells) if v]
    return [
        (i, j)
        for x, i in enumerate(active)
        for j in active[x + 1 :]
        if CLASS[cells[i]] == CLASS[cells[j]] and pair_problem(cells, i, j) is None
    ]


def midgame_boards(count: int, cells: int, seed: int, adds: int = 0) -> list[bytes]:
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        b = bytes(rnd.randint(1, 9) for _ in range(cells))
        for _ in range(adds):
            b = add_numbers(b)
        for _ in range(rnd.randint(0, cells // 4)):
            pairs = legal_pairs(b)
            if not pairs:
                break
            b = remove_pair(b, *rnd.choice(pairs))
        if b:
            out.append(b)
    return out


def timed(fn: Callable[[bytes], object], boards: list[bytes], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for b in boards:
            fn(b)
        best = min(best, time.perf_counter() - start)
    return best


def _per_call(fn: Callable[..., object], cases: list[tuple[Any, ...]], repeat: int = 3) -> float:
    """The least time per call over `repeat` passes."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for c in cases:
            fn(*c)
        best = min(best, time.perf_counter() - start)
    return best / len(cases)


def main() -> None:
    for label, boards in (
        ("36-cell mid-game", midgame_boards(2000, 36, seed=1)),
        ("~140-cell (2 adds)", midgame_boards(300, 35, seed=2, adds=2)),
    ):
        assert all(legal_pairs(b) == naive_pairs(b) for b in boards[:200])
        ours = timed(legal_pairs, boards)
        base = timed(naive_pairs, boards, repeat=1)
        n = len(boards)
        print(
            f"   legal_pairs {label:<20} {n / ours:>9,.0f} boards/s ({1e6 * ours / n:6.1f} us)"
            f"   naive baseline {n / base:>8,.0f} boards/s   ratio {base / ours:5.1f}x"
        )
    boards = midgame_boards(2000, 36, seed=3)
    firsts = [(b, p[0]) for b, p in ((b, legal_pairs(b)) for b in boards) if p]
    print(
        f"   {describe()}; against the pure Python functions (rules.PURE), 36-cell mid-game boards:"
    )
    for name, now, pure, cases in (
        ("legal_pairs", legal_pairs, PURE.legal_pairs, [(b,) for b in boards]),
        ("remove_pair", remove_pair, PURE.remove_pair, [(b, i, j) for b, (i, j) in firsts]),
        ("add_numbers", add_numbers, PURE.add_numbers, [(b,) for b in boards]),
    ):
        assert all(now(*c) == pure(*c) for c in cases)
        fast = slow = float("inf")
        for _ in range(5):  # taking turns, the least of each: the machine's load drifts
            fast = min(fast, _per_call(now, cases, 1))
            slow = min(slow, _per_call(pure, cases, 1))
        print(
            f"   {name}: {1e6 * fast:.2f} us per call, pure Python {1e6 * slow:.2f} us: x{slow / fast:.1f}"
        )

    rnd = random.Random(4)
    lines = []
    for _ in range(10_000):
        cells = bytearray(rnd.randint(1, 9) for _ in range(36))
        for k in rnd.sample(range(36), rnd.randint(0, 12)):
            cells[k] = 0
        rows = [bytes(cells[s : s + 9]) for s in range(0, 36, 9)]
        lines.append(format_board(b"".join(r for r in rows if any(r))))
    data = ("\n".join(lines) + "\n").encode()
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.cli.__main__", "moves", "-", "--json"],
        input=data,
        capture_output=True,
        check=True,
    )
    t = time.perf_counter() - start
    assert proc.stdout.count(b"\n") == 10_000
    print(
        f"   `numbermatch moves - --json`, 10,000 boards of 36 cells: {t:.2f} s in one process (incl. start-up)"
    )
