"""Moves as small immutable values with a text form: a pair `R,C-R,C` or an add `+`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.engine.board import WIDTH
from pipeline.errors import MoveSyntaxError, shorten

# ASCII digits only (int() would read Arabic-Indic ones), and few enough of them that no row
# number is absurd: a board has at most limits.MAX_CELLS cells.
_PAIR = re.compile(
    r"\s*([0-9]{1,6})\s*,\s*([0-9]{1,6})\s*-\s*([0-9]{1,6})\s*,\s*([0-9]{1,6})\s*", re.ASCII
)
ADD_TEXT = "+"


@dataclass(frozen=True, slots=True, order=True)
class Move:
    """A pair removal between flat cells `first` < `second`, or Add numbers (both None).

    Cells are on the board as it is when the move is played (0-based row, column).
    """

    first: int | None = None
    second: int | None = None

    @classmethod
    def pair(cls, a: int, b: int) -> Move:
        """A pair from two flat indices (any order); written first-cell-first."""
        return cls(a, b) if a <= b else cls(b, a)

    @classmethod
    def parse(cls, text: str) -> Move:
        """`0,8-1,0` or `+`; raises MoveSyntaxError (a ValueError) on anything else."""
        if not isinstance(text, str):
            raise MoveSyntaxError(f"move must be a string, got {type(text).__name__}")
        if text.strip() == ADD_TEXT:
            return ADD
        m = _PAIR.fullmatch(text)
        if not m:
            raise MoveSyntaxError(
                f"invalid move {shorten(text)}: write a pair as R,C-R,C (e.g. 0,8-1,0) or an add as +"
            )
        r1, c1, r2, c2 = map(int, m.groups())
        for c in (c1, c2):
            if c >= WIDTH:
                raise MoveSyntaxError(
                    f"invalid move {shorten(text)}: column {c} is off the board (columns 0-8)"
                )
        return cls.pair(r1 * WIDTH + c1, r2 * WIDTH + c2)

    @property
    def is_add(self) -> bool:
        return self.first is None

    @property
    def cells(self) -> tuple[tuple[int, int], tuple[int, int]] | None:
        if self.first is None or self.second is None:
            return None
        return divmod(self.first, WIDTH), divmod(self.second, WIDTH)

    def __str__(self) -> str:
        if self.first is None or self.second is None:
            return ADD_TEXT
        (r1, c1), (r2, c2) = divmod(self.first, WIDTH), divmod(self.second, WIDTH)
        return f"{r1},{c1}-{r2},{c2}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"


ADD = Move()


def pair_text(i: int, j: int) -> str:
    """`R,C-R,C` for flat indices, first cell first."""
    return str(Move.pair(i, j))
