"""Difficulty tiers: the score -> tier lookups. Everything that names a tier reads it from here;
each rating version's table is in its record (`pipeline.rating.versions`).

A rating's `score` runs 0-100 and rises as simulated players' win rates fall; the tier is the
row whose [low, high) range holds the score (the last row includes 100). A Stage that cannot be
won gets the tier `unsolvable` and no score.

Rating versions 3 and 4 (the current one: version 3 on more games): the score is defined in
`pipeline.rating.versions` (the one place its formula is written): the percentage of games lost
by a player drawn from a stated mix.
The boundaries come from measured loss rates (`make rating-calibration`, on its own sample): they
are the scores at which the strongest player's (planner's) loss rate, fitted monotone in the
score, reaches 5%, 30% and 65%. The measured loss rates per tier, per player model, are printed
by `make rating-study` (and quoted in docs/rating.md).
"""

from __future__ import annotations

from pipeline.rating.versions import VERSIONS

UNSOLVABLE = "unsolvable"

# The rating version new ratings are made by (a difficulty block's `version`; absent means 1),
# and each version's tier table: a stored rating is checked against its own version's table.
RATING_VERSION = 4
TIERS_BY_VERSION: dict[int, tuple[tuple[str, float, float], ...]] = {
    n: v.tiers for n, v in VERSIONS.items()
}
TIERS = TIERS_BY_VERSION[RATING_VERSION]
TIER_NAMES: tuple[str, ...] = tuple(t[0] for t in TIERS)


def tier_range(name: str, version: int = RATING_VERSION) -> tuple[float, float] | None:
    """A tier's [low, high) score range by rating `version`'s table; None for a name not in it."""
    return next(
        ((low, high) for tier, low, high in TIERS_BY_VERSION[version] if tier == name), None
    )


def tier_for(score: float, version: int = RATING_VERSION) -> str:
    """The tier a score falls in (by rating `version`'s table); raises ValueError outside 0-100."""
    if not 0.0 <= score <= 100.0:
        raise ValueError(f"score {score!r} is outside 0-100")
    table = TIERS_BY_VERSION[version]
    for name, low, high in table:
        if low <= score < high:
            return name
    return table[-1][0]
