"""The solver: `solve(board, adds)` with replayable certificates, and the sound search rules it uses.

`search` runs the search; `mask` (a stretch between adds as a bitmask), `order` (the dead-state
test) and `shortcuts` (parity and the reading-order stack certificate) hold the pruning rules,
each with its soundness argument.
"""

from typing import TYPE_CHECKING, Any

from pipeline.solver.budgets import DEFAULT_BUDGET_NODES

if TYPE_CHECKING:
    from pipeline.solver.search import SOLVED, UNKNOWN, UNSOLVABLE, SolveResult, solve

__all__ = ["DEFAULT_BUDGET_NODES", "SOLVED", "UNKNOWN", "UNSOLVABLE", "SolveResult", "solve"]
_SEARCH = frozenset(__all__) - {"DEFAULT_BUDGET_NODES"}


def __getattr__(name: str) -> Any:
    """The search's names, loaded with the search on first use (start-up time: reading a budget
    from `pipeline.solver.budgets` for a command's --help does not load the search)."""
    if name in _SEARCH:
        from pipeline.solver import search  # start-up time: see the docstring

        return getattr(search, name)
    raise AttributeError(f"module 'pipeline.solver' has no attribute {name!r}")
