"""SOURCE: where a command gets its board from, so designers never copy boards out of YAML.

A SOURCE is one of (tried in this order):

- a **puzzle id** such as `nm1-3f2a9c0d1e7b`: looked up in the puzzle files and bundles given
  as `search` paths (files or folders; the CLI's `--in PATH`), by default in `generated/` (where
  the nightly job writes its nights);
- a **bundle stage** `BUNDLE:L<level>.S<stage>`, e.g. `generated/2026-11-29/bundle.yaml:L3.S2`
  (Level 3, Stage 2, both numbered from 1 as in the bundle file);
- **board notation**, e.g. `123456789/98765` (only digits, `.` and `/`); `''` is the empty board;
- a **puzzle file** path (`puzzles/nm1-3f2a9c0d1e7b.yaml`).

A puzzle's adds come with it (a command's `--adds` overrides them); a bare board has none.

Files are read with the validator's safe loader (size, depth and alias limits; one problem
line naming file, line and what is wrong), but not fully validated: a hand-edited file with a
stale id or certificate can still be shown, played and refreshed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.engine.board import parse
from pipeline.engine.rulesets import DEFAULT, SHIPPED, ruleset_for
from pipeline.engine.stage import replay
from pipeline.errors import NumberMatchError, clip
from pipeline.formats.night import NIGHTS_FOLDER
from pipeline.formats.slot import FORM, Slot, SlotError, SlotFromZero
from pipeline.problems import first_problem

if TYPE_CHECKING:
    from pipeline.atomic import Snapshot
    from pipeline.formats.loader import Document

ID_PATTERN = re.compile(r"nm\d+-[0-9a-f]{12}\Z")
_NOTATION = re.compile(r"[1-9./]*\Z")
STAGE_FORM = "BUNDLE:L<level>.S<stage>"


class SourceError(NumberMatchError):
    """A SOURCE that names nothing usable: no such file, stage or id, or a malformed file."""


@dataclass(frozen=True)
class Source:
    """What a SOURCE resolved to: the starting cells, the adds it carries (None for a bare
    board), the puzzle mapping when there is one, and a short label for messages."""

    cells: bytes
    adds: int | None
    label: str
    puzzle: dict[str, Any] | None = None
    file: Path | None = None
    ruleset: int = 1  # a shipped ruleset's number (the puzzle's; 1 for a bare board)

    def adds_or(self, override: int | None, default: int = 0) -> int:
        """The adds to play with: the override when given, else the puzzle's, else `default`."""
        if override is not None:
            return override
        return self.adds if self.adds is not None else default

    @property
    def solution(self) -> tuple[str, ...]:
        sol = (self.puzzle or {}).get("solution")
        return tuple(str(m) for m in sol) if isinstance(sol, list) else ()

    def certificate(self, adds: int) -> tuple[str, ...] | None:
        """The puzzle's stored solution when it wins this board with `adds`, else None
        (a hand-edited file may carry a stale one)."""
        if not self.solution:
            return None
        try:
            left, _ = replay(self.cells, self.solution, adds, ruleset_for(self.ruleset))
        except NumberMatchError:
            return None
        return None if left else self.solution


def _rows_joined(text: str) -> str:
    """A board pasted over several lines (a grid copied from `show` or a chat): its lines are
    its rows, so they join with `/`; any other text is returned as it is."""
    if "\n" not in text and "\r" not in text:
        return text
    rows = [r.strip().strip("/") for r in text.splitlines()]
    joined = "/".join(r for r in rows if r)
    return joined if _NOTATION.match(joined) else text


