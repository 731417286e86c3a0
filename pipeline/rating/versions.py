"""One record per rating version: which players it plays and how many games each, the weights
of its score, its tier table, the keys it stores, and the formula that recomputes a stored score.

Light on purpose (no players, no solver): the validator re-checks stored scores and tiers with
it, the score (`pipeline.rating.score`) plays the games it names, and `explain` labels its terms.
A stored block is checked against its own version's record, so older files stay valid. A new
version is one new `RatingVersion` in `VERSIONS` (and `RATING_VERSION` in `tiers` when it becomes
the one new ratings are made by).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.rating import CONFIRM_SEED, DEFAULT_SEED

MIN_ADDS_CAP = 3  # min_adds at or above this counts as fully hard

# (tier, low score inclusive, high score exclusive); version 3 (`make rating-calibration` sets the
# boundaries; loss rates per tier: `make rating-study`).
TIERS: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 41.0),  # careful and planning players lose ~1 game in 40; careless ones 1 in 4
    ("medium", 41.0, 54.0),  # careless play loses about half; careful and planning play 1 in 4 or 5
    ("hard", 54.0, 84.0),  # careful and planning players lose about half; careless 7 in 10
    (
        "expert",
        84.0,
        100.0,
    ),  # the population loses 3 in 4 to 19 in 20; the strongest unseen model about half
)
# Version 2 (boundaries from 8-point score bins of its calibration boards).
TIERS_V2: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 24.0),  # careful and planning players ~never lose; careless ones lose 1 in 4
    ("medium", 24.0, 46.0),  # careless play loses about half; careful play about 1 in 6
    ("hard", 46.0, 70.0),  # careful and planning players lose about half; careless 2 in 3
    (
        "expert",
        70.0,
        100.0,
    ),  # the simulated players lose 3 to 9 in 10; the strongest unseen model 4 in 10
)
# Version 1 (stored ratings without a `version` key; its score: `pipeline.rating.score`), with
# round-number boundaries.
TIERS_V1: tuple[tuple[str, float, float], ...] = (
    ("easy", 0.0, 30.0),
    ("medium", 30.0, 52.0),
    ("hard", 52.0, 72.0),
    ("expert", 72.0, 100.0),
)


# Version 1's hardness terms and weights (sum 1), kept to re-check stored version-1 blocks.
WEIGHTS_V1: dict[str, float] = {
    "random": 0.34,  # 1 - random player's win rate
    "scanner": 0.20,  # 1 - scanner's win rate
    "lookahead": 0.28,  # 1 - lookahead player's win rate
    "trap_density": 0.08,
    "trap_density_sampled": 0.055,
    "min_adds": 0.045,  # min(min_adds, MIN_ADDS_CAP) / MIN_ADDS_CAP; unknown counts as 1
}

# The weights of each rating version (the `version` key of a difficulty block; absent means 1).
# A stored rating is re-checked with its own version's weights and tier table, so older files
# stay valid.
# Version 2 (formula: the module docstring): the mix of simulated players a game is drawn from
# (`pipeline.rating.players.PLAYERS`); the mix is the only place the
# players' weights are stated. It leans on the blind and the planning ends of the population
# (the two habits the others sit between) and on the early adder (add timing moves loss rates
# the most at a fixed adds allocation). Traps and min_adds stay in the file as metrics but do
# not count: on the calibration boards they added nothing the players did not already show.
WEIGHTS_V2: dict[str, float] = {
    "random": 0.25,  # blind: random pairs
    "scanner": 0.10,  # hasty: first pair in reading order from where its eyes are
    "lookahead": 0.15,  # careful: one move ahead
    "opener": 0.20,  # careful, but adds early when the board runs dry
    "local": 0.10,  # narrow attention: pairs near the rows it last played
    "planner": 0.20,  # strongest: two moves ahead on its best candidates
}
# Version 3 (`WEIGHTS_V3`, which version 4, the current one, keeps): version 2's population plus the proximity habit, mixed
# with the weights `make rating-calibration` measured on its own calibration sample (the mix of
# the other players that best predicts each player's loss rate, leave-one-player-out; the
# study's models are never read). Traps are not measured any more (`trap_density` null).
# Blind and narrow play carry the mix: their loss rates are what the other habits share most
# (each player's loss rate is best predicted by a mix that leans on them); every other habit keeps
# the calibration's floor of 0.05.
WEIGHTS_V3: dict[str, float] = {
    "random": 0.45,  # blind: random pairs
    "scanner": 0.05,  # hasty: first pair in reading order from where its eyes are
    "lookahead": 0.05,  # careful: one move ahead
    "opener": 0.05,  # careful, but adds early when the board runs dry
    "local": 0.30,  # narrow attention: pairs near the rows it last played
    "planner": 0.05,  # strongest: two moves ahead on its best candidates
    "proximity": 0.05,  # near-sighted: the closest pair in reading order
}

# Which simulated players each version plays, and what share of `playouts` each gets (costly
# players play fewer games; the counts are stored, so a rating can be re-checked).
# Version 3's game counts (at the default 64 playouts) are the calibration's: for the CPU a
# version-2 rating took, the counts that make the score's sampling error smallest.
_PLAYOUT_SHARES: dict[int, dict[str, float]] = {
    1: {},
    2: {"opener": 0.5, "planner": 0.25},
    # at 64: random 416, scanner 32, lookahead 16, opener 16, local 256, planner 16, proximity 24
    3: {
        "random": 6.5,
        "scanner": 0.5,
        "lookahead": 0.25,
        "opener": 0.25,
        "local": 4.0,
        "planner": 0.25,
        "proximity": 0.375,
    },
    # Version 4: version 3's players, weights and tiers, with the games spent where the score's
    # variance is. The players' game streams are independent, so a score's variance across seeds
    # is the sum over players of (100 w)^2 p (1 - p) / n (p a win rate, n its games), at most
    # 2500 w^2 / n each; for a fixed CPU this bound is smallest with n proportional to
    # w / sqrt(cost of one of its games) (cost: `python -m pipeline.bench rating` prints it per
    # player). At 64 these counts put the bound (`sd_bound`) under 0.5 points on every board.
    # at 64: random 5376, scanner 896, lookahead 384, opener 320, local 3456, planner 192,
    # proximity 800
    4: {
        "random": 84.0,
        "scanner": 14.0,
        "lookahead": 6.0,
        "opener": 5.0,
        "local": 54.0,
        "planner": 3.0,
        "proximity": 12.5,
    },
}

# The keys of a difficulty block, in the order they are written (version 1 blocks have no
# `version`).
DIFFICULTY_KEYS = (
    "version",
    "tier",
    "score",
    "min_adds",
    "players",
    "trap_density",
    "trap_density_sampled",
    "certificate_length",
    "mean_branching",
    "collapse_openings",
)

# What each hardness term measures, in a few words: the description a table gives once beside
# the term's name (a player is called by its name, `random` ... `proximity`, everywhere else).
LABELS: dict[str, str] = {
    "random": "random pairs",
    "scanner": "first pair in reading order",
    "lookahead": "looks one move ahead",
    "opener": "adds when pairs run low",
    "local": "pairs near its last move",
    "planner": "looks two moves ahead",
    "proximity": "closest pair in reading order",
    "trap_density": "fatal first pairs",
    "trap_density_sampled": "fatal pairs along the way",
    "min_adds": "adds the board needs",
}


@dataclass(frozen=True)
class RatingVersion:
    """Everything that defines one rating version."""

    number: int
    players: tuple[str, ...]  # the simulated players it plays, by name, in play order
    weights: Mapping[str, float]  # hardness term -> weight (sum 1): players' loss rates, metrics
    playout_share: Mapping[str, float]  # player -> games per requested playout (absent: 1)
    tiers: tuple[tuple[str, float, float], ...]  # (tier, low inclusive, high exclusive)
    keys: tuple[str, ...]  # the difficulty block's keys, in written order
    traps: bool  # whether it measures trap densities (null from version 3 on)
    # whether the generator confirms an accepted board on an independent draw of games and
    # stores that second rating (`pipeline.rating.CONFIRM_SEED`; from version 4 on)
    confirms: bool = False

    def games(self, name: str, playouts: int) -> int:
        """Games player `name` plays when `playouts` games per player are asked for."""
        return max(1, round(playouts * self.playout_share.get(name, 1.0)))

    def sd_bound(self, playouts: int) -> float:
        """The most a score can vary across rating seeds (standard deviation, points) at
        `playouts`, whatever the board: every player's loss rate at its widest (p = 1/2)."""
        variance = sum(
            self.weights[name] ** 2 / self.games(name, playouts)
            for name in self.players
            if name in self.weights
        )
        return 50.0 * math.sqrt(variance)

    @property
    def labels(self) -> dict[str, str]:
        """Each weighed term's label."""
        return {name: LABELS.get(name, name) for name in self.weights}

    def __str__(self) -> str:
        return f"rating version {self.number}"


