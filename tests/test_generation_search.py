"""The search strategy and the strategy registry: search-made puzzles are ordinary puzzles (full
rating, certificate, valid files) that hit their tier or score, rebuild from provenance, do not
fool held-out players, and come out the same whatever the workers."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.engine.board import parse
from pipeline.engine.rulesets import Ruleset
from pipeline.engine.stage import replay
from pipeline.formats.puzzle import dump_yaml
from pipeline.generation import screen
from pipeline.generation.generator import (
    GenerateParams,
    GenerationError,
    Target,
    generate,
    run_attempt,
)
from pipeline.generation.proposals import DigitDistribution, Proposal, reading_order_reduction
from pipeline.generation.screen import Window
from pipeline.generation.strategies import STRATEGY_BY_NAME, Strategy, register
from pipeline.rating import DEFAULT_SEED
from pipeline.rating.score import rate
from pipeline.solver.budgets import DEFAULT_SOLVE_NODES
from pipeline.solver.search import UNSOLVABLE, solve
from pipeline.validator import validate_texts
from tests.helpers import run

pytestmark = pytest.mark.slow

EXPERT = GenerateParams(cells=27, adds=2, tier="expert", seed=1)


@pytest.fixture(scope="module")
def expert_run():
    return generate(3, EXPERT, jobs=1)


def test_search_is_the_default_for_a_target_and_random_otherwise():
    assert GenerateParams(cells=27, adds=2, tier="hard").strategy_record().name == "search"
    assert GenerateParams(cells=27, adds=2, score=70).strategy_record().name == "search"
    assert GenerateParams(cells=27, adds=2).strategy_record().name == "random"
    # every tier: the bench measures the screen faster than random on each (docs/generation.md)
    assert GenerateParams(cells=27, adds=2, tier="easy").strategy_record().name == "search"
    assert GenerateParams(cells=27, adds=2, tier="medium").strategy_record().name == "search"
    assert GenerateParams(cells=27, adds=2, score=30).strategy_record().name == "search"
    assert (
        GenerateParams(cells=27, adds=2, tier="easy", strategy="random").strategy_record().name
        == "random"
    )


def test_search_made_puzzles_are_fully_rated_certified_and_valid(expert_run):
    assert len(expert_run.puzzles) == 3
    for p in expert_run.puzzles:
        assert p.tier == "expert"
        assert replay(parse(p.board), p.solution, p.adds)[0] == b""
        again = rate(p.board, p.adds, seed=p.provenance["rating_seed"], solution=p.solution)
        assert again.to_dict() == p.difficulty
        assert p.provenance["strategy"] == "search"
        assert p.provenance["params"]["settings"] == screen.settings()
    report = validate_texts(
        (f"{p.id}.yaml", dump_yaml(p.to_document())) for p in expert_run.puzzles
    )
    assert not report.problems


def test_search_rates_fewer_boards_per_expert_puzzle_than_random(expert_run):
    """The point of the strategy: at 27 cells/2 adds random boards are expert about 3 times in 100,
    and random pays a full rating for each miss; the screen pays a few games."""
    rand = generate(
        1, GenerateParams(cells=27, adds=2, tier="expert", strategy="random", seed=1), jobs=1
    )
    assert rand.ratings >= 20  # one expert puzzle: random rated every board it drew until then
    assert 3 <= expert_run.ratings <= 2 * 3  # three: the screen offered few boards that missed


def test_attempt_rebuilds_a_search_puzzle(expert_run):
    p = expert_run.puzzles[-1]
    again = run_attempt(EXPERT, p.provenance["attempt"])
    assert again.puzzle is not None and again.puzzle.to_document() == p.to_document()


def test_score_target_is_met_within(tmp_path: Path):
    result = run(
        *[
            "generate",
            "--count",
            "2",
            "--cells",
            "27",
            "--adds",
            "2",
            "--score",
            "70",
            "--within",
            "3",
            "--seed",
            "1",
            "--jobs",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    assert result.exit_code == 0, result.output
    files = sorted(tmp_path.glob("*.yaml"))
    assert len(files) == 2
    import yaml

    for f in files:
        doc = yaml.safe_load(f.read_text())
        assert abs(doc["difficulty"]["score"] - 70) <= 3
        assert (
            doc["provenance"]["params"]["score"] == 70
            and doc["provenance"]["params"]["within"] == 3
        )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--score", "90", "--within", "3", "--tier", "hard"],
            "score 90+-3 lies outside tier 'hard'",
        ),
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
    args = [
        "generate",
        "--count",
        "2",
        "--cells",
        "27",
        "--adds",
        "2",
        "--tier",
        "hard",
        "--seed",
        "3",
    ]
    one, two = tmp_path / "one", tmp_path / "two"
    assert run(*args + ["--out", str(one), "--jobs", "1"]).exit_code == 0
    assert run(*args + ["--out", str(two), "--jobs", "2"]).exit_code == 0
    files = {p.name: p.read_bytes() for p in one.iterdir()}
    assert len(files) == 2 and files == {p.name: p.read_bytes() for p in two.iterdir()}


def test_the_search_offers_random_boards_unchanged():
    """The screen only chooses among random's draws: every board it offers is one of the attempt's
    first DRAWS boards, in draw order, and the first draw is the random strategy's own board."""
    from pipeline.engine.rulesets import DEFAULT

    digits, window = DigitDistribution.parse(None), Window(0.0, 41.0)
    for k in range(3):
        drawn = random.Random(f"9:{k}")
        boards = [bytes(digits.draw(drawn, 27)) for _ in range(screen.DRAWS)]
        offered = [
            p.cells
            for p in screen.screen(27, 2, random.Random(f"9:{k}"), digits, DEFAULT, (window,))
        ]
        assert offered and offered == [b for b in boards if b in offered]
        assert (
            STRATEGY_BY_NAME["random"]
            .candidates(27, 2, random.Random(f"9:{k}"), digits, DEFAULT, window)
            .__next__()
            .cells
            == boards[0]
        )


