"""The one table of difficulty tiers. Everything that names a tier reads it from here.

A rating's `score` runs 0-100 and rises as simulated players' win rates fall; the tier is the
row whose [low, high) range holds the score (the last row includes 100). A Stage that cannot be
won gets the tier `unsolvable` and no score.

Rating version 2 (the current one): the score is the percentage of games lost by a player drawn
from the rating's mix of simulated players (`pipeline.rating.score.WEIGHTS_V2`). The boundaries
sit where measured loss rates change character on the calibration boards (180 generator-like
boards, 27 and 30 cells, 1-3 adds, score bins of 8 points):
- 24: below it the careful (lookahead) and planning players lose no game; above it they start to.
- 46: from here the careful player loses about a third of its games or more.
- 70: from here even the planner loses about two games in three or more.

Measured per tier by `make rating-study` (166 boards, 27/1, 27/2, 30/1, 30/2, 27/3, 36/1; mean
loss rate per model; the last four models are not used by the score):

| tier | random | scanner | lookahead | opener | local | planner | nearest | constrained | tidy | montecarlo |
|---|---|---|---|---|---|---|---|---|---|---|
| easy | 0.24 | 0.23 | 0.00 | 0.04 | 0.25 | 0.00 | 0.25 | 0.07 | 0.41 | 0.02 |
| medium | 0.52 | 0.60 | 0.17 | 0.31 | 0.56 | 0.15 | 0.54 | 0.38 | 0.63 | 0.08 |
| hard | 0.67 | 0.69 | 0.53 | 0.43 | 0.69 | 0.48 | 0.65 | 0.61 | 0.75 | 0.21 |
| expert | 0.83 | 0.90 | 0.87 | 0.76 | 0.83 | 0.83 | 0.85 | 0.83 | 0.80 | 0.40 |
"""

from __future__ import annotations

# (tier, low score inclusive, high score exclusive); version 2. Loss rates: see the table above.
TIERS: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 24.0),  # careful and planning players ~never lose; careless ones lose 1 in 4
    ("medium", 24.0, 46.0),  # careless play loses about half; careful play about 1 in 6
    ("hard", 46.0, 70.0),  # careful and planning players lose about half; careless 2 in 3
    ("expert", 70.0, 100.0),  # the simulated players lose 3 to 9 in 10; the strongest unseen model 4 in 10
)
# Version 1 (stored ratings without a `version` key): a weighted sum of three players' loss
# rates, traps and min_adds, with round-number boundaries.
TIERS_V1: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 30.0),
    ("medium", 30.0, 52.0),
    ("hard", 52.0, 72.0),
    ("expert", 72.0, 100.0),
)
TIER_NAMES: tuple[str, ...] = tuple(t[0] for t in TIERS)
UNSOLVABLE = "unsolvable"

# The rating version new ratings are made by (a difficulty block's `version`; absent means 1),
# and each version's tier table: a stored rating is checked against its own version's table.
RATING_VERSION = 2
TIERS_BY_VERSION: dict[int, tuple[tuple[str, float, float], ...]] = {1: TIERS_V1, 2: TIERS}


def tier_range(name: str, version: int = RATING_VERSION) -> tuple[float, float] | None:
    """A tier's [low, high) score range by rating `version`'s table; None for a name not in it."""
    return next(((low, high) for tier, low, high in TIERS_BY_VERSION[version] if tier == name), None)


def tier_for(score: float, version: int = RATING_VERSION) -> str:
    """The tier a score falls in (by rating `version`'s table); raises ValueError outside 0-100."""
    if not 0.0 <= score <= 100.0:
        raise ValueError(f"score {score!r} is outside 0-100")
    table = TIERS_BY_VERSION[version]
    for name, low, high in table:
        if low <= score < high:
            return name
    return table[-1][0]
