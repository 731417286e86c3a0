"""The one table of difficulty tiers. Everything that names a tier reads it from here.

A rating's `score` runs 0-100 and rises as simulated players' win rates fall; the tier is the
row whose [low, high) range holds the score (the last row includes 100). A Stage that cannot be
won gets the tier `unsolvable` and no score.

The thresholds were tuned with the score's weights on ~600 random and generated boards (27 and
35 cells, 0-3 adds; `make bench` shows the check): every tier occurs, and each harder tier has
a lower mean win rate for every simulated player, including player models the score does not
use. Of such boards about a fifth are easy, two fifths medium, a quarter hard, an eighth expert.
"""

from __future__ import annotations

# (tier, low score inclusive, high score exclusive)
TIERS: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 30.0),  # most players win most games
    ("medium", 30.0, 52.0),  # careless play loses about half the time
    ("hard", 52.0, 72.0),  # even the careful lookahead player wins only about half
    ("expert", 72.0, 100.0),  # about 9 in 10 simulated games are lost, whoever plays
)
TIER_NAMES: tuple[str, ...] = tuple(t[0] for t in TIERS)
UNSOLVABLE = "unsolvable"

# The rating version new ratings are made by (a difficulty block's `version`; absent means 1),
# and each version's tier table: a stored rating is checked against its own version's table.
RATING_VERSION = 1
TIERS_BY_VERSION: dict[int, tuple[tuple[str, float, float], ...]] = {1: TIERS, 2: TIERS}


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