def test_the_screen_is_one_sided_with_a_wider_margin_at_the_top():
    """Dropping a board at a window's top loses one of its hardest, at the bottom one of its easiest:
    the top margin is the wider one, so what the screen loses leaves the search's puzzles, if
    anything, harder than random's (the held-out check's direction). No test at 0 or 100."""
    assert all(stage.below < screen.ABOVE for stage in screen.STAGES)
    easy, expert = Window(0.0, 41.0), Window(84.0, 100.0)
    assert not easy.outside(0.0, 10.0, 1.0) and not expert.outside(100.0, 10.0, 1.0)
    assert easy.outside(41.0 + screen.ABOVE * 10.0 + 0.1, 10.0, 1.0) and not easy.outside(
        41.0 + screen.ABOVE * 10.0, 10.0, 1.0
    )
    assert expert.outside(84.0 - 10.0 - 0.1, 10.0, 1.0) and not expert.outside(
        84.0 - 10.0, 10.0, 1.0
    )
    assert expert.outside(80.0, 10.0, 0.5, most=78.9) and not expert.outside(
        70.0, 10.0, 0.5, most=79.0
    )


def test_a_stage_drops_no_board_over_a_window_where_it_would_drop_the_windows_middle():
    """At 36 cells and 1 add the first stage's 4+2 games read random's medium boards about 20 points
    high (its line is pulled toward the fitted boards' mean) and dropped half of them over the
    top, picking the boards whose first games went well: their held-out loss was lower than
    random's (docs/generation.md, 36/1 medium). A random-made 36/1 board rated 48.28 (medium,
    rating version 4) whose first stage read 72.3, over the margin 70.7: the screen keeps it now;
    at 2 adds the first stage still tests the top (it drops a medium middle 1% of the time)."""
    medium = Window(41.0, 54.0)
    first = screen.STAGES[0]
    assert not first.tests_top(medium, 1) and first.tests_top(medium, 2)
    assert all(s.drops_inside(medium, 1) <= screen.TOP_DROPS for s in screen.STAGES[1:])
    from pipeline.engine.rulesets import DEFAULT

    board = parse("332448759/988823275/312983274/659752213")
    assert screen.passes(board, 1, DEFAULT, (medium,)) is not None


