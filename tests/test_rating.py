"""The difficulty rating: each metric pinned on boards small enough to work out by hand,
the score's contract (monotone, reproducible from stored values, one tier table), the
players' fast path against the plain rules, and the `rate` command."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine.board import format_board, parse
from pipeline.engine.rules import legal_pairs, remove_pair
from pipeline.engine.rulesets import Ruleset
from pipeline.engine.stage import replay
from pipeline.rating import players as players_module
from pipeline.rating.players import (
    PLAYERS,
    pair_counts_after,
    play,
    remove_and_track,
)
from pipeline.rating.score import PLAYERS_BY_VERSION, WEIGHTS, playouts_for, rate
from pipeline.rating.tiers import RATING_VERSION, TIERS, TIERS_BY_VERSION, tier_for
from pipeline.rating.versions import (
    DIFFICULTY_KEYS,
    WEIGHTS_BY_VERSION,
    WEIGHTS_V1,
    score_from_metrics,
)
from tests import reference_players as reference
from tests.helpers import run

# the engine and the players in whichever backend runs: `make test` runs them in both
pytestmark = [pytest.mark.backends, pytest.mark.slow]

PLAYOUTS = 200


# --- a board any player wins --------------------------------------------------------------
# 4.......3 / 1.......9 / .6......7: the only pair is 1-9 in row 1. Removing it empties row 1,
# which collapses: 4 now sits diagonally above 6 (a pair the collapse opened) and 3 above 7.
# Both pairs are then legal, either order wins; the last one empties the board.

ANY_PLAYER = "4.......3/1.......9/.6......7"


@pytest.fixture(scope="module")
def any_player():
    return rate(ANY_PLAYER, 0, playouts=PLAYOUTS)


def test_any_player_wins_every_game(any_player) -> None:
    for name, stats in any_player.metrics["players"].items():
        assert stats == {
            "win_rate": 1.0,
            "mean_moves": 3.0,
            "playouts": playouts_for(name, PLAYOUTS),
        }


def test_any_player_board_metrics(any_player) -> None:
    d = any_player.to_dict()
    assert d["min_adds"] == 0
    assert (
        d["trap_density"] is None and d["trap_density_sampled"] is None
    )  # version 3 measures no traps
    v2 = rate(ANY_PLAYER, 0, playouts=PLAYOUTS, version=2).to_dict()
    assert v2["trap_density"] == 0.0 and v2["trap_density_sampled"] == 0.0
    assert d["certificate_length"] == 3
    assert d["mean_branching"] == round((1 + 2 + 1) / 3, 2)  # pairs before each of the 3 moves
    # two collapses per game (the first move and the last); only the first opens a pair
    assert d["collapse_openings"] == 0.5
    assert d["score"] == 0.0 and d["tier"] == "easy"


# --- a board with one fatal first move ----------------------------------------------------
# 31113.... / 1: legal first pairs (0,1)-(0,2), (0,1)-(1,0) diagonal, (0,2)-(0,3).
# Taking the first two 1s leaves 3...13..../1: no pair, no add: stuck. Either other pair leaves
# one pair, then 3...3.... and a win. So 1 of 3 first moves is a trap.
# random: wins 2/3 of games. scanner: its eyes start on one of 10 cells; only from cell 2 is the
# first pair it meets (0,2)-(0,3); from 0, 1 and 3-9 (wrapping) it meets the trap: wins 1/10.
# lookahead: the trap leaves 0 pairs, the others 1: never falls in.

ONE_FATAL = "31113..../1"


@pytest.fixture(scope="module")
def one_fatal():
    return rate(ONE_FATAL, 0, playouts=PLAYOUTS)


def test_one_fatal_first_move_trap_density() -> None:
    v2 = rate(ONE_FATAL, 0, playouts=PLAYOUTS, version=2)  # the versions that measure traps
    d = v2.to_dict()
    assert d["trap_density"] == round(1 / 3, 4)
    assert d["trap_density_sampled"] == 0.0  # after a safe first move nothing is fatal
    assert d["min_adds"] == 0
    assert d["certificate_length"] == 3
    assert v2.metrics["trap_unknown"] == 0


def test_one_fatal_first_move_players(one_fatal) -> None:
    players = one_fatal.to_dict()["players"]
    assert players["random"]["win_rate"] == pytest.approx(2 / 3, abs=0.1)
    assert players["scanner"]["win_rate"] == pytest.approx(1 / 10, abs=0.07)
    assert players["lookahead"]["win_rate"] == 1.0
    assert players["lookahead"]["mean_moves"] == 3.0
    # a lost game is one move long, a won one three
    r = players["random"]
    assert r["mean_moves"] == pytest.approx(3 * r["win_rate"] + 1 * (1 - r["win_rate"]), abs=1e-2)


def test_one_fatal_is_harder_than_any_player(one_fatal, any_player) -> None:
    assert one_fatal.score > any_player.score


# --- a board that needs exactly one add ---------------------------------------------------
# A lone 1: no pair, so every player adds (they add only when stuck), giving 11, and pairs it.


def test_needs_exactly_one_add() -> None:
    r = rate("1", 2, playouts=20)
    d = r.to_dict()
    assert d["min_adds"] == 1
    assert d["certificate_length"] == 2
    assert (
        rate("1", 2, playouts=20, version=2).to_dict()["trap_density"] == 0.0
    )  # no legal first pair at all
    for name, stats in d["players"].items():
        assert stats == {"win_rate": 1.0, "mean_moves": 2.0, "playouts": playouts_for(name, 20)}
    assert d["score"] == 0.0  # every player wins every game
    # version 1 also counted min_adds: 1 of MIN_ADDS_CAP (3)
    v1 = rate("1", 2, playouts=20, version=1).to_dict()
    assert "version" not in v1 and v1["score"] == round(100 * WEIGHTS_V1["min_adds"] / 3, 2)


def test_unsolvable_board_has_no_score_but_player_metrics() -> None:
    r = rate("12", 0, playouts=10)
    assert r.tier == "unsolvable" and r.score is None and r.min_adds is None
    d = r.to_dict()
    assert d["players"]["random"] == {
        "win_rate": 0.0,
        "mean_moves": 0.0,
        "playouts": playouts_for("random", 10),
    }
    assert d["certificate_length"] is None


def test_unsolvable_with_adds_is_unsolvable_too() -> None:
    # 12 -> 1212 -> (no add left) stuck; the solver proves it
    r = rate("12", 1, playouts=10)
    assert r.tier == "unsolvable"
    assert r.to_dict()["players"]["scanner"]["mean_moves"] == 1.0  # the add, then stuck


def test_given_solution_is_used_and_checked() -> None:
    r = rate(ONE_FATAL, 0, playouts=10, solution=["0,2-0,3", "0,1-1,0", "0,0-0,4"])
    assert r.to_dict()["certificate_length"] == 3
    with pytest.raises(ValueError, match="does not win"):
        rate(ONE_FATAL, 0, playouts=10, solution=["0,2-0,3"])


def test_empty_board_is_already_won() -> None:
    d = rate("", 0, playouts=5).to_dict()
    assert d["tier"] == "easy" and d["score"] == 0.0 and d["certificate_length"] == 0


# --- the score's contract -----------------------------------------------------------------

BOARDS_35 = [
    "325288874/281771854/261119174/71948894",
    "869497867/619968143/932951221/81545236",
    "794984917/671534152/255375319",
]


@pytest.mark.parametrize("board", BOARDS_35)
def test_rating_is_deterministic_and_reproducible(board: str) -> None:
    a = rate(board, 2, playouts=32, seed=7)
    b = rate(board, 2, playouts=32, seed=7)
    assert a == b
    d = a.to_dict()
    assert tuple(d) == DIFFICULTY_KEYS
    assert tuple(d["players"]) == tuple(p.name for p in PLAYERS)
    assert d["version"] == RATING_VERSION
    assert score_from_metrics(d) == d["score"]
    assert tier_for(d["score"]) == d["tier"]
    json.dumps(d)  # JSON/YAML ready


def test_plain_path_gives_the_same_rating(untracked: Ruleset) -> None:
    board = BOARDS_35[0]
    assert rate(board, 3, playouts=16, seed=1) == rate(
        board, 3, playouts=16, seed=1, ruleset=untracked
    )


win = st.floats(0, 1)


@settings(max_examples=200, deadline=None)
@given(
    wins=st.tuples(*[win] * len(PLAYERS)),
    lower=st.sampled_from([p.name for p in PLAYERS]),
    by=st.floats(0, 1),
    traps=st.tuples(win, win),
    min_adds=st.one_of(st.none(), st.integers(0, 6)),
    version=st.sampled_from([1, 2, 3]),
)
def test_score_never_falls_when_a_win_rate_falls(wins, lower, by, traps, min_adds, version) -> None:
    def difficulty(rates: dict[str, float]) -> dict:
        return {
            "version": version,
            "min_adds": min_adds,
            "players": {k: {"win_rate": v} for k, v in rates.items()},
            "trap_density": traps[0],
            "trap_density_sampled": traps[1],
        }

    rates = dict(zip((p.name for p in PLAYERS), wins))
    before = score_from_metrics(difficulty(rates))
    rates[lower] = rates[lower] * (1 - by)
    after = score_from_metrics(difficulty(rates))
    assert 0.0 <= before <= after <= 100.0


def test_weights_and_tier_table() -> None:
    for weights in WEIGHTS_BY_VERSION.values():
        assert sum(weights.values()) == pytest.approx(1.0)
    for table in TIERS_BY_VERSION.values():
        assert table[0][1] == 0.0 and table[-1][2] == 100.0
        assert all(a[2] == b[1] for a, b in itertools.pairwise(table))
    assert (
        TIERS is TIERS_BY_VERSION[RATING_VERSION] and WEIGHTS is WEIGHTS_BY_VERSION[RATING_VERSION]
    )
    assert set(WEIGHTS) == {p.name for p in PLAYERS}  # version 3: the score is the mix's loss rate
    for version, players in PLAYERS_BY_VERSION.items():
        if version > 1:
            assert set(WEIGHTS_BY_VERSION[version]) == {p.name for p in players}


@pytest.mark.parametrize("board", BOARDS_35)
def test_version_1_ratings_stay_reproducible(board: str) -> None:
    """Version 2 plays version 1's three players with the same seeds, so a version-1 rating is
    its subset; `rate(..., version=1)` reproduces it with the old weights and tier table."""
    v1 = rate(board, 2, playouts=16, seed=3, version=1).to_dict()
    v2 = rate(board, 2, playouts=16, seed=3, version=2).to_dict()
    assert "version" not in v1 and v2["version"] == 2
    for name in ("random", "scanner", "lookahead"):
        assert v1["players"][name] == v2["players"][name]
    assert {k: v for k, v in v1.items() if k not in ("tier", "score", "players")} == {
        k: v for k, v in v2.items() if k not in ("version", "tier", "score", "players")
    }
    assert score_from_metrics(v1) == v1["score"] and tier_for(v1["score"], 1) == v1["tier"]
    assert score_from_metrics({**v2, "version": 1}) == v1["score"]
    with pytest.raises(ValueError, match="rating version"):
        rate(board, 2, playouts=4, version=7)


# --- the players' fast path against the plain rules ---------------------------------------

cells_strategy = st.one_of(
    st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 5, 7, 8, 9]), min_size=2, max_size=60),
    st.lists(
        st.sampled_from([0] * 8 + [1, 3, 5, 7, 9]), min_size=2, max_size=45
    ),  # gap-heavy: collapses
).map(bytes)


@settings(max_examples=300, deadline=None)
@given(cells=cells_strategy)
def test_incremental_pairs_match_rules(cells: bytes) -> None:
    pairs = legal_pairs(cells)
    counts = pair_counts_after(cells, pairs)
    for (i, j), count in zip(pairs, counts):
        after = remove_pair(cells, i, j)
        expected = legal_pairs(after)
        step = remove_and_track(cells, pairs, i, j)
        assert step.cells == after
        assert step.pairs == expected
        assert count == len(expected)
        assert step.collapsed == (len(after) != len(cells))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(5, 40), adds=st.integers(0, 2))
def test_games_are_legal_and_same_on_both_paths(
    untracked: Ruleset, seed: int, n: int, adds: int
) -> None:
    cells = bytes(random.Random(seed).randint(1, 9) for _ in range(n))
    for player in PLAYERS:
        fast = play(player, cells, adds, random.Random(seed), record=True)
        plain = play(player, cells, adds, random.Random(seed), record=True, ruleset=untracked)
        assert fast == plain
        final, adds_left = replay(
            cells, fast.path, adds
        )  # every move legal under pipeline.engine.rules
        assert (final == b"") == fast.won
        assert fast.adds_used == adds - adds_left
        if not fast.won:
            assert adds_left == 0 and not legal_pairs(final)  # stopped only when stuck


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n=st.sampled_from([9, 18, 27, 30, 36, 45]),
    adds=st.integers(0, 3),
    gappy=st.booleans(),
)
def test_players_play_the_games_the_reference_players_play(
    seed: int, n: int, adds: int, gappy: bool
) -> None:
    """The players remember positions (`_Memo`) and update pairs in place; the reference copy of
    the players before that (`tests/reference_players.py`) must play every game the same:
    the same pairs, the same random draws, the same recorded positions."""
    draw = random.Random(seed)
    values = [0, 0, 0, 1, 3, 5, 7, 9] if gappy else list(range(1, 10))
    cells = bytes(draw.choice(values) for _ in range(n))
    for player, old in zip(PLAYERS, reference.PLAYERS):
        assert player.name == old.name
        for game in range(3):  # a later game meets positions the earlier ones left in the memo
            fast = play(player, cells, adds, random.Random(seed + game), record=True)
            plain = reference.play(old, cells, adds, random.Random(seed + game), record=True)
            assert fast == plain, (player.name, format_board(cells), adds, seed + game)


def test_ratings_are_those_of_the_reference_players(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole ratings, also with memo tables so small they keep starting over."""
    boards = [
        (bytes(random.Random(k).randint(1, 9) for _ in range(27 + 3 * k)), k % 3) for k in range(4)
    ]
    with reference.reference_players():
        assert players_module.play is not play  # the rating plays the reference's games
        expected = [rate(cells, adds, playouts=16).to_json() for cells, adds in boards]
    assert [rate(cells, adds, playouts=16).to_json() for cells, adds in boards] == expected
    players_module._MEMO.clear()
    monkeypatch.setattr(players_module, "MAX_MEMO_ENTRIES", 5)
    assert [rate(cells, adds, playouts=16).to_json() for cells, adds in boards] == expected
    assert (
        max(
            map(
                len,
                (
                    players_module._MEMO.pairs,
                    players_module._MEMO.steps,
                    players_module._MEMO.counts,
                ),
            )
        )
        <= 5
    )


