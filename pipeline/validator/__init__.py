"""The level-file validator: what CI runs on every puzzle and bundle file.

Three layers per file, each reporting everything it finds rather than stopping at the first:
parse (`loader`), schema (`schema_layer`), semantics and solvability (`semantics`, plus
`deep` on request). Library calls return a ValidationReport; only the CLI prints or exits.

    report = validate_paths(["levels/"])
    for problem in report.problems: ...
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pipeline.engine.rulesets import SHIPPED
from pipeline.errors import NumberMatchError, os_message
from pipeline.formats.files import level_files
from pipeline.formats.loader import Loaded, find_node, load_file, load_text, position
from pipeline.limits import MAX_CURVES, MAX_FILE_BYTES
from pipeline.problems import CODES, Problem, ValidationReport, internal_error
from pipeline.rating.profile import RatingProfile
from pipeline.validator.schema_layer import check as check_schema
from pipeline.validator.schema_layer import classify
from pipeline.validator.semantics import Semantics, repeat_message

__all__ = [
    "CODES",
    "PathError",
    "Problem",
    "ValidationReport",
    "Validator",
    "collect_files",
    "validate_paths",
    "validate_texts",
]


class PathError(NumberMatchError):
    """A path given to the validator that does not exist or holds no YAML file (a usage error)."""


def collect_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The files to validate: each file as given, each folder's `*.yaml`/`*.yml` recursively
    (skipping hidden folders such as `.git`), in sorted order, each file once."""
    for raw in paths:
        if not Path(raw).exists():
            raise PathError(f"{raw}: no such file or folder")
    out = level_files(paths)
    if not out:
        raise PathError(f"no YAML files (*.yaml, *.yml) found under {', '.join(map(str, paths))}")
    return out


def too_many_curves(doc: Any, name: str) -> Problem | None:
    """NM104 for a curves file holding more than `limits.MAX_CURVES` curves, else None."""
    curves = doc.data.get("curves") if isinstance(doc.data, dict) else None
    if not isinstance(curves, list) or len(curves) <= MAX_CURVES:
        return None
    node, _, _ = find_node(doc.node, ["curves"])
    line, col = position(node)
    return Problem(
        name,
        line,
        col,
        "NM104",
        f"the file holds {len(curves):,} curves; a curves file holds at most"
        f" {MAX_CURVES:,} (split it; docs/limits.md)",
        "$.curves",
    )


class Validator:
    """One validation run: feed it files (or texts) in order; ids are compared across all of them."""

    def __init__(
        self,
        *,
        deep: bool = False,
        rulesets: frozenset[int] = SHIPPED,
        on_deep: Callable[[str], None] | None = None,
        profile: RatingProfile | None = None,
    ) -> None:
        """`on_deep(file name)` is called after each puzzle's deep check (for progress displays);
        `profile`: puzzles scored under a rating profile must name this one (`validate --profile`)."""
        self.semantics = Semantics(deep=deep, rulesets=rulesets, on_deep=on_deep, profile=profile)
        self.report = ValidationReport()

    def add_loaded(self, loaded: Loaded, name: str) -> list[Problem]:
        self.report.files += 1
        problems = list(loaded.problems)
        doc = loaded.document
        if doc is not None:
            self.report.documents += 1
            try:
                kind, found = classify(doc, name)
                problems.extend(found)
                if kind == "curves" and (many := too_many_curves(doc, name)) is not None:
                    problems.append(many)  # refused before the schema walks every curve
                elif kind is not None:
                    schema_problems, bad = check_schema(doc, kind, name)
                    problems.extend(schema_problems)
                    problems.extend(self.semantics.check(doc, kind, name, bad))
            except Exception as exc:
                problems.append(internal_error(name, exc))
        problems.sort(key=lambda p: p.sort_key)
        self.report.problems.extend(problems)
        return problems

    def add_file(self, path: Path, name: str | None = None) -> list[Problem]:
        name = str(path) if name is None else name
        try:
            loaded = load_file(path, name)
        except Exception as exc:
            loaded = Loaded(None, [internal_error(name, exc)])
        return self.add_loaded(loaded, name)

    def add_text(self, text: str, name: str) -> list[Problem]:
        return self.add_loaded(load_text(text, name), name)

    def check_against(self, root: str | os.PathLike[str]) -> list[Problem]:
        """NM321 for each shipped or stock puzzle of this run whose canonical key is also in a
        file under `root` outside the run (through root's index, refreshed first): what
        pre-commit needs when only one file changed. Call after the files were added."""
        check_folder(root)
        # start-up time: the index (sqlite3) loads for a check against a folder, not for validate FILE
        from pipeline.formats.index import LevelIndex

        with LevelIndex(root) as index:
            index.refresh()
            found = index.by_keys(s.key for s in self.semantics.sightings)
            oversized = index.oversized()
        ran = {Path(s.file).resolve() for s in self.semantics.sightings}
        problems = [  # a file too large to read could hold a repeat: say it was not checked
            Problem(
                str(Path(root) / rel),
                None,
                None,
                "NM104",
                f"the file is {size:,} bytes; level files are limited to {MAX_FILE_BYTES:,} bytes,"
                " so the puzzles checked were not compared with it (split it)",
                "$",
            )
            for rel, size in oversized
            if (Path(root) / rel).resolve() not in ran
        ]
        for s in self.semantics.sightings:
            for other in found.get(s.key, ()):
                if (Path(root) / other.path).resolve() in ran:
                    continue
                if s.kind == other.kind == "stock" and s.id == other.id:
                    continue  # the same file checked out twice is NM304's business, not a repeat
                if s.kind == "bundle" or other.kind == "bundle" or s.kind == other.kind == "stock":
                    where = str(Path(root) / other.path) + (
                        f" ({other.place})" if other.place else ""
                    )
                    problems.append(
                        Problem(
                            s.file,
                            s.line,
                            s.column,
                            "NM321",
                            repeat_message(s, where, s.id, other.id, s.kind, other.kind),
                            s.path,
                        )
                    )
                    break
        self.report.problems.extend(problems)
        return problems


