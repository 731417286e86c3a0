"""Every budget bounds all the work: the solver's node budget and timeout cover the root tests,
and boards cannot grow past the documented limits (`pipeline.solver.budgets`, `pipeline.limits`)."""

from __future__ import annotations

import random
import time

import pytest

from pipeline.engine.board import CLASS
from pipeline.limits import MAX_ADDS, MAX_SOLVE_CELLS, LimitError
from pipeline.solver import solve
from pipeline.solver.search import UNKNOWN


def _even_board(seed: int, n: int) -> bytes:
    """A random board of about n cells whose value classes all have even counts (so parity
    does not refute it and the dead-state test runs)."""
    rng = random.Random(seed)
    cells = bytearray(rng.randrange(1, 10) for _ in range(n))
    counts = [0] * 6
    for v in cells:
        counts[CLASS[v]] += 1
    cells.extend(k for k in range(1, 6) if counts[k] % 2)
    return bytes(cells)


# Found by search: random 200-cell boards on which the dead-state test at the root alone ran for
# minutes before its work counted against the budget.
BIG = _even_board(4, 200)


def test_node_budget_bounds_the_root_dead_state_test():
    start = time.perf_counter()
    result = solve(BIG, 0, budget_nodes=1000)
    elapsed = time.perf_counter() - start
    assert result.status == UNKNOWN and result.moves is None
    assert 1000 <= result.nodes <= 1010
    assert elapsed < 30  # about 1.5 s alone on one core; minutes before the fix


def test_timeout_bounds_the_root_dead_state_test():
    start = time.perf_counter()
    result = solve(BIG, 0, budget_nodes=None, timeout=0.5)
    assert result.status == UNKNOWN
    assert time.perf_counter() - start < 10


def test_small_boards_count_nodes_as_before():
    """The free allowance of the dead-state test covers ordinary boards: a budget of 1 node
    still stops a 36-cell search after one node, and an ordinary solve fits the default."""
    assert solve(_even_board(4, 36), 0, budget_nodes=1).nodes <= 2


def test_board_growth_by_adds_is_bounded(monkeypatch):
    """An add that would grow the board past the solver's cell limit ends in `unknown` (never a
    guess, never a MemoryError); with the real limit, 16 adds on a 1,000-cell board would
    otherwise ask for 65 million cells."""
    import pipeline.solver.search as search

    assert solve("123456789", 1, budget_nodes=None).status == "solved"  # needs its add
    monkeypatch.setattr(search, "MAX_SOLVE_CELLS", 17)
    assert solve("123456789", 1, budget_nodes=None).status == UNKNOWN


def test_solve_refuses_boards_and_adds_beyond_the_limits():
    with pytest.raises(LimitError, match="limit"):
        solve(bytes([1]) * (MAX_SOLVE_CELLS + 1), 0)
    with pytest.raises(LimitError, match="limit"):
        solve(b"\x01\x02", MAX_ADDS + 1)
