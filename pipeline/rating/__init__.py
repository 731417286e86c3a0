"""Difficulty: simulated players, the score built from their games, and the tier table.

`rate` and friends live in `score`, the light tier table in `tiers`: import them from there, so
that reading the tier table does not pull in the players and the solver.
"""

from __future__ import annotations

DEFAULT_SEED = 0  # the players' seed when none is given: a plain re-rating reproduces a stored one
DEFAULT_PLAYOUTS = 64  # games per simulated player at the base share (here, not in `score`: `rate --help` shows it)
