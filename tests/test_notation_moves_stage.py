"""Notation, move values and the Stage: text forms round-trip; bad input is a clear ValueError."""

from __future__ import annotations

import pytest

from pipeline.engine.board import Board, format_board, parse
from pipeline.errors import IllegalMoveError, MoveSyntaxError, NotationError, RulesetError
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rulesets import DEFAULT, ruleset_for
from pipeline.engine.stage import IN_PLAY, STUCK, WON, Stage, replay


def test_empty_string_is_the_empty_won_board() -> None:
    assert parse("") == b""
    assert Stage("", adds=0).status == WON


@pytest.mark.parametrize("text", ["123456789/98.654321/135", "9..5.", "1", "123456789", ".........1"[1:]])
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


def test_move_text_forms() -> None:
    m = Move.parse("1,0-0,8")
    assert str(m) == "0,8-1,0"  # written first-cell-first in reading order
    assert m == Move.parse("0,8-1,0")
    assert eval(repr(m)) == m
    assert Move.parse("+") is ADD and str(ADD) == "+" and ADD.is_add
    assert m.cells == ((0, 8), (1, 0))


@pytest.mark.parametrize("text", ["", "0,0", "0,0-", "a,b-c,d", "0,9-1,0", "0,0-1,10", "-1,0-0,0", "++"])
def test_malformed_moves(text: str) -> None:
    with pytest.raises(MoveSyntaxError) as info:
        Move.parse(text)
    assert repr(text) in str(info.value)


def test_ruleset_one_only() -> None:
    assert ruleset_for(1) is DEFAULT and ruleset_for("1") is DEFAULT and ruleset_for(DEFAULT) is DEFAULT
    for bad in (2, "2", 0, "one", None, True, 1.5):
        with pytest.raises(RulesetError, match="unknown ruleset"):
            ruleset_for(bad)
    with pytest.raises(RulesetError):
        Stage("11", adds=0, ruleset=2)


@pytest.mark.parametrize(
    "board, move, reason",
    [
        ("12", "0,0-0,1", "values 1 and 2 are neither equal nor sum to 10"),
        ("3.2.7", "0,0-0,4", "no clear path: reading order by 2 at 0,2"),
        ("1.1", "0,0-0,1", "cell 0,1 is a gap"),
        ("11", "0,0-3,0", "cell 3,0 is off the board"),
        ("123456789/11", "1,0-1,5", "cell 1,5 is off the board"),
        ("11", "0,1-0,1", "a cell cannot pair with itself"),
    ],
)
def test_illegal_moves_name_the_move_and_board(board: str, move: str, reason: str) -> None:
    stage = Stage(board, adds=0)
    with pytest.raises(IllegalMoveError) as info:
        stage.play(move)
    text = str(info.value)
    assert reason in text and repr(board) in text and move.split("-")[0] in text
    assert format_board(stage.cells) == board  # nothing changed


def test_add_needs_an_add_left() -> None:
    stage = Stage("12", adds=1)
    stage.play("+")
    assert format_board(stage.cells) == "1212" and stage.adds_left == 0
    with pytest.raises(IllegalMoveError, match="no adds left"):
        stage.play("+")


def test_add_is_allowed_even_when_pairs_exist() -> None:
    stage = Stage("11", adds=1)
    assert [str(m) for m in stage.legal_moves()] == ["0,0-0,1", "+"]
    stage.play(ADD)
    assert format_board(stage.cells) == "1111"


def test_status() -> None:
    assert Stage("12", adds=0).status == STUCK
    assert Stage("12", adds=1).status == IN_PLAY
    assert Stage("11", adds=0).status == IN_PLAY
    s = Stage("11", adds=0)
    s.play("0,0-0,1")
    assert s.status == WON and s.cells == b""


def test_replay_a_certificate() -> None:
    assert replay(parse("3.7"), ["+", "0,0-0,2", "0,3-0,4"], 1) == (b"", 0)
    assert replay(parse("3.7"), [Move.parse("0,0-0,2")], 0) == (b"", 0)


def test_replay_stops_at_the_first_illegal_move() -> None:
    with pytest.raises(IllegalMoveError, match="illegal move 0,0-0,1 on board '3.737'"):
        replay(parse("3.7"), ["+", "0,0-0,1"], 1)
