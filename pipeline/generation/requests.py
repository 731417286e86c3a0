"""What a night, or the stock's refill for a night, asks the generator for: per tier a board size
and adds allocation (`TIER_PLANS`), and the Stage targets in score bands with a spare to choose
from. The night (`pipeline.jobs.nightly`) and the refill after it (`pipeline.stock.refill`) ask
the same way, so a refilled stock serves the next night as well as generating would."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.formats.curves import Curve
from pipeline.generation.generator import derived_seed
from pipeline.generation.strategies import default_strategy
from pipeline.rating.tiers import TIER_NAMES, tier_range

SPARE = 0.25  # generate this share more than the curve needs per tier, so the assignment can choose
BAND = 6.0  # each band of Stage targets asks the generator for scores within this of its middle
# a stock puzzle serves a Stage only this close to its target, the window the generator takes
# around a target (wider, the nearest-first draw and the missing spare leave nights further from
# their curve than generated ones; docs/stock.md)
TOLERANCE = BAND


@dataclass(frozen=True)
class TierPlan:
    """Generator settings that reach a tier: board size and adds allocation."""

    cells: int
    adds: int
    strategy: str = "search"


# Chosen from what the rating gives: for each tier, a size and adds allocation whose generated
# boards often land in it (the measured shares are in docs/nightly.md: re-measure them when the
# rating changes). Hard shares medium's size, so one generator stream serves both and a board
# rated for one tier's band serves the other's. More cells and fewer adds make a Stage harder.
TIER_PLANS: dict[str, TierPlan] = {
    "easy": TierPlan(cells=27, adds=3),
    "medium": TierPlan(cells=30, adds=2),
    "hard": TierPlan(cells=30, adds=2),
    "expert": TierPlan(cells=36, adds=1),
}


def tier_plan(tier: str, cells: int | None = None, adds: int | None = None) -> TierPlan:
    """A tier's generator settings: TIER_PLANS', or with a fixed board size or adds (a game that
    fixes its Stage settings: a job's `cells: 35`, `adds: 5`) those, with the targeted strategy the
    generator defaults to at that size."""
    plan = TIER_PLANS[tier]
    if cells is None and adds is None:
        return plan
    cells = plan.cells if cells is None else cells
    adds = plan.adds if adds is None else adds
    low = (tier_range(tier) or (0.0, 100.0))[0]
    return TierPlan(cells, adds, default_strategy(True, cells, adds, low).name)


def stream_seed(seed: int, label: str) -> int:
    """The seed of one generator stream of a night or a refill (`label`: its tier, or what the
    refill batch is for), derived from the night's seed: independent streams, each reproducible."""
    return derived_seed(seed, label)


@dataclass(frozen=True)
class Band:
    """One request to the generator: `count` Puzzles of `tier` scoring within `within` of
    `score` (None: anywhere in the tier)."""

    tier: str
    score: float | None
    within: float
    count: int


def spare(need: int) -> int:
    """The puzzles generated beyond a tier's `need`, so the assignment can choose (none for none)."""
    return max(1, math.ceil(need * SPARE)) if need > 0 else 0


def shortfall(missing: int) -> int:
    """Puzzles to generate for a tier whose stock had nothing close enough for `missing` of its
    Stages: none when the stock covers it, else the missing ones plus SPARE of them for choice."""
    return missing + spare(missing)


def target_bands(tier: str, scores: Sequence[float], extra: int = 0) -> list[Band]:
    """Bands for these Stage targets of one tier: at most 2 x BAND wide, each aimed at its middle
    (so every Stage gets a Puzzle near its target), then `extra` puzzles anywhere in the tier."""
    bands: list[Band] = []
    left = sorted(scores)
    while left:
        group = [x for x in left if x <= left[0] + 2 * BAND]
        left = left[len(group) :]
        bands.append(Band(tier, round((group[0] + group[-1]) / 2, 2), BAND, len(group)))
    return bands + ([Band(tier, None, BAND, extra)] if extra else [])


def stage_bands(tier: str, scores: Sequence[float], by_score: bool) -> list[Band]:
    """The requests for Stages of one tier that nothing covers yet (`scores`: their targets): in
    bands at their targets with the spare (`by_score`), else, when the scores are not the
    curve's (a rating profile's), that many anywhere in the tier."""
    if by_score:
        return target_bands(tier, scores, spare(len(scores)))
    return [Band(tier, None, BAND, len(scores))] if scores else []


def tier_targets(
    curve: Curve, levels: int, stages: int, first_level: int
) -> dict[str, list[float]]:
    """The Stage target scores of a night, per tier (in the order the curve first needs each)."""
    found: dict[str, list[float]] = {}
    for level in curve.targets(levels, stages, first_level):
        for target in level:
            found.setdefault(target.tier, []).append(target.score)
    return found


def generation_bands(curve: Curve, levels: int, stages: int, first_level: int = 1) -> list[Band]:
    """What a night with nothing from the stock asks the generator for, tier by tier (in tier
    order): every Stage target, in bands (`target_bands`), and SPARE of the tier's need."""
    found = tier_targets(curve, levels, stages, first_level)
    return [b for tier in TIER_NAMES if tier in found for b in stage_bands(tier, found[tier], True)]


def generation_counts(
    curve: Curve, levels: int, stages: int, first_level: int = 1
) -> dict[str, int]:
    """How many Puzzles such a night generates per tier (its bands' counts added up)."""
    counts: dict[str, int] = {}
    for band in generation_bands(curve, levels, stages, first_level):
        counts[band.tier] = counts.get(band.tier, 0) + band.count
    return counts
