"""The search strategy: screen many random boards with a cheap estimate, fully rate only those that may be on target.

A full rating costs some 80 to 100 ms (27 to 36 cells): seven simulated players play about 800
games. Whether a board is trivial costs microseconds, and one game of the rating's random or
local player about 0.1 ms. Random boards land in the rare tiers by luck (at 27/2 about 3 in 100
are expert, at 30/2 1 in 100) and even the common tiers miss often (easy 15-20%: most boards are
too hard; at 36 cells/1 add four in ten are expert, most of them just over hard's top), so the
random strategy pays a full rating for every miss. An attempt of the search strategy, still a
pure function of the params and the attempt number k:

1. **Draws** up to `DRAWS` boards from the attempt's `random.Random`, exactly as the random
   strategy draws one (the digit distribution); the first is the random strategy's board.
2. **Drops** a board that reading-order pairing clears or the solver proves unsolvable (the
   generator would reject either; an unsolvable board looks hard to the players, and its games
   would be thrown away).
3. **Screens** it in `STAGES`, each playing on from the last one's games: the rating's own first
   games of its random (45% of the score) and local (30%) players, 4+2, 32+16, 64+32 and 128+64
   of them, and from the third stage on all the games of its four cheap players (scanner,
   proximity, lookahead, opener: a fifth of the score, known exactly once played, for about a
   tenth of a rating's cost). Each player's games are one sequence seeded by the rating's seed and
   its name. A line fitted per stage (its loss rates and the adds) maps them to a score; after
   each stage the board is dropped when its estimate is clearly outside every window of the
   target (a night asks for several at once): more than the stage's `below` errors under a
   window's low end (1.1 of the first stage's errors, half of the later ones'), or more than
   `ABOVE` (1.5) errors over its high end (no test at 0 or 100, nor where the stage's line
   cannot reach: a few games' line is flat at the extremes), nor over a window where the stage
   would drop a board from the window's middle more than `TOP_DROPS` of the time
   (`Stage.tests_top`: at 36 cells and 1 add the first stage dropped half of random's medium
   boards, choosing those whose first games went well). A stage stops as soon as no result
   of its games left could keep the board (the estimate is monotone in the losses), so a clear
   miss costs at most the first stage's 6 games (about 1 ms). After the last stage a tier's board
   goes on; a score's only with its estimate in the middle half of the window (`Window.aim`),
   so a night's Stages get puzzles near their targets.
4. **Offers** the boards that pass (at most `CANDIDATES` per attempt) to the generator, which
   solves each with its node budget, rates it in full and checks the target exactly as for a
   random board. The rating takes over the games the screen played (`Games`) and plays only the
   rest, so a board that passes has a third of its rating done, and the rating is the one a
   plain `rate` gives. So a board that will pass costs nothing to screen: there is no early
   "clearly on target" exit, every passing board meets every stage. An attempt is small
   (`DRAWS` 16, one candidate) so that little work is lost when a run ends with attempts running
   ahead on other workers.

Why a screen and not a climb toward the target (the previous design): a climb changes boards
toward what the estimate likes, and aiming inside a tier moves the accepted puzzles within it.
Measured on the held-out players (below), a climb's easy puzzles were easier for them than
random's easy puzzles. A screen changes nothing: the accepted puzzles are random's puzzles of the
target minus the few whose estimate misses by more than the margin. The margins are one-sided
on purpose: a board dropped at the high end is one of the hardest of its window, so that margin
is the wider, while a board dropped at the low end is one of the easiest, so that margin is
tight: what the screen loses makes the search's puzzles, if anything, harder than random's,
never easier. The screen's games are the rating's own: they carry no information beyond the
rating's, so a drop near a window's edge is one the full rating would mostly make too, and none
of its work is done twice. Why the cheap players: with random's and local's games alone the
estimate was 4.6 points off after 128+64 games, too coarse to tell 36 cells' hard boards from the
expert ones just over 84 (the search was no faster than random there); the cheap players' games
bring it to about 2.

Each stage's line is least squares on 1,250 solvable random boards (250 each at 27 cells/2 adds,
27/3, 30/2, 30/1 and 36/1; rating version 3; `python -m research.fit_screen` prints `STAGES`);
every slope is positive. Whether the search fools the score (its puzzles lost by the score's
players but not by others) is checked against the rating study's held-out players (`make
bench`, tests/test_generation_search.py): they must lose the search's puzzles of a tier at least
as often as random's.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from pipeline.engine.backend import COMPILED
from pipeline.engine.rulesets import Ruleset
from pipeline.generation.proposals import DigitDistribution, Proposal, reading_order_reduction
from pipeline.rating import DEFAULT_SEED
from pipeline.rating.players import PLAYERS, Games, Player
from pipeline.solver.budgets import DEFAULT_SOLVE_NODES
from pipeline.solver.search import UNSOLVABLE, solve


@dataclass(frozen=True)
class Stage:
    """One screening stage: how many of the rating's games each player has played by its end (a
    stage plays on from the last one's), and the line fitted on them: score ~ `intercept` + each
    player's loss rate times its `slopes` entry + `per_add` times the adds, with RMS `error`.
    `below`: how many errors under a window's low end drop a board after this stage."""

    games: tuple[tuple[str, int], ...]
    intercept: float
    slopes: tuple[float, ...]
    per_add: float
    error: float
    below: float

    def estimate(self, lost: Mapping[str, int], adds: int) -> float:
        """The line's score (clamped to 0-100) for these loss counts out of the stage's games."""
        line = (
            self.intercept
            + self.per_add * adds
            + sum(
                slope * lost.get(name, 0) / games
                for (name, games), slope in zip(self.games, self.slopes)
            )
        )
        return min(100.0, max(0.0, line))

    @cached_property
    def terms(self) -> tuple[tuple[float, ...], ...]:
        """Each player's term of the line for 0 to all of its games lost (`estimate`'s very terms)."""
        return tuple(
            tuple(slope * k / games for k in range(games + 1))
            for (_, games), slope in zip(self.games, self.slopes)
        )

    def line(self, lost: Sequence[int], adds: int) -> float:
        """`estimate` for loss counts (each 0 to its games) in the order of `games`, its terms added
        one after the other (as `sum` adds floats on Python 3.11): so it never falls when a count
        grows (rounding keeps the order of sums), which the screen's batches rely on."""
        total = 0.0
        for terms, k in zip(self.terms, lost, strict=True):
            total += terms[k]
        return min(100.0, max(0.0, self.intercept + self.per_add * adds + total))

    def drops_inside(self, window: Window, adds: int) -> float:
        """The chance that this stage drops, over `window`'s top, a board in the window's middle
        whose every player loses at the middle's rate (the score is the players' weighted loss
        rate): the line at those rates, its spread from the games' draws alone (normal
        approximation), against the margin."""
        p = (window.low + window.high) / 200.0
        mean = min(100.0, self.intercept + self.per_add * adds + p * sum(self.slopes))
        spread = math.sqrt(
            sum(s * s * p * (1.0 - p) / n for (_, n), s in zip(self.games, self.slopes))
        )
        margin = window.high + ABOVE * self.error
        if window.high >= 100.0 or not spread:
            return 0.0
        return 0.5 * math.erfc((margin - mean) / (spread * math.sqrt(2.0)))

    def tests_top(self, window: Window, adds: int) -> bool:
        """Whether this stage may drop a board for being over `window` at these adds: only where it
        drops a board in the window's middle at most TOP_DROPS of the time (`drops_inside`). A
        few games' line is pulled toward the fitted boards' mean: at 36 cells and 1 add its first
        stage read random's medium boards 20 points high and dropped half of them."""
        return _tests_top(self, window, adds)


