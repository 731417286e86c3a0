"""The simulated players as they were before their positions were remembered: the baseline the
rating's benchmarks measure against, and the reference the players' tests compare with.

A copy of `pipeline.rating.players` at the commit before `_Memo`: its pair tracking, `play`, and
the players whose choice calls that tracking (a copy on purpose: the reference must not change
when the players do). Every game plays the same pairs with the same random draws, so a rating
with these players is the same rating, only slower. `reference_players()` swaps them in for the
rating's (and the generator's estimate's) games, in this process and in the worker processes it
forks, e.g. to time a night both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from random import Random
from typing import Any, Protocol

from pipeline.engine.board import CLASS, WIDTH, Line, crossing_lines
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rules import legal_pairs, remove_pair
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.limits import MAX_PLAYER_MOVES
from pipeline.rating import players as current

# the values, and the players whose choice calls nothing that changed
from pipeline.rating.players import (
    PlayerStats,
    Playout,
    ProximityPlayer,
    RandomPlayer,
    ScannerPlayer,
    Step,
)

Pair = tuple[int, int]
# A chooser returns the pair to remove, or None to use Add numbers now (only when an add is left).
Chooser = Callable[[bytes, list[Pair], int], "Pair | None"]


# --- incremental legal pairs ---------------------------------------------------------------


def _opened_through(
    cells: bytes | bytearray, x: int, found: set[Pair], lines: tuple[tuple[Line, ...], ...]
) -> None:
    """Add to `found` each pair that sees across gap x: on each straight line through x
    (reading order, vertical, both diagonals) the nearest active cells on either side, when
    their values pair. (Cells already gaps, like x, are transparent.)"""
    n = len(cells)
    cls = CLASS
    a = x - 1
    while a >= 0 and not cells[a]:
        a -= 1
    if a >= 0:
        b = x + 1
        while b < n and not cells[b]:
            b += 1
        if b < n and cls[cells[a]] == cls[cells[b]]:
            found.add((a, b))
    for back, fwd in lines[x]:
        for a in back:
            va = cells[a]
            if va:
                for b in fwd:
                    vb = cells[b]
                    if vb:
                        if cls[va] == cls[vb]:
                            found.add((a, b))
                        break
                break


def pairs_after_gaps(cells: bytes | bytearray, pairs: Sequence[Pair], i: int, j: int) -> list[Pair]:
    """The legal pairs once i and j are gaps (`cells` already has them as gaps), rows kept.

    `pairs` are the legal pairs before; only pairs through i or j change: those using i or j
    go, and cells that now see each other across i or j may pair.
    """
    found = {p for p in pairs if p[0] != i and p[1] != i and p[0] != j and p[1] != j}
    lines = crossing_lines(len(cells))
    _opened_through(cells, i, found, lines)
    _opened_through(cells, j, found, lines)
    return sorted(found)


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
        opened: set[Pair] = set()
        _opened_through(work, i, opened, lines)
        _opened_through(work, j, opened, lines)
        work[i], work[j] = vi, vj
        counts.append(total - deg[i] - deg[j] + 1 + len(opened - present))
    return counts


def counts_after(cells: bytes, pairs: Sequence[Pair], ruleset: Ruleset) -> list[int]:
    """`pair_counts_after` where the ruleset allows tracking, else by the ruleset's functions."""
    if ruleset.tracked_pairs:
        return pair_counts_after(cells, pairs)
    return [len(ruleset.legal_pairs(ruleset.remove_pair(cells, i, j))) for i, j in pairs]


def remove_and_track(
    cells: bytes, pairs: Sequence[Pair], i: int, j: int, ruleset: Ruleset = DEFAULT
) -> Step:
    """Remove pair (i, j) and return the new cells and legal pairs, noting collapse openings."""
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
    after = remove_pair(cells, i, j)
    gapped = bytearray(cells)
    gapped[i] = gapped[j] = 0
    kept = pairs_after_gaps(gapped, pairs, i, j)
    if len(after) == len(cells):
        return Step(after, kept, False, False)
    new = legal_pairs(after)
    return Step(after, new, True, _collapse_opened(gapped, kept, new, i, j))


def _collapse_opened(
    gapped: bytearray, kept: Sequence[Pair], new: Sequence[Pair], i: int, j: int
) -> bool:
    """Whether the collapsed board has a pair the same board without the collapse lacks.

    `gapped` is the board with i and j emptied but no row removed; `kept` its pairs.
    """
    gone = sorted(
        {x // WIDTH for x in (i, j) if not any(gapped[x - x % WIDTH : x - x % WIDTH + WIDTH])}
    )

    def moved(x: int) -> int:
        return x - WIDTH * sum(1 for r in gone if r < x // WIDTH)

    before = {(moved(a), moved(b)) for a, b in kept}
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
            near = [
                p
                for p in pairs
                if abs(p[0] // width - f) <= reach or abs(p[1] // width - f) <= reach
            ]
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
    where a pair was chosen (for sampling) and the legal pair count before each step.
    """
    choose = player.begin(cells, rng, ruleset)
    pairs = ruleset.legal_pairs(cells)
    adds_left = adds
    out = Playout(False, 0, 0)
    while cells and out.moves < max_moves:
        if record:
            out.pair_counts.append(len(pairs))
        pick = choose(cells, pairs, adds_left) if pairs else None
        if pick is None:  # stuck, or the player spends an add before it is stuck
            if adds_left <= 0:
                if pairs:
                    raise ValueError(f"player {player.name!r} chose to add with no add left")
                break
            cells = ruleset.add_numbers(cells)
            pairs = ruleset.legal_pairs(cells)
            adds_left -= 1
            out.adds_used += 1
            out.moves += 1
            out.path.append(ADD)
            continue
        i, j = pick
        out.path.append(Move(i, j))
        if record:
            out.positions.append((cells, adds_left, pairs))
        step = remove_and_track(cells, pairs, i, j, ruleset)
        if step.collapsed:
            out.collapses += 1
            out.openings += step.opened
        cells, pairs = step.cells, step.pairs
        out.moves += 1
    out.won = not cells
    return out


def play_many(
    player: Player,
    cells: bytes,
    adds: int,
    playouts: int,
    seed: int,
    *,
    ruleset: Ruleset = DEFAULT,
    record: bool = False,
) -> tuple[PlayerStats, list[Playout]]:
    """`playouts` games from one `random.Random` seeded by (seed, player name)."""
    rng = Random(f"{seed}:{player.name}")
    games = [
        play(player, cells, adds, rng, record=record, ruleset=ruleset) for _ in range(playouts)
    ]
    if not games:
        return PlayerStats(0.0, 0.0, 0), games
    wins = sum(g.won for g in games)
    return PlayerStats(
        wins / len(games), sum(g.moves for g in games) / len(games), len(games)
    ), games


@contextmanager
def reference_players() -> Iterator[None]:
    """While open, `pipeline.rating.players.play` plays every game with these players (the same
    player by name, or the one given when it has no namesake here)."""
    by_name = {p.name: p for p in PLAYERS}
    original = current.play

    def baseline_play(player: Player, *args: Any, **kwargs: Any) -> Any:
        return play(by_name.get(player.name, player), *args, **kwargs)

    current.play = baseline_play
    try:
        yield
    finally:
        current.play = original