def test_the_stages_play_on_and_the_estimate_grows_with_the_losses():
    """Each stage plays on from the last (no player's count falls), every slope is positive (what
    lets the screen skip games that cannot change its verdict), and a player the screen plays in
    full plays exactly the rating's games of it (version 3's, the counts the screen was fitted on:
    version 4 plays the same streams further, taking the screen's games as its first)."""
    from pipeline.rating.score import DEFAULT_PLAYOUTS, games_for

    for before, stage in zip(screen.STAGES, screen.STAGES[1:]):
        assert all(n >= dict(before.games).get(name, 0) for name, n in stage.games)
    assert all(slope > 0 for stage in screen.STAGES for slope in stage.slopes)
    assert all(len(stage.slopes) == len(stage.games) for stage in screen.STAGES)
    last = dict(screen.STAGES[-1].games)
    for name in ("scanner", "proximity", "lookahead", "opener"):
        assert last[name] == games_for(name, DEFAULT_PLAYOUTS, 3)
    assert all(last[name] < games_for(name, DEFAULT_PLAYOUTS, 3) for name in ("random", "local"))


def _naive_passes(cells: bytes, adds: int, window: Window) -> bool:
    """The screen as written in its design comment: every stage's games played, then judged."""
    from pipeline.engine.rulesets import DEFAULT
    from pipeline.rating.players import PLAYERS, play

    if not reading_order_reduction(cells, adds, DEFAULT.class_of):
        return False
    if solve(cells, adds, ruleset=DEFAULT, budget_nodes=DEFAULT_SOLVE_NODES).status == UNSOLVABLE:
        return False
    for stage in screen.STAGES:
        lost, won, every = {}, {}, {}
        for name, games in stage.games:  # the rating's own first games
            player, rng = (
                next(p for p in PLAYERS if p.name == name),
                random.Random(f"{DEFAULT_SEED}:{name}"),
            )
            lost[name] = sum(
                not play(player, cells, adds, rng, ruleset=DEFAULT).won for _ in range(games)
            )
            won[name], every[name] = 0, games
        line = (
            stage.intercept
            + stage.per_add * adds
            + sum(
                slope * lost[name] / games
                for (name, games), slope in zip(stage.games, stage.slopes)
            )
        )
        guess = min(100.0, max(0.0, line))
        if window.outside(
            guess,
            stage.error,
            stage.below,
            reach=(stage.estimate(won, adds), stage.estimate(every, adds)),
        ):
            return False
    return window.last_call(guess)


def test_the_screen_skips_only_games_that_cannot_change_its_verdict():
    """Cross-check against the naive screen (all of every stage's games): same verdict on every
    board and target, tiers and scores."""
    from pipeline.engine.rulesets import DEFAULT

    digits = DigitDistribution.parse(None)
    windows = [
        Window(0, 41),
        Window(41, 54),
        Window(54, 84),
        Window(84, 100),
        Window(39, 51, 45),
        Window(84, 96, 90),
    ]
    for cells, adds in ((27, 2), (36, 1)):
        for k in range(8):
            board = bytes(digits.draw(random.Random(f"naive:{k}"), cells))
            for window in windows:
                assert (
                    screen.passes(board, adds, DEFAULT, (window,)) is not None
                ) == _naive_passes(board, adds, window), (board, window)


