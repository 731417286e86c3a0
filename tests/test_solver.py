"""The solver: each status, certificates that replay, budgets, and soundness of every shortcut."""

from __future__ import annotations

import json

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pipeline.engine.board import CLASS, parse
from pipeline.engine.rules import legal_pairs, pairs_ordered, remove_pair
from pipeline.engine.stage import replay
from pipeline.solver.mask import Stretch
from pipeline.solver.order import has_ordered_matching, ordered_matching, schedulable, winning_pairs
from pipeline.solver.search import SOLVED, UNKNOWN, UNSOLVABLE, Tuning, solve
from pipeline.solver.shortcuts import classes_even, stack_certificate
from tests.helpers import run, unpruned_win

# Unsolvable at 0 adds (plain search: about 9,500 states; here refuted at the root); solvable with one add.
HARD_NO = "891369355/531737729/676568157/52283"
# Unsolvable even with its add, and only exhaustive search shows it (670 states).
NEEDS_SEARCH = "994375729/725213"


reference_win = unpruned_win


@st.composite
def boards(draw, max_cells: int = 14) -> bytes:
    n = draw(st.integers(1, max_cells))
    cells = bytearray(draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)))
    for s in range(0, n, 9):
        if not any(cells[s : s + 9]):
            cells[s] = draw(st.integers(1, 9))
    return bytes(cells)


@st.composite
def even_boards(draw, max_cells: int = 14) -> bytes:
    """Boards whose value classes all have even counts (the others fail at 0 adds by parity)."""
    cells = bytearray(draw(boards(max_cells)))
    counts = [0] * 6
    for v in cells:
        counts[CLASS[v]] += 1
    for k in range(1, 6):
        if counts[k] & 1:
            cells.append(k)  # value k is of class k; rows that had an active cell still do
    return bytes(cells)


def empties(cells: bytes, moves, adds: int) -> bool:
    return replay(cells, moves, adds)[0] == b""


def test_solved_with_certificate_that_replays():
    cells = parse("123456789/98765")
    result = solve(cells, 1)
    assert result.status == SOLVED
    assert empties(cells, result.moves, 1)


def test_unsolvable_is_a_proof_and_one_add_fixes_it():
    assert solve(HARD_NO, 0).status == UNSOLVABLE
    assert not reference_win(parse("19......./5.......5/2"), 0)
    assert solve("19......./5.......5/2", 0).status == UNSOLVABLE
    result = solve(HARD_NO, 1)
    assert result.status == SOLVED and empties(parse(HARD_NO), result.moves, 1)


def test_empty_board_is_won_with_no_moves():
    assert solve("", 0).moves == ()


def test_budget_exhaustion_is_unknown_never_a_guess():
    assert solve(NEEDS_SEARCH, 1).status == UNSOLVABLE
    result = solve(NEEDS_SEARCH, 1, budget_nodes=100)
    assert result.status == UNKNOWN and result.moves is None and result.nodes <= 101
    assert solve(HARD_NO, 0, budget_nodes=0).status == UNKNOWN
    assert solve(NEEDS_SEARCH, 1, timeout=0.0).status in (UNKNOWN, UNSOLVABLE)


def test_adds_follow_the_real_rule():
    """The reference allows an add at any time; the solver agrees with it, add by add."""
    for text, adds in (
        ("12", 1),
        ("552", 1),
        ("1.3456789/37", 1),
        ("123456789/98765", 1),
        ("12", 2),
    ):
        cells = parse(text)
        result = solve(cells, adds)
        assert (result.status == SOLVED) == reference_win(cells, adds), text
        if result.status == SOLVED:
            assert empties(cells, result.moves, adds)


def test_to_json_shape():
    data = solve("19", 0).to_json()
    assert list(data) == ["status", "moves", "nodes", "seconds"] and data["moves"] == ["0,0-0,1"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(boards(), even_boards(16)), st.integers(0, 1))
def test_pruned_search_agrees_with_unpruned_search(cells, adds):
    """Parity, the pairing test, the stack test, dives, play-outs, ordering and the table change nothing."""
    result = solve(cells, adds, budget_nodes=None)
    assert (result.status == SOLVED) == reference_win(cells, adds)
    if result.status == SOLVED:
        assert empties(cells, result.moves, adds)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.one_of(boards(), even_boards(16)), st.integers(0, 1))
def test_every_shortcut_forced_on_agrees_with_unpruned_search(cells, adds):
    """The pairing test at every level, no dives or play-outs, and first-pass cuts after 1 node."""
    forced = Tuning(
        guided_levels=99, dives=0, inner_dives=0, quick_playouts=0, playouts=0, stretch_cap=1
    )
    result = solve(cells, adds, budget_nodes=None, tuning=forced)
    assert (result.status == SOLVED) == reference_win(cells, adds)
    if result.status == SOLVED:
        assert empties(cells, result.moves, adds)


@settings(max_examples=300, deadline=None)
@given(boards(max_cells=40))
def test_fast_rules_match_the_engine(cells):
    pairs = pairs_ordered(cells)
    assert sorted(pairs) == legal_pairs(cells) and len(set(pairs)) == len(pairs)


