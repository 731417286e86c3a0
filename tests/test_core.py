"""The compiled core (`pipeline/engine/_core.c`) against the Python it stands in for: every
function and every player, exactly, over random boards, positions and seeds (hypothesis); its
own checks of bad calls; and the backend switch (`pipeline.engine.backend`).

The differential tests need the core and skip, saying why, when it is not built or
`NUMBERMATCH_PUREPYTHON=1` is set; the tests marked `backends` run under both backends (`make
test` runs them again in pure Python). `NM_CORE_EXAMPLES` raises the examples per test (`make
sanitize` runs these under AddressSanitizer and UndefinedBehaviorSanitizer).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import pickle
import random
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine import backend, rules
from pipeline.engine.backend import PURE_ENV, core, why_pure
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.limits import MAX_CELLS, MAX_PLAYER_MOVES
from pipeline.rating import players
from pipeline.rating.score import rate
from pipeline.solver.search import solve
from tests.helpers import run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("NM_CORE_EXAMPLES", "0")) or None
needs_core = pytest.mark.skipif(core is None, reason=f"the compiled core is not in use: {why_pure}")

boards = st.one_of(
    st.lists(st.integers(1, 9), max_size=60),
    st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 5, 7, 8, 9]), max_size=80),
    st.lists(st.sampled_from([0] * 8 + [1, 3, 5, 7, 9]), max_size=50),  # gap-heavy: collapses
).map(bytes)
PLAYERS = {p.name: p for p in players.PLAYERS}


def _examples(n: int) -> int:
    return EXAMPLES or n


@contextmanager
def pure_python() -> Iterator[Ruleset]:
    """The players and rules as pure Python, for this block: yields ruleset 1 built from the
    Python rule functions (`rules.PURE`)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(players, "core", None)
        for name in ("legal_pairs", "remove_pair", "add_numbers"):
            mp.setattr(players, name, getattr(rules.PURE, name))
        yield dataclasses.replace(
            DEFAULT,
            legal_pairs=rules.PURE.legal_pairs,
            remove_pair=rules.PURE.remove_pair,
            add_numbers=rules.PURE.add_numbers,
            has_legal_pair=rules.PURE.has_legal_pair,
            pair_order=rules.PURE.pairs_ordered,
        )


# --- the random stream -----------------------------------------------------------------------


@needs_core
@settings(max_examples=_examples(100), deadline=None)
@given(
    seed=st.one_of(st.integers(0, 2**64), st.text(max_size=20)),
    skip=st.integers(0, 1500),
    ns=st.lists(st.integers(1, 2**32 - 1) | st.integers(1, 300), max_size=60),
)
def test_mt_draws_what_random_draws(seed: int | str, skip: int, ns: list[int]) -> None:
    rng = random.Random(seed)
    for _ in range(skip):
        rng.random()
    assert core is not None
    mt = core.MT(rng.getstate()[1])
    assert [mt.randbelow(n) for n in ns] == [rng._randbelow(n) for n in ns]  # type: ignore[attr-defined]
    assert mt.state() == rng.getstate()[1]


