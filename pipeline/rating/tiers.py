"""The one table of difficulty tiers. Everything that names a tier reads it from here.

A rating's `score` runs 0-100 and rises as simulated players' win rates fall; the tier is the
row whose [low, high) range holds the score (the last row includes 100). A Stage that cannot be
won gets the tier `unsolvable` and no score.

Rating version 2 (the current one): the score is the percentage of games a player drawn from
the rating's mix of simulated players loses (`pipeline.rating.score.WEIGHTS_V2`). The boundaries
are where measured loss rates change character on the calibration boards (`make rating-study`
prints the table per player model, including four models the score does not use):
- 24: below it the careful and the planning players practically never lose; above it they start to.
- 46: from here the careful player loses about a third of its games or more.
- 70: from here even the planning player loses about two games in three or more.
The comments on each row are measured per-tier mean loss rates on the study's boards.
"""

from __future__ import annotations

# (tier, low score inclusive, high score exclusive); version 2
TIERS: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 24.0),  # careful and planning players ~never lose; blind play loses ~1 in 4
    ("medium", 24.0, 46.0),  # blind play loses about half; careful play about 1 in 5
    ("hard", 46.0, 70.0),  # careful and planning players lose about half
    ("expert", 70.0, 100.0),  # even the planner loses about 4 in 5
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
