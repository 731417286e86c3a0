"""The solver: each status, certificates that replay, budgets, and soundness of every shortcut."""

from __future__ import annotations

import json
import random
from functools import lru_cache

from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from pipeline.board import CLASS, parse
from pipeline.cli import app
from pipeline.rules import add_numbers, legal_pairs, remove_pair
from pipeline.search_rules import classes_even, pairs_ordered, stack_certificate
from pipeline.solver import SOLVED, UNKNOWN, UNSOLVABLE, _remove, solve
from pipeline.stage import replay

# Proved unsolvable at 0 adds (about 9,500 states); solvable with one add.
HARD_NO = "891369355/531737729/676568157/52283"


@lru_cache(maxsize=None)
def reference_win(cells: bytes, adds: int) -> bool:
    """Unpruned exhaustive search on the public engine: every pair, and an add at any time."""
    if not cells:
        return True
    if any(reference_win(remove_pair(cells, i, j), adds) for i, j in legal_pairs(cells)):
        return True
    return adds > 0 and reference_win(add_numbers(cells), adds - 1)


@st.composite
def boards(draw, max_cells: int = 14) -> bytes:
    n = draw(st.integers(1, max_cells))
    cells = bytearray(draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)))
    for s in range(0, n, 9):
        if not any(cells[s : s + 9]):
            cells[s] = draw(st.integers(1, 9))
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
    result = solve(HARD_NO, 0, budget_nodes=100)
    assert result.status == UNKNOWN and result.moves is None and result.nodes <= 101
    assert solve(HARD_NO, 0, timeout=0.0).status in (UNKNOWN, UNSOLVABLE)


def test_adds_follow_the_real_rule():
    """The reference allows an add at any time; the solver agrees with it, add by add."""
    for text, adds in (("12", 1), ("552", 1), ("1.3456789/37", 1), ("123456789/98765", 1), ("12", 2)):
        cells = parse(text)
        result = solve(cells, adds)
        assert (result.status == SOLVED) == reference_win(cells, adds), text
        if result.status == SOLVED:
            assert empties(cells, result.moves, adds)


def test_to_json_shape():
    data = solve("19", 0).to_json()
    assert list(data) == ["status", "moves", "nodes", "seconds"] and data["moves"] == ["0,0-0,1"]


@settings(max_examples=150, deadline=None)
@given(boards(), st.integers(0, 1))
def test_pruned_search_agrees_with_unpruned_search(cells, adds):
    """Parity, the stack test, play-outs, ordering and the transposition table change nothing."""
    result = solve(cells, adds, budget_nodes=None)
    assert (result.status == SOLVED) == reference_win(cells, adds)
    if result.status == SOLVED:
        assert empties(cells, result.moves, adds)


@settings(max_examples=300, deadline=None)
@given(boards(max_cells=40))
def test_fast_rules_match_the_engine(cells):
    pairs = pairs_ordered(cells)
    assert sorted(pairs) == legal_pairs(cells) and len(set(pairs)) == len(pairs)
    for i, j in pairs[:3]:
        assert _remove(cells, i, j) == remove_pair(cells, i, j)


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
    runner = CliRunner()
    out = runner.invoke(app, ["solve", "19", "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["status"] == SOLVED
    out = runner.invoke(app, ["solve", "-"], input=f"{HARD_NO} 0\nxx 1\n")
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.exit_code == 1
    assert lines[0]["status"] == UNSOLVABLE and "error" in lines[1]