_PLAYERS_V1 = ("random", "scanner", "lookahead")
_PLAYERS_V2 = _PLAYERS_V1 + ("opener", "local", "planner")
VERSIONS: dict[int, RatingVersion] = {
    1: RatingVersion(
        1, _PLAYERS_V1, WEIGHTS_V1, _PLAYOUT_SHARES[1], TIERS_V1, DIFFICULTY_KEYS[1:], traps=True
    ),
    2: RatingVersion(
        2, _PLAYERS_V2, WEIGHTS_V2, _PLAYOUT_SHARES[2], TIERS_V2, DIFFICULTY_KEYS, traps=True
    ),
    3: RatingVersion(
        3,
        _PLAYERS_V2 + ("proximity",),
        WEIGHTS_V3,
        _PLAYOUT_SHARES[3],
        TIERS,
        DIFFICULTY_KEYS,
        traps=False,
    ),
    4: RatingVersion(
        4,
        _PLAYERS_V2 + ("proximity",),
        WEIGHTS_V3,
        _PLAYOUT_SHARES[4],
        TIERS,
        DIFFICULTY_KEYS,
        traps=False,
        confirms=True,
    ),
}
# views by version, for the code written against them
WEIGHTS_BY_VERSION: dict[int, Mapping[str, float]] = {n: v.weights for n, v in VERSIONS.items()}
PLAYOUT_SHARE_BY_VERSION: dict[int, Mapping[str, float]] = {
    n: v.playout_share for n, v in VERSIONS.items()
}
TRAPS_UNTIL = max(n for n, v in VERSIONS.items() if v.traps)  # the last version that measures traps


