"""Difficulty: simulated players, the score built from their games, and the tier table.

`rate` and friends live in `score`, the light tier table in `tiers`: import them from there, so
that reading the tier table does not pull in the players and the solver.
"""

from __future__ import annotations

DEFAULT_SEED = 0  # the players' seed when none is given: a plain re-rating reproduces a stored one
# The confirmation draw (rating versions that confirm, from 4 on): the generator accepts a board on
# a rating with DEFAULT_SEED (the screen's games are that rating's first ones), then rates it again
# with this seed, whose players' streams ("1:random", ...) share no game with seed 0's, and stores
# that second rating (`provenance.rating_seed`), so the stored score is not the one it was picked by.
CONFIRM_SEED = 1
DEFAULT_PLAYOUTS = 64  # games per simulated player at the base share (here, not in `score`: `rate --help` shows it)
