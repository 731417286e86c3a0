"""Simulated players: plain, documented policies that play a Stage out from a seed.

The rating measures difficulty as "how often do players of different habits and strength win".
Every player here removes pairs while it can and, except the `opener`, uses Add numbers only when
it is stuck (no legal pair) and has an add left; a game ends won (empty board) or stuck (no pair,
no add left). Version 1's players differ only in which legal pair they take:

- `random`: uniform among the legal pairs. The floor: what blind play achieves.
- `scanner`: reads the grid in reading order from where its eyes are, and takes the first pair
  it comes to (the pair whose first cell comes first, then the nearer second cell). Its eyes
  start on a random cell and then stay where it last matched, wrapping to the top at the end.
- `lookahead`: looks one move ahead: it takes a pair that empties the
  board if there is one, otherwise the pair after which the board has the most legal pairs
  (keeping its options open); ties broken at random.

Later versions add `opener` (adds early), `local` (narrow attention), `planner` (two moves ahead)
and `proximity` (the closest pair in reading order); their classes say how they pick.

The hot loop keeps the legal pairs up to date incrementally (`remove_and_track`,
`pair_counts_after`): removing a pair without a row collapse only changes pairs through the two
emptied cells; a collapse or an add recomputes them with `rules.legal_pairs`. And it remembers
what it worked out per position (`_Memo`): a rating's ~800 games all start on one board and
pass through many of the same positions. That tracking knows
ruleset 1's lines, so it runs only for a ruleset whose `tracked_pairs` flag is set; otherwise the
players recompute the pairs with the ruleset's own functions. The games are the same either way
(tests check it with a copy of ruleset 1 whose flag is off).

When the compiled core is built (`pipeline.engine.backend`), the seven players' whole games are
played there instead, a batch per call, for ruleset 1 (`_compiled`): the same games from the same
`random.Random` draws (its Mersenne Twister state is handed over and back), so every result is
byte-identical; this Python code is the reference and the fallback (`NUMBERMATCH_PUREPYTHON=1`).
A compiled game keeps its path packed until it is read, and its positions are replayed from it
when asked for. A rating reads only sums of the games it does not take over from a screen
(`Games.totals`, `Tally`): the core plays those without making a Playout of each (`core.tally`),
and pure Python sums them one game at a time; the same integers either way.
"""

from __future__ import annotations

import gc
import hashlib
import struct
from bisect import insort
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any, NamedTuple, Protocol, TypeVar

from pipeline.engine.backend import core
from pipeline.engine.board import CLASS, WIDTH, Line, crossing_lines
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rules import add_numbers, legal_pairs, remove_pair
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.limits import MAX_MEMO_ENTRIES, MAX_PLAYER_MOVES

Pair = tuple[int, int]
# A chooser returns the pair to remove, or None to use Add numbers now (only when an add is left).
Chooser = Callable[[bytes, list[Pair], int], "Pair | None"]
_K = TypeVar("_K")
_V = TypeVar("_V")


# --- incremental legal pairs ---------------------------------------------------------------


def _opened_across(
    cells: bytes | bytearray, i: int, j: int, lines: tuple[tuple[Line, ...], ...]
) -> list[Pair]:
    """The pairs that see across gap i or gap j (a pair may come twice): on each straight line
    through either (reading order, vertical, both diagonals) the nearest active cells on either
    side, when their values pair. (Cells already gaps, like i and j, are transparent.)"""
    n = len(cells)
    cls = CLASS
    found = []
    for x in (i, j):
        a = x - 1
        while a >= 0 and not cells[a]:
            a -= 1
        if a >= 0:
            b = x + 1
            while b < n and not cells[b]:
                b += 1
            if b < n and cls[cells[a]] == cls[cells[b]]:
                found.append((a, b))
        for back, fwd in lines[x]:
            for a in back:
                va = cells[a]
                if va:
                    for b in fwd:
                        vb = cells[b]
                        if vb:
                            if cls[va] == cls[vb]:
                                found.append((a, b))
                            break
                    break
    return found


def pairs_after_gaps(cells: bytes | bytearray, pairs: Sequence[Pair], i: int, j: int) -> list[Pair]:
    """The legal pairs once i and j are gaps (`cells` already has them as gaps), rows kept.

    `pairs` are the legal pairs before, sorted; only pairs through i or j change: those using i
    or j go (the rest stay sorted), and cells that now see each other across i or j may pair
    (inserted in order unless another line already joined them).
    """
    kept = [p for p in pairs if p[0] != i and p[1] != i and p[0] != j and p[1] != j]
    for p in _opened_across(cells, i, j, crossing_lines(len(cells))):
        if p not in kept:
            insort(kept, p)
    return kept


