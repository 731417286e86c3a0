"""The board as plain data: `bytes` in reading order, 0 for a gap, 1-9 for an active number.

Everything hot (the solver, the generator, the rating) works on these bytes directly;
`Board` is a thin immutable wrapper with a text form for people and APIs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from pipeline.errors import NotationError, shorten
from pipeline.limits import MAX_CELLS, check_cells

WIDTH = 9
GAP = 0

# Value class: two values pair (equal, or summing to 10) exactly when their classes match.
CLASS = bytes([0, 1, 2, 3, 4, 5, 4, 3, 2, 1])
CLASS_NAMES = {1: "1/9", 2: "2/8", 3: "3/7", 4: "4/6", 5: "5"}

_TO_TEXT = bytes.maketrans(bytes(range(10)), b".123456789")
_FROM_TEXT = bytes.maketrans(b".123456789", bytes(range(10)))
_ROW_OK = re.compile(r"[1-9.]{1,9}")
# Full rows of 9 with an active number, then a last row of 1-9 with one (what `_explain` says).
_BOARD_OK = re.compile(r"(?:(?=\.*[1-9])[1-9.]{9}/)*(?=\.*[1-9])[1-9.]{1,9}")
_MAX_TEXT = MAX_CELLS + MAX_CELLS // WIDTH + 1


def parse(text: str) -> bytes:
    """Parse board notation (`123456789/98.654321/135`) into cell bytes; '' is the empty board.

    Linear in the text's length, and refuses boards past `limits.MAX_CELLS` before any table is
    built for them; errors echo at most a readable prefix of the text.
    """
    if not isinstance(text, str):
        raise NotationError(f"board must be a string, got {type(text).__name__}")
    if text == "":
        return b""
    if len(text) > _MAX_TEXT:  # past any board within the limit, whatever its rows
        raise NotationError(
            f"invalid board {shorten(text)}: longer than any board within the limit of {MAX_CELLS:,} cells"
        )
    if _BOARD_OK.fullmatch(text) is None:
        _explain(text)
    cells = text.encode("ascii").replace(b"/", b"").translate(_FROM_TEXT)
    check_cells(len(cells))
    return cells


def _explain(text: str) -> None:
    """Raise the NotationError that says what is wrong with `text` (which is not valid)."""
    rows = text.split("/")
    last = len(rows) - 1
    for r, row in enumerate(rows):
        if _ROW_OK.fullmatch(row) is None:
            bad = next((ch for ch in row if ch not in ".123456789"), None)
            if bad is not None:
                problem = (
                    f"has {bad!r} at column {row.index(bad)}; cells are digits 1-9 or '.' for a gap"
                )
            elif row == "":
                problem = "is empty; rows are joined by a single '/'"
            else:
                problem = f"has {len(row)} cells; a row has at most 9"
        elif r < last and len(row) != WIDTH:
            problem = f"has {len(row)} cells; every row but the last must have exactly 9"
        elif row.count(".") == len(row):
            problem = "has no active number; an emptied row disappears, so it cannot be written"
        else:
            continue
        raise NotationError(f"invalid board {shorten(text)}: row {r} {problem}")
    raise NotationError(
        f"invalid board {shorten(text)}"
    )  # pragma: no cover - _BOARD_OK and the rows agree


def format_board(cells: bytes) -> str:
    """The notation of cell bytes (inverse of `parse`)."""
    text = cells.translate(_TO_TEXT).decode("ascii")
    return "/".join(text[s : s + WIDTH] for s in range(0, len(text), WIDTH))


def index(row: int, col: int) -> int:
    return row * WIDTH + col


def cell_name(i: int) -> str:
    """`R,C` for a flat index, as moves and error messages write cells."""
    r, c = divmod(i, WIDTH)
    return f"{r},{c}"


def row_count(cells: bytes) -> int:
    return (len(cells) + WIDTH - 1) // WIDTH


def actives(cells: bytes) -> bytes:
    """The active values in reading order (what Add numbers appends)."""
    return cells.replace(b"\x00", b"")


Ray = tuple[int, ...]
Line = tuple[Ray, Ray]  # (backward ray, forward ray) along one direction through a cell


def lines_through(
    n: int, live: Sequence[int] | None = None, *, backward: bool = True
) -> list[tuple[Line, Line, Line]]:
    """The one ray table: per cell of an n-cell board, for its column, its down-right diagonal
    and its down-left diagonal (in that order), (backward ray, forward ray), nearest cell first.

    `live` lists the rows still on the board, in base coordinates (the solver's stretches keep
    the cells of the board that began them while rows empty and vanish); the rays skip the other
    rows. Default: every row. With `backward` off the backward rays are left empty (the solver
    builds a table per row pattern and walks forward only). `rays` and `crossing_lines` are
    views of it.
    """
    nrows = (n + WIDTH - 1) // WIDTH
    starts = [q * WIDTH for q in (range(nrows) if live is None else live)]
    table = []
    for r in range(nrows):
        s = r * WIDTH
        above = [t for t in reversed(starts) if t < s] if backward else []
        below = [t for t in starts if t > s]
        for c in range(min(WIDTH, n - s)):
            table.append(
                (
                    (_ray(n, above, c, 0), _ray(n, below, c, 0)),
                    (_ray(n, above, c, -1), _ray(n, below, c, 1)),
                    (_ray(n, above, c, 1), _ray(n, below, c, -1)),
                )
            )
    return table


def _ray(n: int, starts: list[int], col: int, dc: int) -> Ray:
    """The cells met going through the rows starting at `starts` (nearest first), one column
    `dc` further at each row, while the column is on the board and the cell exists."""
    if not starts:
        return ()
    if dc == 0:
        ray = [t + col for t in starts]
    else:
        room = WIDTH - 1 - col if dc > 0 else col
        ray = [t + col + dc * k for k, t in enumerate(starts[:room], 1)]
    if ray and ray[-1] >= n:  # past the short last row (cells only grow along a forward ray)
        ray = [j for j in ray if j < n]
    return tuple(ray)


@cache
def rays(n: int) -> tuple[tuple[Ray, ...], ...]:
    """For a board of n cells: per cell, its forward vertical, down-right and down-left rays
    (those with a cell), so the move generator never does coordinate arithmetic."""
    return tuple(tuple(fwd for _, fwd in cell if fwd) for cell in lines_through(n))


@cache
def crossing_lines(n: int) -> tuple[tuple[Line, ...], ...]:
    """Per cell, (backward ray, forward ray) of its column and diagonals where both have a cell:
    the lines along which two cells can come to see each other across it."""
    return tuple(tuple(line for line in cell if line[0] and line[1]) for cell in lines_through(n))


@dataclass(frozen=True, slots=True)
class Board:
    """An immutable board. `Board('123456789/98765')`; str() gives the notation back."""

    cells: bytes

    def __init__(self, notation: str | bytes = "") -> None:
        cells = parse(notation) if isinstance(notation, str) else bytes(notation)
        object.__setattr__(self, "cells", cells)

    def __str__(self) -> str:
        return format_board(self.cells)

    def __repr__(self) -> str:
        return f"Board({str(self)!r})"

    def __len__(self) -> int:
        return len(self.cells)

    @property
    def rows(self) -> int:
        return row_count(self.cells)

    @property
    def active_count(self) -> int:
        return len(self.cells) - self.cells.count(0)

    @property
    def is_empty(self) -> bool:
        return not self.cells

    def value(self, row: int, col: int) -> int:
        return self.cells[index(row, col)]

    def grid(self) -> list[list[int]]:
        """Rows of values (0 for gaps); the last row may be short."""
        c = self.cells
        return [list(c[s : s + WIDTH]) for s in range(0, len(c), WIDTH)]


def cells_of(board: Board | str | bytes) -> bytes:
    """Cell bytes from a Board, a notation string (parsed, so it may raise) or raw bytes."""
    if isinstance(board, Board):
        return board.cells
    if isinstance(board, str):
        return parse(board)
    return bytes(board)
