"""A puzzle's stored difficulty block as a value: how everything reads its `score` and `tier`.

Every reader (assembler, swap, reports, the studio, the validator, the CLI) asks a `Difficulty`
for "the score of this puzzle" instead of indexing the block, so a rating profile (a designer's
view of which players matter) changes that answer in one place: `score_under(profile)`.
The keys themselves are read by `pipeline.rating.versions.stored_score`/`stored_tier` (the rating
layer reads its own blocks with them); tests/test_difficulty.py checks that nothing else indexes
a block's `score` or `tier`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pipeline.rating.tiers import UNSOLVABLE
from pipeline.rating.versions import stored_score, stored_tier


class ScoreProfile(Protocol):
    """What `score_under` needs of a rating profile (`pipeline.rating.profile.RatingProfile`): the
    score it gives a stored block, and its own tier table."""

    def score_of(self, difficulty: Difficulty) -> float | None: ...

    def tier_for(self, score: float) -> str: ...


@dataclass(frozen=True)
class Difficulty:
    """A stored rating: the tier, the score (None when unsolvable), the rating version (a block
    without `version` is version 1) and the whole block as stored (players' metrics)."""

    tier: str
    score: float | None
    version: int = 1
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Difficulty:
        """The value of a (schema-valid) difficulty block; a missing block or key reads as absent
        (tier `"None"`, score None), as the readers always treated it."""
        block = dict(data or {})
        version = block.get("version")
        return cls(
            tier=stored_tier(block),
            score=stored_score(block),
            version=version if isinstance(version, int) and not isinstance(version, bool) else 1,
            data=block,
        )

    @property
    def solvable(self) -> bool:
        return self.tier != UNSOLVABLE

    def score_under(self, profile: ScoreProfile | None = None) -> float | None:
        """The score a reader should use: the stored one, or the profile's view of this block."""
        return self.score if profile is None else profile.score_of(self)

    def tier_under(self, profile: ScoreProfile | None = None) -> str:
        """The tier that goes with `score_under(profile)` (the stored tier without a profile)."""
        if profile is None:
            return self.tier
        score = self.score_under(profile)
        return UNSOLVABLE if score is None else profile.tier_for(score)

    def score_text(self, places: int = 2) -> str:
        """`42.10`, or `none` for an unsolvable puzzle: how messages show a score."""
        return "none" if self.score is None else f"{self.score:.{places}f}"

    def __str__(self) -> str:
        return self.tier if self.score is None else f"{self.tier} (score {self.score:.2f})"


__all__ = ["Difficulty", "ScoreProfile"]
