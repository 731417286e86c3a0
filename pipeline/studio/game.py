"""A game in the studio: a start, a move list, and what the engine and solver say about it.

The browser sends the moves played so far (`0,0-1,0;+;2,3-2,4`); the position is always
recomputed by replaying them with `pipeline.engine`, so the server holds no game state and an
address always shows the same position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.engine.board import format_board
from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.engine.stage import apply_move, status_of
from pipeline.errors import IllegalMoveError, MoveSyntaxError
from pipeline.limits import MAX_STUDIO_MOVES
from pipeline.solver import advice
from pipeline.solver.advice import Fewest as Winnable
from pipeline.solver.advice import Hint
from pipeline.solver.budgets import HINT_BUDGET_NODES

SEPARATOR = ";"


def parse_moves(text: str) -> tuple[Move, ...]:
    """Moves from `m1;m2;...` (empty text: no moves); raises MoveSyntaxError."""
    parts = [p for p in text.split(SEPARATOR) if p.strip()] if text else []
    if len(parts) > MAX_STUDIO_MOVES:
        raise MoveSyntaxError(
            f"{len(parts)} moves given; a game in the studio has at most {MAX_STUDIO_MOVES}"
        )
    return tuple(Move.parse(p) for p in parts)


def moves_text(moves: Sequence[Move]) -> str:
    return SEPARATOR.join(str(m) for m in moves)


@dataclass(frozen=True)
class Position:
    """The start, the moves played, and the board and adds left they lead to (under `ruleset`)."""

    start: bytes
    adds: int
    moves: tuple[Move, ...]
    cells: bytes
    adds_left: int
    ruleset: Ruleset = DEFAULT

    @property
    def status(self) -> str:
        return str(status_of(self.cells, self.adds_left, self.ruleset))

    @property
    def board(self) -> str:
        return format_board(self.cells)

    @property
    def moves_text(self) -> str:
        return moves_text(self.moves)

    def then(self, move: Move) -> Position:
        """The position after one more move; raises IllegalMoveError with the engine's reason."""
        cells, left = apply_move(self.cells, move, self.adds_left, self.ruleset)
        return Position(self.start, self.adds, self.moves + (move,), cells, left, self.ruleset)

    def undo(self) -> Position:
        return replay(self.start, self.adds, self.moves[:-1], self.ruleset)

    def pair_problem(self, i: int, j: int) -> str | None:
        """The engine's reason why (i, j) is not a legal pair here, or None."""
        return self.ruleset.pair_problem(self.cells, i, j)


def replay(start: bytes, adds: int, moves: Sequence[Move], ruleset: Ruleset = DEFAULT) -> Position:
    """Replay `moves` from the start; an illegal one raises IllegalMoveError naming its number."""
    cells, left = start, adds
    for n, move in enumerate(moves, 1):
        try:
            cells, left = apply_move(cells, move, left, ruleset)
        except IllegalMoveError as exc:
            raise IllegalMoveError(f"move {n}: {exc}") from exc
    return Position(start, adds, tuple(moves), cells, left, ruleset)


def hint(pos: Position, budget: int = HINT_BUDGET_NODES) -> Hint:
    """A move after which the Stage is still winnable (the solver layer's one hint)."""
    return advice.hint(pos.cells, pos.adds_left, ruleset=pos.ruleset, budget=budget)


def winnable(pos: Position, budget: int = HINT_BUDGET_NODES) -> Winnable:
    """Whether the position can still be won and with how few adds (the solver layer's one
    fewest-adds search)."""
    return advice.fewest_adds(pos.cells, pos.adds_left, ruleset=pos.ruleset, budget=budget)


def certificate_step(
    start: bytes, adds: int, solution: Sequence[str], step: int, ruleset: Ruleset = DEFAULT
) -> tuple[Position, Move | None]:
    """The position after `step` moves of the certificate, and the move that comes next."""
    moves = parse_moves(SEPARATOR.join(solution))
    step = max(0, min(step, len(moves)))
    return replay(start, adds, moves[:step], ruleset), (moves[step] if step < len(moves) else None)