def resolve(text: str, search: Sequence[str | Path] = ()) -> Source:
    """Resolve a SOURCE (see the module docstring); raises SourceError or NotationError."""
    if not isinstance(text, str):
        raise SourceError(f"source must be a string, got {type(text).__name__}")
    text = _rows_joined(text.strip())
    if ID_PATTERN.match(text):
        return find_id(text, search)
    stage = _split_stage(text)
    if stage is not None:
        path, level, number = stage
        return bundle_stage(path, level, number)
    if _NOTATION.match(text):
        return Source(parse(text), None, text or "(empty board)")
    path = Path(text)
    if path.is_file():
        return puzzle_file(path)
    if path.is_dir():
        raise SourceError(
            f"{text}: is a folder; name a puzzle file, a stage ({STAGE_FORM}) or a board"
        )
    if path.suffix.lower() in (".yaml", ".yml"):
        raise SourceError(f"{text}: no such file")
    try:
        parse(text)
    except NumberMatchError as exc:
        raise SourceError(
            f"{exc}; nor is it an existing puzzle file, a bundle stage ({STAGE_FORM}) or a puzzle id (nm1-<12 hex digits>)"
        ) from exc
    raise AssertionError(
        "unreachable: text outside the notation alphabet always fails to parse"
    )  # pragma: no cover


def _split_stage(text: str) -> tuple[Path, int, int] | None:
    head, sep, tail = text.rpartition(":")
    if not sep or not head:
        return None
    try:
        slot = Slot.parse(tail)
    except SlotFromZero as exc:
        raise SourceError(f"{text!r}: {exc}") from exc
    except SlotError:
        if Path(head).suffix in (".yaml", ".yml"):
            raise SourceError(
                f"{text!r}: the stage {tail!r} is not of the form {FORM} (e.g. {head}:L3.S2)"
            ) from None
        return None
    return Path(head), slot.level, slot.stage


def load_document(path: Path) -> Document:
    """A file's YAML document, read safely; SourceError names the file, line and problem."""
    # start-up time: YAML loads only when a file is read
    from pipeline.formats.loader import load_file

    if not path.exists():
        raise SourceError(f"{path}: no such file")
    loaded = load_file(path)
    if loaded.document is None:
        raise SourceError(first_problem(loaded.problems))
    return loaded.document


def snapshot_document(path: Path) -> tuple[Snapshot, Document]:
    """A file read for an edit: its bytes (which the guarded write re-checks) and the YAML
    document parsed from those same bytes; SourceError names the file, line and problem."""
    from pipeline.atomic import snapshot  # start-up time: YAML loads only when a file is read
    from pipeline.formats.loader import load_bytes

    base = snapshot(path)
    if base.data is None:
        raise SourceError(f"{path}: no such file")
    loaded = load_bytes(base.data, str(path))
    if loaded.document is None:
        raise SourceError(first_problem(loaded.problems))
    return base, loaded.document


def read_document(path: Path) -> dict[str, Any]:
    """One YAML mapping from a file (see `load_document`)."""
    data = load_document(path).data
    if not isinstance(data, dict):
        raise SourceError(
            f"{path}: expected a puzzle or bundle mapping, found {type(data).__name__}"
        )
    return data


def _puzzle_source(data: Any, where: str, label: str, file: Path | None) -> Source:
    """A Source from a puzzle mapping, checking just what playing it needs."""
    if not isinstance(data, dict):
        raise SourceError(f"{where}: expected a puzzle mapping, found {type(data).__name__}")

    try:
        ruleset = ruleset_for(data.get("ruleset", DEFAULT.number), SHIPPED)
    except NumberMatchError as exc:
        raise SourceError(f"{where}.ruleset: {exc}") from exc
    board = data.get("board")
    if not isinstance(board, str):
        raise SourceError(
            f"{where}.board: expected board notation (a string), found {_kind(board)}"
        )
    try:
        cells = parse(board)
    except NumberMatchError as exc:
        raise SourceError(f"{where}.board: {exc}") from exc
    adds = data.get("adds")
    if not isinstance(adds, int) or isinstance(adds, bool) or adds < 0:
        raise SourceError(f"{where}.adds: expected a whole number 0 or more, found {_kind(adds)}")
    return Source(cells, adds, label, dict(data), file, ruleset.number)


