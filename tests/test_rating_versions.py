"""Rating versions: files rated by versions 1 and 2 stay valid and re-checkable; newer blocks say
their version; an unknown version is reported, not guessed. And the newer players' habits."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from pipeline.engine.board import parse
from pipeline.engine.moves import ADD
from pipeline.engine.rulesets import DEFAULT
from pipeline.formats.puzzle import dump_yaml
from pipeline.rating import DEFAULT_SEED
from pipeline.rating.explain import explain
from pipeline.rating.players import (
    LocalPlayer,
    OpenerPlayer,
    PlannerPlayer,
    Player,
    ProximityPlayer,
    RandomPlayer,
    play,
    play_many,
)
from pipeline.rating.score import DEFAULT_PLAYOUTS, games_for, rate, stored_playouts
from pipeline.rating.tiers import tier_for
from pipeline.rating.versions import VERSIONS, WEIGHTS_V3, score_from_metrics
from pipeline.validator import validate_texts

# the engine and the players in whichever backend runs: `make test` runs them in both
pytestmark = [pytest.mark.backends, pytest.mark.slow]

PUZZLE = Path(__file__).parent / "fixtures" / "validator" / "valid" / "puzzle.yaml"


def _with_difficulty(doc: dict, difficulty: dict) -> str:
    return dump_yaml({**doc, "difficulty": difficulty})


@pytest.fixture(scope="module")
def doc() -> dict:
    return yaml.safe_load(PUZZLE.read_text())


def test_version_1_file_is_valid_and_explained_with_its_own_weights(doc) -> None:
    d = doc["difficulty"]
    assert "version" not in d
    assert not validate_texts([("v1.yaml", PUZZLE.read_text())]).problems
    e = explain(d)
    assert e.version == 1 and sum(p.points for p in e.parts) == pytest.approx(d["score"], abs=0.01)


def test_version_2_block_validates_and_version_1_deep_reproduces(doc) -> None:
    v2 = rate(doc["board"], doc["adds"], playouts=16, solution=doc["solution"], version=2).to_dict()
    assert v2["version"] == 2 and v2["trap_density"] is not None
    assert not validate_texts([("v2.yaml", _with_difficulty(doc, v2))]).problems
    # the stored version-1 block is re-rated by version 1 (exactly, with the recorded seed)
    report = validate_texts([("v1.yaml", PUZZLE.read_text())], deep=True)
    assert not [p for p in report.problems if p.code in ("NM402", "NM403")], report.problems


def test_version_3_block_validates_deeply_and_measures_no_traps(doc) -> None:
    v3 = rate(doc["board"], doc["adds"], solution=doc["solution"], version=3).to_dict()
    assert v3["version"] == 3 and v3["trap_density"] is None and v3["trap_density_sampled"] is None
    assert set(v3["players"]) == set(WEIGHTS_V3)
    assert {n: s["playouts"] for n, s in v3["players"].items()} == {
        n: games_for(n, DEFAULT_PLAYOUTS, 3) for n in WEIGHTS_V3
    }
    assert stored_playouts(v3) == DEFAULT_PLAYOUTS
    seeded = {**doc, "provenance": {**doc.get("provenance", {}), "rating_seed": DEFAULT_SEED}}
    report = validate_texts([("v3.yaml", _with_difficulty(seeded, v3))], deep=True)
    assert not report.problems, report.problems


def test_version_4_block_validates_deeply_with_its_game_counts(doc) -> None:
    """Version 4 is version 3's score (players, weights, tiers) on more games: its block names
    its version, stores its counts, and the deep validator re-rates it exactly."""
    v4 = rate(doc["board"], doc["adds"], playouts=8, seed=3, solution=doc["solution"], version=4)
    d = v4.to_dict()
    assert d["version"] == 4 and d["trap_density"] is None
    assert {n: s["playouts"] for n, s in d["players"].items()} == {
        n: games_for(n, 8, 4) for n in WEIGHTS_V3
    }
    assert stored_playouts(d) == 8 and score_from_metrics(d) == d["score"]
    assert tier_for(d["score"], 4) == d["tier"]
    seeded = {**doc, "provenance": {**doc.get("provenance", {}), "rating_seed": 3}}
    report = validate_texts([("v4.yaml", _with_difficulty(seeded, d))], deep=True)
    assert not report.problems, report.problems
    # a stored count that is not version 4's is caught by the re-rating
    wrong = {**d, "version": 3}
    report = validate_texts([("v4as3.yaml", _with_difficulty(seeded, wrong))], deep=True)
    assert report.problems


def test_version_4_bounds_the_score_spread_and_version_3_keeps_its_counts() -> None:
    """Version 4's game counts put the score's standard deviation across seeds under half a
    point on any board (the binomial bound); version 3's counts are the ones it always had."""
    assert VERSIONS[4].sd_bound(DEFAULT_PLAYOUTS) <= 0.5 < VERSIONS[3].sd_bound(DEFAULT_PLAYOUTS)
    assert VERSIONS[4].weights == VERSIONS[3].weights and VERSIONS[4].tiers == VERSIONS[3].tiers
    assert {n: games_for(n, DEFAULT_PLAYOUTS, 3) for n in WEIGHTS_V3} == {
        "random": 416,
        "scanner": 32,
        "lookahead": 16,
        "opener": 16,
        "local": 256,
        "planner": 16,
        "proximity": 24,
    }
    for playouts in (1, 7, 64, 100):
        d = {"version": 4, "players": {"random": {"playouts": games_for("random", playouts, 4)}}}
        assert stored_playouts(d) == playouts


