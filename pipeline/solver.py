"""The solver: is a Stage winnable within its adds allocation? Answers with a certificate or a proof.

`solve()` returns `solved` (with a winning move list anyone can replay), `unsolvable` (only after
an exhaustive search whose every pruning rule is sound, see `search_rules`) or `unknown` (the node
or time budget ran out first). It never guesses.

Search, in order: the O(n) reading-order test (`search_rules.stack_certificate`), a few seeded
random play-outs (unless parity already refutes the board), then depth-first search over (board, adds left) with a
transposition table that remembers, per board, the most adds known not to be enough (a board that
fails with k adds fails with fewer), parity pruning, and geometric pairs tried before reading-order
pairs (reading-order connections never close again, vertical and diagonal ones can).
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass

from .board import Board, parse
from .moves import ADD, Move
from .search_rules import CLASS_OF, classes_even, pairs_ordered, stack_certificate

SOLVED, UNSOLVABLE, UNKNOWN = "solved", "unsolvable", "unknown"

# 3 million expanded states: the hardest 36-cell 0-add proofs we know need about 2 million
# (a few seconds here); ordinary 27-36-cell boards with 0-3 adds need far fewer.
DEFAULT_BUDGET_NODES = 3_000_000
PLAYOUTS = 64


@dataclass(frozen=True)
class SolveResult:
    status: str
    moves: tuple[Move, ...] | None
    nodes: int
    seconds: float

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "moves": None if self.moves is None else [str(m) for m in self.moves],
            "nodes": self.nodes,
            "seconds": round(self.seconds, 6),
        }


class _OutOfBudget(Exception):
    pass


def _cells_of(board: Board | str | bytes) -> bytes:
    if isinstance(board, Board):
        return board.cells
    if isinstance(board, str):
        return parse(board)
    return bytes(board)


def _remove(cells: bytes, i: int, j: int) -> bytes:
    """rules.remove_pair, inlined for the hot loop (tested equal to it)."""
    b = bytearray(cells)
    b[i] = 0
    b[j] = 0
    ri = i - i % 9
    rj = j - j % 9
    if not any(b[rj : rj + 9]):
        del b[rj : rj + 9]
    if ri != rj and not any(b[ri : ri + 9]):
        del b[ri : ri + 9]
    return bytes(b)


def _add(cells: bytes) -> bytes:
    return cells + cells.replace(b"\x00", b"")


class _Search:
    """One exhaustive search; `path` holds the moves of the current branch."""

    def __init__(self, budget: int | None, deadline: float | None) -> None:
        self.nodes = 0
        self.limit = budget if budget is not None else -1
        self.deadline = deadline
        self.failed: dict[bytes, int] = {}
        self.path: list[Move] = []

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes == self.limit + 1:
            raise _OutOfBudget
        if self.deadline is not None and not self.nodes & 1023 and time.perf_counter() > self.deadline:
            raise _OutOfBudget

    def win(self, cells: bytes, adds: int) -> bool:
        """Whether `cells` can be emptied with `adds` adds; on success `path` holds the moves."""
        self.tick()
        if adds == 0 and not classes_even(cells):
            self.failed[cells] = 0
            return False
        if adds:  # at 0 adds the play-outs already tried it at the root; inside, it rarely pays
            tail = stack_certificate(cells)
            if tail is not None:
                self.path.extend(tail)
                return True
        path = self.path
        failed = self.failed
        for i, j in pairs_ordered(cells):
            child = _remove(cells, i, j)
            if not child:
                path.append(Move(i, j))
                return True
            if failed.get(child, -1) >= adds:
                continue
            path.append(Move(i, j))
            if self.win(child, adds):
                return True
            path.pop()
        if adds:
            child = _add(cells)
            if failed.get(child, -1) < adds - 1:
                path.append(ADD)
                if self.win(child, adds - 1):
                    return True
                path.pop()
        failed[cells] = adds
        return False


def _playouts(cells: bytes, adds: int, count: int, search: _Search) -> list[Move] | None:
    """Seeded random games (pairs at random, an add when stuck); a win is a certificate."""
    rng = random.Random(cells + bytes([adds]))
    for _ in range(count):
        c, a, moves = cells, adds, []
        while c:
            search.tick()
            tail = stack_certificate(c)
            if tail is not None:
                return moves + tail
            pairs = pairs_ordered(c)
            if pairs:
                i, j = pairs[rng.randrange(len(pairs))] if rng.random() < 0.7 else pairs[0]
                moves.append(Move(i, j))
                c = _remove(c, i, j)
            elif a:
                moves.append(ADD)
                c, a = _add(c), a - 1
            else:
                break
        else:
            return moves
    return None


def solve(
    board: Board | str | bytes,
    adds: int,
    *,
    budget_nodes: int | None = DEFAULT_BUDGET_NODES,
    timeout: float | None = None,
) -> SolveResult:
    """Decide whether `board` can be emptied with at most `adds` Add numbers.

    `budget_nodes` caps expanded states (None: no cap); `timeout` caps seconds and, unlike the
    node budget, makes the answer depend on the machine, so the pipeline uses nodes only.
    """
    if adds < 0:
        raise ValueError(f"adds allocation must be 0 or more, got {adds}")
    cells = _cells_of(board)
    start = time.perf_counter()
    search = _Search(budget_nodes, None if timeout is None else start + timeout)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))
    try:
        moves = None
        if cells and (adds or classes_even(cells)):
            moves = _playouts(cells, adds, PLAYOUTS, search)
        if moves is None and (not cells or search.win(cells, adds)):
            moves = search.path
    except _OutOfBudget:
        return SolveResult(UNKNOWN, None, search.nodes, time.perf_counter() - start)
    seconds = time.perf_counter() - start
    if moves is None:
        return SolveResult(UNSOLVABLE, None, search.nodes, seconds)
    return SolveResult(SOLVED, tuple(moves), search.nodes, seconds)