def test_the_screens_batches_change_no_verdict_nor_estimate(monkeypatch: pytest.MonkeyPatch):
    """The screen plays a few games at a time and tests after the last: the same verdicts, games
    and estimates as one game at a time, because `Stage.line` (equal to `estimate`) never falls
    when a loss count grows."""
    from pipeline.engine.rulesets import DEFAULT

    rng = random.Random(5)
    for stage in screen.STAGES:
        names = [name for name, _ in stage.games]
        for _ in range(300):
            lost = [rng.randint(0, n) for _, n in stage.games]
            adds = rng.randint(0, 5)
            assert stage.line(lost, adds) == stage.estimate(dict(zip(names, lost)), adds)
            at = rng.randrange(len(lost))
            if lost[at] < stage.games[at][1]:
                more = lost[:at] + [lost[at] + 1] + lost[at + 1 :]
                assert stage.line(more, adds) >= stage.line(lost, adds)
    digits = DigitDistribution.parse(None)
    windows = ((Window(0, 41),), (Window(54, 84),), (Window(84, 96, 90), Window(39, 51, 45)))
    for ahead in (1, 3, 8):
        monkeypatch.setattr(screen, "_AHEAD", ahead)
        seen = []
        for cells, adds in ((27, 2), (36, 1)):
            for k in range(6):
                board = bytes(digits.draw(random.Random(f"batch:{k}"), cells))
                for targets in windows:
                    estimates: list[float] = []
                    played = screen.passes(board, adds, DEFAULT, targets, estimates)
                    games = None if played is None else [len(g.played) for g in played]
                    seen.append((games, estimates))
        if ahead == 1:
            one_at_a_time = seen
        assert seen == one_at_a_time
        assert any(games is None for games, _ in seen)
        assert any(games is not None for games, _ in seen)


def test_a_score_target_aims_at_the_middle_half_of_its_window():
    """A night wants each Stage's puzzle near its target: for a score the screen offers boards whose
    estimate is in the window's middle half; a tier's whole range stays open (random's puzzles)."""
    assert Window(39.0, 51.0, 45.0).aim() == (42.0, 48.0)
    assert Window(0.0, 41.0).aim() == (0.0, 41.0)
    assert Window(39.0, 51.0, 45.0).last_call(47.9) and not Window(39.0, 51.0, 45.0).last_call(49.0)
    assert Window(41.0, 54.0).last_call(55.0)  # a tier's close call goes to the rating


# --- the registry ----------------------------------------------------------------------------


