"""What the studio finds under its folder: nights, bundles, puzzle folders, and their contents.

Files are read with the validator's safe loader (size and depth limits, no arbitrary tags), so
a hostile or broken file becomes one line on the page, never a crash. A bundle's content hash
(SHA-256 of its bytes) is what a save checks to refuse a draft based on an older file.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.formats.files import YAML_SUFFIXES
from pipeline.formats.night import POOL_DIR
from pipeline.problems import first_problem
from pipeline.formats.bundle import Bundle, BundleError
from pipeline.formats.puzzle import Puzzle
from pipeline.formats.difficulty import Difficulty
from pipeline.rating.tiers import TIER_NAMES, UNSOLVABLE
from pipeline.studio.paths import relative

SUFFIXES = YAML_SUFFIXES
TIER_ORDER = (*TIER_NAMES, UNSOLVABLE)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class LibraryError(NumberMatchError):
    """A file the studio cannot use: unreadable, not YAML, or not the kind of document asked for."""


def content_hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def read_document(path: Path, name: str) -> tuple[dict[str, Any], bytes]:
    """The mapping in a level file and its bytes; raises LibraryError with one line."""
    from pipeline.formats.loader import load_bytes, MAX_BYTES

    try:
        if not path.is_file():
            raise LibraryError(f"{name}: no such file")
        if path.stat().st_size > MAX_BYTES:
            raise LibraryError(f"{name}: the file is larger than {MAX_BYTES:,} bytes")
        raw = path.read_bytes()
    except OSError as exc:
        raise LibraryError(f"{name}: cannot read it ({exc.strerror or type(exc).__name__})") from exc
    loaded = load_bytes(raw, name)
    if loaded.document is None:
        raise LibraryError(first_problem(loaded.problems))
    data = loaded.document.data
    if not isinstance(data, dict):
        raise LibraryError(f"{name}: is not a level file (a mapping with kind: bundle or puzzle)")
    return data, raw


def difficulty_of(puzzle: Any) -> dict[str, Any]:
    """A puzzle mapping's difficulty block ({} when it has none)."""
    difficulty = puzzle.get("difficulty") if isinstance(puzzle, dict) else None
    return difficulty if isinstance(difficulty, dict) else {}


def score_of(puzzle: Any) -> float | None:
    return Difficulty.from_dict(difficulty_of(puzzle)).score


def tier_of(puzzle: Any) -> str:
    """The stored tier; `?` when the block names none."""
    return Difficulty.from_dict(difficulty_of(puzzle)).tier if "tier" in difficulty_of(puzzle) else "?"


def tier_counts(tiers: list[str]) -> list[tuple[str, int]]:
    """(tier, count) in the tier table's order, then any other names found."""
    counts = Counter(tiers)
    order = [t for t in TIER_ORDER if counts[t]] + sorted(t for t in counts if t not in TIER_ORDER)
    return [(t, counts[t]) for t in order]


@dataclass(frozen=True)
class StageSlot:
    """One Stage of a bundle: where it is, its target score and its Puzzle mapping."""

    level: int
    stage: int
    target: float | None
    puzzle: dict[str, Any]

    @property
    def at(self) -> str:
        return f"{self.level}.{self.stage}"


def bundle_stages(data: dict[str, Any], name: str) -> list[StageSlot]:
    """Every Stage of a bundle mapping in order (`Bundle.from_dict` reads it); raises LibraryError
    for a malformed one."""
    try:
        bundle = Bundle.from_dict(data, name)
    except BundleError as exc:
        raise LibraryError(str(exc)) from exc
    return [StageSlot(s.slot.level, s.slot.stage, s.target_score, dict(s.data["puzzle"])) for s in bundle.stages]


@dataclass
class Item:
    """A bundle file or a folder of puzzle files, as the front page lists it."""

    kind: str  # "bundle" or "puzzles"
    rel: str
    title: str
    tiers: list[tuple[str, int]]
    total: int
    problem: str | None = None


@dataclass
class Folder:
    """A folder under PATH holding level files (usually a night, `<date>/`)."""

    rel: str
    sort_key: tuple[str, float]
    items: list[Item] = field(default_factory=list)