@needs_core
@settings(max_examples=_examples(100), deadline=None)
@given(seed=st.one_of(st.text(max_size=40), st.integers(0, 2**200)))
def test_the_core_seeds_as_random_seeds(seed: str | int) -> None:
    assert core is not None
    if isinstance(seed, str):
        key = players.seed_key(seed)
    else:
        key = seed.to_bytes(4 * max(1, -(-seed.bit_length() // 32)), "little")
    assert core.seeded_mt(key).state() == random.Random(seed).getstate()[1]


@needs_core
def test_games_seeded_in_the_core_play_the_games_of_the_random() -> None:
    cells = bytes(random.Random(5).randint(1, 9) for _ in range(27))
    for player in players.PLAYERS:
        seeded = players.Games(player, cells, 2, 7)  # its first batch seeds the core
        read = players.Games(player, cells, 2, 7)
        read.rng  # noqa: B018 - read first: the core takes the Random's state
        assert seeded.first(5) == read.first(5)
        assert seeded.rng.getstate() == read.rng.getstate()


# --- the rules -------------------------------------------------------------------------------


@needs_core
@settings(max_examples=_examples(400), deadline=None)
@given(cells=boards)
def test_rules_are_the_python_rules(cells: bytes) -> None:
    assert core is not None
    pure = rules.PURE
    pairs = pure.legal_pairs(cells)
    assert core.legal_pairs(cells) == pairs
    assert core.scan_pairs(cells) == pure.scan_pairs(cells)
    assert core.pairs_ordered(cells) == pure.pairs_ordered(cells)
    assert core.has_legal_pair(cells) is pure.has_legal_pair(cells)
    assert core.add_numbers(cells) == pure.add_numbers(cells)
    for i, j in pairs:
        assert core.remove_pair(cells, i, j) == pure.remove_pair(cells, i, j)


@needs_core
@settings(max_examples=_examples(300), deadline=None)
@given(cells=boards)
def test_tracking_is_the_python_tracking(cells: bytes) -> None:
    """The incremental pairs after a removal (and whether a collapse opened a pair), and the
    lookahead's pair counts after each pair."""
    assert core is not None
    with pure_python():
        pairs = rules.PURE.legal_pairs(cells)
        counts = players.pair_counts_after(cells, pairs)
        steps = [tuple(players._track(cells, pairs, i, j)) for i, j in pairs]
    assert core.pair_counts_after(cells) == counts
    assert [core.track(cells, i, j) for i, j in pairs] == steps


# --- the players -----------------------------------------------------------------------------


def _board(seed: int, n: int, gappy: bool) -> bytes:
    draw = random.Random(seed)
    values = [0, 0, 0, 1, 3, 5, 7, 9] if gappy else list(range(1, 10))
    return bytes(draw.choice(values) for _ in range(n))


@needs_core
@settings(max_examples=_examples(60), deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n=st.sampled_from([1, 2, 9, 18, 27, 30, 35, 36, 45, 60]),
    adds=st.integers(0, 4),
    gappy=st.booleans(),
    record=st.booleans(),
    name=st.sampled_from(sorted(PLAYERS)),
)
def test_every_player_plays_the_python_games(
    seed: int, n: int, adds: int, gappy: bool, record: bool, name: str
) -> None:
    """A batch of games in the core: every result, path, pair count and position, and the random
    stream where it leaves off, as the Python players play them."""
    cells = _board(seed, n, gappy)
    compiled = players.Games(PLAYERS[name], cells, adds, seed, record=record)
    games = compiled.first(4)
    compiled.play()
    with pure_python() as pure:
        reference = players.Games(PLAYERS[name], cells, adds, seed, pure, record)
        expected = reference.first(5)
    assert games + compiled.played[4:] == expected
    assert compiled.rng.getstate() == reference.rng.getstate()


@needs_core
@settings(max_examples=_examples(40), deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n=st.sampled_from([1, 9, 27, 30, 36, 45]),
    adds=st.integers(0, 4),
    gappy=st.booleans(),
    record=st.booleans(),
    name=st.sampled_from(sorted(PLAYERS)),
)
def test_the_core_s_tally_sums_the_games_it_would_play(
    seed: int, n: int, adds: int, gappy: bool, record: bool, name: str
) -> None:
    """`core.tally` gives the sums (`players.Tally`) of the very games `core.play` plays, and
    leaves the stream where they leave it."""
    assert core is not None
    cells = _board(seed, n, gappy)
    kind = players._compiled(PLAYERS[name], DEFAULT, cells, adds, MAX_PLAYER_MOVES)
    assert kind is not None
    state = random.Random(seed).getstate()[1]
    mt_games, mt_sums = core.MT(state), core.MT(state)
    games = core.play(*kind, cells, adds, 7, mt_games, record, MAX_PLAYER_MOVES, players.Playout)
    sums = core.tally(*kind, cells, adds, 7, mt_sums, record, MAX_PLAYER_MOVES)
    assert players.Tally(7, *sums) == players.Tally.of(games)
    assert mt_sums.state() == mt_games.state()


@needs_core
@settings(max_examples=_examples(40), deadline=None)
@given(
    seed=st.integers(0, 2**32),
    adds=st.integers(0, 3),
    cap=st.integers(0, 30),
    threshold=st.integers(0, 5),
    reach=st.integers(0, 3),
    width=st.integers(1, 6),
)
def test_player_parameters_and_move_cap(
    seed: int, adds: int, cap: int, threshold: int, reach: int, width: int
) -> None:
    """`play` with a `Random` (handed back advanced by the same draws), players with other
    parameters than the rating's, and a cap on the moves."""
    cells = _board(seed, 36, seed % 2 == 0)
    population = [
        players.OpenerPlayer(threshold=threshold),
        players.LocalPlayer(reach=reach),
        players.PlannerPlayer(width=width),
    ]
    for player in population:
        got_rng, want_rng = random.Random(seed), random.Random(seed)
        got = players.play(player, cells, adds, got_rng, record=True, max_moves=cap)
        with pure_python() as pure:
            want = players.play(
                player, cells, adds, want_rng, record=True, ruleset=pure, max_moves=cap
            )
        assert got == want and got_rng.getstate() == want_rng.getstate()


@needs_core
def test_the_core_s_choice_memo_changes_no_game() -> None:
    """The core keeps the lookahead's, opener's and planner's best pairs per position between
    games and calls (one memo for every player and width, wiped when full): the games are still
    the Python games, whatever was played before, in any order, and after the memo is wiped."""
    population = [
        players.LookaheadPlayer(),
        players.PlannerPlayer(width=1),
        players.OpenerPlayer(threshold=2),
        players.PlannerPlayer(width=3),
        players.PlannerPlayer(width=5),
    ]
    cells = [_board(seed, 27 + 9 * (seed % 3), seed % 2 == 0) for seed in range(3)]
    for order in (population, population[::-1]):
        for board in cells:
            for player in order:
                compiled = players.Games(player, board, 2, 11)
                with pure_python() as pure:
                    expected = players.Games(player, board, 2, 11, pure).first(6)
                assert compiled.first(3) + [compiled.play() for _ in range(3)] == expected
    # more positions than the memo keeps (it wipes itself), then a board seen before
    lookahead = players.LookaheadPlayer()
    for seed in range(300):
        board = _board(1000 + seed, 45, False)
        compiled = players.Games(lookahead, board, 1, seed).first(4)
        if seed % 50 == 0:
            with pure_python() as pure:
                assert compiled == players.Games(lookahead, board, 1, seed, pure).first(4)
    compiled = players.Games(population[3], cells[0], 2, 11).first(6)
    with pure_python() as pure:
        assert compiled == players.Games(population[3], cells[0], 2, 11, pure).first(6)


@needs_core
def test_the_core_s_positions_tree_changes_no_game() -> None:
    """The core keeps the boards its games reach from one start board (the positions' tree:
    kept between calls from the same board, started over for another, grown no more once
    full): the games are still the Python games, before it fills and after, after another
    board, and on a board too large for it (and one that grows too large by an add)."""
    assert core is not None

    def same(board: bytes, adds: int, seed: int, population: list[players.Player]) -> None:
        for player in population:
            compiled = players.Games(player, board, adds, seed, record=seed % 2 == 0)
            games = compiled.first(6)
            with pure_python() as pure:
                reference = players.Games(player, board, adds, seed, pure, seed % 2 == 0)
                assert games == reference.first(6)
            assert compiled.rng.getstate() == reference.rng.getstate()

    population = [
        players.RandomPlayer(),
        players.ScannerPlayer(),
        players.LocalPlayer(reach=1),
        players.OpenerPlayer(threshold=2),
        players.PlannerPlayer(width=2),
        players.ProximityPlayer(),
    ]
    small = _board(7, 18, False)
    same(small, 2, 1, population)  # the tree grows from small
    same(small, 2, 2, population[::-1])  # the same board: the tree kept
    same(_board(8, 27, True), 1, 3, population)  # another board: started over
    same(small, 2, 4, population)
    # far more positions than the tree keeps: it fills and grows no more
    mt = core.MT(random.Random(5).getstate()[1])
    core.tally(core.RANDOM, 0, small, 2, 200_000, mt, False, MAX_PLAYER_MOVES)
    same(small, 2, 6, population)
    # boards past the tree's largest: too large from the start, too large after an add
    same(_board(9, 1100, True), 0, 7, population[:1])
    same(_board(10, 1000, False), 1, 8, population[:1])


@needs_core
@settings(max_examples=_examples(30), deadline=None)
@given(
    seed=st.integers(0, 2**32),
    adds=st.integers(0, 3),
    record=st.booleans(),
    name=st.sampled_from(sorted(PLAYERS)),
)
def test_the_core_s_playouts_are_those_of_its_tuples(
    seed: int, adds: int, record: bool, name: str
) -> None:
    """`core.play(..., Playout)` makes the Playouts `_compiled_playout` makes of its tuples (the
    same fields, paths, positions, draws), each out of the cyclic collector's sight."""
    assert core is not None
    cells = _board(seed, 27 + seed % 19, seed % 2 == 0)
    kind = players._compiled(PLAYERS[name], DEFAULT, cells, adds, MAX_PLAYER_MOVES)
    assert kind is not None
    state = random.Random(seed).getstate()[1]
    mt_made, mt_tuples = core.MT(state), core.MT(state)
    made = core.play(*kind, cells, adds, 5, mt_made, record, MAX_PLAYER_MOVES, players.Playout)
    tuples = core.play(*kind, cells, adds, 5, mt_tuples, record, MAX_PLAYER_MOVES)
    start = (cells, adds) if record else None
    expected = [players._compiled_playout(t, start) for t in tuples]
    assert mt_made.state() == mt_tuples.state()
    for got, want in zip(made, expected, strict=True):
        assert type(got) is players.Playout
        assert [getattr(got, k) for k in got.__slots__] == [
            getattr(want, k) for k in want.__slots__
        ]
        assert not gc.is_tracked(got) and not gc.is_tracked(got.pair_counts)
        assert got == want and got.path == want.path
    gc.collect()  # nothing the collector would trip over


@needs_core
def test_the_core_checks_the_playout_class() -> None:
    """Anything but a plain class whose instances have the ten slots as object slots is refused,
    and the class checked before still serves."""
    assert core is not None
    mt = core.MT(random.Random(0).getstate()[1])
    slots = players.Playout.__slots__

    class NoSlots:
        pass

    class Short:
        __slots__ = slots[:-1]

    class Props:
        __slots__ = tuple(s for s in slots if s != "won")
        won = property(lambda self: True)

    class New:
        __slots__ = slots

        def __new__(cls) -> New:
            return super().__new__(cls)

    class Same:
        __slots__ = slots

    for cls in (None.__class__, int, tuple, NoSlots, Short, Props, New, 3, "Playout"):
        with pytest.raises(ValueError):
            core.play(core.RANDOM, 0, b"\1\1", 0, 1, mt, False, 10, cls)
    (one,) = core.play(core.RANDOM, 0, b"\1\1", 0, 1, mt, True, 10, Same)
    assert type(one) is Same and one.won and one._start == (b"\1\1", 0)
    (two,) = core.play(core.RANDOM, 0, b"\1\1", 0, 1, mt, False, 10, players.Playout)
    assert type(two) is players.Playout and two.won and two.positions == []


@needs_core
def test_games_pickle_with_their_stream() -> None:
    """The core's stream is brought back into the `Random` when Games travel to another process."""
    cells = _board(7, 27, False)
    games = players.Games(PLAYERS["random"], cells, 2, 0, record=True)
    games.first(10)
    copy = pickle.loads(pickle.dumps(games))
    assert copy.first(20) == games.first(20)
    assert copy.played[0].positions == games.played[0].positions


@needs_core
def test_ratings_are_those_of_a_pure_python_process() -> None:
    """Whole ratings (versions 2, 3 and 4: traps from replayed positions, certificates from packed
    paths), in this process and in one with NUMBERMATCH_PUREPYTHON=1. Version 3 at its full
    counts and version 4 on few playouts: the default version's full counts in pure Python would
    take most of `make test-fast`'s minute."""
    script = (
        "import json, random, sys\n"
        "from pipeline.rating.score import rate\n"
        "out = []\n"
        "for n, adds in ((27, 2), (36, 1), (30, 3)):\n"
        "    b = bytes(random.Random(n).randint(1, 9) for _ in range(n))\n"
        "    out += [rate(b, adds, version=3).to_json(), rate(b, adds, version=2, playouts=16).to_json()]\n"
        "    out.append(rate(b, adds, version=4, playouts=4, seed=1).to_json())\n"
        "print(json.dumps(out, sort_keys=True))\n"
    )
    env = {**os.environ, PURE_ENV: "1"}
    pure = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    here = []
    for n, adds in ((27, 2), (36, 1), (30, 3)):
        b = bytes(random.Random(n).randint(1, 9) for _ in range(n))
        here += [
            rate(b, adds, version=3).to_json(),
            rate(b, adds, version=2, playouts=16).to_json(),
        ]
        here.append(rate(b, adds, version=4, playouts=4, seed=1).to_json())
    assert json.dumps(here, sort_keys=True) == pure.stdout.strip()


# --- bad calls -------------------------------------------------------------------------------


@needs_core
def test_the_core_refuses_bad_calls_with_value_errors() -> None:
    assert core is not None
    mt = core.MT(random.Random(0).getstate()[1])
    bad = [
        lambda: core.legal_pairs(b"\x0a"),
        lambda: core.legal_pairs("123"),
        lambda: core.add_numbers(b"12\xff"),
        lambda: core.remove_pair(b"11", 0, 2),
        lambda: core.remove_pair(b"11", -1, 1),
        lambda: core.remove_pair(b"11", 1, 1),
        lambda: core.remove_pair(b"11", "0", 1),
        lambda: core.remove_pair(b"11", 2**70, 1),
        lambda: core.track(b"12", 0, 1),  # not a pair
        lambda: core.track(b"11", 0, 5),
        lambda: core.pair_counts_after(None),
        lambda: core.MT(()),
        lambda: core.MT((0,) * 624 + (625,)),
        lambda: core.MT((-1,) + (0,) * 624),
        lambda: core.MT((2**32,) + (0,) * 624),
        lambda: core.MT(("x",) * 625),
        lambda: core.seeded_mt(b""),
        lambda: core.seeded_mt(b"123"),
        lambda: core.seeded_mt(b"\0" * 4 * 1025),
        lambda: core.seeded_mt("1234"),
        lambda: mt.randbelow(0),
        lambda: mt.randbelow(2**32),
        lambda: mt.randbelow("3"),
        lambda: core.play(99, 0, b"11", 0, 1, mt, False, 10),
        lambda: core.play(core.PLANNER, 0, b"11", 0, 1, mt, False, 10),
        lambda: core.play(core.RANDOM, 0, b"11", -1, 1, mt, False, 10),
        lambda: core.play(core.RANDOM, 0, b"11", 0, -1, mt, False, 10),
        lambda: core.play(core.RANDOM, 0, b"11", 0, 1, mt, False, -1),
        lambda: core.play(core.RANDOM, 0, b"1" * (MAX_CELLS + 1), 0, 1, mt, False, 10),
        lambda: core.play(core.RANDOM, 0, b"1\x0c", 0, 1, mt, False, 10),
        lambda: core.play(core.RANDOM, 0, b"11", 0, 1, object(), False, 10),
        lambda: core.tally(99, 0, b"11", 0, 1, mt, False, 10),
        lambda: core.tally(core.RANDOM, 0, b"11", 0, -1, mt, False, 10),
        lambda: core.tally(core.RANDOM, 0, b"1\x0c", 0, 1, mt, False, 10),
        lambda: core.tally(core.RANDOM, 0, b"11", 0, 1, mt, False, 10, players.Playout),
    ]
    for call in bad:
        with pytest.raises(ValueError):
            call()


@needs_core
def test_the_core_knows_the_limits() -> None:
    assert core is not None
    assert core.MAX_INPUT_CELLS == MAX_CELLS
    assert MAX_PLAYER_MOVES <= players._CORE_MAX_MOVES


# --- the switch (both backends) --------------------------------------------------------------


@pytest.mark.backends
def test_version_names_the_backend() -> None:
    result = run("--version")
    assert result.exit_code == 0
    expected = "backend: compiled (C core)" if core is not None else "backend: pure Python"
    assert expected in result.stdout


@pytest.mark.backends
def test_pure_python_is_forced_at_run_time() -> None:
    script = "from pipeline.engine import backend, rules; print(backend.COMPILED, rules.legal_pairs is rules.PURE.legal_pairs)"
    env = {**os.environ, PURE_ENV: "1"}
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.backends
def test_a_core_built_from_another_source_is_stale(tmp_path: Path) -> None:
    """The core names the hash of the _core.c it was built from; another source beside it (an
    edited file, an old build) makes it stale, and no source there (an installed package) does
    not."""
    import hashlib
    import types

    source = tmp_path / "_core.c"
    source.write_bytes(b"int x;\n")
    built = types.ModuleType("_core")
    built.SOURCE_SHA256 = hashlib.sha256(b"int x;\n").hexdigest()  # type: ignore[attr-defined]
    assert not backend.stale(built, source)
    source.write_bytes(b"int y;\n")
    assert backend.stale(built, source)
    assert backend.stale(types.ModuleType("_core"), source)  # built before cores named a source
    assert not backend.stale(built, tmp_path / "absent.c")
    if core is not None:  # the installed build is the one of this checkout's _core.c
        assert not backend.stale(core)


@needs_core
def test_a_stale_core_falls_back_to_python_with_one_warning() -> None:
    """A core whose source hash is not the one of _core.c: pure Python, one warning line, and
    `--version` says why."""
    script = (
        "import sys; from pipeline.engine import _core; _core.SOURCE_SHA256 = '0' * 64\n"
        "from pipeline.engine import backend, rules\n"
        "print(backend.COMPILED, rules.legal_pairs is rules.PURE.legal_pairs)\n"
        "from pipeline.cli import main; sys.argv = ['numbermatch', '--version']; main()"
    )
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "False True"
    assert f"backend: pure Python ({backend.STALE})" in lines[1]
    assert out.stderr.splitlines() == [
        f"numbermatch: warning: {backend.STALE}; running in pure Python"
    ]


@pytest.mark.backends
@pytest.mark.parametrize("name", sorted(PLAYERS))
def test_games_summed_are_the_games_kept(name: str) -> None:
    """`Games.totals` (the rating's sums, its games not kept) is `Tally.of` the same games kept,
    on from the games a screen kept, under either backend; games only summed cannot be asked for
    one by one, nor summed over fewer of them."""
    cells = _board(5, 30, False)
    record = name == "random"
    kept = players.Games(PLAYERS[name], cells, 2, 3, record=record)
    summed = players.Games(PLAYERS[name], cells, 2, 3, record=record)
    summed.first(4)  # what a screen keeps
    assert summed.totals(3) == players.Tally.of(kept.first(3))
    assert summed.totals(25) == players.Tally.of(kept.first(25))
    assert summed.totals(25) == summed.totals(25) and len(summed.played) == 4
    assert summed.totals(40) == players.Tally.of(kept.first(40))
    assert summed.totals(40).stats() == players.play_many(PLAYERS[name], cells, 2, 40, 3)[0]
    with pytest.raises(ValueError):
        summed.first(5)
    with pytest.raises(ValueError):
        summed.totals(30)
    assert summed.rng.getstate() == kept.rng.getstate()


@pytest.mark.backends
def test_players_outside_the_core_play_in_python() -> None:
    """A player the core does not know (a subclass), or one of its players on another ruleset,
    plays the Python code, with the same games as the plain players there."""

    class Blind(players.RandomPlayer):
        pass

    cells = _board(3, 27, False)
    assert players._compiled(Blind(), DEFAULT, cells, 2, 100) is None
    plain = players.Games(Blind(), cells, 2, 0).first(5)
    assert plain == players.Games(PLAYERS["random"], cells, 2, 0).first(5)


@needs_core
@settings(max_examples=_examples(60), deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n=st.sampled_from([9, 18, 27, 30, 36]),
    adds=st.integers(0, 3),
    budget=st.sampled_from([1, 30, 300, 3000, 20_000]),
    gappy=st.booleans(),
)
def test_the_solver_s_playouts_are_the_python_playouts(
    seed: int, n: int, adds: int, budget: int, gappy: bool
) -> None:
    """The solver's random playouts in the core: the same status, certificate and nodes."""
    cells = _board(seed, n, gappy)
    got = solve(cells, adds, budget_nodes=budget)
    with pure_python() as pure:
        want = solve(cells, adds, ruleset=pure, budget_nodes=budget)
    assert (got.status, got.moves, got.nodes) == (want.status, want.moves, want.nodes)
