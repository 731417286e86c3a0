"""Advice on a position: a hint (a move that keeps the Stage winnable) and the fewest adds that
still win. One algorithm for each, used by `numbermatch play`, the studio and the rating, so
they cannot answer differently on the same position under the same budget.

Both are bounded by node budgets, never clocks: the hint shares one budget between its solves;
the fewest-adds search gives each step its own budget (a step is one question: "can it still be
won with one add fewer?"), and it searches down from a winning line, so every answer it gives is
backed by a certificate (`moves`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.solver.search import SOLVED, UNSOLVABLE, solve


@dataclass(frozen=True)
class Hint:
    """A move after which the Stage is still winnable (`status` solved), or why there is none
    (`status` unsolvable or unknown, `move` None). `move` is an add only when no legal pair
    was found to keep the Stage winnable within the budget."""

    status: str
    move: Move | None
    nodes: int


def hint(cells: bytes, adds_left: int, *, ruleset: Ruleset = DEFAULT, budget: int) -> Hint:
    """The first move of the solver's winning line; when that is an Add and the board has legal
    pairs, each pair is tried with what is left of the budget, since a player asking for a hint
    expects a pair when one keeps the Stage winnable."""
    result = solve(cells, adds_left, ruleset=ruleset, budget_nodes=budget)
    nodes = result.nodes
    move = result.moves[0] if result.status == SOLVED and result.moves else None
    if move is not None and move.is_add:
        for i, j in ruleset.legal_pairs(cells):
            left = budget - nodes
            if left <= 0:
                break
            tried = solve(
                ruleset.remove_pair(cells, i, j), adds_left, ruleset=ruleset, budget_nodes=left
            )
            nodes += tried.nodes
            if tried.status == SOLVED:
                return Hint(SOLVED, Move(i, j), nodes)
    return Hint(result.status, move, nodes)


@dataclass(frozen=True)
class Fewest:
    """Whether the position can be won and with how few adds.

    `status` is the solver's answer with every add left (or solved, when a certificate was
    given); when solved, `fewest` is the fewest adds found to be enough, `moves` a winning line
    that uses them, and `exact` says whether one add fewer was proved not to be enough."""

    status: str
    fewest: int | None
    exact: bool
    nodes: int
    moves: tuple[Move, ...] = ()

    @property
    def proved(self) -> int | None:
        """`fewest` when it is proved minimal, else None (the rating's `min_adds`)."""
        return self.fewest if self.exact else None


def fewest_adds(
    cells: bytes,
    adds_left: int,
    *,
    ruleset: Ruleset = DEFAULT,
    budget: int,
    certificate: Sequence[Move] | None = None,
) -> Fewest:
    """Search down from a winning line (the `certificate`, else the solver's with every add
    left): while one add fewer still wins, take that line; stop when it is proved impossible
    (exact) or the step's `budget` runs out (not exact)."""
    nodes = 0
    if certificate is None:
        result = solve(cells, adds_left, ruleset=ruleset, budget_nodes=budget)
        nodes = result.nodes
        if result.status != SOLVED or result.moves is None:
            return Fewest(result.status, None, False, nodes)
        certificate = result.moves
    best = tuple(certificate)
    used = sum(m.is_add for m in best)
    while used > 0:
        fewer = solve(cells, used - 1, ruleset=ruleset, budget_nodes=budget)
        nodes += fewer.nodes
        if fewer.status != SOLVED or fewer.moves is None:
            return Fewest(SOLVED, used, fewer.status == UNSOLVABLE, nodes, best)
        best = fewer.moves
        used = sum(m.is_add for m in best)
    return Fewest(SOLVED, 0, True, nodes, best)


__all__ = ["Fewest", "Hint", "fewest_adds", "hint"]
