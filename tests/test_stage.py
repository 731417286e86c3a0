"""The Stage (`pipeline.engine.stage`): moves and adds, its status, replaying a certificate; an
illegal move is a clear ValueError naming the move and the board, and changes nothing."""

from __future__ import annotations

import pytest

from pipeline.engine.board import format_board, parse
from pipeline.engine.moves import ADD, Move
from pipeline.engine.stage import IN_PLAY, STUCK, WON, Stage, replay
from pipeline.errors import IllegalMoveError


@pytest.mark.parametrize(
    "board, move, reason",
    [
        ("12", "0,0-0,1", "values 1 and 2 are neither equal nor sum to 10"),
        ("3.2.7", "0,0-0,4", "no clear path: in reading order the 2 at 0,2 is between them"),
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
    with pytest.raises(IllegalMoveError, match=r"illegal move 0,0-0,1 on board '3\.737'"):
        replay(parse("3.7"), ["+", "0,0-0,1"], 1)
