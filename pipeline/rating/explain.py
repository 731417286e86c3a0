"""Why a puzzle is rated as it is, read from the same weights table as the score.

`explain(difficulty)` takes a stored `difficulty` mapping (a puzzle file's block, or
`Rating.to_dict()`) and returns a small frozen value: per weighed metric its stored value, its
weight and the points it adds to the score; which metrics decide the tier; and one line in plain
words. The points are computed by `pipeline.rating.score.score_points`, the function the score
itself sums, with the weights of the rating version that made the block, so the explanation can
never drift from the score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.rating.tiers import UNSOLVABLE, tier_range
from pipeline.rating.versions import (
    LABELS,
    MIN_ADDS_CAP,
    metric_value,
    rating_version,
    score_points,
    stored_score,
    stored_tier,
    weights_for,
)


@dataclass(frozen=True, slots=True)
class Part:
    """One weighed metric: its stored value, its weight and the points it adds to the score."""

    name: str
    value: float | int | None
    weight: float
    points: float

    @property
    def label(self) -> str:
        return LABELS.get(self.name, self.name)

    @property
    def share(self) -> float:
        """Points as a share of the most this metric can add (its hardness, 0-1)."""
        return self.points / (100.0 * self.weight) if self.weight else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "weight": self.weight,
            "points": round(self.points, 2),
        }


@dataclass(frozen=True, slots=True)
class Explanation:
    """What a rating is made of: `parts` (one per weighed metric, in the weights' order), the
    metrics that `decide` the tier (without their points a harder tier's floor would not be
    reached, or with full points an easier tier's ceiling would be passed) and a `summary`."""

    tier: str
    score: float | None
    version: int
    parts: tuple[Part, ...]
    decide: tuple[str, ...]
    summary: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "score": self.score,
            "version": self.version,
            "metrics": [p.to_dict() for p in self.parts],
            "decide": list(self.decide),
            "summary": self.summary,
        }

    def __str__(self) -> str:
        score = "no score" if self.score is None else f"score {self.score:.2f}"
        lines = [f"{self.tier} ({score}, rating version {self.version}): {self.summary}"]
        lines.append(f"  {'metric':<22}{'value':>8}{'weight':>8}{'points':>8}")
        for p in self.parts:
            mark = "  <- decides the tier" if p.name in self.decide else ""
            value = "null" if p.value is None else f"{p.value:g}"
            lines.append(f"  {p.name:<22}{value:>8}{p.weight:>8.3f}{p.points:>8.2f}{mark}")
        return "\n".join(lines)


def _decide(parts: tuple[Part, ...], tier: str, version: int) -> tuple[str, ...]:
    """Biggest contributors until they alone reach the tier's floor, then the metrics with the
    most points to spare until their spare points pass the room below the tier's ceiling."""
    span = tier_range(tier, version)
    if span is None:
        return ()
    low, high = span
    chosen: list[str] = []
    total = 0.0
    for p in sorted(parts, key=lambda p: (-p.points, p.name)):
        if total >= low or p.points <= 0:
            break
        chosen.append(p.name)
        total += p.points
    score = sum(p.points for p in parts)
    if high < 100.0:
        spare = 0.0
        for p in sorted(parts, key=lambda p: (-(100.0 * p.weight - p.points), p.name)):
            if score + spare >= high:
                break
            if p.name not in chosen:
                chosen.append(p.name)
            spare += 100.0 * p.weight - p.points
    order = [p.name for p in parts]
    return tuple(sorted(chosen, key=order.index))


def _phrase(p: Part) -> str:
    """The metric in plain words."""
    if p.name == "min_adds":
        if p.value is None:
            return "no one knows how few adds win it"
        n = int(p.value)
        return (
            "it can be won without adds"
            if n == 0
            else f"it cannot be won with fewer than {n} add{'s' if n != 1 else ''}"
            + ("" if n < MIN_ADDS_CAP else " (the most the score counts)")
        )
    if p.name in ("trap_density", "trap_density_sampled"):
        where = "first pairs" if p.name == "trap_density" else "pairs along the way"
        share = float(p.value or 0.0)
        if share == 0.0:
            return f"no {where} are fatal"
        return f"{share:.0%} of {where} are fatal"
    loss, who = p.share, f"the {p.name} player"  # the name the tables give it
    if loss == 0.0:
        return f"{who} wins every game"
    if loss == 1.0:
        return f"{who} loses every game"
    return (
        f"{who} loses {loss:.0%} of games" if loss >= 0.5 else f"{who} wins {1 - loss:.0%} of games"
    )


def _summary(parts: tuple[Part, ...], tier: str, decide: tuple[str, ...]) -> str:
    """One line naming the metrics that decide the tier (the table's `<- decides the tier`), the
    weightiest first: the reason given is always the one the score acted on."""
    if tier == UNSOLVABLE:
        return "Unsolvable: it cannot be won with its adds."
    deciding = sorted((p for p in parts if p.name in decide), key=lambda p: (-p.points, p.name))
    if not deciding:  # no tier table for this score: the weightiest metrics stand in
        deciding = sorted(parts, key=lambda p: (-p.points, p.name))[:2]
    phrases = [_phrase(p) for p in deciding]
    reason = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
    return f"{tier.capitalize()} because {reason}."


def explain(difficulty: Mapping[str, Any]) -> Explanation:
    """The explanation of a stored `difficulty` mapping (raises ValueError for an unknown
    rating version or missing metrics)."""
    try:
        version = rating_version(difficulty)
        weights = weights_for(difficulty)
        tier = stored_tier(difficulty)
        score = stored_score(difficulty)
        if tier == UNSOLVABLE or score is None:
            parts = tuple(
                Part(name, metric_value(difficulty, name), w, 0.0) for name, w in weights.items()
            )
            return Explanation(
                UNSOLVABLE if score is None else tier,
                None,
                version,
                parts,
                (),
                _summary(parts, UNSOLVABLE, ()),
            )
        points = score_points(difficulty)
        parts = tuple(
            Part(name, metric_value(difficulty, name), w, points[name])
            for name, w in weights.items()
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"difficulty block lacks what the score needs: {exc!r}") from exc
    decide = _decide(parts, tier, version)
    return Explanation(tier, score, version, parts, decide, _summary(parts, tier, decide))
