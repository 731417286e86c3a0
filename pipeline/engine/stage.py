"""A Stage: one run of a Puzzle. It owns its adds allocation and knows won / stuck / in play."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import StrEnum

from pipeline.engine.board import Board, cells_of, format_board
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rulesets import DEFAULT, Ruleset, ruleset_for
from pipeline.errors import IllegalMoveError
from pipeline.limits import MAX_CELLS, LimitError, check_adds


class Status(StrEnum):
    """A Stage's state; the value is its text form (`str(Status.WON) == "won"`)."""

    WON = "won"
    STUCK = "stuck"
    IN_PLAY = "in play"


WON, STUCK, IN_PLAY = Status.WON, Status.STUCK, Status.IN_PLAY


def status_of(cells: bytes, adds_left: int, ruleset: Ruleset = DEFAULT) -> Status:
    """`won` (no active number), `stuck` (no pair and no add left) or `in play`."""
    if not cells:
        return WON
    if adds_left > 0 or ruleset.any_pair(cells):
        return IN_PLAY
    return STUCK


def apply_move(
    cells: bytes, move: Move, adds_left: int, ruleset: Ruleset = DEFAULT
) -> tuple[bytes, int]:
    """Play one move on raw cells; returns (cells, adds_left). Raises IllegalMoveError."""
    if move.is_add:
        if adds_left <= 0:
            raise IllegalMoveError(f"illegal move + on board {format_board(cells)!r}: no adds left")
        if not cells:
            raise IllegalMoveError("illegal move + on the empty board: there is nothing to copy")
        grown = ruleset.add_numbers(cells)
        if len(grown) > MAX_CELLS:
            raise LimitError(
                f"move + would grow the board to {len(grown):,} cells; the limit is {MAX_CELLS:,} (docs/limits.md)"
            )
        return grown, adds_left - 1
    assert move.first is not None and move.second is not None
    return ruleset.checked_remove(cells, move.first, move.second, str(move)), adds_left


def replay(
    cells: bytes, moves: Iterable[Move | str], adds: int, ruleset: Ruleset = DEFAULT
) -> tuple[bytes, int]:
    """Play a move list from a start; returns (final cells, adds left)."""
    for move in moves:
        cells, adds = apply_move(
            cells, Move.parse(move) if isinstance(move, str) else move, adds, ruleset
        )
    return cells, adds


class Stage:
    """Mutable game state over an immutable board: `Stage('1.......9/3.5', adds=1)`.

    `ruleset` is a `Ruleset` or the number of a registered one (default: ruleset 1).
    """

    __slots__ = ("adds_left", "cells", "history", "ruleset")

    def __init__(
        self, board: Board | str | bytes, adds: int = 0, ruleset: Ruleset | int | str = DEFAULT
    ) -> None:
        self.ruleset: Ruleset = ruleset_for(ruleset)
        self.cells = cells_of(board)
        if adds < 0:
            raise ValueError(f"adds allocation must be 0 or more, got {adds}")
        check_adds(adds)
        self.adds_left = adds
        self.history: list[Move] = []

    @property
    def board(self) -> Board:
        return Board(self.cells)

    @property
    def status(self) -> Status:
        return status_of(self.cells, self.adds_left, self.ruleset)

    def legal_moves(self) -> Iterator[Move]:
        """Legal pairs in reading order, then `+` when an add is allowed."""
        for i, j in self.ruleset.legal_pairs(self.cells):
            yield Move(i, j)
        if self.adds_left > 0 and self.cells:
            yield ADD

    def play(self, move: Move | str) -> None:
        m = Move.parse(move) if isinstance(move, str) else move
        self.cells, self.adds_left = apply_move(self.cells, m, self.adds_left, self.ruleset)
        self.history.append(m)

    def __repr__(self) -> str:
        rs = "" if self.ruleset.number == DEFAULT.number else f", ruleset={self.ruleset.number}"
        return f"Stage({format_board(self.cells)!r}, adds={self.adds_left}{rs})"
