"""The search strategy: screen many random boards with a cheap estimate, fully rate only those that may be on target.

A full rating costs some 80 ms (27 cells, 2 adds, measured 2026-12-01): seven simulated players
play about 800 games. Whether a board is trivial costs microseconds, and one game of the rating's random or
local player about 0.1 ms. Random
boards land in the rare tiers by luck (at 27/2 about 3 in 100 are expert, at 30/2 1 in 100) and
even the common tiers miss often (easy 15-20%: most boards are too hard), so the random strategy
pays a full rating for every miss. An attempt of the search strategy, still a pure function of
the params and the attempt number k:

1. **Draws** up to `DRAWS` boards from the attempt's `random.Random`, exactly as the random
   strategy draws one (the digit distribution); the first is the random strategy's board.
2. **Drops** a board that reading-order pairing clears or the solver proves unsolvable (the
   generator would reject either; an unsolvable board looks hard to the players, and its games
   would be thrown away).
3. **Screens** it in `STAGES`: the rating's two heaviest players, random (45% of the score) and
   local (30%), play the rating's own first games of the board (each player's games are one
   sequence seeded by the rating's seed and its name), each stage playing on from the last one's
   games, and a line fitted per stage (`FIT`: the two loss rates and the adds) maps them to a
   score. After each stage the board is dropped when its estimate is clearly outside every
   window of the target (a night asks for several at once): more than `BELOW` times that stage's
   error under a window's low end (1.1 of the first stage's errors, half of the later ones'), or more
   than `ABOVE` (1.5) times it over its high end (no test at 0 or 100, nor where the stage's line
   cannot reach: a few games' line is flat at the extremes); it is offered
   at once when the estimate is `INSIDE` errors within both ends (of the window's middle half for
   a score: `Window.aim`; after the last stage a score's board goes on only with its estimate
   there, so a night's Stages get puzzles near their targets). A game that cannot change the
   stage's verdict is not played (the estimate is monotone in the losses), so a clear miss costs
   at most the first stage's 6 games (about 1 ms); the last stage (192 games, a quarter of a
   rating's) decides the close calls.
4. **Offers** the boards that pass (at most `CANDIDATES` per attempt) to the generator, which
   solves each with its node budget, rates it in full and checks the target exactly as for a
   random board. The rating takes over the games the screen played (`Games`) and plays only the
   rest, so a board that passes the last stage has a quarter of its rating done, and the rating is
   the one a plain `rate` gives. An attempt is small (`DRAWS` 16,
   one candidate) so that little work is lost when a run ends with attempts running ahead on
   other workers.

Why a screen and not a climb toward the target (the previous design): a climb changes boards
toward what the estimate likes, and aiming inside a tier moves the accepted puzzles within it.
Measured on the held-out players (below), a climb's easy puzzles were easier for them than
random's easy puzzles. A screen changes nothing: the accepted puzzles are random's puzzles of the
target minus the few whose estimate misses by more than the margin. The margins are one-sided
on purpose: a board dropped at the high end is one of the hardest of its window, so that margin
is the wider (`ABOVE` 1.5 errors: with the rating's own games a board that far over mostly rates
over too; at 2 the screen could not tell 36 cells/1 add's hard boards from the expert ones just
above, and was no faster than random there), while a board dropped at
the low end is one of the easiest, so that margin is tight (`BELOW`: half an error after the
first stage): what the screen loses makes the search's puzzles, if anything, harder than
random's, never easier. And since
rare targets cost only cheap games per miss, the screen gains most where random is slowest.
The screen's games are the rating's own: they carry no information beyond the rating's, so a
drop near a window's edge is one the full rating would mostly make too (the margins keep the
lopsided direction), and none of its work is done twice.

`FIT` is least squares on 1,250 solvable random boards (250 each at 27 cells/2 adds, 27/3, 30/2,
30/1 and 36/1; scores 3-99, rating version 3; `python -m research.fit_screen`): errors 11.2, 6.3
and 4.6 points RMS after 4+2, 32+16 and 128+64 of the rating's games (the full counts, 416+256,
would still leave 3.7: the other five players' quarter of the score). Whether the search fools
the score (its puzzles lost by the score's players but not by others) is checked against the
rating study's held-out players (`make bench`, tests/test_generation_search.py): they must lose
the search's puzzles of a tier at least as often as random's.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from pipeline.engine.rulesets import Ruleset
from pipeline.generation.proposals import DigitDistribution, Proposal, reading_order_reduction
from pipeline.rating import DEFAULT_SEED
from pipeline.solver.budgets import DEFAULT_SOLVE_NODES
from pipeline.solver.search import UNSOLVABLE, solve
from pipeline.rating.players import Games, LocalPlayer, Player, RandomPlayer

# (random's games, local's games) played by the end of each stage; a stage plays on from the last
STAGES: tuple[tuple[int, int], ...] = ((4, 2), (32, 16), (128, 64))
# per stage: score ~ intercept + a * random's loss rate + b * local's + c * adds, and its RMS error
FIT: dict[tuple[int, int], tuple[float, float, float, float, float]] = {
    (4, 2): (59.40, 25.03, 13.74, -12.71, 11.16),
    (32, 16): (14.11, 55.66, 27.91, -3.79, 6.29),
    (128, 64): (1.13, 63.88, 32.36, -1.17, 4.55),
}
# drop a board whose estimate is more than this many of the stage's errors under the window ...
# (the first stage's line tops out at 72.8 at 2 adds: 1.1 of its errors under expert's 84, so there
# a board that lost all 6 games goes on and one that won any is dropped; see `Window.outside`)
BELOW: dict[tuple[int, int], float] = {(4, 2): 1.1, (32, 16): 0.5, (128, 64): 0.5}
ABOVE = 1.5  # ... or this many over it (wider: a board lost at the top is one of the hardest)
INSIDE = 0.5  # offer a board at once when its estimate is this many errors inside both bounded ends
DRAWS = 16  # random boards screened per attempt
CANDIDATES = 1  # boards offered to the full rating per attempt
_PLAYERS: tuple[Player, Player] = (RandomPlayer(), LocalPlayer())


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

    def outside(self, estimate: float, error: float, below: float, most: float | None = None,
                reach: tuple[float, float] = (0.0, 100.0)) -> bool:
        """Whether an estimate with this RMS error puts a board clearly off target: more than
        `below` errors under `low` or ABOVE errors over `high` (never under 0 or over 100). With
        `most`, for every estimate from `estimate` up to `most` (on the same side). `reach`: the
        lowest and highest estimate the stage's line can give (every game won, every game lost):
        a margin the line cannot reach says nothing (a few games' line is flat at the extremes:
        it would drop a board that lost, or won, every game)."""
        most, low, high = estimate if most is None else most, self.low - below * error, self.high + ABOVE * error
        return (self.low > 0.0 and most < low <= reach[1]) or (self.high < 100.0 and reach[0] <= high < estimate)

    def inside(self, estimate: float, error: float) -> bool:
        """Whether an estimate with this RMS error puts a board clearly on target: INSIDE errors
        within each end of `aim` (an end at 0 or 100 needs no margin)."""
        low, high = self.aim()
        return (low <= 0.0 or estimate >= low + INSIDE * error) and (high >= 100.0 or estimate <= high - INSIDE * error)

    def last_call(self, estimate: float) -> bool:
        """After the last stage, a board neither clearly off nor clearly on target: a tier's goes to
        the rating (the screen only drops clear misses), a score's only with its estimate in `aim`."""
        low, high = self.aim()
        return self.score is None or low <= estimate <= high


