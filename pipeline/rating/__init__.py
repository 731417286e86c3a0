"""Difficulty: simulated players, the score built from their games, and the tier table.

`rate` and friends live in `score`; they are re-exported lazily so that importing the light
`tiers` table does not pull in the players and the solver.
"""

from __future__ import annotations

from typing import Any

DEFAULT_SEED = 0  # the players' seed when none is given: a plain re-rating reproduces a stored one

_FROM_SCORE = {"rate", "Rating", "DEFAULT_PLAYOUTS", "score_from_metrics", "hardness_terms"}


def __getattr__(name: str) -> Any:
    if name in _FROM_SCORE:
        from pipeline.rating import score

        return getattr(score, name)
    raise AttributeError(f"module 'pipeline.rating' has no attribute {name!r}")
