"""Reading validated Puzzles from level files (puzzle files and bundles): the assembler's and the
designers' input. Here rather than in `formats` because it runs the validator."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pipeline.formats.bundle import Bundle
from pipeline.formats.files import level_files
from pipeline.formats.loader import load_file
from pipeline.formats.puzzle import Puzzle
from pipeline.jobs.assembler import AssemblyError
from pipeline.validator import Validator


def load_puzzles(paths: Iterable[str | Path]) -> list[Puzzle]:
    """Validate puzzle files (and bundles, whose Puzzles are reused) and read their Puzzles.

    Refuses (AssemblyError) a missing file or any validation problem, listing the problems.
    """
    # Each file is read once, by the same loader the validator uses, so a file it accepts is read
    # here exactly as it was checked.
    paths = list(paths)
    named = {Path(p).resolve() for p in paths if not Path(p).is_dir()}
    files = level_files(paths)
    if not files:
        raise AssemblyError("no puzzle files given")
    for path in files:
        if not path.is_file():
            raise AssemblyError(f"{path}: no such file")
    run = Validator()
    docs = []
    seen: set[Path] = set()
    for path in files:
        if path.resolve() in seen:  # a file named twice (itself and its folder) is one file
            continue
        seen.add(path.resolve())
        loaded = load_file(path)
        run.add_loaded(loaded, str(path))
        if loaded.document is not None:
            kind = (
                loaded.document.data.get("kind") if isinstance(loaded.document.data, dict) else None
            )
            if kind == "curves":  # a designer's curves beside the night: no puzzles in it
                if path.resolve() in named:
                    raise AssemblyError(
                        f"{path}: is a curves file, not puzzles (give it as the curve)",
                        remedy="curve",
                    )
                continue
            docs.append(loaded.document.data)
    report = run.report
    if not report.ok:
        shown = [f"{p.file}:{p.line or 0}: {p.path}: {p.message}" for p in report.problems[:10]]
        more = len(report.problems) - len(shown)
        raise AssemblyError(
            f"{len(report.problems)} validation problem(s) in the input; fix or drop those files:\n  "
            + "\n  ".join(shown)
            + (f"\n  ... and {more} more" if more else "")
        )
    puzzles: list[Puzzle] = []
    for doc in docs:
        if doc.get("kind") == "bundle":
            puzzles += [stage.puzzle for stage in Bundle.from_dict(doc).stages]
        else:
            puzzles.append(Puzzle.from_dict(doc))
    # The id is content-derived: the same Puzzle found in two files is one Puzzle (first kept).
    unique: dict[str, Puzzle] = {}
    for p in puzzles:
        unique.setdefault(p.id, p)
    return list(unique.values())
