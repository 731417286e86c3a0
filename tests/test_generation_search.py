"""The search strategy and the strategy registry: search-made puzzles are ordinary puzzles (full
rating, certificate, valid files) that hit their tier or score, rebuild from provenance, do not
fool held-out players, and come out the same whatever the workers."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import run
from pipeline.engine.board import parse
from pipeline.engine.rulesets import Ruleset
from pipeline.engine.stage import replay
from pipeline.generation import climb
from pipeline.generation.climb import Window
from pipeline.generation.generator import GenerateParams, GenerationError, generate, run_attempt
from pipeline.generation.proposals import DigitDistribution, Proposal
from pipeline.generation.strategies import STRATEGY_BY_NAME, Strategy, register
from pipeline.formats.puzzle import dump_yaml
from pipeline.rating.score import rate
from pipeline.validator import validate_texts

EXPERT = GenerateParams(cells=27, adds=2, tier="expert", seed=4)


@pytest.fixture(scope="module")
def expert_run():
    return generate(3, EXPERT, jobs=1)


def test_search_is_the_default_for_a_target_and_random_otherwise():
    assert GenerateParams(cells=27, adds=2, tier="hard").strategy_record().name == "search"
    assert GenerateParams(cells=27, adds=2, score=70).strategy_record().name == "search"
    assert GenerateParams(cells=27, adds=2).strategy_record().name == "random"
    # where the figures do not hold (easy fails the held-out check; easy and medium are slower)
    assert GenerateParams(cells=27, adds=2, tier="easy").strategy_record().name == "random"
    assert GenerateParams(cells=27, adds=2, tier="medium").strategy_record().name == "random"
    assert GenerateParams(cells=27, adds=2, score=30).strategy_record().name == "random"
    assert GenerateParams(cells=27, adds=2, tier="easy", strategy="search").strategy_record().name == "search"


def test_search_made_puzzles_are_fully_rated_certified_and_valid(expert_run):
    assert len(expert_run.puzzles) == 3
    for p in expert_run.puzzles:
        assert p.tier == "expert"
        assert replay(parse(p.board), p.solution, p.adds)[0] == b""
        again = rate(p.board, p.adds, seed=p.provenance["rating_seed"], solution=p.solution)
        assert again.to_dict() == p.difficulty
        assert p.provenance["strategy"] == "search"
        assert p.provenance["params"]["settings"] == climb.settings()
    report = validate_texts((f"{p.id}.yaml", dump_yaml(p.to_document())) for p in expert_run.puzzles)
    assert not report.problems


def test_search_reaches_expert_in_fewer_attempts_than_random(expert_run):
    """The point of the strategy: at 27 cells/2 adds random boards are expert about 3 times in 100."""
    rand = generate(1, GenerateParams(cells=27, adds=2, tier="expert", strategy="random", seed=4), jobs=1)
    assert expert_run.attempts / 3 < rand.attempts


def test_attempt_rebuilds_a_search_puzzle(expert_run):
    p = expert_run.puzzles[-1]
    again = run_attempt(EXPERT, p.provenance["attempt"])
    assert again.puzzle is not None and again.puzzle.to_document() == p.to_document()


def test_score_target_is_met_within(tmp_path: Path):
    result = run(*["generate", "--count", "2", "--cells", "27", "--adds", "2", "--score", "70",
                                 "--within", "3", "--seed", "1", "--jobs", "1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    files = sorted(tmp_path.glob("*.yaml"))
    assert len(files) == 2
    import yaml

    for f in files:
        doc = yaml.safe_load(f.read_text())
        assert abs(doc["difficulty"]["score"] - 70) <= 3
        assert doc["provenance"]["params"]["score"] == 70 and doc["provenance"]["params"]["within"] == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (["--score", "90", "--within", "3", "--tier", "hard"], "score 90+-3 lies outside tier 'hard'"),
        (["--score", "101"], "score 101.0 is out of range: 0 to 100"),
        (["--score", "50", "--within", "0"], "within 0.0 is out of range"),
    ],
)
def test_bad_score_target_is_one_line(tmp_path: Path, args, message):
    result = run(*["generate", "--cells", "27", "--adds", "2", "--out", str(tmp_path), *args])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_search_files_are_the_same_whatever_the_jobs(tmp_path: Path):
    args = ["generate", "--count", "2", "--cells", "27", "--adds", "2", "--tier", "hard", "--seed", "3"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert run(*args + ["--out", str(one), "--jobs", "1"]).exit_code == 0
    assert run(*args + ["--out", str(two), "--jobs", "2"]).exit_code == 0
    files = {p.name: p.read_bytes() for p in one.iterdir()}
    assert len(files) == 2 and files == {p.name: p.read_bytes() for p in two.iterdir()}


def test_the_climb_keeps_every_value_class_count():
    rng = random.Random(0)
    board = bytes(rng.choices(range(1, 10), k=27))
    from pipeline.engine.rulesets import DEFAULT

    for _ in range(50):
        swapped = climb._swap(board, rng, DEFAULT.class_of)
        assert sorted(swapped.translate(DEFAULT.class_of)) == sorted(board.translate(DEFAULT.class_of))
        assert sorted(swapped) == sorted(board)


def test_window_aims_inside_the_target():
    assert Window(84, 100).aim() == (88.0, 96.0)
    assert Window(67, 73).aim() == (68.5, 71.5)
    assert Window(0, 41, upper=True).aim() == pytest.approx((24.6, 38.0))  # a whole tier: its upper part
    assert Window(84, 100, upper=True).aim() == (89.0, 97.0)
    assert Window(0, 41).distance(20) == 0 and Window(84, 100).distance(80) == 8


# --- the registry ----------------------------------------------------------------------------

@pytest.fixture
def sevens() -> Iterator[Strategy]:
    """A test-only strategy: boards of one digit, which need a ruleset flag nobody has."""

    def candidates(cells: int, adds: int, rng: random.Random, digits: DigitDistribution, ruleset: Ruleset,
                   window: Window | None) -> Iterator[Proposal]:
        yield Proposal(bytes([7, 3] * (cells // 2)))

    strategy = register(Strategy("sevens", "sevens and threes", candidates))
    yield strategy
    del STRATEGY_BY_NAME["sevens"]


def test_a_registered_strategy_is_used_by_name_with_no_generator_change(sevens: Strategy):
    outcome = run_attempt(GenerateParams(cells=12, adds=0, strategy="sevens"), 0)
    assert outcome.reason == "trivial"  # 7,3,7,3,... pairs off in reading order: judged like any board


def test_a_strategy_is_refused_where_a_flag_it_needs_is_off(no_diagonals: Ruleset):
    with pytest.raises(GenerationError, match=r"strategy 'constructive' is not sound for ruleset 99 .*needs constructive.*use one of random, search"):
        GenerateParams(cells=14, adds=1, strategy="constructive", ruleset=no_diagonals.number).check()
    GenerateParams(cells=14, adds=1, strategy="search", tier="hard", ruleset=no_diagonals.number).check()


# --- no gaming the score ---------------------------------------------------------------------

def test_held_out_players_lose_search_puzzles_as_often_as_random_ones():
    """Small version of the bench's check (36 cells/1 add, expert, 6 puzzles each): the study's
    held-out models must not lose the search's expert puzzles less often than random's (one-sided
    Mann-Whitney, p >= 0.05), and the search keeps variety (distance >= 90% of random's)."""
    from research.bench_search import VARIETY, distinct_layouts, heldout_check, mean_distance, run

    games = {"constrained": 24, "tidy": 24, "montecarlo": 6, "tens": 24, "bottomup": 24}
    found, _ = run(36, 1, "expert", "search", count=6, seed=5)
    rand, _ = run(36, 1, "expert", "random", count=6, seed=5)
    check = heldout_check(found, rand, games)
    assert check.passed, check
    assert distinct_layouts(found) == len(found)
    assert mean_distance(found) >= VARIETY * mean_distance(rand)


def test_the_held_out_check_fails_on_easier_puzzles():
    """The check can fail: random's hard puzzles against search's easy ones (lost less often)."""
    from research.bench_search import heldout_check, run

    games = {"constrained": 24, "tidy": 24, "montecarlo": 6, "tens": 24, "bottomup": 24}
    easy, _ = run(27, 2, "easy", "search", count=5, seed=5)
    hard, _ = run(27, 2, "hard", "random", count=5, seed=5)
    assert not heldout_check(easy, hard, games).passed


def test_a_score_with_a_tier_aims_at_both():
    """The nightly asks for a Stage's score inside the Stage's tier: the window is the overlap."""
    params = GenerateParams(cells=27, adds=2, tier="hard", score=55, within=3)
    assert params.window() == Window(54.0, 58.0)
    from pipeline.rating.score import Rating

    assert params.on_target(Rating("medium", 53.5, 0)) == "tier:medium"
    assert params.on_target(Rating("hard", 58.5, 0)) == "off-score"
    assert params.on_target(Rating("hard", 56.0, 0)) is None
