"""A bundle document as a value: its Levels and Stages, parsed once by `Bundle.from_dict`.

Readers (the puzzle sources, swap, the studio's library) walk a `Bundle` instead of indexing a
document's `levels` and `stages`, so the shape is checked in one place and `first_level` (how a
bundle that continues an earlier night numbers its Levels) is worked out in one place. Each
`Stage` keeps where it sits in the document (`level_index`, `stage_index`) so an editor can find
its YAML node, and the stage mapping as stored (`data`) for readers that still show raw fields.
tests/test_bundle.py checks that nothing else indexes a document's `levels`/`stages`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.formats.puzzle import BUNDLE_KIND, Puzzle
from pipeline.formats.slot import Slot


class BundleError(NumberMatchError):
    """A document that is not a bundle of Levels of Stages; the message names the input and the
    JSON path of the first thing wrong."""


@dataclass(frozen=True)
class Stage:
    """One Stage: its Slot (Level numbered as the bundle numbers it), its Puzzle, the curve's
    target score (None when absent or not a number) and its place in the document."""

    slot: Slot
    puzzle: Puzzle
    target_score: float | None
    level_index: int
    stage_index: int
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def path(self) -> str:
        """The stage's JSON path in the document, `$.levels[0].stages[1]`."""
        return f"$.levels[{self.level_index}].stages[{self.stage_index}]"

    def __str__(self) -> str:
        target = "none" if self.target_score is None else f"{self.target_score:g}"
        return f"{self.slot} {self.puzzle.id} (target {target})"


@dataclass(frozen=True)
class Bundle:
    """A bundle's id, ruleset, the number of its first Level and its Stages, Level by Level."""

    id: str
    ruleset: int
    first_level: int
    levels: tuple[tuple[Stage, ...], ...]
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def stages(self) -> tuple[Stage, ...]:
        """Every Stage in play order."""
        return tuple(s for level in self.levels for s in level)

    def stage(self, slot: Slot) -> Stage | None:
        """The Stage at `slot` (its Level named as the bundle numbers it), None if there is none."""
        at = slot.level - self.first_level
        if 0 <= at < len(self.levels) and 1 <= slot.stage <= len(self.levels[at]):
            return self.levels[at][slot.stage - 1]
        return None

    def locate(self, slot: Slot, name: str) -> Stage:
        """The Stage at `slot`; BundleError naming `name` and the Levels or Stages there are."""
        found = self.stage(slot)
        if found is not None:
            return found
        numbers = self.level_numbers
        if not numbers:
            raise BundleError(f"{name}: the bundle has no Levels")
        if slot.level not in numbers:
            raise BundleError(
                f"{name}: has Levels {numbers[0]}-{numbers[-1]}; there is no L{slot.level}"
            )
        count = len(self.levels[slot.level - self.first_level])
        raise BundleError(
            f"{name}: Level {slot.level} has Stages 1-{count}; there is no S{slot.stage}"
        )

    @property
    def level_numbers(self) -> range:
        return range(self.first_level, self.first_level + len(self.levels))

    def __str__(self) -> str:
        count = sum(len(level) for level in self.levels)
        last = self.first_level + len(self.levels) - 1
        return f"{self.id}: Levels {self.first_level}-{last}, {count} Stages"

    @classmethod
    def from_dict(cls, doc: Any, name: str = "<bundle>") -> Bundle:
        """The value of a bundle document; BundleError (naming `name` and the JSON path) when it
        is not shaped as one. Contents are not validated here: that is the validator's job."""
        if not isinstance(doc, Mapping) or doc.get("kind") != BUNDLE_KIND:
            kind = doc.get("kind") if isinstance(doc, Mapping) else None
            raise BundleError(f"{name}: is not a bundle (kind {kind!r})")
        raw_levels = doc.get("levels")
        if not isinstance(raw_levels, list):
            raise BundleError(f"{name}: $.levels: expected a list of Levels")
        first = doc.get("first_level", 1)  # Levels are named as the bundle numbers them
        first = first if isinstance(first, int) and not isinstance(first, bool) else 1
        levels = []
        for li, level in enumerate(raw_levels):
            stages = level.get("stages") if isinstance(level, Mapping) else None
            if not isinstance(stages, list):
                raise BundleError(f"{name}: $.levels[{li}].stages: expected a list of stages")
            levels.append(
                tuple(_stage(stage, first + li, li, si, name) for si, stage in enumerate(stages))
            )
        ruleset = doc.get("ruleset", 1)
        return cls(
            id=str(doc.get("id")),
            ruleset=ruleset if isinstance(ruleset, int) and not isinstance(ruleset, bool) else 1,
            first_level=first,
            levels=tuple(levels),
            data=doc,
        )


def _stage(raw: Any, level: int, li: int, si: int, name: str) -> Stage:
    where = f"{name}: $.levels[{li}].stages[{si}]"
    if not isinstance(raw, Mapping):
        raise BundleError(f"{where}: expected a stage mapping")
    puzzle = raw.get("puzzle")
    if not isinstance(puzzle, Mapping):
        raise BundleError(f"{where}.puzzle: expected a puzzle mapping")
    board, adds, solution = puzzle.get("board"), puzzle.get("adds"), puzzle.get("solution") or []
    if not isinstance(board, str):
        raise BundleError(
            f"{where}.puzzle.board: expected board notation (a string), found {_kind(board)}"
        )
    if not isinstance(adds, int) or isinstance(adds, bool) or adds < 0:
        raise BundleError(
            f"{where}.puzzle.adds: expected a whole number 0 or more, found {_kind(adds)}"
        )
    if not _whole(puzzle.get("ruleset", 1)):
        raise BundleError(
            f"{where}.puzzle.ruleset: expected a whole number, found {_kind(puzzle.get('ruleset'))}"
        )
    if not isinstance(solution, list) or not isinstance(puzzle.get("difficulty") or {}, Mapping):
        raise BundleError(f"{where}.puzzle: expected a solution list and a difficulty mapping")
    try:
        value = Puzzle.from_dict(dict(puzzle))
    except (TypeError, ValueError) as exc:  # e.g. a solution move or provenance of the wrong kind
        raise BundleError(f"{where}.puzzle: {exc}") from exc
    target = raw.get("target_score")
    number = (
        float(target) if isinstance(target, (int, float)) and not isinstance(target, bool) else None
    )
    return Stage(Slot(level, si + 1), value, number, li, si, raw)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {value!r}"[:60]


__all__ = ["BUNDLE_KIND", "Bundle", "BundleError", "Stage"]
