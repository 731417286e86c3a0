"""The solver: is a Stage winnable within its adds allocation? Answers with a certificate or a proof.

`solve()` returns `solved` (with the winning move list), `unsolvable` (only after an exhaustive
search whose every pruning rule is sound) or `unknown` (the node or time budget ran out first).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .board import CLASS, Board, parse
from .moves import ADD, Move
from .rules import add_numbers, legal_pairs, remove_pair

SOLVED, UNSOLVABLE, UNKNOWN = "solved", "unsolvable", "unknown"
DEFAULT_BUDGET_NODES = 2_000_000


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


def solve(
    board: Board | str | bytes,
    adds: int,
    *,
    budget_nodes: int | None = DEFAULT_BUDGET_NODES,
    timeout: float | None = None,
) -> SolveResult:
    """Decide whether `board` can be emptied with at most `adds` Add numbers."""
    if adds < 0:
        raise ValueError(f"adds allocation must be 0 or more, got {adds}")
    cells = _cells_of(board)
    start = time.perf_counter()
    deadline = None if timeout is None else start + timeout
    failed: dict[bytes, int] = {}
    path: list[Move] = []
    nodes = 0

    def dfs(c: bytes, a: int) -> bool:
        nonlocal nodes
        if not c:
            return True
        known = failed.get(c)
        if known is not None and known >= a:
            return False
        nodes += 1
        if budget_nodes is not None and nodes > budget_nodes:
            raise _OutOfBudget
        if deadline is not None and nodes & 1023 == 0 and time.perf_counter() > deadline:
            raise _OutOfBudget
        if a == 0:
            counts = [0] * 6
            for v in c:
                counts[CLASS[v]] += 1
            if any(k & 1 for k in counts[1:]):
                failed[c] = a
                return False
        for i, j in legal_pairs(c):
            path.append(Move(i, j))
            if dfs(remove_pair(c, i, j), a):
                return True
            path.pop()
        if a > 0:
            path.append(ADD)
            if dfs(add_numbers(c), a - 1):
                return True
            path.pop()
        failed[c] = a
        return False

    try:
        ok = dfs(cells, adds)
    except _OutOfBudget:
        return SolveResult(UNKNOWN, None, nodes, time.perf_counter() - start)
    status = SOLVED if ok else UNSOLVABLE
    return SolveResult(status, tuple(path) if ok else None, nodes, time.perf_counter() - start)
