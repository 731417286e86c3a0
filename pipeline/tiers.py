"""The one table of difficulty tiers. Everything that names a tier reads it from here.

A rating's `score` runs 0-100 and rises as simulated players' win rates fall; the tier is the
row whose [low, high) range holds the score (the last row includes 100).
"""

from __future__ import annotations

# (tier, low score inclusive, high score exclusive)
TIERS: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 25.0),
    ("medium", 25.0, 50.0),
    ("hard", 50.0, 75.0),
    ("expert", 75.0, 100.0),
)
TIER_NAMES: tuple[str, ...] = tuple(t[0] for t in TIERS)
UNSOLVABLE = "unsolvable"


def tier_for(score: float) -> str:
    """The tier a score falls in; raises ValueError outside 0-100."""
    if not 0.0 <= score <= 100.0:
        raise ValueError(f"score {score!r} is outside 0-100")
    for name, low, high in TIERS:
        if low <= score < high:
            return name
    return TIERS[-1][0]


def tier_rank(name: str) -> int:
    """0 for the easiest tier; raises ValueError for an unknown name."""
    try:
        return TIER_NAMES.index(name)
    except ValueError:
        raise ValueError(f"unknown tier {name!r}: expected one of {', '.join(TIER_NAMES)}") from None
