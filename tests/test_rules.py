"""Ruleset 1 as the rules state it (docs/rules.md): worked examples, each connection kind, each blocker."""

from __future__ import annotations

import pytest

from pipeline.engine.board import format_board, parse
from pipeline.engine.moves import pair_text
from pipeline.engine.rules import (
    add_numbers,
    has_legal_pair,
    legal_pairs,
    pair_problem,
    remove_pair,
)

# the engine and the players in whichever backend runs: `make test` runs them in both
pytestmark = pytest.mark.backends


def pairs(board: str) -> list[str]:
    return [pair_text(i, j) for i, j in legal_pairs(parse(board))]


def remove(board: str, move: str) -> str:
    a, b = (tuple(map(int, cell.split(","))) for cell in move.split("-"))
    return format_board(remove_pair(parse(board), a[0] * 9 + a[1], b[0] * 9 + b[1]))


# --- the worked examples of the published rules --------------------------------------------


@pytest.mark.parametrize(
    "board, expected",
    [
        ("1.......9/3.5", ["0,0-0,8"]),
        ("5.......3/7", ["0,8-1,0"]),
        ("12.4.....", []),
        # The published rules print this board with a 10-cell second row ('..6.3.....'), which its own
        # notation rule forbids; the 9-cell row is the board the example describes.
        ("4.2.1.8.6/..6.3....", ["0,8-1,2"]),
        ("19......./5.......5/2", ["0,0-0,1", "1,0-1,8"]),
        (
            "123456789/987654321/135",
            [f"0,{c}-1,{c}" for c in range(8)]
            + ["0,8-1,0", "0,8-1,8", "1,0-2,0", "1,2-2,1", "1,8-2,0"],
        ),
    ],
)
def test_worked_example_pairs(board: str, expected: list[str]) -> None:
    assert pairs(board) == sorted(
        expected, key=lambda t: [int(x) for x in t.replace("-", ",").split(",")]
    )


def test_worked_example_with_ten_cell_row_is_refused() -> None:
    with pytest.raises(ValueError, match="row 1 has 10 cells"):
        parse("4.2.1.8.6/..6.3.....")


def test_worked_example_removals() -> None:
    assert remove("19......./5.......5/2", "0,0-0,1") == "5.......5/2"
    assert remove("1.......9/3.5", "0,0-0,8") == "3.5"


def test_worked_example_adds() -> None:
    assert format_board(add_numbers(parse("123456789/98765"))) == "123456789/987651234/567899876/5"
    assert format_board(add_numbers(parse("1234.6789/9..5."))) == "1234.6789/9..5.1234/678995"


# --- values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("a, b", [(1, 1), (5, 5), (9, 9), (1, 9), (2, 8), (3, 7), (4, 6), (6, 4)])
def test_equal_or_ten_pairs(a: int, b: int) -> None:
    assert pairs(f"{a}{b}") == ["0,0-0,1"]


@pytest.mark.parametrize("a, b", [(5, 6), (1, 2), (4, 5), (9, 8), (3, 3 + 1)])
def test_other_values_never_pair(a: int, b: int) -> None:
    assert pairs(f"{a}{b}") == []


def test_five_pairs_only_with_five() -> None:
    assert pairs("55") == ["0,0-0,1"]
    assert all(pairs(f"5{v}") == [] for v in range(1, 10) if v != 5)


# --- each connection kind -------------------------------------------------------------------


def test_horizontal_through_gaps() -> None:
    assert pairs("3...7") == ["0,0-0,4"]


def test_vertical_through_gaps() -> None:
    assert "0,0-2,0" in pairs("213131313/.42424242/8")


def test_diagonal_down_right() -> None:
    assert "0,0-2,2" in pairs("612121212/2.2121212/214")


def test_diagonal_down_left() -> None:
    assert "0,8-2,6" in pairs("121212126/2121212.2/212121412")


def test_row_end_to_next_row_start_through_gaps() -> None:
    assert "0,7-1,2" in pairs("12121213./..7121212")


def test_row_end_to_next_row_start_skips_trailing_and_leading_gaps() -> None:
    assert "0,6-1,2" in pairs("1212123../..7212121")


def test_no_wrap_from_last_cell_to_first() -> None:
    assert pairs("512121215") == []  # 5 ... 5 with actives between: blocked, and no wraparound


def test_no_bending_paths() -> None:
    # 3 at (0,0) and 7 at (1,2): not in a row, column or diagonal, reading order blocked.
    assert "0,0-1,2" not in pairs("312121212/217121212")


def test_a_cell_never_pairs_with_itself() -> None:
    assert pairs("5") == []
    assert pair_problem(parse("5"), 0, 0) == "a cell cannot pair with itself"


# --- blockers ---------------------------------------------------------------------------------


def test_active_cell_blocks_horizontal() -> None:
    assert pairs("3.2.7") == []


def test_active_cell_blocks_vertical() -> None:
    # 2 over 5 over 8 in column 0; no other path.
    assert "0,0-2,0" not in pairs("213131313/524242424/813")


def test_active_cell_blocks_diagonal() -> None:
    assert "0,0-2,2" not in pairs("612121212/252121212/214")


def test_blocked_pair_reports_its_blockers() -> None:
    problem = pair_problem(parse("3.2.7"), 0, 4)
    assert problem == "no clear path: in reading order the 2 at 0,2 is between them"


# --- removal and collapse ---------------------------------------------------------------------


def test_gaps_stay_in_place() -> None:
    assert remove("123456789/12", "0,0-1,0") == ".23456789/.2"


def test_emptied_row_disappears_and_columns_are_kept() -> None:
    assert remove("5.......5/123456789/1", "0,0-0,8") == "123456789/1"


def test_two_rows_emptied_at_once() -> None:
    assert remove("3......../7......../123456789", "0,0-1,0") == "123456789"


def test_short_last_row_emptied() -> None:
    assert remove("123456789/4.6", "1,0-1,2") == "123456789"


def test_row_keeping_one_number_stays_with_its_gaps() -> None:
    assert remove("55......1/2", "0,0-0,1") == "........1/2"


def test_collapse_changes_vertical_alignment() -> None:
    before = "1.......2/5.......5/9.......3"
    assert "0,0-2,0" not in pairs(before)
    after = remove(before, "1,0-1,8")
    assert after == "1.......2/9.......3"
    assert "0,0-1,0" in pairs(after)


# --- add numbers ------------------------------------------------------------------------------


def test_add_keeps_trailing_gaps_and_appends_after_them() -> None:
    assert format_board(add_numbers(parse("123456789/1."))) == "123456789/1.1234567/891"


def test_add_fills_last_row_then_starts_new_rows() -> None:
    assert format_board(add_numbers(parse("1234"))) == "12341234"
    assert format_board(add_numbers(parse("12345678"))) == "123456781/2345678"


def test_has_legal_pair_agrees_with_listing() -> None:
    for board in ("12.4.....", "1.......9/3.5", "123456789/987654321/135", ""):
        assert has_legal_pair(parse(board)) == bool(pairs(board))
