"""Move values (`pipeline.engine.moves`): text forms round-trip; a malformed move is a clear
ValueError quoting it."""

from __future__ import annotations

import pytest

from pipeline.engine.moves import ADD, Move
from pipeline.errors import MoveSyntaxError


def test_move_text_forms() -> None:
    m = Move.parse("1,0-0,8")
    assert str(m) == "0,8-1,0"  # written first-cell-first in reading order
    assert m == Move.parse("0,8-1,0")
    assert eval(repr(m)) == m
    assert Move.parse("+") is ADD and str(ADD) == "+" and ADD.is_add
    assert m.cells == ((0, 8), (1, 0))


@pytest.mark.parametrize(
    "text", ["", "0,0", "0,0-", "a,b-c,d", "0,9-1,0", "0,0-1,10", "-1,0-0,0", "++"]
)
def test_malformed_moves(text: str) -> None:
    with pytest.raises(MoveSyntaxError) as info:
        Move.parse(text)
    assert repr(text) in str(info.value)