def pair_counts_after(cells: bytes, pairs: Sequence[Pair]) -> list[int]:
    """For each legal pair, how many legal pairs the board has after removing it (same order).

    The lookahead player's evaluation, without building every next board: without a row
    collapse the count changes only through the two emptied cells.
    """
    n = len(cells)
    lines = crossing_lines(n)
    deg = [0] * n
    for a, b in pairs:
        deg[a] += 1
        deg[b] += 1
    present = set(pairs)
    total = len(pairs)
    work = bytearray(cells)
    row_actives = [
        len(row) - row.count(0) for row in (cells[s : s + WIDTH] for s in range(0, n, WIDTH))
    ]
    counts = []
    for i, j in pairs:
        ri, rj = i // WIDTH, j // WIDTH
        if row_actives[ri] == 1 or row_actives[rj] == 1 or (ri == rj and row_actives[ri] == 2):
            counts.append(len(legal_pairs(remove_pair(cells, i, j))))
            continue
        vi, vj = work[i], work[j]
        work[i] = work[j] = 0
        opened = set(_opened_across(work, i, j, lines))
        work[i], work[j] = vi, vj
        counts.append(total - deg[i] - deg[j] + 1 + len(opened - present))
    return counts


def counts_after(cells: bytes, pairs: Sequence[Pair], ruleset: Ruleset) -> list[int]:
    """`pair_counts_after` where the ruleset allows tracking (remembered, see `_Memo`), else by the
    ruleset's functions. The list is shared: read it, never change it."""
    if ruleset.tracked_pairs:
        counts = _MEMO.counts.get(cells)
        if counts is None:
            counts = _MEMO.keep(_MEMO.counts, cells, pair_counts_after(cells, pairs))
        return counts
    return [len(ruleset.legal_pairs(ruleset.remove_pair(cells, i, j))) for i, j in pairs]


class Step(NamedTuple):
    """One pair removal as the tracker saw it (a named tuple: the hot loop makes many)."""

    cells: bytes
    pairs: list[Pair]
    collapsed: bool  # a row disappeared
    opened: bool  # ... and the collapse made a pair that was not there before it


def remove_and_track(
    cells: bytes, pairs: Sequence[Pair], i: int, j: int, ruleset: Ruleset = DEFAULT
) -> Step:
    """Remove pair (i, j) and return the new cells and legal pairs, noting collapse openings.

    `pairs` are the legal pairs of `cells` (sorted). Where the ruleset allows tracking, the step
    is remembered (`_Memo`): a rating's games from one board pass through the same positions.
    """
    if not ruleset.tracked_pairs:
        after = ruleset.remove_pair(cells, i, j)
        new = ruleset.legal_pairs(after)
        if len(after) == len(cells):
            return Step(after, new, False, False)
        gapped = bytearray(cells)
        gapped[i] = gapped[j] = 0
        return Step(
            after,
            new,
            True,
            _collapse_opened(gapped, ruleset.legal_pairs(bytes(gapped)), new, i, j),
        )
    key = (cells, i, j)
    step = _MEMO.steps.get(key)
    if step is None:
        step = _MEMO.keep(_MEMO.steps, key, _track(cells, pairs, i, j))
    return step


def _track(cells: bytes, pairs: Sequence[Pair], i: int, j: int) -> Step:
    """`remove_and_track` for ruleset 1: the pairs through i and j updated, a full rescan only
    when a row collapses (what `rules.remove_pair` does, without building the board twice)."""
    gapped = bytearray(cells)
    gapped[i] = gapped[j] = 0
    kept = pairs_after_gaps(gapped, pairs, i, j)
    si, sj = i - i % WIDTH, j - j % WIDTH
    gone_i = not any(gapped[si : si + WIDTH])
    gone_j = sj != si and not any(gapped[sj : sj + WIDTH])
    if not (gone_i or gone_j):
        return Step(bytes(gapped), kept, False, False)
    after = bytearray(gapped)
    for s, gone in ((sj, gone_j), (si, gone_i)):  # higher row first so indices stay valid
        if gone:
            del after[s : s + WIDTH]
    new = legal_pairs(bytes(after))
    return Step(bytes(after), new, True, _collapse_opened(gapped, kept, new, i, j))


