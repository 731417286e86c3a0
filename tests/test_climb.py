"""The climb strategy: its puzzles are ordinary puzzles (full rating, certificate, valid files) that
hit their tier, carry the path of changes that made them, rebuild from provenance and come out the
same whatever the workers; its moves replay; it is the default where the bench measures it ahead;
a job file can fix every Stage's cells and adds."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipeline.engine.board import format_board, parse
from pipeline.engine.rulesets import DEFAULT
from pipeline.engine.stage import replay
from pipeline.formats.puzzle import dump_yaml
from pipeline.generation import climb
from pipeline.generation.generator import GenerateParams, generate, run_attempt
from pipeline.generation.proposals import DigitDistribution
from pipeline.generation.screen import Window
from pipeline.rating.score import rate
from pipeline.validator import validate_texts
from tests.helpers import run

# 27 cells and 4 adds, one of the public games' settings: random boards are mostly easy there
HARD = GenerateParams(cells=27, adds=4, tier="hard", strategy="climb", seed=3)


@pytest.fixture(scope="module")
def hard_run():
    return generate(2, HARD, jobs=1)


def _follow(params: GenerateParams, attempt: int, path: list[str]) -> bytes:
    """The board a recorded path makes: the attempt's draw it names, then each change."""
    rng = random.Random(f"{params.seed}:{attempt}")
    _, draws = climb.opening(params.cells, rng, DigitDistribution.parse(params.digits))
    head, *steps = path
    assert head.startswith("draw ")
    board = draws[int(head.split()[1])]
    for step in steps:
        board = climb.apply(board, step)
    return board


def test_climb_made_puzzles_are_fully_rated_certified_valid_and_on_target(hard_run):
    assert len(hard_run.puzzles) == 2
    for p in hard_run.puzzles:
        assert p.tier == "hard"
        assert replay(parse(p.board), p.solution, p.adds)[0] == b""
        again = rate(p.board, p.adds, seed=p.provenance["rating_seed"], solution=p.solution)
        assert again.to_dict() == p.difficulty
        assert p.provenance["strategy"] == "climb"
        assert p.provenance["params"]["settings"] == climb.settings()
    report = validate_texts((f"{p.id}.yaml", dump_yaml(p.to_document())) for p in hard_run.puzzles)
    assert not report.problems


def test_the_path_of_changes_rebuilds_the_board(hard_run):
    """The provenance's path names the draw the climb started from and every change it kept: replayed,
    it gives the puzzle's board (and at least one puzzle was changed: random boards are rarely hard
    here)."""
    changed = 0
    for p in hard_run.puzzles:
        path = p.provenance["path"]
        assert format_board(_follow(HARD, p.provenance["attempt"], path)) == p.board
        changed += len(path) > 1
    assert changed


def test_attempt_rebuilds_a_climb_puzzle(hard_run):
    p = hard_run.puzzles[-1]
    again = run_attempt(HARD, p.provenance["attempt"])
    assert again.puzzle is not None and again.puzzle.to_document() == p.to_document()


