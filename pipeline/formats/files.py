"""Level file I/O: which files a set of paths names, and writing Puzzles out. The assembler and
the generator work on values; this module is where they meet the file system (reading validated
Puzzles needs the validator, a layer up: `pipeline.jobs.inputs`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pipeline.atomic import write_guarded
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.schemas import schema_hint

YAML_SUFFIXES = (".yaml", ".yml")


def follow_link(folder: str, top: str, seen: set[str]) -> bool:
    """Whether a walk of the tree at real path `top` descends the symbolic link `folder` (to a
    folder): yes when it leads outside the tree (a stock kept elsewhere, shared between output
    folders) to a folder not yet visited; no for a link back into the tree (walked already, as
    itself) or a loop. `seen`: the real paths followed so far, updated."""
    real = os.path.realpath(folder)
    if real == top or real.startswith(top.rstrip(os.sep) + os.sep) or real in seen:
        return False
    if not os.path.isdir(real):
        return False
    seen.add(real)
    return True


def level_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The level files named: a file as given (whether or not it exists: callers report that), a
    folder's `*.yaml`/`*.yml` files recursively, skipping hidden folders such as `.git`, each
    folder's in sorted order; each file once. A linked folder is followed when it leads outside
    the tree (`follow_link`)."""
    out: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found: list[Path] = []
            top, followed = os.path.realpath(path), set[str]()
            for root, dirs, files in os.walk(path, followlinks=True):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if not d.startswith(".")
                    and (
                        not os.path.islink(os.path.join(root, d))
                        or follow_link(os.path.join(root, d), top, followed)
                    )
                )
                found.extend(Path(root) / f for f in files if f.endswith(YAML_SUFFIXES))
            candidates = sorted(found)
        else:
            candidates = [path]
        for c in candidates:
            key = Path(os.path.realpath(c))  # a loop of links is a file the reader reports
            if key not in seen:
                seen.add(key)
                out.append(c)
    return out


def write_puzzles(puzzles: Iterable[Puzzle], folder: str | os.PathLike[str]) -> list[Path]:
    """Write each puzzle to `<folder>/<id>.yaml` atomically (`write_guarded`: an existing file of
    another kind is refused); returns the paths."""
    hint = schema_hint("puzzle", folder)
    out = []
    for p in puzzles:
        # the guarded write, as every writer: links, modes, never over another kind of file
        path = Path(folder) / f"{p.id}.yaml"
        write_guarded(path, dump_yaml(p.to_document(), hint), kinds=("puzzle",))
        out.append(path)
    return out


__all__ = ["YAML_SUFFIXES", "follow_link", "level_files", "write_puzzles"]