# The rating's four cheap players at their full game counts (at the default 64 playouts): they
# weigh a fifth of the score, cost about a tenth of a rating, and are known exactly once played.
_CHEAP = (("scanner", 32), ("proximity", 24), ("lookahead", 16), ("opener", 16))
# Fitted by `python -m research.fit_screen` (the stages' shapes are read from here).
STAGES: tuple[Stage, ...] = (
    Stage((("random", 4), ("local", 2)), 59.40, (25.03, 13.74), -12.71, 11.16, below=1.1),
    Stage((("random", 32), ("local", 16)), 14.11, (55.66, 27.91), -3.79, 6.29, below=0.5),
    Stage(
        (("random", 64), ("local", 32)) + _CHEAP,
        6.28,
        (42.43, 23.31, 6.65, 5.36, 10.13, 5.93),
        -1.22,
        2.98,
        below=0.5,
    ),
    Stage(
        (("random", 128), ("local", 64)) + _CHEAP,
        2.80,
        (44.42, 26.42, 6.02, 5.06, 9.57, 5.54),
        -0.57,
        2.18,
        below=0.5,
    ),
)
ABOVE = 1.5  # drop a board this many errors over a window's high end (wider than any `below`)
# a stage drops boards over a window only where it drops at most this share of the window's
# middle (`Stage.tests_top`); dropping in-window boards there selects on the first games' luck
TOP_DROPS = 0.05
DRAWS = 16  # random boards screened per attempt
CANDIDATES = 1  # boards offered to the full rating per attempt
_PLAYERS: dict[str, Player] = {p.name: p for p in PLAYERS}