def version_of(difficulty: Mapping[str, Any]) -> RatingVersion:
    """The record of the version that made a stored block (no `version` key: version 1);
    ValueError for a version not known."""
    version = difficulty.get("version", 1)
    if isinstance(version, bool) or version not in VERSIONS:
        known = ", ".join(str(v) for v in VERSIONS)
        raise ValueError(f"rating version {version!r} is not known (known: {known})")
    return VERSIONS[int(version)]


def rating_version(difficulty: Mapping[str, Any]) -> int:
    """The rating version a difficulty block was made by (no `version` key: version 1)."""
    return version_of(difficulty).number


def weights_for(difficulty: Mapping[str, Any]) -> Mapping[str, float]:
    """The weights of the rating version that made `difficulty`, or of the rating profile it was
    scored under (`difficulty.profile`: `pipeline.rating.profile`, which checks the rest of it)."""
    record = version_of(difficulty)
    profile = difficulty.get("profile")
    if profile is None:
        return record.weights
    weights = profile.get("weights") if isinstance(profile, Mapping) else None
    if (
        not isinstance(weights, Mapping)
        or not set(weights) <= set(record.players)
        or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights.values()
        )
    ):
        raise ValueError(
            f"difficulty.profile.weights: not a mapping of {record}'s players to numbers"
        )
    return {str(n): float(w) for n, w in weights.items() if w}


def metric_value(difficulty: Mapping[str, Any], name: str) -> Any:
    """The stored value a hardness term is read from: a player's win rate, or the metric itself."""
    if name in version_of(difficulty).players:
        return difficulty["players"][name]["win_rate"]
    return difficulty.get(name)


def hardness_terms(difficulty: Mapping[str, Any]) -> dict[str, float]:
    """The 0-1 hardness terms the score weighs, from stored metric values alone."""
    record = version_of(difficulty)
    terms: dict[str, float] = {}
    for name in weights_for(difficulty):
        value = metric_value(difficulty, name)
        if name == "min_adds":
            terms[name] = 1.0 if value is None else min(int(value), MIN_ADDS_CAP) / MIN_ADDS_CAP
        elif name in record.players:  # a player: its loss rate
            terms[name] = 1.0 - float(value)
        else:
            terms[name] = float(value)
    return terms


def score_points(difficulty: Mapping[str, Any]) -> dict[str, float]:
    """Per hardness term, the points (0-100 scale, unrounded) it adds to the score."""
    weights = weights_for(difficulty)
    terms = hardness_terms(difficulty)
    return {name: 100.0 * weights[name] * terms[name] for name in weights}


def score_from_metrics(difficulty: Mapping[str, Any]) -> float:
    """The score 0-100 recomputed from a `difficulty` mapping's stored values (2 decimals)."""
    raw = sum(score_points(difficulty).values())
    return round(min(100.0, max(0.0, raw)), 2)


def stored_score(difficulty: Mapping[str, Any]) -> float | None:
    """A stored block's score (None when absent or not a number: an unsolvable Stage). With
    `stored_tier`, the one place a block's `score` and `tier` keys are read
    (`pipeline.formats.difficulty.Difficulty` is the value built from them)."""
    score = difficulty.get("score")
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def stored_tier(difficulty: Mapping[str, Any]) -> str:
    """A stored block's tier (`"None"` when absent, as readers always showed it)."""
    return str(difficulty.get("tier"))


def stored_rating_seed(puzzle: Mapping[str, Any] | None, version: int) -> int:
    """The seed that reproduces `puzzle`'s stored rating by `version`: its
    `provenance.rating_seed`, else the confirmation's for a block of a version that confirms (a
    bundle's Stage carries no provenance), else the default (no stored block by `version`)."""
    if not isinstance(puzzle, Mapping):
        return DEFAULT_SEED
    provenance = puzzle.get("provenance")
    seed = provenance.get("rating_seed") if isinstance(provenance, Mapping) else None
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed
    stored = puzzle.get("difficulty")
    stored_version = stored.get("version") if isinstance(stored, Mapping) else None
    if stored_version == version and version in VERSIONS and VERSIONS[version].confirms:
        return CONFIRM_SEED
    return DEFAULT_SEED