class _Memo:
    """What the tracked path has worked out, by position: legal pairs, steps, the lookahead's
    counts. Each is a pure function of the cells (and the pair), so remembering changes no
    result; the games a rating plays from one board share many positions (all start on it,
    and many positions recur), so a rating computes each once. It holds one start board's
    positions (`start`: a game from another board clears it; fewer live objects for the
    garbage collector to walk), and a table that reaches `MAX_MEMO_ENTRIES` starts over. Threads
    may share it: whatever they clear, a value found is the value that would be computed."""

    def __init__(self) -> None:
        self.pairs: dict[bytes, list[Pair]] = {}
        self.steps: dict[tuple[bytes, int, int], Step] = {}
        self.counts: dict[bytes, list[int]] = {}
        self.board = b""

    def start(self, cells: bytes) -> None:
        """A game starts on `cells`: forget another board's positions."""
        if cells != self.board:
            self.clear()
            self.board = cells

    def keep(self, table: dict[_K, _V], key: _K, value: _V) -> _V:
        if len(table) >= MAX_MEMO_ENTRIES:
            table.clear()
        table[key] = value
        return value

    def clear(self) -> None:
        self.pairs.clear()
        self.steps.clear()
        self.counts.clear()


_MEMO = _Memo()


def _legal(cells: bytes, ruleset: Ruleset) -> list[Pair]:
    """The ruleset's legal pairs of `cells`, remembered for ruleset 1's function (see `_Memo`)."""
    if ruleset.legal_pairs is not legal_pairs:
        return ruleset.legal_pairs(cells)
    pairs = _MEMO.pairs.get(cells)
    if pairs is None:
        pairs = _MEMO.keep(_MEMO.pairs, cells, legal_pairs(cells))
    return pairs


def _collapse_opened(
    gapped: bytearray, kept: Sequence[Pair], new: Sequence[Pair], i: int, j: int
) -> bool:
    """Whether the collapsed board has a pair the same board without the collapse lacks.

    `gapped` is the board with i and j emptied but no row removed; `kept` its pairs.
    """
    # where each emptied row starts; its cells are gaps, so no pair of `kept` uses them
    starts = {x - x % WIDTH for x in (i, j)}
    s1, s2 = sorted({s for s in starts if not any(gapped[s : s + WIDTH])} | {len(gapped)})[:2]
    # a cell past an emptied row moves up a row for each
    before = {
        (a - WIDTH * ((a > s1) + (a > s2)), b - WIDTH * ((b > s1) + (b > s2))) for a, b in kept
    }
    return any(p not in before for p in new)


# --- players --------------------------------------------------------------------------------


class Player(Protocol):
    @property
    def name(self) -> str:
        """The player's name in ratings (`random`, `scanner`, ...)."""
        ...

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        """A chooser for one game: (cells, legal pairs (non-empty, sorted), adds left) -> pair."""
        ...


@dataclass(frozen=True)
class RandomPlayer:
    """Uniform among the legal pairs; adds only when stuck."""

    name: str = "random"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        choice = rng.choice
        return lambda cells, pairs, adds_left: choice(pairs)


@dataclass(frozen=True)
class ScannerPlayer:
    """Takes the first pair met reading on from where its eyes are; adds only when stuck.

    Its eyes start on a random cell; after each removal they rest on the first cell removed, or,
    when that row vanishes, on the start of the row that moves up into its place; after an add
    they stay put. Past the last pair it wraps to the top.
    """

    name: str = "scanner"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        cursor = [rng.randrange(len(cells)) if cells else 0]
        width = ruleset.width

        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            at = cursor[0]
            pick = pairs[0]
            for p in pairs:
                if p[0] >= at:
                    pick = p
                    break
            row_start = pick[0] - pick[0] % width
            row = cells[row_start : row_start + width]
            vanishes = all(not v or row_start + k in pick for k, v in enumerate(row))
            cursor[0] = row_start if vanishes else pick[0]
            return pick

        return choose


@dataclass(frozen=True)
class LookaheadPlayer:
    """Looks one move ahead; adds only when stuck.

    Takes a pair that empties the board when there is one; otherwise the pair after which
    the board has the most legal pairs (keeping options open), ties broken at random.
    """

    name: str = "lookahead"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            if len(cells) - cells.count(0) == 2:
                return pairs[0]
            counts = counts_after(cells, pairs, ruleset)
            top = max(counts)
            best = [p for p, c in zip(pairs, counts) if c == top]
            return best[0] if len(best) == 1 else rng.choice(best)

        return choose


