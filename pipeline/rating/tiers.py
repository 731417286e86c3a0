"""The one table of difficulty tiers. Everything that names a tier reads it from here.

A rating's `score` runs 0-100 and rises as simulated players' win rates fall; the tier is the
row whose [low, high) range holds the score (the last row includes 100). A Stage that cannot be
won gets the tier `unsolvable` and no score.

Rating version 3 (the current one): the score is defined in `pipeline.rating.score` (the one
place its formula is written): the percentage of games lost by a player drawn from a stated mix.
The boundaries come from measured loss rates (`make rating-calibration`, on its own sample): they
are the scores at which the strongest player's (planner's) loss rate, fitted monotone in the
score, reaches 5%, 30% and 65%. The measured loss rates per tier, per player model, are printed
by `make rating-study` (and quoted in the README).
"""

from __future__ import annotations

# (tier, low score inclusive, high score exclusive); version 3 (`make rating-calibration` sets the
# boundaries; loss rates per tier: `make rating-study`).
TIERS: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 41.0),  # careful and planning players lose ~1 game in 40; careless ones 1 in 4
    ("medium", 41.0, 54.0),  # careless play loses about half; careful and planning play 1 in 4 or 5
    ("hard", 54.0, 84.0),  # careful and planning players lose about half; careless 7 in 10
    ("expert", 84.0, 100.0),  # the population loses 3 in 4 to 19 in 20; the strongest unseen model about half
)
# Version 2 (boundaries from 8-point score bins of its calibration boards).
TIERS_V2: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 24.0),  # careful and planning players ~never lose; careless ones lose 1 in 4
    ("medium", 24.0, 46.0),  # careless play loses about half; careful play about 1 in 6
    ("hard", 46.0, 70.0),  # careful and planning players lose about half; careless 2 in 3
    ("expert", 70.0, 100.0),  # the simulated players lose 3 to 9 in 10; the strongest unseen model 4 in 10
)
# Version 1 (stored ratings without a `version` key; its score: `pipeline.rating.score`), with
# round-number boundaries.
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
RATING_VERSION = 3
TIERS_BY_VERSION: dict[int, tuple[tuple[str, float, float], ...]] = {1: TIERS_V1, 2: TIERS_V2, 3: TIERS}


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