def test_climb_files_are_the_same_whatever_the_jobs(tmp_path: Path):
    args = ["generate", "--count", "1", "--cells", "27", "--adds", "4", "--tier", "hard"]
    args += ["--strategy", "climb", "--seed", "5"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert run(*args, "--out", str(one), "--jobs", "1").exit_code == 0
    assert run(*args, "--out", str(two), "--jobs", "2").exit_code == 0
    files = {p.name: p.read_bytes() for p in one.iterdir()}
    assert len(files) == 1 and files == {p.name: p.read_bytes() for p in two.iterdir()}


def test_every_move_replays_and_keeps_the_board_a_board():
    """Each move's text, applied to the board it changed, gives the neighbour; a digit change keeps to
    the digit distribution, a swap and a row's permutation keep the digits."""
    rng, digits = random.Random(1), DigitDistribution.parse("1:1,2:1,9:1")
    board = bytes(digits.draw(rng, 35))
    kinds = set()
    for _ in range(200):
        after, step = climb.move(board, rng, digits)
        kinds.add(step[0])
        assert len(after) == len(board) and climb.apply(board, step) == after
        assert set(after) <= {1, 2, 9}
        if step[0] in "sr":
            assert sorted(after) == sorted(board)
        else:
            assert sum(a != b for a, b in zip(after, board)) == 1
        board = after
    assert kinds == {"d", "s", "r"}
    with pytest.raises(ValueError, match="not a climb step"):
        climb.apply(board, "x1")


def test_the_climb_aims_a_quarter_into_a_tier_and_at_a_score_as_the_screen_does():
    """A climb enters a window at its near edge: aiming at a tier's whole range would make its
    puzzles the tier's easiest ones when it climbs up. At the top it keeps what the screen keeps
    (ABOVE errors of its last stage over the high end, below 100), so the tier's top is not
    turned away. A score's aim is the screen's."""
    from pipeline.generation.screen import ABOVE

    over = ABOVE * climb.CONFIRM.error
    assert over > 0
    assert climb.aim(Window(54.0, 84.0)) == (61.5, 84.0 + over)
    assert climb.aim(Window(84.0, 100.0)) == (88.0, 100.0)
    assert climb.aim(Window(39.0, 51.0, 45.0)) == Window(39.0, 51.0, 45.0).aim()
    assert climb.distance(70.0, (Window(54.0, 84.0),)) == 0.0
    assert climb.distance(85.0, (Window(54.0, 84.0),)) == 0.0
    assert climb.distance(55.0, (Window(54.0, 84.0), Window(84.0, 100.0))) == 6.5
    assert climb.distance(90.0, (Window(54.0, 84.0),)) == pytest.approx(6.0 - over)


def test_the_climbs_start_counts_no_distance_over_a_top_its_first_stage_cannot_test():
    """At 36 cells and 1 add the first stage's 4+2 games read random's medium boards about 20
    points high, so the draw it put nearest the medium aim was one whose first games went well:
    the climb's medium puzzles, grown from those, were lost less often by the held-out players
    than random's of the same score (docs/generation.md, 36/1 medium). Where the first stage does
    not test a window's top (`Stage.tests_top`), a draw over the aim is as near as one in it: the
    climb starts from the first winnable draw, here draw 0, which reads over the aim (the old
    ranking started from draw 10, read 52.9, inside it)."""
    from pipeline.generation.screen import Window as W

    digits = DigitDistribution.parse(None)
    medium = W(41.0, 54.0)
    assert not climb.START.tests_top(medium, 1)
    seed, draws = climb.opening(36, random.Random("36/1 medium:0"), digits)
    read = climb._Probe(draws[0], 1, DEFAULT, seed).at(climb.START)
    assert climb._winnable(draws[0], 1, DEFAULT) and read > climb.aim(medium)[1]
    offered = next(climb.climb(36, 1, random.Random("36/1 medium:0"), digits, DEFAULT, (medium,)))
    assert offered.path[0] == "draw 0"
    assert climb.distance(read, (medium,), (False,)) == 0.0
    assert climb.distance(read, (medium,), (True,)) == climb.distance(read, (medium,)) > 0


def test_with_no_target_the_climb_offers_the_random_board():
    digits = DigitDistribution.parse(None)
    offered = list(climb.climb(27, 4, random.Random("7:0"), digits, DEFAULT, ()))
    assert [p.cells for p in offered] == [bytes(digits.draw(random.Random("7:0"), 27))]


def test_the_climb_is_the_default_where_the_screen_finds_nothing_and_the_screen_elsewhere():
    """Where the bench measures it ahead (many adds and a high target: random boards are easy
    there), the climb; below, at the adds the screen was fitted at (the nightly's own sizes), the
    screen, and beyond them random; with no target, random."""

    def default(cells: int, adds: int, **target: object) -> str:
        params = GenerateParams(cells=cells, adds=adds, **target)  # type: ignore[arg-type]
        return params.strategy_record().name

    assert default(35, 5, tier="hard") == default(35, 5, tier="expert") == "climb"
    assert default(35, 5, score=60.0) == default(27, 4, tier="expert") == "climb"
    assert default(35, 5, tier="medium") == default(27, 4, tier="hard") == "random"
    for cells, adds in ((27, 2), (30, 2), (36, 1), (27, 3)):
        assert default(cells, adds, tier="expert") == default(cells, adds, tier="hard") == "search"
    assert default(35, 5) == "random"


# --- the nightly at a game's own settings ----------------------------------------------------

FIXED = """\
schema_version: 1
kind: curves
curves:
- name: fixed
  description: Two Stages per Level, easy then medium.
  levels: [[{tier: easy, at: 0.5}, {tier: medium, at: 0.5}]]
job: {curve: fixed, levels: 1, stages: 2, cells: 27, adds: 4}
"""


@pytest.mark.slow  # a night generated from scratch, rated by version 4
def test_a_job_file_fixes_every_stages_cells_and_adds(tmp_path: Path):
    """`cells` and `adds` in the job: every Stage of the night, whatever its tier, has that board
    size and allocation, made by the strategy the generator defaults to there for the tier."""
    import yaml

    job = tmp_path / "job.yaml"
    job.write_text(FIXED)
    out = tmp_path / "nights"
    result = run(
        *["nightly", "--job", str(job), "--out", str(out), "--date", "2026-01-02", "-j", "1"],
        "--no-stock",
    )
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load((out / "2026-01-02" / "bundle.yaml").read_text())
    stages = [s for lv in doc["levels"] for s in lv["stages"]]
    assert [s["puzzle"]["difficulty"]["tier"] for s in stages] == ["easy", "medium"]
    assert all(len(parse(s["puzzle"]["board"])) == 27 and s["puzzle"]["adds"] == 4 for s in stages)
    tiers = doc["generator"]["params"]["tiers"]
    assert {(t["cells"], t["adds"], t["strategy"]) for t in tiers.values()} == {(27, 4, "random")}


@pytest.mark.parametrize("field, value", [("cells", 1), ("adds", 6), ("cells", "many")])
def test_a_bad_fixed_size_in_a_job_file_is_one_line(tmp_path: Path, field: str, value: object):
    job = tmp_path / "job.yaml"
    sizes = {"cells": 27, "adds": 4, field: value}
    job.write_text(
        FIXED.replace("cells: 27, adds: 4", f"cells: {sizes['cells']}, adds: {sizes['adds']}")
    )
    result = run(
        *["nightly", "--job", str(job), "--out", str(tmp_path / "o"), "--date", "2026-01-02"]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(job) in lines[0] and field in lines[0], result.output


# --- out of reach, and no gaming the score ---------------------------------------------------


def test_expert_beyond_the_screens_adds_gets_the_deeper_climb_and_only_there():
    """The parameter choice: expert at 5 adds (35 cells, a public game's setting) climbs deeper;
    expert at 1-3 adds and hard at 5 keep the default climb, and the provenance records what ran."""
    from pipeline.generation.strategies import DEEP_CLIMB, climb_depth

    expert, hard = Window(84.0, 100.0), Window(72.0, 84.0)
    deep, shallow = DEEP_CLIMB, (climb.STEPS, climb.BRANCH)
    assert deep != shallow
    assert climb_depth(5, (expert,)) == climb_depth(4, (expert,)) == deep
    assert climb_depth(3, (expert,)) is None and climb_depth(1, (expert,)) is None
    assert climb_depth(5, (hard,)) is None and climb_depth(5, (hard, expert)) is None
    assert climb_depth(5, ()) is None
    params = GenerateParams(cells=35, adds=5, tier="expert", seed=1)
    assert params.strategy_record().name == "climb"
    settings = params.provenance_params()["settings"]
    assert (settings["steps"], settings["branch"]) == deep
    fitted = GenerateParams(cells=35, adds=3, tier="expert", strategy="climb", seed=1)
    assert (
        fitted.provenance_params()["settings"]["steps"],
        fitted.provenance_params()["settings"]["branch"],
    ) == shallow


def test_the_climbs_stop_does_not_apply_beyond_the_screens_adds():
    """Expert at 35/5 (the default climb's estimates there read far below 84 while the deeper
    climb makes expert): estimates far from the target after the pilot do not stop the run;
    at 3 adds the same estimates do."""
    from pipeline.generation.generator import GenerationError, _Judge

    for adds, stops in ((5, False), (3, True)):
        params = GenerateParams(cells=35, adds=adds, tier="expert", strategy="climb", seed=1)
        judge = _Judge(1, params, frozenset())
        judge.estimates = (40.0, 70.0)
        if stops:
            with pytest.raises(GenerationError, match="climbs"):
                judge._climb_check()
        else:
            judge._climb_check()


def test_a_deeper_climb_that_runs_out_of_steps_offers_its_best_board_with_its_path():
    """Out of steps, the deeper climb (`offer_best`) offers the board it stood on nearest the aim,
    unscreened (for the full rating), and its path rebuilds it; the default climb offers nothing."""
    params = GenerateParams(cells=45, adds=5, tier="expert", strategy="climb", seed=1)
    digits, windows = DigitDistribution.parse(None), params.windows()
    for offer_best in (True, False):
        rng = random.Random(f"{params.seed}:0")
        offered = list(climb.climb(45, 5, rng, digits, DEFAULT, windows, (12, 4), offer_best))
        if not offer_best:
            assert offered == []
            continue
        assert len(offered) == 1 and not offered[0].played
        board, path = offered[0].cells, list(offered[0].path)
        assert _follow(params, 0, path) == board


def test_a_bounded_probe_gives_the_estimate_or_stops_only_beyond_its_bound():
    """`_Probe.within`: the stage's estimate, as `at` gives it, or None only when the board's
    distance from the aim is over the bound; and then it stopped early (fewer games)."""
    windows = (Window(84.0, 100.0),)
    digits, rng = DigitDistribution.parse(None), random.Random(7)
    stopped = 0
    for cells, adds in ((35, 5), (27, 4), (27, 2)):
        for _ in range(12):
            board = bytes(digits.draw(rng, cells))
            for stage in (climb.PROBE, climb.CONFIRM):
                full = climb._Probe(board, adds, DEFAULT, 11)
                off = climb.distance(full.at(stage), windows)
                for bound in (off - 3.0, off - 0.01, off, off + 2.0):
                    probe = climb._Probe(board, adds, DEFAULT, 11)
                    got = probe.within(stage, windows, bound)
                    played = sum(len(g.played) for g in probe.games.values())
                    if got is None:
                        assert off > bound and played < sum(n for _, n in stage.games)
                        stopped += 1
                    else:
                        assert got == full.at(stage)
    assert stopped > 20


@pytest.mark.parametrize(("cells", "adds", "attempt"), [(35, 5, 0), (27, 4, 1)])
def test_the_climbs_choices_are_those_of_every_game_played(monkeypatch, cells, adds, attempt):
    """Stopping probes early (`_Probe.within`, the first looks' order) changes no step: the same
    offers, paths and estimates as a climb that plays every game of every probe."""
    params = GenerateParams(cells=cells, adds=adds, tier="expert", strategy="climb", seed=1)
    digits, windows = DigitDistribution.parse(None), params.windows()

    def run_climb() -> tuple[object, ...]:
        rng = random.Random(f"{params.seed}:{attempt}")
        gen = climb.climb(cells, adds, rng, digits, DEFAULT, windows, (60, 16), True)
        offers = []
        while True:
            try:
                offers.append(next(gen))
            except StopIteration as stop:
                return tuple((o.cells, o.path) for o in offers), stop.value

    bounded = run_climb()
    monkeypatch.setattr(climb._Probe, "within", lambda self, stage, w, b: self.at(stage))
    assert run_climb() == bounded


def test_the_deeper_climb_offers_boards_in_its_aim_unscreened_and_climbs_on_when_they_miss(
    monkeypatch,
):
    """Beyond the screen's fitted adds the deeper climb (`offer_best`) sends a board in its aim
    straight to the full rating (no screen: its lines read low there), and when the generator
    resumes it (the board missed) it moves on to other boards; the default climb screens."""

    def refused(*args, **kwargs):
        raise AssertionError("the deeper climb does not screen")

    monkeypatch.setattr(climb, "passes", refused)
    params = GenerateParams(cells=27, adds=4, tier="expert", strategy="climb", seed=1)
    digits, windows = DigitDistribution.parse(None), params.windows()
    gen = climb.climb(27, 4, random.Random("1:1"), digits, DEFAULT, windows, (400, 16), True)
    offers = [next(gen), next(gen)]
    assert all(not o.played for o in offers) and offers[0].cells != offers[1].cells
    assert len(offers[1].path) > len(offers[0].path)
    with pytest.raises(AssertionError, match="does not screen"):
        next(climb.climb(27, 4, random.Random("1:1"), digits, DEFAULT, windows, (400, 16), False))


def test_the_deeper_climb_offers_from_under_the_window_and_records_it(monkeypatch):
    """Beyond the screen's fitted adds the estimate reads low near the top, so the deeper climb
    offers a board to the full rating from `climb.OFFER_BELOW` under the window's low end (not
    only in its aim, a quarter in): its first offer comes after fewer kept changes than with offers
    from the aim (27/4 expert, seed 1, attempt 0), and the provenance records the setting."""
    params = GenerateParams(cells=27, adds=4, tier="expert", strategy="climb", seed=1)
    digits, windows = DigitDistribution.parse(None), params.windows()
    assert params.provenance_params()["settings"]["offers_below"] == climb.OFFER_BELOW > 0

    def first_offer() -> int:
        gen = climb.climb(27, 4, random.Random("1:0"), digits, DEFAULT, windows, (400, 16), True)
        return len(next(gen).path)

    below = first_offer()
    monkeypatch.setattr(climb, "OFFER_BELOW", windows[0].low - climb.aim(windows[0])[0])
    assert below < first_offer()


def _outcome(attempt: int, score: float | None):
    from pipeline.generation.generator import Outcome

    return Outcome(attempt, reason="off target", score=score, rated=score is not None)


@pytest.mark.parametrize(
    ("scores", "stops"),
    [
        ((70.0, 61.2, 78.9, 52.0), True),  # every best board rated more than 5 below 84
        ((70.0, 61.2, 79.0, 52.0), False),  # one within 5 points: more climbs may reach it
        ((70.0, None, 78.0, 52.0), False),  # an attempt rated nothing: it says nothing
    ],
)
def test_the_full_rating_stop_trusts_only_full_ratings_at_any_adds(scores, stops):
    """Beyond the screen's fitted adds (where `_climb_check` does not apply): after the pilot's
    climbs, every one of them rated in full and every score more than 5 below the target stops
    the run in one line; a score within 5, or an attempt that rated nothing, does not."""
    from pipeline.generation.generator import GenerationError, _Judge

    params = GenerateParams(cells=45, adds=5, tier="expert", strategy="climb", seed=1)
    assert len(scores) == climb_pilot()
    judge = _Judge(1, params, frozenset())
    *first, last = [_outcome(k, s) for k, s in enumerate(scores)]
    for outcome in first:
        judge.take(outcome, None)
    if not stops:
        judge.take(last, None)
        return
    with pytest.raises(GenerationError) as info:
        judge.take(last, None)
    message = str(info.value)
    assert "\n" not in message
    assert message == (
        "no board came near 45 cells/5 adds (climb, expert) in 4 climbs: their best boards rated"
        " 52.0-78.9 in full, the target needs 84-100; ask for another tier, or another"
        " --cells/--adds"
    )


@pytest.mark.slow
def test_a_target_the_deeper_climb_cannot_reach_stops_after_the_pilot(monkeypatch):
    """Expert at 45 cells/5 adds (random boards rate 21-27 there): the run stops after the climb's
    pilot on its best boards' full ratings instead of running to --max-attempts (the deeper climb
    cut to 20 steps here, to be quick; the stop does not depend on the depth)."""
    from pipeline.generation import strategies
    from pipeline.generation.generator import GenerationError

    monkeypatch.setattr(strategies, "DEEP_CLIMB", (20, 4))
    params = GenerateParams(
        cells=45, adds=5, tier="expert", strategy="climb", seed=1, max_attempts=12
    )
    with pytest.raises(GenerationError, match=r"best boards rated .* in full") as info:
        generate(1, params, jobs=1)
    assert info.value.partial is not None and info.value.partial.attempts == climb_pilot()


def climb_pilot() -> int:
    from pipeline.generation.strategies import CLIMB

    assert CLIMB.reach_pilot is not None
    return CLIMB.reach_pilot


def test_a_reachable_target_is_not_stopped_by_the_climbs_pilot():
    """Hard at 27/4 (which the climb makes, above): the pilot's check leaves it alone, even with
    the pilot at its first attempt."""
    from dataclasses import replace

    from pipeline.generation.strategies import CLIMB, STRATEGY_BY_NAME

    eager = replace(CLIMB, reach_pilot=1)
    STRATEGY_BY_NAME["climb"] = eager
    try:
        result = generate(1, HARD, jobs=1)
    finally:
        STRATEGY_BY_NAME["climb"] = CLIMB
    assert len(result.puzzles) == 1


@pytest.mark.slow
def test_held_out_players_lose_climb_puzzles_as_often_as_the_screens():
    """Small version of the bench's check on climb-made puzzles: hard at 27 cells/4 adds (a public
    game's setting, where the screen makes some too), 4 each at the bench's seed. The study's
    held-out models (never the score's players) must not lose the climb's puzzles less often than
    the screen's (one-sided Mann-Whitney, p >= 0.05), and the climb keeps variety: layouts distinct
    up to relabelling, mean pairwise distance >= 90% of the screen's."""
    from research.bench_search import VARIETY, distinct_layouts, heldout_check, mean_distance
    from research.bench_search import run as bench_run

    games = {"constrained": 24, "tidy": 24, "montecarlo": 6, "tens": 24, "bottomup": 24}
    climbed = bench_run(27, 4, "hard", "climb", count=4, seed=2026).puzzles
    # the screen in the bench's rounds (a round of 8 attempts is under its reach check's 16)
    screened = bench_run(27, 4, "hard", "search", count=4, seed=2026, budget=30.0).puzzles
    assert len(climbed) == len(screened) == 4
    check = heldout_check(climbed, screened, games, names=("climb", "search"))
    assert check.passed, check
    assert distinct_layouts(climbed) == len(climbed)
    assert mean_distance(climbed) >= VARIETY * mean_distance(screened)


@pytest.mark.slow
def test_held_out_players_lose_climb_puzzles_at_36_1_medium_as_often_as_randoms():
    """Small version of the bench's check where the climb's start had picked the draw whose first
    games went best (docs/generation.md, 36/1 medium): 8 each at the bench's seed and games, the
    held-out models must not lose the climb's medium puzzles less often than random's
    (one-sided Mann-Whitney, p >= 0.05)."""
    from research.bench_search import heldout_check
    from research.bench_search import run as bench_run

    climbed = bench_run(36, 1, "medium", "climb", count=8, seed=2026, budget=40.0).puzzles
    drawn = bench_run(36, 1, "medium", "random", count=8, seed=2026, budget=40.0).puzzles
    assert len(climbed) == len(drawn) == 8
    check = heldout_check(climbed, drawn, names=("climb", "random"))
    assert check.passed, check


@pytest.mark.slow  # 6 climbs of 150 steps
def test_the_deeper_climb_offers_a_board_once_its_estimate_held_in_the_offers(monkeypatch):
    """The deeper climb rates a board only once its last-stage estimate was in the offers (from
    `climb.OFFER_BELOW` under the window) on `climb.OFFER_HELD` draws of games in a row: this
    step's, and the one before on the same board (the estimate it was kept on, or the last
    step's). With one draw enough (as before), boards are offered on their first estimate there."""
    params = GenerateParams(cells=27, adds=4, tier="expert", strategy="climb", seed=1)
    digits, windows = DigitDistribution.parse(None), params.windows()
    assert params.provenance_params()["settings"]["offers_held"] == climb.OFFER_HELD == 2
    low = min(
        min(lo, w.low - climb.OFFER_BELOW) for w, (lo, _) in zip(windows, map(climb.aim, windows))
    )
    seen: list[tuple[bytes, float]] = []
    at, within = climb._Probe.at, climb._Probe.within

    def recorded_at(self, stage):
        est = at(self, stage)
        if stage is climb.CONFIRM:
            seen.append((self.cells, est))
        return est

    def recorded_within(self, stage, w, bound):
        est = within(self, stage, w, bound)
        if stage is climb.CONFIRM and est is not None:
            seen.append((self.cells, est))
        return est

    monkeypatch.setattr(climb._Probe, "at", recorded_at)
    monkeypatch.setattr(climb._Probe, "within", recorded_within)

    def offers_held() -> list[bool]:
        """For each board offered in the aim, whether its estimate before the last was there too."""
        seen.clear()
        held = []
        for k in range(3):
            gen = climb.climb(
                27, 4, random.Random(f"1:{k}"), digits, DEFAULT, windows, (150, 16), True
            )
            for offer in gen:  # every offer missed: the climb goes on
                mine = [est for cells, est in seen if cells == offer.cells]
                if mine and mine[-1] >= low:
                    held.append(len(mine) >= 2 and mine[-2] >= low)
        return held

    held = offers_held()
    assert held and all(held)
    monkeypatch.setattr(climb, "OFFER_HELD", 1)
    assert not all(offers_held())