def test_version_2_blocks_are_still_reproduced(doc) -> None:
    """Version 3 is the default; `rate(..., version=2)` still makes the very block version 2 made:
    same players, same game counts, same weights and tier table."""
    v2 = rate(
        doc["board"], doc["adds"], playouts=16, seed=5, solution=doc["solution"], version=2
    ).to_dict()
    assert set(v2["players"]) == {"random", "scanner", "lookahead", "opener", "local", "planner"}
    assert {n: s["playouts"] for n, s in v2["players"].items()} == {
        "random": 16,
        "scanner": 16,
        "lookahead": 16,
        "opener": 8,
        "local": 16,
        "planner": 4,
    }
    assert score_from_metrics(v2) == v2["score"] and tier_for(v2["score"], 2) == v2["tier"]
    assert stored_playouts(v2) == 16


def test_the_study_scores_each_version_as_rate_does() -> None:
    """The rating study plays each player once for the most games any version gives it and scores
    every version from its prefix; that must be what `rate` stores."""
    from research.study_rating import VERSIONS, version_score, version_stats

    cells = parse("719473731/547335153/2468")
    stats = version_stats(cells, 1)
    for v in VERSIONS:
        d = rate(cells, 1, version=v).to_dict()
        assert stats[v] == d["players"] and version_score(stats[v], v) == d["score"]


def test_the_study_measures_loss_rates_on_games_no_score_was_computed_from() -> None:
    """Every model's loss rate comes from its own games (another seed than the rating's), and each
    version is held out from exactly the measured models its population lacks."""
    from research.study_rating import (
        MEASURE_GAMES,
        MEASURE_SEED,
        MODEL_NAMES,
        VERSIONS,
        held_out,
        measured_loss,
        population,
    )

    assert MEASURE_SEED != DEFAULT_SEED and set(MEASURE_GAMES) == set(MODEL_NAMES)
    for v in VERSIONS:
        assert set(held_out(v)) == set(MODEL_NAMES) - set(population(v)) and set(
            population(v)
        ) <= set(MODEL_NAMES)
    assert "proximity" in held_out(2) and "proximity" not in held_out(3)
    board = "719473731/547335153/2468"
    loss = measured_loss({"board": board, "adds": 1})
    own = play_many(RandomPlayer(), parse(board), 1, MEASURE_GAMES["random"], MEASURE_SEED)[0]
    assert set(loss) == set(MODEL_NAMES) and loss["random"] == 1.0 - own.win_rate


def test_within_tier_correlation_pools_ranks_centred_in_each_tier() -> None:
    """Pooled inside tiers: one tier alone is plain Spearman; a second tier's offset (harder boards
    with higher scores) adds nothing, so an order reversed inside each tier pools to -1."""
    from research.study_rating import bootstrap_interval, pooled_spearman, spearman

    xs, ys = [1.0, 2.0, 3.0, 4.0, 5.0], [0.1, 0.3, 0.2, 0.5, 0.4]
    assert pooled_spearman([(xs, ys)]) == pytest.approx(spearman(xs, ys))
    low_tier = ([1.0, 2.0, 3.0], [0.3, 0.2, 0.1])
    high_tier = ([10.0, 11.0, 12.0], [0.9, 0.8, 0.7])
    assert (
        spearman(low_tier[0] + high_tier[0], low_tier[1] + high_tier[1]) > 0
    )  # across tiers: positive
    assert pooled_spearman([low_tier, high_tier]) == pytest.approx(-1.0)
    low, high = bootstrap_interval(
        list(range(40)), [k + (k % 7) * 3 for k in range(40)], random.Random(1), draws=300
    )
    assert (
        -1.0
        <= low
        <= spearman(list(range(40)), [k + (k % 7) * 3 for k in range(40)])
        <= high
        <= 1.0
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (None, "cannot read it"),
        ('{"rows": [', "line 1: not JSON"),
        (
            '{"rows": [], "mixed": [], "chosen": {"2": [0]}, "hunts": []}',
            "not a dump this version writes (IndexError",
        ),
        (
            '{"rows": [{"group": [27, 1]}], "mixed": [0], "chosen": {}, "hunts": []}',
            "rows[0].adds is missing",
        ),
    ],
)
def test_a_bad_study_or_calibration_dump_is_one_line_naming_it(
    tmp_path, monkeypatch, text, says
) -> None:
    from research import calibrate_rating, study_rating

    path = tmp_path / "dump.json"
    if text is not None:
        path.write_text(text)
    monkeypatch.setenv("STUDY_LOAD", str(path))
    with pytest.raises(SystemExit) as exc:
        study_rating.main()
    assert (
        str(exc.value).startswith(f"STUDY_LOAD={path}: ")
        and says in str(exc.value)
        and "\n" not in str(exc.value)
    )
    monkeypatch.setenv("CAL_LOAD", str(path))
    with pytest.raises(SystemExit) as exc:
        calibrate_rating.main()
    assert str(exc.value).startswith(f"CAL_LOAD={path}: ")
    monkeypatch.setenv("STUDY_JOBS", "two")
    with pytest.raises(SystemExit, match="STUDY_JOBS='two': not a process count"):
        study_rating.main()