class _Games:
    """One board's screening games so far: each stage plays on from the games already played,
    which are the rating's own first games of the two players (handed to it: `played`)."""

    def __init__(self, cells: bytes, adds: int, ruleset: Ruleset) -> None:
        self.adds = adds
        # the rating records the random player's games (its pair counts): so does the screen
        self.games = [Games(p, cells, adds, DEFAULT_SEED, ruleset, record=p.name == "random") for p in _PLAYERS]
        self.lost = [0, 0]
        self.last = 0.0  # the estimate where the last verdict was settled

    def _score(self, stage: tuple[int, int], lost_random: int, lost_local: int) -> float:
        intercept, a, b, c, _ = FIT[stage]
        return min(100.0, max(0.0, intercept + a * lost_random / stage[0] + b * lost_local / stage[1] + c * self.adds))

    def verdict(self, stage: tuple[int, int], windows: tuple[Window, ...]) -> bool | None:
        """Play `stage`'s games until its verdict is settled: False (clearly off every window),
        True (clearly on one), None (neither, after all its games; the estimate is then `last`).

        A game that cannot change the verdict is not played: the estimate is monotone in each
        loss count, so once every game left, won or lost, gives the same verdict, that is it."""
        error = FIT[stage][-1]
        reach = self._score(stage, 0, 0), self._score(stage, *stage)
        while True:
            left = [n - len(g.played) for n, g in zip(stage, self.games)]
            least = self._score(stage, *self.lost)
            most = self._score(stage, self.lost[0] + left[0], self.lost[1] + left[1])
            self.last = least
            if all(w.outside(least, error, BELOW[stage], most, reach) for w in windows):
                return False
            if any(w.inside(least, error) and w.inside(most, error) for w in windows):
                return True
            if not any(left):
                return None
            k = 0 if left[0] else 1
            self.lost[k] += not self.games[k].play().won


def passes(cells: bytes, adds: int, ruleset: Ruleset, windows: tuple[Window, ...]) -> tuple[Games, ...] | None:
    """The games played when a board goes to the full rating (not trivial, and no stage's estimate
    clearly outside every window of `windows` before one puts it clearly inside one), else None."""
    if ruleset.stack_certificate and not reading_order_reduction(cells, adds, ruleset.class_of):
        return None
    # a board the solver proves unsolvable looks hard to the players: it goes before any game
    if solve(cells, adds, ruleset=ruleset, budget_nodes=DEFAULT_SOLVE_NODES).status == UNSOLVABLE:
        return None
    games = _Games(cells, adds, ruleset)
    for stage in STAGES:
        verdict = games.verdict(stage, windows)
        if verdict is not None:
            return tuple(games.games) if verdict else None
    return tuple(games.games) if any(w.last_call(games.last) for w in windows) else None


def screen(
    cells: int, adds: int, rng: random.Random, digits: DigitDistribution, ruleset: Ruleset, windows: tuple[Window, ...]
) -> Iterator[Proposal]:
    """Candidates for one attempt: the random boards of up to DRAWS that pass the screen for any
    of `windows` (none: the first, as drawn)."""
    if not windows:
        yield Proposal(bytes(digits.draw(rng, cells)))
        return
    offered = 0
    for _ in range(DRAWS):
        board = bytes(digits.draw(rng, cells))
        played = passes(board, adds, ruleset, windows)
        if played is not None:
            yield Proposal(board, played=played)
            offered += 1
            if offered >= CANDIDATES:
                return


def settings() -> dict[str, object]:
    """The strategy's parameters, recorded in each puzzle's provenance."""
    return {"draws": DRAWS, "candidates": CANDIDATES, "stages": [list(s) for s in STAGES],
            "below": [BELOW[s] for s in STAGES], "above": ABOVE, "inside": INSIDE}
