"""Rating profiles: the score and the tiers for one game's own audience (`numbermatch calibrate`).

The default score (rating versions 3 and 4) is the percentage of games lost by a player drawn from a
stated mix of the rating's simulated players (`pipeline.rating.score.WEIGHTS_V3`). A profile
keeps that meaning and changes the mix: its weights say how the game's players are made of the
same simulated players, fitted to their play telemetry; its tier table says where this
audience's tiers lie. Because a stored difficulty block holds every player's win rate, a profile
scores a puzzle from the file alone, without replaying a game (`score_under`).

A puzzle rated under a profile records it in its difficulty block (`profile`: name, digest,
weights and tier table, embedded so that a file stays checkable on its own, wherever it is
copied); the validator recomputes the score from the embedded weights and checks the digest, and
`validate --profile FILE` also checks that it is FILE's profile. The digest covers everything
that decides a score and a tier (name, rating version, weights, tiers), so two files with the
same digest rate every puzzle alike.

Pure values and arithmetic only: reading and writing profile files is `pipeline.formats`'s job.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipeline.errors import NumberMatchError
from pipeline.rating.tiers import TIER_NAMES, TIERS, tier_for
from pipeline.rating.versions import (
    VERSIONS,
    WEIGHTS_V3,
    score_from_metrics,
    stored_score,
    stored_tier,
)

if TYPE_CHECKING:  # the score module plays games; the validator reads profiles without loading it
    from pipeline.rating.score import Rating

PROFILE_VERSION = 3  # the rating version whose players a profile weighs (their stored win rates)
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
WEIGHT_TOLERANCE = 1e-6  # weights must sum to 1 within this
PLAYER_NAMES: tuple[str, ...] = VERSIONS[PROFILE_VERSION].players  # whom a profile weighs


class ProfileError(NumberMatchError):
    """A rating profile that is not well formed (names the profile and what is wrong)."""


@dataclass(frozen=True)
class RatingProfile:
    """A mix of the rating's players (weights summing to 1) and a tier table for one audience.

    >>> RatingProfile.default().score({"players": {n: {"win_rate": 1.0} for n in PLAYER_NAMES}})
    0.0
    """

    name: str
    weights: tuple[tuple[str, float], ...]
    tiers: tuple[tuple[str, float, float], ...] = TIERS
    version: int = PROFILE_VERSION

    def __post_init__(self) -> None:
        where = f"rating profile {self.name!r}"
        if not isinstance(self.name, str) or not NAME_PATTERN.fullmatch(self.name):
            raise ProfileError(f"{where}: the name must be 1-64 letters, digits, '.', '_' or '-'")
        if self.version != PROFILE_VERSION:
            raise ProfileError(
                f"{where}: weighs rating version {self.version!r}; only version {PROFILE_VERSION} is known"
            )
        names = [n for n, _ in self.weights]
        if sorted(names) != sorted(PLAYER_NAMES) or len(set(names)) != len(names):
            raise ProfileError(
                f"{where}: weights must name each of the rating's players once: {', '.join(PLAYER_NAMES)}"
            )
        for n, w in self.weights:
            if (
                not isinstance(w, (int, float))
                or isinstance(w, bool)
                or not math.isfinite(w)
                or w < 0
            ):
                raise ProfileError(f"{where}: weight of {n} must be a number 0 or more, got {w!r}")
        total = sum(w for _, w in self.weights)
        if abs(total - 1.0) > WEIGHT_TOLERANCE:
            raise ProfileError(f"{where}: the weights must sum to 1, they sum to {total:.6f}")
        if tuple(t[0] for t in self.tiers) != TIER_NAMES:
            raise ProfileError(f"{where}: tiers must be {', '.join(TIER_NAMES)} in that order")
        edges = [self.tiers[0][1]] + [t[2] for t in self.tiers]
        if (
            edges[0] != 0.0
            or edges[-1] != 100.0
            or any(t[2] != u[1] for t, u in zip(self.tiers, self.tiers[1:]))
        ):
            raise ProfileError(
                f"{where}: the tiers must run from 0 to 100, each starting where the last ends"
            )
        if any(not (low < high) for _, low, high in self.tiers):
            raise ProfileError(f"{where}: each tier's low must be below its high")

    @classmethod
    def default(cls) -> RatingProfile:
        """Rating version 3's own mix and tiers (what a puzzle without a profile is rated by)."""
        return cls("default", tuple(WEIGHTS_V3.items()), TIERS)

    @property
    def digest(self) -> str:
        """`sha256:` and the hex digest of what decides scores and tiers (canonical JSON)."""
        core = {
            "name": self.name,
            "version": self.version,
            "weights": dict(sorted(self.weights)),
            "tiers": [list(t) for t in self.tiers],
        }
        text = json.dumps(core, sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    def scores_version(self, version: object) -> bool:
        """Whether the profile can score a block of rating `version`: one whose players are the
        ones it weighs (version 4 plays version 3's players, on more games)."""
        found = VERSIONS.get(version) if isinstance(version, int) else None
        return found is not None and found.players == VERSIONS[self.version].players

    def points(self, difficulty: Mapping[str, Any]) -> dict[str, float]:
        """Per player, the points (0-100 scale) its loss rate adds, from a block's stored win
        rates (`score_points`'s form, so both sum alike)."""
        players = difficulty["players"]
        missing = [n for n, w in self.weights if w and n not in players]
        if missing:
            raise ProfileError(
                f"rating profile {self.name!r} weighs {', '.join(missing)}, which the rating did not play"
            )
        return {n: 100.0 * w * (1.0 - float(players[n]["win_rate"])) for n, w in self.weights if w}

    def loss_rate(self, difficulty: Mapping[str, Any]) -> float:
        """The predicted share of this audience's games lost (unrounded, 0-1)."""
        return sum(self.points(difficulty).values()) / 100.0

    def score(self, difficulty: Mapping[str, Any]) -> float:
        """The score 0-100 under this profile (2 decimals), as `score_from_metrics` gives it."""
        return round(min(100.0, max(0.0, sum(self.points(difficulty).values()))), 2)

    def score_of(self, difficulty: Any) -> float | None:
        """The score of a stored block (`pipeline.formats.difficulty.Difficulty`, whose
        `score_under(profile)` asks this) under this profile; None when it has no score."""
        return None if difficulty.score is None else self.score(difficulty.data)

    def tier_for(self, score: float) -> str:
        """The tier of `score` by this profile's table (the last row includes 100)."""
        if not 0.0 <= score <= 100.0:
            raise ValueError(f"score {score!r} is outside 0-100")
        for name, low, high in self.tiers:
            if low <= score < high:
                return name
        return self.tiers[-1][0]

    def tier_range(self, name: str) -> tuple[float, float] | None:
        return next(((low, high) for t, low, high in self.tiers if t == name), None)

    def block(self) -> dict[str, Any]:
        """The `profile` mapping a difficulty block embeds (name, digest, weights, tiers)."""
        return {
            "name": self.name,
            "digest": self.digest,
            "weights": {n: w for n, w in self.weights},
            "tiers": {n: [low, high] for n, low, high in self.tiers},
        }

    @classmethod
    def from_block(cls, block: Mapping[str, Any], where: str = "profile") -> RatingProfile:
        """The profile a difficulty block embeds (or the core of a profile file); ProfileError
        naming `where` (a place in the file; "" for the file itself) when it is malformed."""
        try:
            name = block["name"]
            weights = tuple((str(n), w) for n, w in block["weights"].items())
            tiers = tuple((str(n), float(r[0]), float(r[1])) for n, r in block["tiers"].items())
            version = block.get("rating_version", PROFILE_VERSION)
        except (KeyError, AttributeError, TypeError, IndexError, ValueError) as exc:
            raise ProfileError(
                f"{where}: not a rating profile ({type(exc).__name__}: {exc})"
            ) from exc
        try:
            return cls(name, weights, tiers, version)
        except ProfileError as exc:  # it names the profile already: `where` only when a place
            raise ProfileError(f"{where}: {exc}" if where else str(exc)) from exc

    def __str__(self) -> str:
        mix = ", ".join(f"{n} {w:.2f}" for n, w in self.weights if w)
        bounds = (
            ", ".join(f"{n} <{high:g}" for n, _, high in self.tiers[:-1]) + f", {self.tiers[-1][0]}"
        )
        return f"{self.name}: {mix} (tiers {bounds})"


def profile_of(difficulty: Mapping[str, Any]) -> RatingProfile | None:
    """The profile a difficulty block was scored under, or None (rated by its version's mix)."""
    block = difficulty.get("profile")
    if block is None:
        return None
    if not isinstance(block, Mapping):
        raise ProfileError("difficulty.profile: must be a mapping")
    return RatingProfile.from_block(block, "difficulty.profile")


def rescored(difficulty: Mapping[str, Any], profile: RatingProfile | None) -> dict[str, Any]:
    """A copy of a stored difficulty block scored under `profile` (None: back to its version's
    own mix): score, tier and the `profile` record; every other key and its order kept."""
    out = {k: v for k, v in difficulty.items() if k != "profile"}
    if stored_score(out) is None:  # unsolvable: no score to move
        return out
    if profile is None:
        score = score_from_metrics(out)
        out.update(score=score, tier=tier_for(score, out.get("version", 1)))
        return out
    if not profile.scores_version(out.get("version", 1)):
        raise ProfileError(
            f"rating profile {profile.name!r} weighs rating version {profile.version}'s players; "
            f"this block is version {out.get('version', 1)} (re-rate it first)"
        )
    score = profile.score(out)
    out.update(score=score, tier=profile.tier_for(score), profile=profile.block())
    return out


def rated_under(rating: Rating, profile: RatingProfile | None) -> Rating:
    """A fresh rating's score and tier under `profile` (None: the rating as it is), with the
    profile recorded in its metrics (so `to_dict()` writes the `profile` block)."""
    if profile is None or rating.score is None:
        return rating
    block = rescored(rating.to_dict(), profile)
    return dataclasses.replace(
        rating,
        tier=stored_tier(block),
        score=stored_score(block),
        metrics={**rating.metrics, "profile": profile.block()},
    )