def test_the_studys_hunted_boards_fill_only_the_current_versions_top_tier() -> None:
    """Boards found by the screened hunt count for the current version's HUNT_TIER and nothing else."""
    from research.study_rating import GROUPS, HUNT_TIER, PER_TIER, VERSIONS, select

    old, new = VERSIONS[0], VERSIONS[-1]
    g = list(GROUPS[0])
    plain = [{"group": g, f"tier{old}": "hard", f"tier{new}": "hard"} for _ in range(3)]
    hunted = [
        {"group": g, f"tier{old}": HUNT_TIER, f"tier{new}": HUNT_TIER, "hunted": True}
        for _ in range(PER_TIER + 2)
    ]
    rows = plain + hunted
    assert select(rows, f"tier{new}") == [0, 1, 2] + list(range(3, 3 + PER_TIER))
    assert select(rows, f"tier{old}") == [0, 1, 2]  # the older version never takes a hunted board


def test_unknown_version_and_wrong_tier_for_the_version(doc) -> None:
    v2 = rate(doc["board"], doc["adds"], playouts=16, solution=doc["solution"], version=2).to_dict()
    report = validate_texts([("v9.yaml", _with_difficulty(doc, {**v2, "version": 9}))])
    assert any("rating version 9" in p.message for p in report.problems)
    # a version-2 score read with version 1's table (version key dropped) no longer matches
    v1_read = {k: v for k, v in v2.items() if k != "version"}
    codes = {p.code for p in validate_texts([("x.yaml", _with_difficulty(doc, v1_read))]).problems}
    assert "NM310" in codes
    assert score_from_metrics(v2) == v2["score"]


# --- the version-2 players' habits ---------------------------------------------------------


def test_opener_adds_before_it_is_stuck() -> None:
    # 5512: one pair (5-5) and an add left: the opener adds first; the others take the pair
    game = play(OpenerPlayer(), parse("5512"), 1, random.Random(0))
    assert game.path[0] == ADD
    assert play(PlannerPlayer(), parse("5512"), 1, random.Random(0)).path[0] != ADD


def test_local_player_looks_near_its_last_row() -> None:
    cells = bytes([5] * 54)  # six rows; the chooser reads only where the pairs are
    choose = LocalPlayer().begin(cells, random.Random(3), DEFAULT)
    assert choose(cells, [(0, 1)], 0) == (0, 1)  # its eyes are now on row 0
    near, far = (9, 10), (45, 46)  # rows 1 and 5
    assert all(choose(cells, [near, far], 0) == near for _ in range(20))
    assert choose(cells, [far], 0) == far  # nothing in sight: it takes what there is
    assert choose(cells, [(0, 1), (44, 45)], 0) == (44, 45)  # and now looks around row 4


def test_a_player_cannot_add_without_adds() -> None:
    class Greedy:
        name = "greedy-adder"

        def begin(self, cells, rng, ruleset):
            return lambda cells, pairs, adds_left: None

    player: Player = Greedy()
    with pytest.raises(ValueError, match="no add left"):
        play(player, parse("55"), 0, random.Random(0))


def test_proximity_player_takes_the_closest_pair() -> None:
    cells = parse("5...5.11")  # 5-5 four apart in reading order, 1-1 side by side
    choose = ProximityPlayer().begin(cells, random.Random(0), DEFAULT)
    from pipeline.engine.rules import legal_pairs

    pairs = legal_pairs(cells)
    assert choose(cells, pairs, 0) == (6, 7)
