"""Level file I/O: which files a set of paths names, reading validated Puzzles from them, and
writing Puzzles out. The assembler and the generator work on values; this module is where they
meet the file system."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pipeline.atomic import write_atomic
from pipeline.levels.puzzle import Puzzle, dump_yaml
from pipeline.schemas import schema_hint

YAML_SUFFIXES = (".yaml", ".yml")


def level_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The level files named: a file as given (whether or not it exists: callers report that), a
    folder's `*.yaml`/`*.yml` files recursively, skipping hidden folders such as `.git`, each
    folder's in sorted order; each file once."""
    out: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found: list[Path] = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(Path(root) / f for f in files if f.endswith(YAML_SUFFIXES))
            candidates = sorted(found)
        else:
            candidates = [path]
        for c in candidates:
            key = c.resolve()
            if key not in seen:
                seen.add(key)
                out.append(c)
    return out


def load_puzzles(paths: Iterable[str | Path]) -> list[Puzzle]:
    """Validate puzzle files (and bundles, whose Puzzles are reused) and read their Puzzles.

    Refuses (AssemblyError) a missing file or any validation problem, listing the problems.
    """
    # the validator pulls in jsonschema; only load it here. Each file is read once, by the same
    # loader the validator uses, so a file it accepts is read here exactly as it was checked.
    from pipeline.levels.assembler import AssemblyError  # networkx: only for the assembler's callers
    from pipeline.validator import Validator
    from pipeline.validator.loader import load_file

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
            puzzles += [Puzzle.from_dict(stage["puzzle"]) for level in doc["levels"] for stage in level["stages"]]
        else:
            puzzles.append(Puzzle.from_dict(doc))
    # The id is content-derived: the same Puzzle found in two files is one Puzzle (first kept).
    unique: dict[str, Puzzle] = {}
    for p in puzzles:
        unique.setdefault(p.id, p)
    return list(unique.values())


def write_puzzles(puzzles: Iterable[Puzzle], folder: str | os.PathLike[str]) -> list[Path]:
    """Write each puzzle to `<folder>/<id>.yaml` atomically; returns the paths."""
    hint = schema_hint("puzzle", folder)
    return [write_atomic(Path(folder) / f"{p.id}.yaml", dump_yaml(p.to_document(), hint)) for p in puzzles]


__all__ = ["YAML_SUFFIXES", "level_files", "load_puzzles", "write_puzzles"]
