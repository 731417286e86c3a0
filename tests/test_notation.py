"""Board notation (`pipeline.engine.board`): text forms round-trip; malformed notation is a clear
ValueError quoting the input."""

from __future__ import annotations

import pytest

from pipeline.engine.board import Board, format_board, parse
from pipeline.engine.stage import WON, Stage
from pipeline.errors import NotationError


def test_empty_string_is_the_empty_won_board() -> None:
    assert parse("") == b""
    assert Stage("", adds=0).status == WON


@pytest.mark.parametrize(
    "text", ["123456789/98.654321/135", "9..5.", "1", "123456789", ".........1"[1:]]
)
def test_notation_round_trips(text: str) -> None:
    assert format_board(parse(text)) == text
    assert str(Board(text)) == text
    assert eval(repr(Board(text))) == Board(text)


@pytest.mark.parametrize(
    "text, message",
    [
        ("12345678/1", "row 0 has 8 cells; every row but the last must have exactly 9"),
        ("1234567891", "row 0 has 10 cells; a row has at most 9"),
        ("123456789/", "row 1 is empty"),
        ("/1", "row 0 is empty"),
        ("123456789//1", "row 1 is empty"),
        ("........./1", "row 0 has no active number"),
        ("1/...", "row 0 has 1 cells; every row but the last"),
        ("...", "row 0 has no active number"),
        ("12a", "row 0 has 'a' at column 2"),
        ("120", "row 0 has '0' at column 2"),
        (" 12", "row 0 has ' ' at column 0"),
    ],
)
def test_malformed_notation_is_refused_with_the_input_quoted(text: str, message: str) -> None:
    with pytest.raises(NotationError) as info:
        parse(text)
    assert isinstance(info.value, ValueError)
    assert message in str(info.value)
    assert repr(text) in str(info.value)