@functools.cache
def _tests_top(stage: Stage, window: Window, adds: int) -> bool:
    return stage.drops_inside(window, adds) <= TOP_DROPS


# The games a stage plays at once, with the compiled core (a call costs about two of its games);
# a dropped board's extra games are thrown away with it, and a board that goes on plays all of
# the stage's games anyway. In pure Python, one at a time (no game wasted): the same results.
_AHEAD = 8 if COMPILED else 1


@dataclass(frozen=True)
class Window:
    """The target score range [low, high] (inclusive; from a tier, a score, or both). `score`: the
    score asked for, if any: the screen then aims at the window's middle half (`aim`)."""

    low: float
    high: float
    score: float | None = None

    def aim(self) -> tuple[float, float]:
        """Where the screen wants the estimate: a tier's whole range (its puzzles must stay random's),
        or for a score the middle half of the window around it (a night wants each Stage's puzzle near
        its target, and the generator accepts the whole window)."""
        if self.score is None:
            return self.low, self.high
        quarter = (self.high - self.low) / 4
        return max(self.low, self.score - quarter), min(self.high, self.score + quarter)

    def outside(
        self,
        estimate: float,
        error: float,
        below: float,
        most: float | None = None,
        reach: tuple[float, float] = (0.0, 100.0),
        top: bool = True,
    ) -> bool:
        """Whether an estimate with this RMS error puts a board clearly off target: more than
        `below` errors under `low` or ABOVE errors over `high` (never under 0 or over 100). With
        `most`, for every estimate from `estimate` up to `most` (on the same side). `reach`: the
        lowest and highest estimate the stage's line can give (every game won, every game lost):
        a margin the line cannot reach says nothing (a few games' line is flat at the extremes:
        it would drop a board that lost, or won, every game). `top` False: no test over `high`
        (`Stage.tests_top`)."""
        most, low, high = (
            estimate if most is None else most,
            self.low - below * error,
            self.high + ABOVE * error,
        )
        return (self.low > 0.0 and most < low <= reach[1]) or (
            top and self.high < 100.0 and reach[0] <= high < estimate
        )

    def last_call(self, estimate: float) -> bool:
        """After the last stage, a board not clearly off target: a tier's goes to the rating (the
        screen only drops clear misses), a score's only with its estimate in `aim`."""
        low, high = self.aim()
        return self.score is None or low <= estimate <= high