@pytest.fixture
def sevens() -> Iterator[Strategy]:
    """A test-only strategy: boards of one digit, which need a ruleset flag nobody has."""

    def candidates(
        cells: int,
        adds: int,
        rng: random.Random,
        digits: DigitDistribution,
        ruleset: Ruleset,
        window: Window | None,
    ) -> Iterator[Proposal]:
        yield Proposal(bytes([7, 3] * (cells // 2)))

    strategy = register(Strategy("sevens", "sevens and threes", candidates))
    yield strategy
    del STRATEGY_BY_NAME["sevens"]


def test_a_registered_strategy_is_used_by_name_with_no_generator_change(sevens: Strategy):
    outcome = run_attempt(GenerateParams(cells=12, adds=0, strategy="sevens"), 0)
    assert (
        outcome.reason == "trivial"
    )  # 7,3,7,3,... pairs off in reading order: judged like any board


def test_a_strategy_is_refused_where_a_flag_it_needs_is_off(no_diagonals: Ruleset):
    with pytest.raises(
        GenerationError,
        match=r"strategy 'constructive' is not sound for ruleset 99 .*needs constructive.*use one of random, search",
    ):
        GenerateParams(
            cells=14, adds=1, strategy="constructive", ruleset=no_diagonals.number
        ).check()
    GenerateParams(
        cells=14, adds=1, strategy="search", tier="hard", ruleset=no_diagonals.number
    ).check()


# --- no gaming the score ---------------------------------------------------------------------


def test_held_out_players_lose_search_puzzles_as_often_as_random_ones():
    """Small version of the bench's check (27 cells/2 adds, easy, 8 puzzles each, the bench's
    seed: where the previous search, a climb aimed at the tier's upper part, failed it with p
    0.012): the study's held-out models must not lose the search's easy puzzles less often than
    random's (one-sided Mann-Whitney, p >= 0.05), and the search keeps variety (distance >= 90%
    of random's)."""
    from research.bench_search import VARIETY, distinct_layouts, heldout_check, mean_distance, run

    games = {"constrained": 24, "tidy": 24, "montecarlo": 6, "tens": 24, "bottomup": 24}
    found = run(27, 2, "easy", "search", count=8, seed=2026).puzzles
    rand = run(27, 2, "easy", "random", count=8, seed=2026).puzzles
    check = heldout_check(found, rand, games)
    assert check.passed, check
    assert distinct_layouts(found) == len(found)
    assert mean_distance(found) >= VARIETY * mean_distance(rand)


def test_the_held_out_check_fails_on_easier_puzzles():
    """The check can fail: random's hard puzzles against search's easy ones (lost less often)."""
    from research.bench_search import heldout_check, run

    games = {"constrained": 24, "tidy": 24, "montecarlo": 6, "tens": 24, "bottomup": 24}
    easy = run(27, 2, "easy", "search", count=5, seed=5).puzzles
    hard = run(27, 2, "hard", "random", count=5, seed=5).puzzles
    assert not heldout_check(easy, hard, games).passed


def test_a_score_with_a_tier_aims_at_both():
    """The nightly asks for a Stage's score inside the Stage's tier: the window is the overlap."""
    params = GenerateParams(cells=27, adds=2, tier="hard", score=55, within=3)
    window = params.window()
    assert window == Window(54.0, 58.0, 55)
    assert window.aim() == (54.0, 56.0)  # the screen aims at the middle half around the score
    from pipeline.rating.score import Rating

    assert params.on_target(Rating("medium", 53.5, 0)) == "tier:medium"
    assert params.on_target(Rating("hard", 58.5, 0)) == "off-score"
    assert params.on_target(Rating("hard", 56.0, 0)) is None


# --- one stream for several targets ----------------------------------------------------------

STREAM = GenerateParams(
    cells=30,
    adds=2,
    within=6.0,
    seed=4,
    targets=(Target("medium", 47.0), Target("hard", 60.0), Target("hard", 71.0), Target("hard")),
)
QUOTAS = [2, 2, 1, 1]


@pytest.fixture(scope="module")
def stream_run():
    return generate(sum(QUOTAS), STREAM, jobs=1, quotas=QUOTAS)


def test_one_stream_fills_each_target_its_quota(stream_run):
    """A night's targets of the tiers sharing a board size: every puzzle is on a target, each target
    gets its quota (a puzzle goes to the first with room it is on), and the rounds after the first
    ask only for what still has room, on seeds of their own."""
    left = list(QUOTAS)
    for p in stream_run.puzzles:
        spot = next(
            i
            for i, t in enumerate(STREAM.targets)
            if left[i]
            and p.tier == t.tier
            and (t.score is None or abs(p.rated.score - t.score) <= STREAM.within)
        )
        left[spot] -= 1
    assert left == [0, 0, 0, 0]
    seeds = {p.provenance["seed"] for p in stream_run.puzzles}
    assert STREAM.seed in seeds and len(seeds) > 1  # more than one round
    later = [p for p in stream_run.puzzles if p.provenance["seed"] != STREAM.seed]
    assert all(len(p.provenance["params"]["targets"]) < len(STREAM.targets) for p in later)


def test_a_stream_puzzle_rebuilds_from_its_provenance(stream_run):
    from dataclasses import replace

    for p in stream_run.puzzles:
        params = p.provenance["params"]
        asked = replace(
            STREAM,
            seed=p.provenance["seed"],
            targets=tuple(Target(t, s) for t, s in params["targets"]),
        )
        again = run_attempt(asked, p.provenance["attempt"]).puzzle
        assert again is not None and again.to_document() == p.to_document()


def test_a_stream_is_the_same_whatever_the_jobs(stream_run):
    two = generate(sum(QUOTAS), STREAM, jobs=2, quotas=QUOTAS)
    assert [p.to_document() for p in two.puzzles] == [p.to_document() for p in stream_run.puzzles]
    assert (two.attempts, two.rejected) == (stream_run.attempts, stream_run.rejected)


def test_quotas_must_match_the_targets():
    with pytest.raises(GenerationError, match=r"quotas \[1\] must give each of the 4 targets"):
        generate(1, STREAM, jobs=1, quotas=[1])
    with pytest.raises(GenerationError, match="not both"):
        GenerateParams(cells=30, adds=2, tier="hard", targets=(Target("hard", 60.0),)).check()


def test_the_screen_passes_a_board_on_any_of_several_windows():
    """Several windows: a board the naive screen passes for any one of them passes (the screen drops
    a board only when a stage puts it clearly outside all of them at once)."""
    from pipeline.engine.rulesets import DEFAULT

    digits = DigitDistribution.parse(None)
    pairs = [
        (Window(0, 41), Window(84, 100)),
        (Window(39, 51, 45), Window(60, 72, 66)),
        (Window(41, 54), Window(54, 84)),
    ]
    seen = set()
    for k in range(8):
        board = bytes(digits.draw(random.Random(f"union:{k}"), 30))
        for windows in pairs:
            union = screen.passes(board, 2, DEFAULT, windows) is not None
            assert union or not any(_naive_passes(board, 2, w) for w in windows), (board, windows)
            seen.add(union)
    assert seen == {True, False}


def test_the_rating_takes_over_the_screens_games():
    """The screen plays the rating's own first games of its players and hands them over: the rating
    plays only the rest, and rates exactly as from scratch (games of another board are ignored)."""
    from pipeline.engine.rulesets import DEFAULT
    from pipeline.rating.players import Games

    digits, checked = DigitDistribution.parse(None), 0
    for k in range(4):
        board = bytes(digits.draw(random.Random(f"reuse:{k}"), 27))
        played = screen.passes(board, 2, DEFAULT, (Window(0.0, 100.0, 50.0),))
        if played is None:
            continue
        checked += 1
        assert sum(len(g.played) for g in played) > 0
        before = {g.player.name: len(g.played) for g in played}
        taken = rate(board, 2, played=played).to_dict()
        assert taken == rate(board, 2).to_dict()
        from pipeline.rating.score import games_for

        # it played on from the handed games: they keep the screen's games as they were and have
        # summed the rest of the rating's (`Games.totals`: no game object made of those)
        for g in played:
            n = games_for(g.player.name, 64)
            assert len(g.played) == before[g.player.name] < n
            assert len(g.played) + g._tallied.games == n
        other = Games(played[0].player, bytes(reversed(board)), 2, 0)
        other.first(5)
        assert rate(board, 2, played=(other,)).to_dict() == taken
    assert checked


def _target_args(puzzle) -> list[str]:
    """The `generate` options that name a stream puzzle's round (from its provenance)."""
    params = puzzle.provenance["params"]
    args = [
        "--cells",
        str(params["cells"]),
        "--adds",
        str(params["adds"]),
        "--within",
        str(params["within"]),
        "--seed",
        str(puzzle.provenance["seed"]),
    ]
    for tier, score in params["targets"]:
        args += ["--target", tier if score is None else f"{tier}:{score}"]
    return args


def test_generate_rebuilds_a_stream_puzzle_from_its_provenance(stream_run, tmp_path: Path):
    """`--target` (repeated) names a round's targets: with the seed and `--attempt` it rebuilds any
    puzzle of a stream, a night's included, byte for byte."""
    for p in stream_run.puzzles[:3]:
        out = tmp_path / p.id
        result = run(
            "generate",
            *_target_args(p),
            "--attempt",
            str(p.provenance["attempt"]),
            "--out",
            str(out),
        )
        assert result.exit_code == 0, result.output
        assert (out / f"{p.id}.yaml").read_text() == dump_yaml(p.to_document())


@pytest.mark.parametrize(
    "bad, message",
    [
        ("legendary", "--target: target 'legendary': expected TIER or TIER:SCORE"),
        ("hard:x", "--target: target 'hard:x': the score after ':' must be a number 0-100"),
        ("hard:120", "the score after ':' must be a number 0-100"),
    ],
)
def test_a_bad_target_is_one_clear_line(bad: str, message: str, tmp_path: Path):
    result = run(
        "generate", "--cells", "27", "--adds", "2", "--target", bad, "--out", str(tmp_path)
    )
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_targets_and_a_tier_together_are_refused(tmp_path: Path):
    result = run(
        "generate",
        "--cells",
        "27",
        "--adds",
        "2",
        "--tier",
        "hard",
        "--target",
        "hard:60",
        "--out",
        str(tmp_path),
    )
    assert result.exit_code == 1 and "not both" in result.output