class Library:
    """Scans PATH; parsed files are cached by (size, mtime) so the front page stays quick."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._cache: dict[Path, tuple[tuple[int, int], Any]] = {}
        self._docs: dict[Path, tuple[tuple[int, int, int], tuple[dict[str, Any], bytes]]] = {}
        self._pools: dict[Path, tuple[Any, tuple[list[tuple[str, Puzzle]], list[str]]]] = {}

    def document(self, path: Path, name: str) -> tuple[dict[str, Any], bytes]:
        """`read_document`, parsed once per version of the file (size, mtime and inode): every
        click of a stage page names its bundle, and parsing a night's bundle takes far longer
        than the move itself. Saves do not use this; they re-read the bytes."""
        try:
            st = path.stat()
        except OSError:
            return read_document(path, name)
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        hit = self._docs.get(path)
        if hit is not None and hit[0] == key:
            return hit[1]
        got = read_document(path, name)
        if len(self._docs) > 256:
            self._docs.clear()
        self._docs[path] = (key, got)
        return got

    def _kind_and_tiers(self, path: Path, name: str) -> tuple[str, str, list[str]] | str:
        """("bundle", id, stage tiers) or ("puzzle", id, [tier]), or a problem line."""
        try:
            st = path.stat()
        except OSError as exc:
            return f"{name}: cannot read it ({exc.strerror or type(exc).__name__})"
        key = (st.st_size, st.st_mtime_ns)
        hit = self._cache.get(path)
        if hit is not None and hit[0] == key:
            return hit[1]  # type: ignore[no-any-return]
        value: Any
        try:
            data, _ = self.document(path, name)
            if data.get("kind") == "bundle":
                value = ("bundle", str(data.get("id")), [tier_of(s.puzzle) for s in bundle_stages(data, name)])
            elif data.get("kind") == "puzzle":
                value = ("puzzle", str(data.get("id")), [tier_of(data)])
            else:
                value = f"{name}: kind {data.get('kind')!r} is neither bundle nor puzzle"
        except LibraryError as exc:
            value = str(exc)
        self._cache[path] = (key, value)
        return value  # type: ignore[no-any-return]

    def folders(self) -> list[Folder]:
        """Folders holding bundles or puzzle files, newest first (a date in the name first)."""
        found: dict[Path, Folder] = {}
        for top, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            here = Path(top)
            yaml_files = sorted(f for f in files if f.endswith(SUFFIXES) and not f.startswith("."))
            if not yaml_files:
                continue
            rel = relative(self.root, here) if here != self.root else "."
            dated = _DATE.search(rel)
            folder = Folder(rel, (dated.group(0) if dated else "", here.stat().st_mtime))
            puzzle_tiers: list[str] = []
            problems: list[str] = []
            for f in yaml_files:
                path = here / f
                name = f if rel == "." else f"{rel}/{f}"
                where = _resolved(path)
                if where is None:
                    problems.append(f"{name}: a link that loops")
                    continue
                if not where.is_relative_to(self.root):  # a link that leads outside
                    continue
                got = self._kind_and_tiers(path, name)
                if isinstance(got, str):
                    problems.append(got)
                elif got[0] == "bundle":
                    kind, bid, tiers = got
                    folder.items.append(Item("bundle", name, f"{f} ({bid})", tier_counts(tiers), len(tiers)))
                else:
                    puzzle_tiers.extend(got[2])
            if puzzle_tiers or (problems and not folder.items):
                folder.items.append(
                    Item("puzzles", rel, f"{len(puzzle_tiers)} puzzle files", tier_counts(puzzle_tiers), len(puzzle_tiers),
                         "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "") or None)
                )
            elif problems:
                folder.items[-1].problem = "; ".join(problems[:3])
            found[here] = folder
        # Nights first by the date in their name, then by modification time, newest first.
        return sorted(found.values(), key=lambda f: f.sort_key, reverse=True)

    def puzzle_files(self, folder: Path) -> list[tuple[str, Puzzle | None, str | None]]:
        """(relative name, Puzzle or None, problem) for each puzzle file directly in `folder`."""
        out: list[tuple[str, Puzzle | None, str | None]] = []
        where = _resolved(folder)
        if where is None or not where.is_relative_to(self.root) or not folder.is_dir():
            return out  # a pool/ that links outside PATH is not read
        files = (p for p in folder.iterdir() if p.name.endswith(SUFFIXES) and not p.name.startswith("."))
        for path in sorted(p for p in files if _is_file_inside(p, self.root)):
            name = relative(self.root, path)
            try:
                data, _ = self.document(path, name)
                if data.get("kind") != "puzzle":
                    continue
                out.append((name, Puzzle.from_dict(data), None))
            except (LibraryError, KeyError, TypeError, ValueError) as exc:
                out.append((name, None, str(exc)))
        return out

    def pool(self, bundle_path: Path) -> list[tuple[str, Puzzle]]:
        """The night's pool next to a bundle: (file name, Puzzle) of every puzzle file the
        validator accepts (only those are offered: a Save must not fail on them)."""
        return self.pool_checked(bundle_path)[0]

    def pool_checked(self, bundle_path: Path) -> tuple[list[tuple[str, Puzzle]], list[str]]:
        """The pool's accepted puzzles, and one line per file the validator refuses (a hand-edited
        score, an id used twice, ...), checked in one run and again whenever a file changes."""
        from pipeline.validator import Validator

        files = self.puzzle_files(bundle_path.parent / POOL_DIR)
        key = []
        for name, _, _ in files:
            try:
                st = (self.root / name).stat()
            except OSError:
                continue
            key.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        folder = bundle_path.parent / POOL_DIR
        hit = self._pools.get(folder)
        if hit is not None and hit[0] == key:
            return hit[1]
        run = Validator()
        accepted: list[tuple[str, Puzzle]] = []
        refused: list[str] = []
        for name, puzzle, problem in files:
            if puzzle is None:
                refused.append(problem or f"{name}: not a puzzle file")
                continue
            found = run.add_file(self.root / name, name)
            if found:
                p = found[0]
                refused.append(f"{name}:{p.line or 0}: {p.code} {p.message}")
            else:
                accepted.append((name, puzzle))
        self._pools[folder] = (key, (accepted, refused))
        return accepted, refused


def _resolved(path: Path) -> Path | None:
    """The path with its links followed, or None for a link loop."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a link loop, before Python 3.13
        return None


def _is_file_inside(path: Path, root: Path) -> bool:
    where = _resolved(path)
    try:
        return where is not None and where.is_relative_to(root) and path.is_file()
    except OSError:
        return False
