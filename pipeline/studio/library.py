"""What the studio finds under its folder: nights, bundles, puzzle folders, and their contents.

Files are read with the validator's safe loader (size and depth limits, no arbitrary tags), so
a hostile or broken file becomes one line on the page, never a crash. A bundle's content hash
(SHA-256 of its bytes) is what a save checks to refuse a draft based on an older file.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle, BundleError
from pipeline.formats.files import YAML_SUFFIXES
from pipeline.formats.loader import MAX_BYTES, load_bytes
from pipeline.formats.night import POOL_DIR, night_date
from pipeline.formats.puzzle import BUNDLE_KIND, PUZZLE_KIND, Puzzle
from pipeline.formats.stock_layout import STOCK_DIR
from pipeline.limits import MAX_STOCK_OFFERS
from pipeline.problems import first_problem
from pipeline.rating.tiers import TIER_NAMES, UNSOLVABLE, tier_for
from pipeline.stock.night import draw
from pipeline.stock.store import nights_folder
from pipeline.studio.paths import relative
from pipeline.validator import Validator

SUFFIXES = YAML_SUFFIXES
TIER_ORDER = (*TIER_NAMES, UNSOLVABLE)


class LibraryError(NumberMatchError):
    """A file the studio cannot use: unreadable, not YAML, or not the kind of document asked for."""


def content_hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def read_document(path: Path, name: str) -> tuple[dict[str, Any], bytes]:
    """The mapping in a level file and its bytes; raises LibraryError with one line."""
    try:
        if not path.is_file():
            raise LibraryError(f"{name}: no such file")
        if path.stat().st_size > MAX_BYTES:
            raise LibraryError(f"{name}: the file is larger than {MAX_BYTES:,} bytes")
        raw = path.read_bytes()
    except OSError as exc:
        raise LibraryError(
            f"{name}: cannot read it ({exc.strerror or type(exc).__name__})"
        ) from exc
    loaded = load_bytes(raw, name)
    if loaded.document is None:
        raise LibraryError(first_problem(loaded.problems))
    data = loaded.document.data
    if not isinstance(data, dict):
        raise LibraryError(f"{name}: is not a level file (a mapping with kind: bundle or puzzle)")
    return data, raw


def tier_counts(tiers: list[str]) -> list[tuple[str, int]]:
    """(tier, count) in the tier table's order, then any other names found."""
    counts = Counter(tiers)
    order = [t for t in TIER_ORDER if counts[t]] + sorted(t for t in counts if t not in TIER_ORDER)
    return [(t, counts[t]) for t in order]


def bundle_value(data: dict[str, Any], name: str) -> Bundle:
    """The `Bundle` of a bundle document (the one bundle view: `pipeline.formats.bundle`); raises
    LibraryError with its one line for a malformed one."""
    try:
        return Bundle.from_dict(data, name)
    except BundleError as exc:
        raise LibraryError(str(exc)) from exc


def puzzle_value(data: dict[str, Any], name: str) -> Puzzle:
    """The `Puzzle` of a puzzle document; raises LibraryError with one line for a malformed one."""
    try:
        return Puzzle.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise LibraryError(
            f"{name}: the puzzle's board, adds or other fields are missing or malformed"
        ) from exc


