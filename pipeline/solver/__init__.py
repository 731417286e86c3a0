"""The solver: `solve(board, adds)` with replayable certificates, and the sound search rules it uses.

`search` runs the search; `mask` (a stretch between adds as a bitmask), `order` (the dead-state
test) and `shortcuts` (parity and the reading-order stack certificate) hold the pruning rules,
each with its soundness argument.
"""

from pipeline.solver.budgets import DEFAULT_BUDGET_NODES
from pipeline.solver.search import SOLVED, UNKNOWN, UNSOLVABLE, SolveResult, solve

__all__ = ["DEFAULT_BUDGET_NODES", "SOLVED", "UNKNOWN", "UNSOLVABLE", "SolveResult", "solve"]