def played(cells: bytes, choices):
    """Random legal play on the engine, mirrored as bitmask states: (stretch, [(mask, rows, board)], moves)."""
    st = Stretch(cells)
    mask, board = st.mask, cells
    states, moves = [(mask, st.rows_of(mask), board)], []
    for pick in choices:
        rows = states[-1][1]
        pairs = st.pairs(mask, rows)
        if not pairs:
            break
        i, j = pairs[pick % len(pairs)]
        moves.append((i, j))
        board = remove_pair(board, st.here(i, rows), st.here(j, rows))
        mask ^= 1 << i | 1 << j
        states.append((mask, st.rows_of(mask), board))
    return st, states, moves


@settings(max_examples=200, deadline=None)
@given(boards(max_cells=45), st.lists(st.integers(0, 99), max_size=25))
def test_bitmask_states_match_the_engine(cells, choices):
    """A state is the set of remaining base cells: board, legal pairs and coordinates agree."""
    stretch, states, _ = played(cells, choices)
    for mask, rows, board in states:
        assert stretch.board(mask) == board
        pairs = stretch.pairs(mask, rows)
        assert len(set(pairs)) == len(pairs)
        assert sorted(
            (stretch.here(i, rows), stretch.here(j, rows)) for i, j in pairs
        ) == legal_pairs(board)


@settings(max_examples=200, deadline=None)
@given(boards(max_cells=45), st.lists(st.integers(0, 99), max_size=25))
def test_child_pairs_derived_from_the_parent_equal_the_full_generation(cells, choices):
    """The search's incremental move generation (a move that empties no row) gives the same pairs."""
    stretch, states, moves = played(cells, choices)
    for (mask, rows, _), (child, crows, _), (i, j) in zip(states, states[1:], moves):
        if crows != rows:
            continue
        parent = [1 << a | 1 << b for a, b in stretch.pairs(mask, rows)]
        derived = stretch.child_pairs(parent, i, j, child, rows)
        assert len(set(derived)) == len(derived)
        assert set(derived) == {1 << a | 1 << b for a, b in stretch.pairs(child, rows)}


def pairs_on_a_win(stretch: Stretch) -> set[int]:
    """Every pair (as a mask) that some winning line from the root plays, by unpruned search."""
    wins: dict[int, bool] = {}
    used: set[int] = set()

    def win(mask: int, rows: int) -> bool:
        if not mask:
            return True
        if mask not in wins:
            wins[mask] = False
            for i, j in stretch.pairs(mask, rows):
                q = 1 << i | 1 << j
                child = mask ^ q
                if win(child, stretch.rows_of(child)):
                    wins[mask] = True
                    used.add(q)
        return wins[mask]

    win(stretch.mask, stretch.rows_of(stretch.mask))
    return used


@settings(max_examples=200, deadline=None)
@given(even_boards(18))
def test_every_win_plays_only_winning_pairs(cells):
    """The move restriction of the proof search: no winning line uses a pair outside winning_pairs."""
    stretch = Stretch(cells)
    rows = stretch.rows_of(stretch.mask)
    allowed = winning_pairs(stretch, stretch.mask, rows, cap=10_000)
    used = pairs_on_a_win(stretch)
    event("winnable" if used else "not winnable")
    assert used <= allowed
    if used:  # a state won by some line keeps a pairing of its own
        assert allowed


@settings(max_examples=200, deadline=None)
@given(even_boards(18))
def test_search_restricted_to_winning_pairs_agrees_with_unpruned_search(cells):
    """No dives or play-outs, no pairing test below the root: the restricted proof search alone."""
    result = solve(
        cells, 0, budget_nodes=None, tuning=Tuning(guided_levels=0, dives=0, quick_playouts=0)
    )
    assert (result.status == SOLVED) == reference_win(cells, 0)
    if result.status == SOLVED:
        assert empties(cells, result.moves, 0)


RELABEL = bytes([0, 9, 8, 7, 6, 5, 4, 3, 2, 1])  # each value to the other of its class


@settings(max_examples=150, deadline=None)
@given(boards(max_cells=14), st.lists(st.booleans(), min_size=14, max_size=14), st.integers(0, 1))
def test_boards_equal_up_to_class_relabelling_share_an_answer(cells, flips, adds):
    """The canonical stretch key (value classes) is sound: relabelled boards agree with unpruned search."""
    other = bytes(RELABEL[v] if flip else v for v, flip in zip(cells, flips + [False] * len(cells)))
    for board in (cells, other):
        result = solve(board, adds, budget_nodes=None)
        assert (result.status == SOLVED) == reference_win(board, adds)
        if result.status == SOLVED:
            assert empties(board, result.moves, adds)
    assert reference_win(cells, adds) == reference_win(other, adds)


