"""The search strategy: climb toward the target score instead of waiting for a random board to land in it.

Random boards land in the rare tiers by luck (27 cells, 2 adds: about 3 in 100 are expert), and a
full rating costs about twenty times what it takes to see roughly how hard a board is. So an
attempt of the search strategy, still a pure function of the params and the attempt number k:

1. **Proposes** a random board (the digit distribution), from the attempt's `random.Random`.
2. **Estimates** its score cheaply (`estimate`): the rating's two heaviest players, random
   (weight 0.45) and local (0.30), play `ESTIMATE_GAMES` games each, and a line fitted on
   rated boards maps their loss rates to a score. Measured on 220 solvable random boards (27/2,
   30/2, 36/1, 27/3, 30/1; scores 15-98): correlation 0.945 with the full score, error 6.9 points
   RMS; random alone gives 7.9; adding scanner and proximity 6.3 for 40% more cost. The games are
   seeded apart from the rating's own (`ESTIMATE_SEED`), so a climb cannot tune a board to the
   very games that will score it: its error is independent of the rating's.
3. **Climbs** by local moves: swap two cells of different value classes. A swap keeps every
   class's count, so the parity a win needs is kept and most boards stay solvable, while the
   layout (what connects to what) changes. A move is kept when the estimate is no farther from
   the target window than before (ties kept, so the climb drifts on plateaus); at most `STEPS`
   estimates per attempt.
4. **Offers candidates**: a board whose estimate sits inside the target window (shrunk by
   `INNER_MARGIN` at each end where the window is wide enough, against the winner's curse of
   picking boards whose estimate is high by chance) goes to the generator, which solves it with
   the node budget, rates it in full and checks the target exactly as for any other strategy.
   After a miss the climb goes on from that board; at most `CANDIDATES` full ratings per attempt.

So every accepted puzzle has the full rating and a certificate; only its provenance says how it
was found. Whether the climb fools the score (finds boards the score's players lose but other
players do not) is checked against the rating study's held-out players (`make bench`,
tests/test_generation_search.py): they must lose on search-made puzzles of a tier at least as
often as on random-made ones.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from pipeline.engine.rulesets import Ruleset
from pipeline.generation.proposals import DigitDistribution, Proposal, reading_order_reduction
from pipeline.rating.players import LocalPlayer, Player, RandomPlayer, play_many
from pipeline.solver.search import SOLVED, solve

ESTIMATE_GAMES = {"random": 16, "local": 8}  # the climb's estimate
REFINED_GAMES = {"random": 128, "local": 64}  # before a board is offered
# Not the rating's seed: the estimate's games are not the score's games. The refined estimate has
# a seed of its own too: on the climb's games it would share the luck that brought the board in.
ESTIMATE_SEED = 7919
REFINED_SEED = 7927
# score ~ intercept + sum(coef[p] * loss rate of p): least squares on the 220 boards above, per game count
FIT = {16: (8.66, {"random": 57.82, "local": 24.56}), 32: (2.73, {"random": 62.38, "local": 28.31}), 128: (-1.24, {"random": 71.86, "local": 24.69})}
STEPS = 60
START_DRAWS = 6  # random boards drawn per attempt; the climb starts from the closest playable one
CANDIDATES = 3
INNER_MARGIN = 3.0
INNER_SHARE = 0.3
TIER_AIM = 0.6  # a whole tier: aim from this share of the way up (see `Window`) ...
MIN_AIM = 8.0  # ... leaving at least this many points to aim into
CLIMB_SOLVE_NODES = 2_000  # a move is kept only onto a board the solver wins within this budget
_PLAYERS: dict[str, Player] = {"random": RandomPlayer(), "local": LocalPlayer()}


def estimate(cells: bytes, adds: int, ruleset: Ruleset, games: dict[str, int] = ESTIMATE_GAMES,
             seed: int = ESTIMATE_SEED) -> float:
    """A cheap estimate of the rating's score (0-100) from a few games of its heaviest players."""
    raw, coef = FIT[games["random"]]
    for name, n in games.items():
        stats, _ = play_many(_PLAYERS[name], cells, adds, n, seed, ruleset=ruleset)
        raw += coef[name] * (1.0 - stats.win_rate)
    return min(100.0, max(0.0, raw))