def _kind(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {value!r}"[:60]


def puzzle_file(path: Path) -> Source:
    """The puzzle in a puzzle file (a bundle needs a stage: `bundle.yaml:L1.S1`)."""
    return puzzle_source(read_document(path), path)


def puzzle_source(data: Any, path: Path) -> Source:
    """The puzzle in the document read from a puzzle file at `path`."""
    if not isinstance(data, dict):
        raise SourceError(
            f"{path}: expected a puzzle or bundle mapping, found {type(data).__name__}"
        )
    if data.get("kind") == "bundle":
        raise SourceError(f"{path}: is a bundle; name one stage as {path}:L1.S1 ({STAGE_FORM})")
    if (
        data.get("kind") not in (None, "puzzle")
        and isinstance(data.get("kind"), str)
        and "board" not in data
    ):
        raise SourceError(f"{path}: is a {clip(data['kind'], 30)} file, not a puzzle file")
    label = str(data.get("id") or path.name)
    return _puzzle_source(data, f"{path}: $", label, path)


def bundle_stage(path: Path, level: int, stage: int) -> Source:
    """Stage `stage` of Level `level` (both from 1) of a bundle file."""
    from pipeline.formats.bundle import (  # start-up time: YAML loads only for a bundle or an id
        BUNDLE_KIND,
        Bundle,
        BundleError,
    )

    data = read_document(path)
    try:
        bundle = Bundle.from_dict(data, str(path))
    except BundleError as exc:
        also = "; a stage needs a bundle file" if data.get("kind") != BUNDLE_KIND else ""
        raise SourceError(f"{exc}{also}") from exc
    try:
        found = bundle.locate(Slot(level, stage), str(path))
    except BundleError as exc:
        raise SourceError(str(exc)) from exc
    where = f"{path}: {found.path}.puzzle"
    return _puzzle_source(found.data.get("puzzle"), where, f"{path}:L{level}.S{stage}", path)


def find_id(puzzle_id: str, search: Iterable[str | Path]) -> Source:
    """The puzzle with this id in the given files and folders (puzzle files and bundles)."""
    from pipeline.formats.bundle import (  # start-up time: YAML loads only for a bundle or an id
        BUNDLE_KIND,
        Bundle,
        BundleError,
    )
    from pipeline.formats.files import level_files

    places = list(search)
    defaulted = not places
    if defaulted:
        if not Path(NIGHTS_FOLDER).is_dir():
            raise SourceError(
                f"puzzle id {puzzle_id}: there is no {NIGHTS_FOLDER}/ folder here to look in;"
                " say where to look with --in PATH (puzzle files, bundles or folders)"
            )
        places = [NIGHTS_FOLDER]
    for raw in places:
        if not Path(raw).exists():
            raise SourceError(f"{raw}: no such file or folder")
    files = level_files(places)
    # A file named after the id is the cheap, common case: look there first.
    files.sort(key=lambda p: p.stem != puzzle_id)
    for path in files:
        try:
            data = read_document(path)
        except SourceError:
            continue  # an unreadable neighbour does not hide the puzzle we look for
        if data.get("kind") == BUNDLE_KIND:
            try:
                bundle = Bundle.from_dict(data, str(path))
            except BundleError:
                continue  # nor does a malformed bundle
            for found in bundle.stages:
                if found.data.get("puzzle", {}).get("id") == puzzle_id:
                    # named by position (L1 is the bundle's first Level), as this always said
                    at = f"L{found.level_index + 1}.S{found.stage_index + 1}"
                    return _puzzle_source(
                        found.data.get("puzzle"), f"{path}: {at}", puzzle_id, path
                    )
        elif data.get("id") == puzzle_id:
            return _puzzle_source(data, f"{path}: $", puzzle_id, path)
    shown = ", ".join(str(p) for p in places)
    elsewhere = " (looked in the default folder; --in PATH looks elsewhere)" if defaulted else ""
    raise SourceError(
        f"puzzle id {puzzle_id} is in none of the {len(files)} YAML files under {shown}{elsewhere}"
    )
