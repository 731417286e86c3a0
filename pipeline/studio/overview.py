"""The bundle page's overview of a night: its Stages grouped per Level (a heading and a row of
cards each) and one compact table row per Stage, sortable by any column on the server (links
`?sort=deviation`, so sorting needs no script): deviation sorts the worst Stage first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.formats.bundle import Stage
from pipeline.formats.puzzle import Puzzle
from pipeline.rating.tiers import TIER_NAMES, UNSOLVABLE

# column key -> its heading; `sort=KEY` orders the table by it (unknown keys: the bundle's order)
COLUMNS: dict[str, str] = {
    "level": "Level",
    "stage": "Stage",
    "id": "id",
    "tier": "tier",
    "score": "score",
    "target": "target",
    "deviation": "deviation",
}
DEFAULT_SORT = "level"
_TIER_ORDER = {name: k for k, name in enumerate((*TIER_NAMES, UNSOLVABLE))}


@dataclass(frozen=True, slots=True)
class Row:
    """One Stage in the table: where it is, its puzzle (the draft's, when swapped), its score,
    its target and how far the score is from it (None when either is missing)."""

    order: int
    level: int
    stage: int
    at: str
    id: str
    tier: str
    score: float | None
    target: float | None
    changed: bool

    @property
    def deviation(self) -> float | None:
        if self.score is None or self.target is None:
            return None
        return abs(self.score - self.target)


def rows(
    shown: Sequence[tuple[Stage, Puzzle, Puzzle | None]], sort: str = DEFAULT_SORT
) -> list[Row]:
    """The table's rows for the Stages as the draft shows them (each Stage, the puzzle there and
    the one it replaces, None when unchanged), sorted by column `sort`: numbers and tiers
    ascending, except deviation (largest first); Stages without the value go last; ties keep the
    bundle's order."""
    out = []
    for k, (stage, puzzle, replaced) in enumerate(shown):
        out.append(
            Row(
                k,
                stage.slot.level,
                stage.slot.stage,
                stage.slot.short,
                puzzle.id,
                puzzle.tier,
                puzzle.rated.score,
                stage.target_score,
                replaced is not None,
            )
        )
    if sort == "deviation":
        return sorted(out, key=lambda r: (r.deviation is None, -(r.deviation or 0.0), r.order))
    if sort == "tier":
        return sorted(out, key=lambda r: (_TIER_ORDER.get(r.tier, len(_TIER_ORDER)), r.order))
    if sort == "id":
        return sorted(out, key=lambda r: (r.id, r.order))
    if sort == "stage":
        return sorted(out, key=lambda r: (r.stage, r.order))
    if sort in ("score", "target"):
        return sorted(
            out, key=lambda r: (getattr(r, sort) is None, getattr(r, sort) or 0.0, r.order)
        )
    return out


def by_level(cards: Sequence[Mapping[str, Any]]) -> list[tuple[int, list[Mapping[str, Any]]]]:
    """The cards grouped per Level, in the bundle's order: (level, its cards)."""
    groups: list[tuple[int, list[Mapping[str, Any]]]] = []
    for c in cards:
        level = c["stage"].slot.level
        if not groups or groups[-1][0] != level:
            groups.append((level, []))
        groups[-1][1].append(c)
    return groups


def total_deviation(table: Sequence[Row]) -> tuple[float, int]:
    """The sum of the Stages' deviations and how many Stages have one."""
    known = [r.deviation for r in table if r.deviation is not None]
    return sum(known), len(known)
