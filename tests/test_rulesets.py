"""Rulesets as values: the registry, and a test-only ruleset (no diagonal connections) taken
through play, solve, rate, generate and validate, while the shipped CLI refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT, RULESETS, SHIPPED, Ruleset, ruleset_for
from pipeline.engine.stage import STUCK, Stage, replay
from pipeline.errors import IllegalMoveError, RulesetError
from pipeline.formats.files import write_puzzles
from pipeline.generation.generator import GenerateParams, GenerationError, generate
from pipeline.rating.score import rate
from pipeline.rating.tiers import UNSOLVABLE as TIER_UNSOLVABLE
from pipeline.solver.search import SOLVED, UNSOLVABLE, solve
from pipeline.validator import validate_paths
from tests.helpers import run, unpruned_win

# Two pairs, each joined only by a diagonal: ruleset 1 wins it, no-diagonals is stuck at once.
DIAGONAL_ONLY = "1.3....../.1.7"


def test_only_ruleset_1_is_shipped() -> None:
    assert frozenset({1}) == SHIPPED and ruleset_for(1) is DEFAULT and RULESETS[1] is DEFAULT
    with pytest.raises(RulesetError, match="unknown ruleset 7"):
        ruleset_for(7, SHIPPED)


def test_a_registered_ruleset_is_found_by_number(no_diagonals: Ruleset) -> None:
    assert (
        ruleset_for(no_diagonals.number) is no_diagonals
        and ruleset_for(str(no_diagonals.number)) is no_diagonals
    )
    assert str(no_diagonals).startswith(f"ruleset {no_diagonals.number} ")
    with pytest.raises(RulesetError):
        ruleset_for(no_diagonals.number, SHIPPED)


def test_it_plays(no_diagonals: Ruleset) -> None:
    assert list(Stage(DIAGONAL_ONLY).legal_moves()) == [
        Move.parse("0,0-1,1"),
        Move.parse("0,2-1,3"),
    ]
    stage = Stage(DIAGONAL_ONLY, ruleset=no_diagonals.number)
    assert list(stage.legal_moves()) == [] and stage.status == STUCK
    with pytest.raises(IllegalMoveError, match="diagonals do not connect"):
        stage.play("0,0-1,1")
    assert replay(b"\x01\x01", ["0,0-0,1"], 0, no_diagonals) == (b"", 0)


small_boards = (
    st.lists(st.sampled_from([0, 1, 2, 3, 5, 7, 8, 9]), min_size=1, max_size=13)
    .map(bytes)
    .filter(
        lambda c: all(
            any(c[s : s + 9]) for s in range(0, len(c), 9)
        )  # real boards: no row of gaps only
    )
)


@settings(max_examples=150, deadline=None)
@given(cells=small_boards, adds=st.integers(0, 1))
def test_it_solves_like_the_unpruned_reference(
    no_diagonals: Ruleset, cells: bytes, adds: int
) -> None:
    result = solve(cells, adds, ruleset=no_diagonals)
    assert (result.status == SOLVED) == unpruned_win(cells, adds, no_diagonals)
    if result.moves is not None:
        assert replay(cells, result.moves, adds, no_diagonals)[0] == b""


@settings(max_examples=150, deadline=None)
@given(cells=small_boards, adds=st.integers(0, 1))
def test_ruleset_1_without_shortcuts_agrees_with_the_fast_solver(
    unpruned: Ruleset, cells: bytes, adds: int
) -> None:
    plain = solve(cells, adds, ruleset=unpruned)
    assert (
        plain.status
        == solve(cells, adds).status
        == (SOLVED if unpruned_win(cells, adds) else UNSOLVABLE)
    )
    if plain.moves is not None:
        assert replay(cells, plain.moves, adds)[0] == b""


def test_the_solver_answers_under_the_ruleset(no_diagonals: Ruleset) -> None:
    assert solve(DIAGONAL_ONLY, 0).status == SOLVED
    assert solve(DIAGONAL_ONLY, 0, ruleset=no_diagonals.number).status == UNSOLVABLE


def test_it_rates(no_diagonals: Ruleset) -> None:
    assert rate(DIAGONAL_ONLY, 0, playouts=8).tier != TIER_UNSOLVABLE
    assert rate(DIAGONAL_ONLY, 0, playouts=8, ruleset=no_diagonals).tier == TIER_UNSOLVABLE
    rating = rate("123456789/987654321/135", 2, playouts=8, ruleset=no_diagonals)
    assert rating.score is not None and rating.min_adds is not None


@pytest.fixture(scope="module")
def generated(no_diagonals: Ruleset, tmp_path_factory: pytest.TempPathFactory) -> Path:
    params = GenerateParams(
        cells=14, adds=1, seed=3, ruleset=no_diagonals.number, max_attempts=400, playouts=16
    )
    result = generate(3, params, jobs=1)
    assert len(result.puzzles) == 3
    folder = tmp_path_factory.mktemp("no-diagonals")
    write_puzzles(result.puzzles, folder)
    for p in result.puzzles:
        assert p.ruleset == no_diagonals.number
        assert replay(Stage(p.board).cells, p.solution, p.adds, no_diagonals)[0] == b""
    return folder


def test_it_generates_and_validates(generated: Path, no_diagonals: Ruleset) -> None:
    report = validate_paths([generated], rulesets=SHIPPED | {no_diagonals.number})
    assert report.files == 3 and report.problems == []
    refused = validate_paths([generated])
    assert refused.problems and {p.code for p in refused.problems} == {"NM302"}


def test_the_constructive_generator_is_refused_where_unsound(no_diagonals: Ruleset) -> None:
    with pytest.raises(GenerationError, match="constructive"):
        GenerateParams(
            cells=14, adds=1, strategy="constructive", ruleset=no_diagonals.number
        ).check()


def test_the_cli_refuses_it(generated: Path, no_diagonals: Ruleset) -> None:
    result = run(*["validate", str(generated)])
    assert result.exit_code != 0 and "NM302" in result.output


def test_board_width_and_pair_order_live_on_the_ruleset() -> None:
    """No module checks for ruleset 1 by identity; the record carries width and pair order."""
    import dataclasses
    from random import Random

    from pipeline.engine import rules
    from pipeline.engine.board import WIDTH
    from pipeline.rating.players import LocalPlayer, ScannerPlayer, play

    assert DEFAULT.width == WIDTH == 9 and DEFAULT.pair_order is rules.pairs_ordered
    narrow = dataclasses.replace(DEFAULT, width=3)
    cells = bytes(Random(3).choices(range(1, 10), k=27))
    for player in (LocalPlayer(), ScannerPlayer()):
        nine = [play(player, cells, 2, Random(s)).path for s in range(12)]
        three = [play(player, cells, 2, Random(s), ruleset=narrow).path for s in range(12)]
        assert nine != three, player.name  # the player's rows are the ruleset's rows


def test_ruleset_one_only() -> None:
    assert (
        ruleset_for(1) is DEFAULT
        and ruleset_for("1") is DEFAULT
        and ruleset_for(DEFAULT) is DEFAULT
    )
    for bad in (2, "2", 0, "one", None, True, 1.5):
        with pytest.raises(RulesetError, match="unknown ruleset"):
            ruleset_for(bad)
    with pytest.raises(RulesetError):
        Stage("11", adds=0, ruleset=2)