def check_folder(root: str | os.PathLike[str]) -> None:
    """Refuse in one line (PathError) a folder to check against that is not a readable folder,
    saying what it is: missing, a link to nothing, a loop of links, a file, unreadable."""
    try:
        info = os.stat(root)
    except FileNotFoundError:
        if os.path.islink(root):
            raise PathError(
                f"{root}: is a link to a missing folder; no folder to check against"
            ) from None
        raise PathError(f"{root}: no such folder to check against") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathError(
                f"{root}: is a loop of symbolic links (a link that leads back to itself);"
                " no folder to check against"
            ) from exc
        raise PathError(
            f"{root}: cannot be read ({os_message(exc)}); no folder to check against"
        ) from exc
    if not stat.S_ISDIR(info.st_mode):
        if stat.S_ISREG(info.st_mode):
            what = "a file"
        elif stat.S_ISFIFO(info.st_mode):
            what = "a named pipe (FIFO)"
        elif stat.S_ISSOCK(info.st_mode):
            what = "a socket"
        else:
            what = "a device"
        raise PathError(f"{root}: is {what}, not a folder to check against")
    try:
        with os.scandir(root):
            pass
    except OSError as exc:
        raise PathError(
            f"{root}: cannot be read ({os_message(exc)}); no folder to check against"
        ) from exc


def validate_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    deep: bool = False,
    rulesets: frozenset[int] = SHIPPED,
    profile: RatingProfile | None = None,
    against: str | os.PathLike[str] | None = None,
) -> ValidationReport:
    """Validate files and folders (see `collect_files`); raises PathError for a usage error.

    `rulesets`: the ruleset numbers a file may name (default: the shipped ones); `profile`: see
    `Validator`. `against`: a folder whose every level file the shipped and stock puzzles are
    checked for repeats (NM321).
    """
    run = Validator(deep=deep, rulesets=rulesets, profile=profile)
    for path in collect_files(paths):
        run.add_file(path)
    if against is not None:
        run.check_against(against)
    return run.report


def validate_texts(
    named_texts: Iterable[tuple[str, str]],
    *,
    deep: bool = False,
    rulesets: frozenset[int] = SHIPPED,
) -> ValidationReport:
    """Validate in-memory YAML texts given as (name, text) pairs, as one run."""
    run = Validator(deep=deep, rulesets=rulesets)
    for name, text in named_texts:
        run.add_text(text, name)
    return run.report