@dataclass(frozen=True)
class Offers:
    """A bundle's swap candidates: where they come from (`source` "pool": the `pool/` folder
    beside it; "stock": the stock of the nights' folder `folder`; "": none), the puzzles the
    validator accepts (file name under PATH, Puzzle) and one line per file it refuses."""

    source: str
    folder: Path | None
    accepted: tuple[tuple[str, Puzzle], ...]
    refused: tuple[str, ...]

    @property
    def puzzles(self) -> list[Puzzle]:
        return [p for _, p in self.accepted]


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
        self._pools: dict[tuple[str, Path], tuple[Any, Offers]] = {}
        self._draws: dict[Path, tuple[Any, list[tuple[str, Puzzle | None, str | None]]]] = {}

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
            if data.get("kind") == BUNDLE_KIND:
                bundle = bundle_value(data, name)
                value = ("bundle", bundle.id, [s.puzzle.tier for s in bundle.stages])
            elif data.get("kind") == PUZZLE_KIND:
                puzzle = puzzle_value(data, name)
                value = ("puzzle", puzzle.id, [puzzle.tier])
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
            # the night's date when a folder on the way is a night
            dated = max((p for p in Path(rel).parts if night_date(p) is not None), default="")
            folder = Folder(rel, (dated, here.stat().st_mtime))
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
                    _, bid, tiers = got
                    folder.items.append(
                        Item("bundle", name, f"{f} ({bid})", tier_counts(tiers), len(tiers))
                    )
                else:
                    puzzle_tiers.extend(got[2])
            if puzzle_tiers or (problems and not folder.items):
                folder.items.append(
                    Item(
                        "puzzles",
                        rel,
                        f"{len(puzzle_tiers)} puzzle files",
                        tier_counts(puzzle_tiers),
                        len(puzzle_tiers),
                        "; ".join(problems[:3])
                        + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
                        or None,
                    )
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
        files = (
            p for p in folder.iterdir() if p.name.endswith(SUFFIXES) and not p.name.startswith(".")
        )
        for path in sorted(p for p in files if _is_file_inside(p, self.root)):
            name = relative(self.root, path)
            try:
                data, _ = self.document(path, name)
                if data.get("kind") != "puzzle":
                    continue
                out.append((name, puzzle_value(data, name), None))
            except LibraryError as exc:
                out.append((name, None, str(exc)))
        return out

    def bundle(self, path: Path, name: str) -> tuple[Bundle, bytes]:
        """The bundle file's value and its bytes (raises LibraryError for any other file)."""
        data, raw = self.document(path, name)
        return bundle_value(data, name), raw

    def offers(self, bundle_path: Path, bundle: Bundle) -> Offers:
        """A bundle's swap candidates: its night's pool/, or for a night with none (a night drawn
        from the stock) the stock of the nights' folder when that is inside PATH: per tier its
        Stages target, the MAX_STOCK_OFFERS unshipped puzzles nearest those targets
        (`stock.night.draw`, the nightly's own choice). Only files the validator accepts are
        offered (a Save must not fail on them); checked in one run, again when a file changes."""
        pool = bundle_path.parent / POOL_DIR
        if pool.is_dir():
            return self._checked("pool", pool, self.puzzle_files(pool))
        nights = nights_folder(bundle_path)
        stock = nights / STOCK_DIR
        where = _resolved(stock)
        if where is None or not where.is_relative_to(self.root) or not stock.is_dir():
            return Offers("", None, (), ())
        targets: dict[str, list[float]] = {}
        for s in bundle.stages:
            if s.target_score is not None and 0 <= s.target_score <= 100:
                targets.setdefault(tier_for(s.target_score), []).append(s.target_score)
        # the draw reads its puzzles' files: done again only when a level file under the nights'
        # folder changed (a stock file came or went, a bundle now ships another puzzle)
        key = (
            tuple((t, tuple(v)) for t, v in sorted(targets.items())),
            bundle.ruleset,
            _tree_state(nights),
        )
        hit = self._draws.get(nights)
        if hit is not None and hit[0] == key:
            return self._checked("stock", nights, hit[1])
        try:
            drawn = draw(
                nights, targets, {tier: MAX_STOCK_OFFERS for tier in targets}, bundle.ruleset
            )
        except NumberMatchError as exc:  # a stock file that cannot be read: said, nothing offered
            return Offers("stock", nights, (), (str(exc).replace(str(self.root) + "/", ""),))
        files: list[tuple[str, Puzzle | None, str | None]] = sorted(
            (relative(self.root, drawn.files[p.id]), p, None)
            for found in drawn.puzzles.values()
            for p in found
            if _is_file_inside(drawn.files[p.id], self.root)
        )
        self._draws[nights] = (key, files)
        return self._checked("stock", nights, files)

    def _checked(
        self, source: str, folder: Path, files: Sequence[tuple[str, Puzzle | None, str | None]]
    ) -> Offers:
        """`Offers` of these files: the validator's refusals (a hand-edited score, an id used
        twice, ...) as one line each; cached until a file changes."""
        key = []
        for name, _, _ in files:
            try:
                st = (self.root / name).stat()
            except OSError:
                continue
            key.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        hit = self._pools.get((source, folder))
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
        offers = Offers(source, folder, tuple(accepted), tuple(refused))
        self._pools[(source, folder)] = (key, offers)
        return offers


def _tree_state(folder: Path) -> tuple[tuple[str, int, int, int], ...]:
    """(path, size, mtime, inode) of every level file under `folder` (hidden ones aside)."""
    state = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            if f.endswith(SUFFIXES) and not f.startswith("."):
                try:
                    st = os.stat(os.path.join(top, f))
                except OSError:
                    continue
                state.append((os.path.join(top, f), st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(sorted(state))


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
