"""Target difficulty curves: for each (Level, Stage) slot, the score a Puzzle there should have.

A curve is a function of the slot's place in the bundle. Its target tier is always
`tiers.tier_for(target score)`, so tier names and ranges come only from `pipeline.rating.tiers`.
Levels and Stages are 0-based here and 1-based in bundles.

Curves (scores on the rating's 0-100 scale, placed inside the tier ranges of `tiers.TIERS`, so
they follow the table if its thresholds are retuned):

- `ramp`: each Level rises in a straight line from an easy start to a hard finish. Level 1
  starts 40% of the way into the easy range and ends 60% into the hard range; each next Level
  closes a fifth of the remaining way to 90% of the easy range (start) and 95% of the hard
  range (finish), so every Level starts and ends a little above the one before, however many
  Levels there are, while still starting easy and ending hard. A one-Stage Level is just its
  finish.
- `sawtooth`: a `ramp` that dips in the middle: the first half of the Level rises from the
  start to 60% of the way to the finish, then drops back to 30% and climbs to the finish.
  It gives the player a breather before the last push. Levels under 4 Stages are plain ramps.
- `flat`: every Stage of every Level targets the middle of the medium range: practice packs
  where the Stages differ in layout, not in difficulty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.errors import NumberMatchError
from pipeline.rating.tiers import TIER_NAMES, TIERS, tier_for

# Where ramps start and end, as fractions of the easy and the hard tier's score range.
# Each next Level closes RAMP_STEP of the remaining way from the first Level's ends to the maxima.
RAMP_START, RAMP_START_MAX = 0.40, 0.90
RAMP_END, RAMP_END_MAX = 0.60, 0.95
RAMP_STEP = 0.20


class CurveError(NumberMatchError):
    """An unknown curve name or an impossible bundle shape."""


@dataclass(frozen=True)
class Target:
    """What one slot of a bundle asks for (0-based level and stage)."""

    level: int
    stage: int
    score: float

    @property
    def tier(self) -> str:
        return tier_for(self.score)


def at(tier: str, fraction: float) -> float:
    """The score `fraction` of the way through `tier`'s range."""
    low, high = next((lo, hi) for name, lo, hi in TIERS if name == tier)
    return low + (high - low) * fraction


def _ends(level: int) -> tuple[float, float]:
    keep = (1.0 - RAMP_STEP) ** level  # share of the way still left to the maxima
    start = at("easy", RAMP_START_MAX - (RAMP_START_MAX - RAMP_START) * keep)
    end = at("hard", RAMP_END_MAX - (RAMP_END_MAX - RAMP_END) * keep)
    return start, end


def _fraction(stage: int, stages: int) -> float:
    return 1.0 if stages == 1 else stage / (stages - 1)


def ramp(level: int, stage: int, stages: int) -> float:
    start, end = _ends(level)
    return start + (end - start) * _fraction(stage, stages)


def sawtooth(level: int, stage: int, stages: int) -> float:
    start, end = _ends(level)
    if stages < 4:  # too short to dip: a plain ramp
        return ramp(level, stage, stages)
    first = (stages + 1) // 2  # Stages in the first tooth
    if stage < first:
        return start + (end - start) * 0.6 * _fraction(stage, first)
    second = stages - first
    low = start + (end - start) * 0.3
    return low + (end - low) * _fraction(stage - first, second)


def flat(level: int, stage: int, stages: int) -> float:
    return at("medium", 0.5)


CURVES: dict[str, Callable[[int, int, int], float]] = {
    "ramp": ramp,
    "sawtooth": sawtooth,
    "flat": flat,
}


def targets(curve: str, levels: int, stages: int) -> list[list[Target]]:
    """The curve's targets, one list of Stage targets per Level; scores rounded to 2 decimals."""
    try:
        fn = CURVES[curve]
    except KeyError:
        raise CurveError(f"unknown curve {curve!r}: expected one of {', '.join(CURVES)}") from None
    if levels < 1 or stages < 1:
        raise CurveError(f"a bundle needs at least 1 level of 1 stage, got {levels} x {stages}")
    return [
        [Target(level, stage, round(fn(level, stage, stages), 2)) for stage in range(stages)]
        for level in range(levels)
    ]


def shape_text(levels: int, stages: int) -> str:
    """`2 levels x 5 stages`, with the right plurals, for messages and reports."""
    return f"{levels} level{'s' if levels != 1 else ''} x {stages} stage{'s' if stages != 1 else ''}"


def tier_needs(curve: str, levels: int, stages: int) -> dict[str, int]:
    """How many Puzzles of each tier the curve needs, in tier order (tiers it needs none of left out)."""
    counts = Counter(t.tier for row in targets(curve, levels, stages) for t in row)
    return {name: counts[name] for name in TIER_NAMES if counts[name]}
