"""Properties of the engine over random and mid-game boards (hypothesis), checked against a
naive independent reading of the rules (tests/reference.py)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine.board import WIDTH, format_board, parse
from pipeline.engine.rules import add_numbers, legal_pairs, pair_problem, remove_pair
from pipeline.engine.stage import status_of
from tests import reference

# the engine and the players in whichever backend runs: `make test` runs them in both
pytestmark = [pytest.mark.backends, pytest.mark.slow]

cell = st.sampled_from(".123456789")


@st.composite
def boards(draw: st.DrawFn, max_rows: int = 6) -> str:
    """Notation of a random board: full rows of 9, a last row of 1-9, no all-gap row."""
    rows = draw(st.integers(0, max_rows))
    out = []
    for r in range(rows):
        length = WIDTH if r < rows - 1 else draw(st.integers(1, WIDTH))
        row = "".join(draw(st.lists(cell, min_size=length, max_size=length)))
        if set(row) == {"."}:
            row = row[:-1] + draw(st.sampled_from("123456789"))
        out.append(row)
    return "/".join(out)


@st.composite
def midgame_boards(draw: st.DrawFn) -> str:
    """A board reached by random play (removals and adds) from a random full board."""
    n = draw(st.integers(2, 45))
    rnd = random.Random(draw(st.integers(0, 2**32)))
    cells = bytes(rnd.randint(1, 9) for _ in range(n))
    for _ in range(draw(st.integers(0, 40))):
        pairs = legal_pairs(cells)
        if not cells:
            break
        if pairs and rnd.random() < 0.85:
            cells = remove_pair(cells, *rnd.choice(pairs))
        elif len(cells) < 100:
            cells = add_numbers(cells)
    return format_board(cells)


any_board = st.one_of(boards(), midgame_boards())


def as_cells(pair: tuple[tuple[int, int], tuple[int, int]]) -> tuple[int, int]:
    (r1, c1), (r2, c2) = pair
    return r1 * WIDTH + c1, r2 * WIDTH + c2


@settings(max_examples=400, deadline=None)
@given(any_board)
def test_notation_round_trips(text: str) -> None:
    assert format_board(parse(text)) == text


@settings(max_examples=300, deadline=None)
@given(any_board)
def test_legal_pairs_match_the_naive_reading(text: str) -> None:
    expected = [as_cells(p) for p in reference.legal_pairs(reference.from_text(text))]
    assert legal_pairs(parse(text)) == expected


@settings(max_examples=150, deadline=None)
@given(any_board)
def test_pair_legality_is_symmetric_and_listed_pairs_are_exactly_the_clear_ones(text: str) -> None:
    cells = parse(text)
    listed = set(legal_pairs(cells))
    active = [i for i, v in enumerate(cells) if v]
    for x, i in enumerate(active):
        for j in active[x + 1 :]:
            legal = pair_problem(cells, i, j) is None
            assert legal == (pair_problem(cells, j, i) is None)
            assert legal == ((i, j) in listed)


@settings(max_examples=300, deadline=None)
@given(any_board, st.data())
def test_removal_matches_reference_and_moves_cells_only_by_whole_rows(
    text: str, data: st.DataObject
) -> None:
    cells = parse(text)
    pairs = legal_pairs(cells)
    if not pairs:
        return
    i, j = data.draw(st.sampled_from(pairs))
    after = remove_pair(cells, i, j)
    grid = reference.from_text(text)
    assert format_board(after) == reference.to_text(
        reference.remove(grid, divmod(i, WIDTH), divmod(j, WIDTH))
    )
    # every other active cell keeps its column and its rank in reading order; its row drops
    # exactly by the number of emptied rows above it
    row_cells = lambda r: range(r * WIDTH, min(len(cells), r * WIDTH + WIDTH))  # noqa: E731
    emptied = [
        r
        for r in {i // WIDTH, j // WIDTH}
        if all(cells[k] == 0 or k in (i, j) for k in row_cells(r))
    ]
    survivors = [k for k, v in enumerate(cells) if v and k not in (i, j)]
    positions = [k for k, v in enumerate(after) if v]
    assert [cells[k] for k in survivors] == [after[k] for k in positions]
    for old, new in zip(survivors, positions):
        assert old % WIDTH == new % WIDTH
        assert old // WIDTH - new // WIDTH == sum(1 for r in emptied if r < old // WIDTH)


@settings(max_examples=300, deadline=None)
@given(any_board)
def test_add_keeps_existing_cells_and_appends_the_active_values_in_order(text: str) -> None:
    cells = parse(text)
    after = add_numbers(cells)
    assert after[: len(cells)] == cells
    assert after[len(cells) :] == bytes(v for v in cells if v)
    assert format_board(after) == reference.to_text(
        reference.add_numbers(reference.from_text(text))
    )


@settings(max_examples=200, deadline=None)
@given(any_board)
def test_never_lists_a_blocked_or_mismatched_pair(text: str) -> None:
    cells = parse(text)
    for i, j in legal_pairs(cells):
        assert cells[i] and cells[j] and (cells[i] == cells[j] or cells[i] + cells[j] == 10)
        assert pair_problem(cells, i, j) is None


@settings(max_examples=200, deadline=None)
@given(any_board)
def test_status_follows_the_rules(text: str) -> None:
    cells = parse(text)
    assert status_of(cells, 1) == ("won" if not cells else "in play")
    assert status_of(cells, 0) == (
        "won" if not cells else "in play" if legal_pairs(cells) else "stuck"
    )
