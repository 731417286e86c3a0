"""The puzzles telemetry may name: read from puzzle files and bundles (`--levels PATH...`).

Records name a puzzle by id, or a bundle Stage by (bundle, level, stage), which the catalogue
resolves to the id of the puzzle placed there. Every file is validated first, exactly as
`numbermatch validate` would, so a difficulty block read here is one whose score adds up.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle
from pipeline.formats.files import level_files
from pipeline.formats.loader import load_file
from pipeline.formats.puzzle import Puzzle
from pipeline.problems import first_problem
from pipeline.validator import Validator


class CatalogueError(NumberMatchError):
    """Level files that cannot be used (missing, invalid): names the file and the problem."""


@dataclass(frozen=True)
class StageRef:
    """One Stage of a bundle and the puzzle placed there."""

    bundle: str
    level: int
    stage: int
    puzzle: str
    target: float | None = None

    def __str__(self) -> str:
        return f"{self.bundle} L{self.level}.S{self.stage}"


@dataclass(frozen=True)
class Catalogue:
    """Puzzles by id (first seen kept) and every bundle Stage, in file order."""

    puzzles: dict[str, Puzzle]
    stages: tuple[StageRef, ...]

    def stage_puzzle(self, bundle: str, level: int, stage: int) -> str | None:
        return next(
            (
                s.puzzle
                for s in self.stages
                if (s.bundle, s.level, s.stage) == (bundle, level, stage)
            ),
            None,
        )

    def bundles(self) -> list[str]:
        return list(dict.fromkeys(s.bundle for s in self.stages))


def load_catalogue(paths: Iterable[str | os.PathLike[str]]) -> Catalogue:
    """Validate the level files under `paths` and read their puzzles and bundle Stages."""
    files = level_files(paths)
    if not files:
        raise CatalogueError("no level files given (--levels PATH...)")
    run = Validator()
    docs: list[dict[str, Any]] = []
    for path in files:
        if not path.is_file():
            raise CatalogueError(f"{path}: no such file")
        loaded = load_file(Path(path))
        problems = run.add_loaded(loaded, str(path))
        if problems:
            raise CatalogueError(first_problem(problems))
        if loaded.document is not None and isinstance(loaded.document.data, dict):
            docs.append(loaded.document.data)
    puzzles: dict[str, Puzzle] = {}
    stages: list[StageRef] = []
    for doc in docs:
        kind = doc.get("kind")
        if kind == "bundle":
            bundle = Bundle.from_dict(doc)
            for stage in bundle.stages:
                p = stage.puzzle
                puzzles.setdefault(p.id, p)
                stages.append(
                    StageRef(
                        bundle.id, stage.slot.level, stage.slot.stage, p.id, stage.target_score
                    )
                )
        elif kind == "puzzle":
            p = Puzzle.from_dict(doc)
            puzzles.setdefault(p.id, p)
    if not puzzles:
        raise CatalogueError("the level files hold no puzzles (puzzle files or bundles)")
    return Catalogue(puzzles, tuple(stages))