@dataclass(frozen=True)
class Window:
    """The target score range [low, high] the climb aims into (inclusive; from a tier or score).

    `upper`: a whole tier was asked for. The climb then aims at its upper part (from TIER_AIM of
    the way up): random boards of the easier tiers crowd the top of their tier, and puzzles that
    sit lower would be easier than random's puzzles of the same tier, which the held-out check
    (random's puzzles against the search's, tier by tier) would rightly count against the search.
    """

    low: float
    high: float
    upper: bool = False

    def aim(self) -> tuple[float, float]:
        """The window shrunk by INNER_MARGIN at each end (as far as its width allows); a tier's
        from TIER_AIM of the way up, as far as MIN_AIM points are left."""
        width = self.high - self.low
        margin = min(max(INNER_MARGIN, INNER_SHARE * width), width / 4)
        if not self.upper:
            return self.low + margin, self.high - margin
        top = self.high - min(margin, INNER_MARGIN)
        return max(self.low + margin, min(self.low + TIER_AIM * width, top - MIN_AIM)), top

    def distance(self, score: float) -> float:
        low, high = self.aim()
        return max(0.0, low - score, score - high)


def _swap(cells: bytes, rng: random.Random, class_of: bytes) -> bytes:
    """The board with two cells of different value classes swapped (the same board if all share one)."""
    n = len(cells)
    for _ in range(16):
        i, j = rng.randrange(n), rng.randrange(n)
        if class_of[cells[i]] != class_of[cells[j]]:
            out = bytearray(cells)
            out[i], out[j] = out[j], out[i]
            return bytes(out)
    return cells


def _playable(cells: bytes, adds: int, ruleset: Ruleset) -> bool:
    """Worth climbing onto: not trivial (where that test is sound) and won by the solver on a small budget."""
    if ruleset.stack_certificate and not reading_order_reduction(cells, adds, ruleset.class_of):
        return False
    return solve(cells, adds, ruleset=ruleset, budget_nodes=CLIMB_SOLVE_NODES).status == SOLVED


def climb(
    cells: int, adds: int, rng: random.Random, digits: DigitDistribution, ruleset: Ruleset, window: Window | None
) -> Iterator[Proposal]:
    """Candidates for one attempt: a random board climbed toward `window` (None: the board as drawn)."""
    board = bytes(digits.draw(rng, cells))
    if window is None:
        yield Proposal(board)
        return
    # start from the best of a few playable draws: most of a climb is the way to the window
    starts = [board] + [bytes(digits.draw(rng, cells)) for _ in range(START_DRAWS - 1)]
    scored = [(window.distance(estimate(b, adds, ruleset)), k, b) for k, b in enumerate(starts) if _playable(b, adds, ruleset)]
    if not scored:
        yield Proposal(board)  # the generator rejects it as it would any random board
        return
    here, _, board = min(scored)
    offered = 0
    for _ in range(STEPS):
        if here == 0.0:
            if window.distance(estimate(board, adds, ruleset, REFINED_GAMES, REFINED_SEED)) == 0.0:
                yield Proposal(board)
                offered += 1
                if offered >= CANDIDATES:
                    return
            else:
                here = INNER_MARGIN  # the refined estimate says no: climb on
        trial = _swap(board, rng, ruleset.class_of)
        there = window.distance(estimate(trial, adds, ruleset))
        if there <= here and _playable(trial, adds, ruleset):
            board, here = trial, there


def settings() -> dict[str, object]:
    """The strategy's parameters, recorded in each puzzle's provenance."""
    return {"start_draws": START_DRAWS, "steps": STEPS, "candidates": CANDIDATES, "estimate_games": dict(ESTIMATE_GAMES),
            "refined_games": dict(REFINED_GAMES), "estimate_seed": ESTIMATE_SEED, "refined_seed": REFINED_SEED, "inner_margin": INNER_MARGIN, "tier_aim": TIER_AIM,
            "climb_solve_nodes": CLIMB_SOLVE_NODES}