def test_players_add_only_when_stuck() -> None:
    # 55 has a pair: nobody adds although two adds are allowed (the opener neither: two numbers)
    for player in PLAYERS:
        game = play(player, parse("55"), 2, random.Random(0), record=True)
        assert [str(m) for m in game.path] == ["0,0-0,1"]


# --- the command --------------------------------------------------------------------------


def test_cli_json_line() -> None:
    result = run(*["rate", ONE_FATAL, "--adds", "0", "--json", "--playouts", "20", "--seed", "3"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    assert d["board"] == ONE_FATAL and d["adds"] == 0
    assert d["trap_density"] is None and d["tier"] in ("easy", "medium", "hard", "expert")
    assert d == {"board": ONE_FATAL, "adds": 0, **rate(ONE_FATAL, 0, playouts=20, seed=3).to_json()}


def test_cli_text() -> None:
    result = run(*["rate", "1", "--adds", "1", "--playouts", "5"])
    assert result.exit_code == 0, result.output
    assert "min adds            1" in result.stdout


def test_cli_stdin_many_boards_and_bad_line() -> None:
    stdin = f"{ONE_FATAL} 0\n12 0\n1x2 1\n\n1 1\n"
    result = run(*["rate", "-", "--playouts", "8"], input=stdin)
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [d.get("tier") for d in lines] == [lines[0]["tier"], "unsolvable", None, "easy"]
    assert lines[1]["score"] is None
    assert "1x2" in lines[2]["error"]


def test_cli_bad_board_is_one_clear_line() -> None:
    result = run(*["rate", "12/3", "--adds", "1"])
    assert result.exit_code == 1
    assert "row 0 has 2 cells" in result.output and "Traceback" not in result.output


def test_a_board_the_solver_cannot_settle_gets_the_first_won_game_as_certificate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the solver's budget runs out, the certificate is the first game any player won (the
    players in the version's order, each over its own games), and the rest of the rating is the
    rating of a board with that certificate given."""
    from pipeline.rating import score
    from pipeline.rating.players import Games

    cells = parse("569184132/684792414/753732383")
    adds = 2
    monkeypatch.setattr(score, "SOLVE_BUDGET_NODES", 1)
    rating = rate(cells, adds, playouts=4)
    assert rating.metrics["solver_nodes"] <= 2
    won = None
    for player in PLAYERS_BY_VERSION[RATING_VERSION]:
        n = playouts_for(player.name, 4)
        won = next((g for g in Games(player, cells, adds, 0).first(n) if g.won), None)
        if won is not None:
            break
    assert won is not None
    assert rating.metrics["certificate_length"] == len(won.path)
    given = rate(cells, adds, playouts=4, solution=won.path)
    assert rating.to_dict() == given.to_dict()