class _Games:
    """One board's screening games so far: each stage plays on from the games already played,
    which are the rating's own first games of each player (handed to it: `played`)."""

    def __init__(self, cells: bytes, adds: int, ruleset: Ruleset) -> None:
        self.cells, self.adds, self.ruleset = cells, adds, ruleset
        self.games: dict[str, Games] = {}
        self.lost: dict[str, int] = {}
        self.last = 0.0  # the last stage's estimate, once all its games are played
        self.most = 0.0  # the highest the estimate could reach when the board was dropped

    def _of(self, name: str) -> Games:
        if name not in self.games:
            # the rating records the random player's games (its pair counts): so does the screen
            self.games[name] = Games(
                _PLAYERS[name],
                self.cells,
                self.adds,
                DEFAULT_SEED,
                self.ruleset,
                record=name == "random",
            )
            self.lost[name] = 0
        return self.games[name]

    def dropped(self, stage: Stage, windows: tuple[Window, ...]) -> bool:
        """Play `stage`'s games: True as soon as the board is clearly off every window whatever the
        games left give (the estimate is monotone in each loss count: every slope is positive, so
        the games left can only move it between all won and all lost), False once all its games
        are played and it is not (the estimate is then `last`). A board that goes on plays every
        game of the stage: the next stage, or the rating, would play them anyway."""
        reach = stage.estimate({}, self.adds), stage.estimate(dict(stage.games), self.adds)
        tops = [stage.tests_top(w, self.adds) for w in windows]
        names = [name for name, _ in stage.games]
        games = [self._of(name) for name in names]
        wanted = [n for _, n in stage.games]
        lost = [self.lost[name] for name in names]
        seen = [len(g.played) for g in games]  # the games counted so far, per player

        def off() -> bool:
            left = [max(0, n - k) for n, k in zip(wanted, seen, strict=True)]
            least = stage.line(lost, self.adds)
            most = stage.line([k + m for k, m in zip(lost, left, strict=True)], self.adds)
            self.last, self.most = least, most
            return all(
                w.outside(least, stage.error, stage.below, most, reach, top)
                for w, top in zip(windows, tops, strict=True)
            )

        # Games go a few at a time (one call to the compiled core) and the test after the last of
        # them stands for the test after each: the bounds only narrow as games are played
        # (`Stage.line` is monotone in each count), so a board off after some game is off after
        # every later one. When it is off, the games are gone over one by one for the first game
        # after which it was, as when they were played one at a time.
        try:
            while not off():
                at = next((x for x, (n, k) in enumerate(zip(wanted, seen)) if k < n), None)
                if at is None:
                    return False
                game, start = games[at], seen[at]
                step = min(wanted[at] - start, _AHEAD)
                batch = game.first(start + step)[start:]
                seen[at] += step
                lost[at] += sum(not g.won for g in batch)
                if step > 1 and off():
                    seen[at], lost[at] = start, lost[at] - sum(not g.won for g in batch)
                    for g in batch:
                        seen[at] += 1
                        lost[at] += not g.won
                        if off():
                            return True
                    raise AssertionError("the screen's bounds widened")  # pragma: no cover
            return True
        finally:
            self.lost.update(zip(names, lost, strict=True))


def passes(
    cells: bytes,
    adds: int,
    ruleset: Ruleset,
    windows: tuple[Window, ...],
    estimates: list[float] | None = None,
) -> tuple[Games, ...] | None:
    """The games played when a board goes to the full rating (not trivial, and no stage's estimate
    clearly outside every window of `windows`; for a score, the last one in its aim), else None.
    `estimates`: gets the lowest and highest the board's estimate could be when the screen was
    done with it (one number once every stage was played)."""
    if ruleset.stack_certificate and not reading_order_reduction(cells, adds, ruleset.class_of):
        return None
    # a board the solver proves unsolvable looks hard to the players: it goes before any game
    if solve(cells, adds, ruleset=ruleset, budget_nodes=DEFAULT_SOLVE_NODES).status == UNSOLVABLE:
        return None
    games = _Games(cells, adds, ruleset)
    dropped = any(games.dropped(stage, windows) for stage in STAGES)
    if estimates is not None and games.games:
        estimates += (games.last, games.most)
    if dropped:
        return None
    return tuple(games.games.values()) if any(w.last_call(games.last) for w in windows) else None


def screen(
    cells: int,
    adds: int,
    rng: random.Random,
    digits: DigitDistribution,
    ruleset: Ruleset,
    windows: tuple[Window, ...],
) -> Generator[Proposal, None, tuple[float, float] | None]:
    """Candidates for one attempt: the random boards of up to DRAWS that pass the screen for any
    of `windows` (none: the first, as drawn). Returns (as the generator's value) the lowest and
    highest estimate the boards it screened could have (each board's bounds when the screen
    dropped it), so a run whose target no board comes near can say where the boards are
    (`generator`); None when it screened none."""
    if not windows:
        yield Proposal(bytes(digits.draw(rng, cells)))
        return None
    offered, seen = 0, list[float]()
    for _ in range(DRAWS):
        board = bytes(digits.draw(rng, cells))
        played = passes(board, adds, ruleset, windows, seen)
        if played is not None:
            yield Proposal(board, played=played)
            offered += 1
            if offered >= CANDIDATES:
                break
    return (min(seen), max(seen)) if seen else None


def settings() -> dict[str, object]:
    """The strategy's parameters, recorded in each puzzle's provenance."""
    return {
        "draws": DRAWS,
        "candidates": CANDIDATES,
        "stages": [dict(s.games) for s in STAGES],
        "below": [s.below for s in STAGES],
        "above": ABOVE,
    }