@settings(max_examples=200, deadline=None)
@given(boards(max_cells=36), st.lists(st.integers(0, 99), max_size=20))
def test_every_move_clears_one_of_its_lines_first(cells, choices):
    """The lemma behind the pairing test: a pair removed later used a way listed now, cleared by then."""
    stretch, states, moves = played(cells, choices)
    mask, rows, _ = states[0]
    gone = 0
    for i, j in moves:
        if mask >> i & 1 and mask >> j & 1:
            assert any(not way & ~gone for way in stretch.lines(i, j, mask, rows, every=True))
            assert any(not line & ~gone for line in stretch.lines(i, j, mask, rows))
        gone |= 1 << i | 1 << j


def test_a_diagonal_cannot_wait_on_the_only_cell_of_a_row_between():
    """Clearing (1,1) would empty row 1 and shorten the diagonal: only reading order is left."""
    lone = Stretch(parse("1......../.5......./..1"))
    assert lone.lines(0, 20, lone.mask, lone.rows_of(lone.mask)) == [1 << 10]
    crowded = Stretch(parse("1......../.53....../..1"))  # row 1 stays: the diagonal still counts
    assert crowded.lines(0, 20, crowded.mask, crowded.rows_of(crowded.mask)) == [
        1 << 10 | 1 << 11,
        1 << 10,
    ]


@settings(max_examples=100, deadline=None)
@given(boards(max_cells=45), st.integers(0, 2**45 - 1), st.lists(st.integers(0, 44), max_size=10))
def test_memoized_lines_equal_direct_lines(cells, start, drops):
    """A pair's lines read only the cells strictly between it, so one memo serves every mask."""
    stretch = Stretch(cells)
    masks = [stretch.mask, start & stretch.mask]
    for d in drops:  # cells going one by one: the masks share most of their between-cells
        masks.append(masks[-1] & ~(1 << d))
    for mask in masks:
        rows = stretch.rows_of(mask)
        active = [i for i in range(stretch.n) if mask >> i & 1]
        for a, u in enumerate(active):
            for v in active[a + 1 :]:
                q = 1 << u | 1 << v
                every = stretch.lines(u, v, mask, rows, every=True)
                assert stretch.ways(q, mask, rows) == (tuple(every) if all(every) else None)
                found = stretch.lines(u, v, mask, rows)
                expected = (found[0], found[1] if len(found) > 1 else -1) if all(found) else None
                assert stretch.line2(q, mask, rows) == expected


@settings(max_examples=150, deadline=None)
@given(even_boards(max_cells=30), st.lists(st.integers(0, 99), max_size=6))
def test_a_found_pairing_is_an_ordered_perfect_matching(cells, choices):
    """The pairing test's witness: same-class pairs covering every active cell once, schedulable."""
    stretch, states, _ = played(cells, choices)
    for mask, rows, _ in states:
        live, matching = ordered_matching(stretch, mask, rows)
        if live and matching is not None:
            covered = 0
            for q in matching:
                assert q.bit_count() == 2 and not q & covered
                covered |= q
            assert covered == mask
            assert all(
                len({stretch.cls[i] for i in range(stretch.n) if q >> i & 1}) == 1 for q in matching
            )
            assert schedulable(stretch, mask, rows, matching)


@settings(max_examples=250, deadline=None)
@given(even_boards(), st.lists(st.integers(0, 99), max_size=6))
def test_pairing_rule_is_sound(cells, choices):
    """No ordered pairing means no win without an add, at the root and after some moves."""
    stretch, states, _ = played(cells, choices)
    for mask, rows, board in states:
        dead = not has_ordered_matching(stretch, mask, rows)
        event(f"pairing test: {'dead' if dead else 'no claim'}")
        if dead:
            assert not reference_win(board, 0)


def test_pairing_rule_cases():
    """Crossing reading-only pairs are dead; a diagonal that needs a row emptied first counts too."""
    for text in ("12.....12", "......5../.6......./.......54", HARD_NO):
        stretch = Stretch(parse(text))
        assert not has_ordered_matching(stretch, stretch.mask, stretch.rows_of(stretch.mask))
    for text in ("1221", "1......../.1", "123456789/987654321"):
        stretch = Stretch(parse(text))
        assert has_ordered_matching(stretch, stretch.mask, stretch.rows_of(stretch.mask))
    stretch = Stretch(parse(HARD_NO))
    assert has_ordered_matching(
        stretch, stretch.mask, stretch.rows_of(stretch.mask), cap=0
    )  # gave up: no claim
    assert not reference_win(parse("......5../.6......./.......54"), 0)


@settings(max_examples=200, deadline=None)
@given(boards())
def test_parity_rule_is_sound(cells):
    """An odd value class can never be emptied with no add."""
    if not classes_even(cells):
        assert not reference_win(cells, 0)


@settings(max_examples=300, deadline=None)
@given(boards(max_cells=30))
def test_stack_certificate_is_sound(cells):
    moves = stack_certificate(cells)
    if moves is not None:
        assert empties(cells, moves, 0)


def test_cli_json_and_stream():
    out = run(*["solve", "19", "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["status"] == SOLVED
    out = run(*["solve", "-"], input=f"{HARD_NO} 0\nxx 1\n")
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.exit_code == 1
    assert lines[0]["status"] == UNSOLVABLE and "error" in lines[1]