@dataclass(frozen=True)
class OpenerPlayer:
    """Spends its adds early, to open the board: whenever the board shows `threshold` legal
    pairs or fewer and an add is left, it adds; otherwise it picks like the lookahead player."""

    name: str = "opener"
    threshold: int = 2

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        look = LookaheadPlayer().begin(cells, rng, ruleset)

        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair | None:
            if adds_left > 0 and len(pairs) <= self.threshold and len(cells) - cells.count(0) > 2:
                return None
            return look(cells, pairs, adds_left)

        return choose


@dataclass(frozen=True)
class LocalPlayer:
    """Attention on a few rows: a random pair among those with a cell at most `reach` rows from
    the row it last played in (its eyes start on a random row); only when none is in sight does
    it take any pair. Adds when stuck."""

    name: str = "local"
    reach: int = 1

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        width = ruleset.width
        focus = [rng.randrange(max(1, (len(cells) + width - 1) // width))]
        reach = self.reach

        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            f = focus[0]
            # a cell's row is at most `reach` from f exactly when the cell lies in these bounds
            low, high = (f - reach) * width, (f + reach + 1) * width
            near = [p for p in pairs if low <= p[0] < high or low <= p[1] < high]
            pick = rng.choice(near or pairs)
            focus[0] = pick[0] // width
            return pick

        return choose


@dataclass(frozen=True)
class PlannerPlayer:
    """The strongest habit: looks two pairs ahead on its `width` most promising moves (those
    leaving the most legal pairs) and takes the one whose best follow-up leaves the most; takes
    a pair that empties the board when there is one. Adds when stuck."""

    name: str = "planner"
    width: int = 4

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        width = self.width

        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            if len(cells) - cells.count(0) == 2:
                return pairs[0]
            if len(pairs) == 1:
                return pairs[0]
            counts = counts_after(cells, pairs, ruleset)
            ranked = sorted(range(len(pairs)), key=lambda k: -counts[k])[:width]
            best: list[Pair] = []
            top = -1
            for k in ranked:
                i, j = pairs[k]
                one = remove_and_track(cells, pairs, i, j, ruleset)
                if not one.cells:
                    return (i, j)
                value = max(counts_after(one.cells, one.pairs, ruleset)) + 1 if one.pairs else 0
                if value > top:
                    top, best = value, [(i, j)]
                elif value == top:
                    best.append((i, j))
            return best[0] if len(best) == 1 else rng.choice(best)

        return choose


@dataclass(frozen=True)
class ProximityPlayer:
    """What the eye catches first: the pair whose two cells are closest in reading order (next
    to each other in a row before pairs across a gap or a row), ties at random. Adds when stuck."""

    name: str = "proximity"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        choice = rng.choice

        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            low = min(j - i for i, j in pairs)
            close = [p for p in pairs if p[1] - p[0] == low]
            return close[0] if len(close) == 1 else choice(close)

        return choose


PLAYERS_V1: tuple[Player, ...] = (RandomPlayer(), ScannerPlayer(), LookaheadPlayer())
# Version 2's population: from blind to planning, with narrow attention and early adds. The
# first three are version 1's players, playing the very same games.
PLAYERS_V2: tuple[Player, ...] = PLAYERS_V1 + (OpenerPlayer(), LocalPlayer(), PlannerPlayer())
# Version 3's population: version 2's, plus the reading-order proximity habit. Each player's
# games are one seeded sequence, so a version that gives a player more games plays the earlier
# version's games first.
PLAYERS_V3: tuple[Player, ...] = PLAYERS_V2 + (ProximityPlayer(),)
# The population the rating plays (the current version's).
PLAYERS: tuple[Player, ...] = PLAYERS_V3


# --- playing a game out -----------------------------------------------------------------------


class Playout:
    """One game: won or stuck, moves played (adds included), and what the board did on the way.

    `pair_counts`: legal pairs before each step; `positions`: (cells, adds left, pairs) before
    each pair removal (both only for a recorded game); `path`: the moves played. A game played
    by the compiled core keeps its path packed until it is read and replays its positions from
    the start when they are asked for (the same values)."""

    __slots__ = (
        "_code",
        "_path",
        "_positions",
        "_start",
        "adds_used",
        "collapses",
        "moves",
        "openings",
        "pair_counts",
        "won",
    )

    def __init__(
        self,
        won: bool,
        moves: int,
        adds_used: int,
        pair_counts: list[int] | None = None,
        collapses: int = 0,
        openings: int = 0,
        positions: list[tuple[bytes, int, list[Pair]]] | None = None,
        path: list[Move] | None = None,
    ) -> None:
        self.won, self.moves, self.adds_used = won, moves, adds_used
        self.pair_counts: list[int] = [] if pair_counts is None else pair_counts
        self.collapses, self.openings = collapses, openings
        self._positions: list[tuple[bytes, int, list[Pair]]] | None = (
            [] if positions is None else positions
        )
        self._path: list[Move] | None = [] if path is None else path
        self._code = b""
        self._start: tuple[bytes, int] | None = None

    @property
    def path(self) -> list[Move]:
        """The moves played (a won game's is a certificate)."""
        if self._path is None:
            self._path = [
                ADD if i < 0 else _move(i, j) for i, j in struct.iter_unpack("<ii", self._code)
            ]
        return self._path

    @property
    def positions(self) -> list[tuple[bytes, int, list[Pair]]]:
        """(cells, adds left, legal pairs) before each pair removal of a recorded game."""
        if self._positions is None:
            assert self._start is not None
            cells, adds_left = self._start
            self._positions = []
            for move in self.path:
                if move.first is None or move.second is None:
                    cells, adds_left = add_numbers(cells), adds_left - 1
                else:
                    self._positions.append((cells, adds_left, legal_pairs(cells)))
                    cells = remove_pair(cells, move.first, move.second)
        return self._positions

    def _fields(self) -> tuple[Any, ...]:
        return (
            self.won,
            self.moves,
            self.adds_used,
            self.pair_counts,
            self.collapses,
            self.openings,
            self.positions,
            self.path,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Playout):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return (
            f"Playout(won={self.won!r}, moves={self.moves!r}, adds_used={self.adds_used!r}, "
            f"collapses={self.collapses!r}, openings={self.openings!r}, path={self.path!r})"
        )

    def __getstate__(self) -> tuple[Any, ...]:
        return (*self._fields(),)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        won, moves, adds_used, counts, collapses, openings, positions, path = state
        self.__init__(won, moves, adds_used, counts, collapses, openings, positions, path)  # type: ignore[misc]


def _move(i: int, j: int) -> Move:
    """The shared Move of pair (i, j) (see `_MOVES`)."""
    pick = (i, j)
    move = _MOVES.get(pick)
    if move is None:
        move = Move(i, j)
        if j < _SHARED_MOVES:
            _MOVES[pick] = move
    return move


def _compiled_playout(result: tuple[Any, ...], start: tuple[bytes, int] | None) -> Playout:
    """A Playout from one game of `core.play` (`start`: (cells, adds) of a recorded game)."""
    out = _new_playout(Playout)
    out.won, out.moves, out.adds_used, out.collapses, out.openings, out._code, counts = result
    out.pair_counts = [] if counts is None else counts
    out._path = None
    out._positions = None if start is not None else []
    out._start = start
    return out


_new_playout = object.__new__


def _compiled(
    player: Player, ruleset: Ruleset, cells: bytes, adds: int, max_moves: int
) -> tuple[int, int] | None:
    """(kind, parameter) of `core.play` for a game the compiled core plays exactly as this module
    would: one of the seven players (its own class, parameters in range), ruleset 1's rules,
    input within the core's limits; None otherwise (or when it is not built)."""
    if core is None or not (
        ruleset.tracked_pairs
        and ruleset.width == WIDTH
        and ruleset.legal_pairs is legal_pairs
        and ruleset.remove_pair is remove_pair
        and ruleset.add_numbers is add_numbers
        and ruleset.value_class == CLASS
        and type(cells) is bytes
        and len(cells) <= core.MAX_INPUT_CELLS
        and type(adds) is int
        and 0 <= adds <= _CORE_MAX_ADDS
        and type(max_moves) is int
        and 0 <= max_moves <= _CORE_MAX_MOVES
    ):
        return None
    kind = type(player)
    if kind is RandomPlayer:
        return core.RANDOM, 0
    if kind is ScannerPlayer:
        return core.SCANNER, 0
    if kind is LookaheadPlayer:
        return core.LOOKAHEAD, 0
    if kind is ProximityPlayer:
        return core.PROXIMITY, 0
    param = getattr(player, _PARAMS.get(kind, ""), None)
    if type(param) is not int or not (kind is not PlannerPlayer or param >= 1) or param < 0:
        return None
    if param > _CORE_MAX_PARAM:
        return None
    if kind is OpenerPlayer:
        return core.OPENER, param
    if kind is LocalPlayer:
        return core.LOCAL, param
    return core.PLANNER, param


_PARAMS: dict[type, str] = {OpenerPlayer: "threshold", LocalPlayer: "reach", PlannerPlayer: "width"}
# what `core.play` accepts (it refuses anything else with a ValueError)
_CORE_MAX_ADDS, _CORE_MAX_MOVES, _CORE_MAX_PARAM = 64, 1_000_000, 64


def play(
    player: Player,
    cells: bytes,
    adds: int,
    rng: Random,
    *,
    record: bool = False,
    ruleset: Ruleset = DEFAULT,
    max_moves: int = MAX_PLAYER_MOVES,
) -> Playout:
    """Play one game of `player` from `cells` with `adds` adds; deterministic for `rng`'s state.

    The path is always kept (a won game is a certificate); with `record`, also each position
    where a pair was chosen (for sampling) and the legal pair count before each step. The cyclic
    garbage collector pauses during the game: a game makes no reference cycles (what it drops
    goes by reference counting), yet the collector's passes over its many short-lived positions
    cost about a tenth of a rating. Only when it collects changes, never a result.

    A game the compiled core can play (`_compiled`) is played there, from `rng`'s state, which it
    hands back advanced by the same draws.
    """
    kind = _compiled(player, ruleset, cells, adds, max_moves) if type(rng) is Random else None
    if kind is not None and core is not None:
        version, state, gauss = rng.getstate()
        mt = core.MT(state)
        (result,) = core.play(*kind, cells, adds, 1, mt, record, max_moves)
        rng.setstate((version, mt.state(), gauss))
        return _compiled_playout(result, (cells, adds) if record else None)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _play(player, cells, adds, rng, record, ruleset, max_moves)
    finally:
        if collecting:
            gc.enable()


def _play(
    player: Player,
    cells: bytes,
    adds: int,
    rng: Random,
    record: bool,
    ruleset: Ruleset,
    max_moves: int,
) -> Playout:
    """`play`'s game."""
    choose = player.begin(cells, rng, ruleset)
    _MEMO.start(cells)
    pairs = _legal(cells, ruleset)
    adds_left = adds
    out = Playout(False, 0, 0)
    path = out.path
    moves = collapses = openings = 0
    tracked, steps = ruleset.tracked_pairs, _MEMO.steps
    while cells and moves < max_moves:
        if record:
            out.pair_counts.append(len(pairs))
        pick = choose(cells, pairs, adds_left) if pairs else None
        if pick is None:  # stuck, or the player spends an add before it is stuck
            if adds_left <= 0:
                if pairs:
                    raise ValueError(f"player {player.name!r} chose to add with no add left")
                break
            cells = ruleset.add_numbers(cells)
            pairs = _legal(cells, ruleset)
            adds_left -= 1
            out.adds_used += 1
            moves += 1
            path.append(ADD)
            continue
        i, j = pick
        move = _MOVES.get(pick)
        if move is None:
            move = Move(i, j)
            if j < _SHARED_MOVES:
                _MOVES[pick] = move
        path.append(move)
        if record:
            out.positions.append((cells, adds_left, pairs))
        if tracked:  # `remove_and_track`, inlined
            key = (cells, i, j)
            step = steps.get(key)
            if step is None:
                step = _MEMO.keep(steps, key, _track(cells, pairs, i, j))
        else:
            step = remove_and_track(cells, pairs, i, j, ruleset)
        cells, pairs, collapsed, opened = step
        if collapsed:
            collapses += 1
            openings += opened
        moves += 1
    out.moves, out.collapses, out.openings = moves, collapses, openings
    out.won = not cells
    return out


_PLAY = play  # `Games` plays in the compiled core only while `play` is this one

# Moves are frozen values: the games share one per pair of cells (below `_SHARED_MOVES`)
_MOVES: dict[Pair, Move] = {}
_SHARED_MOVES = 256


@dataclass(frozen=True)
class PlayerStats:
    """A player's results over many playouts."""

    win_rate: float
    mean_moves: float
    playouts: int

    def to_dict(self) -> dict[str, float | int]:
        return {
            "win_rate": round(self.win_rate, 4),
            "mean_moves": round(self.mean_moves, 2),
            "playouts": self.playouts,
        }


class Tally(NamedTuple):
    """Sums over games, all integers (what a rating reads of them): games, wins, moves (adds
    included), pair counts recorded (`steps`: one per turn of a recorded game, none otherwise) and
    their sum (`pairs`), collapses, openings."""

    games: int = 0
    wins: int = 0
    moves: int = 0
    steps: int = 0
    pairs: int = 0
    collapses: int = 0
    openings: int = 0

    @classmethod
    def of(cls, games: Sequence[Playout]) -> Tally:
        """The sums over these games."""
        return cls(
            len(games),
            sum(g.won for g in games),
            sum(g.moves for g in games),
            sum(len(g.pair_counts) for g in games),
            sum(sum(g.pair_counts) for g in games),
            sum(g.collapses for g in games),
            sum(g.openings for g in games),
        )

    def __add__(self, other: object) -> Tally:
        if not isinstance(other, Tally):
            return NotImplemented
        return Tally(*(a + b for a, b in zip(self, other, strict=True)))

    def stats(self) -> PlayerStats:
        """The player's stats over these games (as `play_many` gives them)."""
        if not self.games:
            return PlayerStats(0.0, 0.0, 0)
        return PlayerStats(self.wins / self.games, self.moves / self.games, self.games)


@dataclass
class Games:
    """One player's games from one board so far, in its one sequence seeded by (seed, player name),
    and the `Random` that plays on. Whoever plays a board's first games (the search's screen) hands
    them to the rating, which plays only the rest: the same games, so the same rating.

    With the compiled core, the games are played there in batches and the random stream stays in
    the core between batches (`_mt`); reading `rng` brings it back into the `Random`. The first
    batch seeds the core's stream itself (`seed_key`), sparing the `Random`'s state's round trip
    through Python ints, unless the `Random` was read before."""

    player: Player
    cells: bytes
    adds: int
    seed: int
    ruleset: Ruleset = DEFAULT
    record: bool = False
    played: list[Playout] = field(default_factory=list)
    _random: Random = field(init=False, repr=False, compare=False)
    _mt: object | None = field(init=False, default=None, repr=False, compare=False)
    _kind: tuple[int, int] | bool | None = field(
        init=False, default=False, repr=False, compare=False
    )
    _fresh: bool = field(init=False, default=True, repr=False, compare=False)  # `rng` not read
    # the games played after `played` without being kept (`totals`), summed
    _tallied: Tally = field(init=False, default=Tally(), repr=False, compare=False)

    def __post_init__(self) -> None:
        self._random = Random(self._seed_text())

    def _seed_text(self) -> str:
        return f"{self.seed}:{self.player.name}"

    @property
    def rng(self) -> Random:
        """The `Random` the next game draws from (in step with the compiled core's draws)."""
        self._fresh = False
        if self._mt is not None and core is not None:
            version, _, gauss = self._random.getstate()
            self._random.setstate((version, self._mt.state(), gauss))  # type: ignore[attr-defined]
            self._mt = None
        return self._random

    def __getstate__(self) -> dict[str, Any]:
        self.rng  # noqa: B018 - brings the stream back from the core, which does not pickle
        return dict(self.__dict__)

    def play(self) -> Playout:
        """The next game."""
        self._more(1)
        return self.played[-1]

    def first(self, n: int) -> list[Playout]:
        """The first `n` games (played now if not yet; not past games only summed by `totals`)."""
        if len(self.played) < n:
            if self._tallied.games:
                raise ValueError("these games were summed by totals(), not kept: play them anew")
            self._more(n - len(self.played))
        return self.played[:n]

    def totals(self, n: int) -> Tally:
        """The sums over the first `n` games (the kept ones and those only summed so far, at least
        all of them, or only kept ones): the games not played yet are played and summed, not kept
        (in the compiled core, without making their Playouts), so that only the first ones a
        screen kept are ever objects. The numbers are those of `Tally.of(self.first(n))`."""
        kept = len(self.played)
        if n <= kept:
            return Tally.of(self.played[:n])
        done = kept + self._tallied.games
        if n < done:
            raise ValueError(f"the first {n} games were summed as {done}: play them anew")
        if n > done:
            self._tallied += self._sum_more(n - done)
        return Tally.of(self.played) + self._tallied

    def _compiled_kind(self) -> tuple[int, int] | None:
        """`core.play`'s (kind, parameter) for these games when the compiled core plays them (and
        no one has swapped `play` for another, as the reference players do), else None."""
        if self._kind is False:  # worked out once: the fields it reads do not change
            self._kind = _compiled(
                self.player, self.ruleset, self.cells, self.adds, MAX_PLAYER_MOVES
            )
        kind = self._kind
        if not isinstance(kind, tuple) or core is None or play is not _PLAY:
            return None
        return kind

    def _stream(self) -> object:
        """The core's stream these games draw from (made from the `Random` when not yet)."""
        assert core is not None
        mt = self._mt
        if mt is None:
            if self._fresh:  # the stream `Random(seed text)` starts, seeded in the core
                mt = core.seeded_mt(seed_key(self._seed_text()))
            else:
                mt = core.MT(self._random.getstate()[1])
            self._mt = mt
            self._fresh = False
        return mt

    def _played_in_python(self, count: int) -> Iterator[Playout]:
        """`count` more games played one by one in Python, from the games' stream."""
        rng = self.rng  # read once, whatever the count (it brings the stream back from the core)
        for _ in range(count):
            yield play(
                self.player,
                self.cells,
                self.adds,
                rng,
                record=self.record,
                ruleset=self.ruleset,
            )

    def _sum_more(self, count: int) -> Tally:
        """Play `count` more games and sum them (none kept): one call to the compiled core, whose
        sums are those of its games (`Tally.of`), else one game at a time in Python."""
        kind = self._compiled_kind()
        if kind is None:
            total = Tally()
            for game in self._played_in_python(count):
                total += Tally.of((game,))
            return total
        assert core is not None
        sums = core.tally(
            *kind, self.cells, self.adds, count, self._stream(), self.record, MAX_PLAYER_MOVES
        )
        return Tally(count, *sums)

    def _more(self, count: int) -> None:
        """Play `count` more games: one batch in the compiled core when it can play them (and no
        one has swapped `play` for another, as the reference players do), else one by one."""
        kind = self._compiled_kind()
        if kind is None:
            self.played.extend(self._played_in_python(count))
            return
        assert core is not None
        mt = self._stream()
        collecting = gc.isenabled()
        gc.disable()  # as in `play`: a batch's results make no cycles, only work for the collector
        try:
            # Playouts made by the core itself, as `_compiled_playout` makes them (and out of the
            # cyclic collector's sight: they hold no containers that could lead back to them)
            self.played.extend(
                core.play(
                    *kind,
                    self.cells,
                    self.adds,
                    count,
                    mt,
                    self.record,
                    MAX_PLAYER_MOVES,
                    Playout,
                )
            )
        finally:
            if collecting:
                gc.enable()

    def serves(self, cells: bytes, adds: int, seed: int, ruleset: Ruleset, record: bool) -> bool:
        """Whether these are the games a rating of (cells, adds) with `seed` plays."""
        return (self.cells, self.adds, self.seed, self.ruleset) == (
            cells,
            adds,
            seed,
            ruleset,
        ) and self.record >= record


def seed_key(text: str) -> bytes:
    """The key `random.Random(text)` seeds its Mersenne Twister with (`core.seeded_mt`'s
    argument): as `Random.seed` does, the int of the text's UTF-8 bytes followed by their
    SHA-512, big-endian; its 32-bit words, least significant first, 4 little-endian bytes each."""
    raw = text.encode()
    a = int.from_bytes(raw + hashlib.sha512(raw).digest(), "big")
    return a.to_bytes(4 * max(1, -(-a.bit_length() // 32)), "little")


def play_many(
    player: Player,
    cells: bytes,
    adds: int,
    playouts: int,
    seed: int,
    *,
    ruleset: Ruleset = DEFAULT,
    record: bool = False,
    given: Games | None = None,
) -> tuple[PlayerStats, list[Playout]]:
    """`playouts` games from one `random.Random` seeded by (seed, player name); with `given` (this
    player's games of this board and seed so far), only those not played yet."""
    if (
        given is None
        or given.player.name != player.name
        or not given.serves(cells, adds, seed, ruleset, record)
    ):
        given = Games(player, cells, adds, seed, ruleset, record)
    games = given.first(playouts)
    if not games:
        return PlayerStats(0.0, 0.0, 0), games
    wins = sum(g.won for g in games)
    return PlayerStats(
        wins / len(games), sum(g.moves for g in games) / len(games), len(games)
    ), games
