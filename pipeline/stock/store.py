"""Stock files: where a puzzle goes, adding without repeats, counting, refilling and pruning.

Every change to the stock happens under the output folder's lock (`publish.locked`), the one
the nightly job holds, so a refill, a prune and a night never interleave.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.atomic import check_writable_folder, write_guarded
from pipeline.engine.canonical import canonical_key
from pipeline.errors import NumberMatchError
from pipeline.formats.files import level_files
from pipeline.formats.index import Entry, LevelIndex
from pipeline.formats.loader import load_file
from pipeline.formats.night import night_date
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.formats.scale import block_profile, puzzle_on, scale_name
from pipeline.formats.stock_layout import STOCK_DIR
from pipeline.generation import DEFAULT_WITHIN
from pipeline.generation.generator import GenerateParams, GenerationError, generate
from pipeline.limits import MAX_PRUNE_SHARE
from pipeline.problems import first_problem
from pipeline.rating.tiers import RATING_VERSION
from pipeline.schemas import schema_hint
from pipeline.validator import Validator

if TYPE_CHECKING:
    from pipeline.generation.executors import Executor

HISTOGRAM_BIN = 10  # score points per histogram bin in `numbermatch stock`


class StockError(NumberMatchError):
    """A stock operation that cannot be done (bad parameters, a generator that cannot reach the tier)."""


def group_name(cells: int, adds: int) -> str:
    """`27x3`: the folder of a board size and adds allocation."""
    return f"{cells}x{adds}"


def active_cells(board: str) -> int:
    return sum(1 for ch in board if ch not in "./")


def stock_path(root: Path, puzzle: Puzzle) -> Path:
    """`<root>/stock/<ruleset>/<cells>x<adds>/<id>.yaml`."""
    return (
        root
        / STOCK_DIR
        / str(puzzle.ruleset)
        / group_name(active_cells(puzzle.board), puzzle.adds)
        / f"{puzzle.id}.yaml"
    )


def stock_text(puzzle: Puzzle, day: _dt.date, root: Path) -> str:
    """The stock file of a puzzle: the puzzle file, its provenance saying when it was stocked,
    its score on the rating's own scale (the one scale the stock holds: a night compares stock
    scores with its curve's targets)."""
    provenance = {**puzzle.provenance, "stocked": day.isoformat()}
    rated = puzzle_on(puzzle, None)
    doc = Puzzle(
        puzzle.board, puzzle.adds, puzzle.solution, rated.difficulty, puzzle.ruleset, provenance
    ).to_document()
    return dump_yaml(doc, schema_hint("puzzle", stock_path(root, puzzle).parent))


def put(
    root: Path, puzzles: Iterable[Puzzle], day: _dt.date, index: LevelIndex | None = None
) -> list[Path]:
    """Write puzzles into the stock, skipping any whose canonical key is already in stock or
    shipped in a bundle under `root`; returns the files written."""
    root.mkdir(parents=True, exist_ok=True)
    own = index if index is not None else LevelIndex(root)
    try:
        own.refresh()
        taken = own.stock_keys() | own.shipped_keys()
    finally:
        if index is None:
            own.close()
    written = []
    for p in puzzles:
        key = canonical_key(p.board, p.adds, p.ruleset)
        if key in taken:
            continue
        taken.add(key)
        written.append(
            write_guarded(stock_path(root, p), stock_text(p, day, root), kinds=("puzzle",))
        )
    return written


def read_puzzle(path: Path) -> Puzzle:
    """A stock file's Puzzle, read by the one YAML loader (its size cap, duplicate keys refused);
    the caller validates it."""
    loaded = load_file(path)
    if loaded.document is None:
        problem = loaded.problems[0].message if loaded.problems else "no document"
        raise StockError(f"{path}: cannot be read as a puzzle ({problem})")
    try:
        return Puzzle.from_dict(loaded.document.data)
    except (KeyError, TypeError, ValueError) as exc:
        raise StockError(f"{path}: cannot be read as a puzzle ({type(exc).__name__})") from exc


ASIDE_DIR = ".aside"  # OUT/stock/.aside/<ruleset>/<group>/: puzzles a night set aside


@dataclass(frozen=True)
class SetAside:
    """A stock file a night found invalid when it drew it, and where it was moved."""

    path: Path
    reason: str
    moved: Path

    def __str__(self) -> str:
        return (
            f"set aside {self.path} ({self.reason}): moved to {self.moved}, out of the stock's"
            " draw; fix it and move it back, or delete it"
        )


def check_drawn(path: Path) -> str | None:
    """Why a stock file drawn for a night cannot be shipped (the validator's first problem, a
    file that no longer reads as a puzzle), or None when it can."""
    problems = [p for p in Validator().add_file(path) if p.code not in ("NM304", "NM321")]
    if problems:
        return first_problem(problems)
    try:
        puzzle = read_puzzle(path)
    except StockError as exc:
        return str(exc)
    if block_profile(puzzle.difficulty) is not None:
        found = scale_name(block_profile(puzzle.difficulty))
        return f"scored on {found}; the stock holds scores on the rating's own scale"
    return None


def set_aside(root: Path, path: Path, reason: str) -> SetAside:
    """Move a stock file out of the stock's draw (into `OUT/stock/.aside/`, which the index, the
    validator and prune skip as a hidden folder), never deleting it; a name already taken there
    gets a number."""
    rel = path.relative_to(root / STOCK_DIR)
    target = root / STOCK_DIR / ASIDE_DIR / rel
    n = 1
    while os.path.lexists(target):
        target = target.with_name(f"{path.stem}.{n}{path.suffix}")
        n += 1
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(path, target)
    return SetAside(path, reason, target)


# --- counts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupCount:
    """Stock puzzles of one ruleset, size and adds, per tier, with a score histogram."""

    ruleset: int
    cells: int
    adds: int
    tiers: dict[str, int]
    histogram: dict[int, int]  # bin start (0, 10, ..., 90) -> puzzles

    @property
    def total(self) -> int:
        return sum(self.tiers.values())

    @property
    def name(self) -> str:
        return f"{self.ruleset}/{group_name(self.cells, self.adds)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "cells": self.cells,
            "adds": self.adds,
            "total": self.total,
            "tiers": dict(self.tiers),
            "histogram": {str(k): v for k, v in sorted(self.histogram.items())},
        }


def counts(entries: Sequence[Entry]) -> list[GroupCount]:
    """Per group (ruleset, cells, adds, in that order): puzzles per tier and a score histogram."""
    groups: dict[tuple[int, int, int], list[Entry]] = {}
    for e in entries:
        groups.setdefault((e.ruleset, e.cells, e.adds), []).append(e)
    out = []
    for (ruleset, cells, adds), items in sorted(groups.items()):
        bins = Counter(
            min(90, int(e.score // HISTOGRAM_BIN) * HISTOGRAM_BIN)
            for e in items
            if e.score is not None
        )
        out.append(
            GroupCount(ruleset, cells, adds, dict(Counter(e.tier for e in items)), dict(bins))
        )
    return out


# --- refill -------------------------------------------------------------------------------


@dataclass
class Refilled:
    """What a refill did: puzzles written, attempts, seconds, and where the attempts ran."""

    written: list[Path] = field(default_factory=list)
    attempts: int = 0
    seconds: float = 0.0
    work: str = ""


def refill(
    root: Path,
    *,
    tier: str,
    cells: int,
    adds: int,
    count: int,
    seed: int,
    day: _dt.date,
    executor: Executor | None = None,
    jobs: int | None = None,
    strategy: str | None = None,
    max_attempts: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    score: float | None = None,
    within: float = DEFAULT_WITHIN,
) -> Refilled:
    """Generate `count` new puzzles of a tier and group into the stock (none repeating a stocked
    or shipped one), anywhere in the tier or within `within` of `score`. Same seed and stock:
    the same files, whatever the workers. `strategy` None: the generator's default for a target."""
    with LevelIndex(root) as index:
        index.refresh()
        taken = index.stock_keys() | index.shipped_keys()
        params = GenerateParams(
            cells=cells,
            adds=adds,
            tier=tier,
            strategy=strategy,
            seed=seed,
            max_attempts=max_attempts,
            score=score,
            within=within if score is not None else DEFAULT_WITHIN,
        )
        try:
            result = generate(count, params, jobs=jobs, progress=progress, executor=executor)
        except GenerationError as exc:
            raise StockError(str(exc)) from exc
        fresh = [
            p for p in result.puzzles if canonical_key(p.board, p.adds, p.ruleset) not in taken
        ]
        written = put(root, fresh, day, index)
    return Refilled(written, result.attempts, result.seconds, str(result.work or ""))


# --- prune --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dropped:
    """A stock file prune removed, and why."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class PruneRefused(StockError):
    """A prune that would drop more of the stock than `limits.MAX_PRUNE_SHARE` without `force`;
    `dropped` is what it would have dropped (nothing was)."""

    def __init__(self, message: str, dropped: list[Dropped]) -> None:
        super().__init__(message)
        self.dropped = dropped


def prune(root: Path, *, dry_run: bool = False, force: bool = False) -> list[Dropped]:
    """Drop stock files the pipeline would no longer ship: files the validator refuses (a
    ruleset no longer shipped included), puzzles rated by an older rating version than the
    current one (`rerate_command` re-rates them instead), puzzles already shipped in a bundle, and second copies of one canonical key
    (the oldest stays), and the temp files of stock writes a kill cut short (`leftovers`). A
    file the validator accepts is never dropped for where it lies. More than `MAX_PRUNE_SHARE`
    of the stock's files is refused (PruneRefused) unless `force`.
    Returns what was dropped (or would be, with `dry_run`)."""
    dropped: list[Dropped] = []
    # An index of its own, read from the files now: prune deletes, so it never trusts the cache,
    # whose rows a stale or foreign index file (same sizes, times, inodes) could make say that
    # every stock puzzle is shipped.
    with LevelIndex(root, file=":memory:") as index:
        index.refresh()
        shipped = {e.key: e for e in index.entries("bundle")}
        stocked = index.entries(STOCK_DIR)
    # the oldest copy of a key stays; of one puzzle in a file and a link to it, the file
    stocked.sort(key=lambda e: (e.stocked, e.id, (root / e.path).is_symlink(), e.path))
    run = Validator()
    indexed = {e.path for e in stocked}
    folder = root / STOCK_DIR
    files = level_files([folder]) if folder.is_dir() else []  # links followed as the index does
    for path in files:  # files the index could not read
        rel = path.relative_to(root)
        if rel.as_posix() not in indexed:
            problems = run.add_file(path)
            if problems:  # a valid puzzle is kept wherever it lies: prune deletes only the bad
                dropped.append(Dropped(path, f"invalid: {first_problem(problems)}"))
    kept: dict[str, Path] = {}
    for entry in stocked:
        path = root / entry.path
        problems = [p for p in run.add_file(path) if p.code not in ("NM304", "NM321")]
        if problems:
            dropped.append(Dropped(path, f"invalid: {first_problem(problems)}"))
            continue
        version = _rating_version(path)
        if version != RATING_VERSION:
            dropped.append(
                Dropped(
                    path,
                    f"rated by rating version {version}; the current version is {RATING_VERSION}"
                    f" (`{rerate_command(root)}` re-rates the stock instead)",
                )
            )
        elif entry.key in shipped:
            dropped.append(Dropped(path, f"already shipped at {shipped[entry.key].where}"))
        elif entry.key in kept:
            dropped.append(
                Dropped(path, f"a copy of {kept[entry.key]} (same canonical key {entry.key})")
            )
        else:
            kept[entry.key] = path
    kept_files = {os.path.realpath(p) for p in kept.values()}  # never a file a kept link names
    dropped = [
        d for d in dropped if d.path.is_symlink() or os.path.realpath(d.path) not in kept_files
    ]
    total = len(files)
    if not dry_run and not force and len(dropped) > MAX_PRUNE_SHARE * total:
        older = sum(d.reason.startswith("rated by rating version") for d in dropped)
        remedy = (
            f"; {older} are of an older rating version: `{rerate_command(root)}`" if older else ""
        )
        raise PruneRefused(
            f"{folder}: stock prune would drop {len(dropped)} of {total} puzzle files, more than"
            f" {MAX_PRUNE_SHARE:.0%} of the stock; nothing dropped (check the list above, then"
            f" pass --force; docs/limits.md{remedy})",
            dropped + leftovers(folder),
        )
    dropped += leftovers(folder)
    if not dry_run:
        for where in sorted({d.path.parent for d in dropped}):  # all of them, or none
            check_writable_folder(where, "stock folder", "nothing dropped")
        for d in dropped:
            d.path.unlink(missing_ok=True)
    return dropped


# What the guarded write's temp file of a stock file is called (`atomic._replace`: mkstemp).
_LEFTOVER = re.compile(r"\.nm[0-9]+-[0-9a-f]{12}\.yaml\.[a-z0-9_]{8}\.tmp", re.ASCII)


def leftovers(folder: Path) -> list[Dropped]:
    """Temp files of stock writes a kill cut short (hidden, never read as puzzles). Every stock
    writer holds the nights' lock, as prune does, so none of them is being written now."""
    found = []
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(top) / name
            if _LEFTOVER.fullmatch(name) and not path.is_symlink() and path.is_file():
                found.append(Dropped(path, "the temp file of a write that was killed"))
    return found


def rerate_command(root: Path) -> str:
    """The command that moves a stock rated by an older rating version to the current one."""
    return f"numbermatch rescore --rating-version {RATING_VERSION} {root / STOCK_DIR}"


def _rating_version(path: Path) -> int:
    return read_puzzle(path).rated.version


def remove_keys(root: Path, keys: Iterable[str]) -> list[Path]:
    """Delete the stock files of these canonical keys (a puzzle shipped by a swap leaves the stock):
    each one whose key the file itself gives (the index's row alone never deletes a file)."""
    wanted = set(keys)
    removed = []
    with LevelIndex(root) as index:
        index.refresh()
        for e in index.entries(STOCK_DIR):
            if e.key in wanted:
                path = root / e.path
                if _file_key(path) != e.key:
                    continue
                try:
                    os.unlink(path)
                    removed.append(path)
                except FileNotFoundError:
                    pass
    return removed


def _file_key(path: Path) -> str | None:
    """The canonical key of the puzzle a stock file holds (None: it does not read as one)."""
    try:
        puzzle = read_puzzle(path)
    except (NumberMatchError, OSError):
        return None
    return canonical_key(puzzle.board, puzzle.adds, puzzle.ruleset)


def stock_day(root: Path, today: _dt.date) -> _dt.date:
    """The date a puzzle stocked now is stamped with: that of the latest night under `root`
    (today when there is none). A night of date D draws only puzzles stocked before D, so a
    night published before this stocking, rerun, never sees it, and the next night does."""
    days = [
        day
        for child in (root.iterdir() if root.is_dir() else ())
        if (day := night_date(child.name)) is not None and child.is_dir()
    ]
    return max(days, default=today)


def nights_folder(bundle: Path) -> Path:
    """The folder of nights a bundle belongs to: `<out>` for `<out>/<YYYY-MM-DD>/bundle.yaml`,
    else the bundle's own folder (whose other bundles and stock are then its neighbours)."""
    night = bundle.parent
    return night.parent if night_date(night.name) is not None else night


def shipped_places(root: Path, besides: Path | None = None) -> dict[str, str]:
    """Canonical key -> the first place (`night/bundle.yaml:L3.S2`) a bundle under `root` ships
    it (the bundle `besides` aside: a swap checks its own bundle by validating it); empty when
    `root` is not a folder."""
    if not root.is_dir():
        return {}
    skip = besides.resolve() if besides is not None else None
    with LevelIndex(root) as index:
        index.refresh()
        out: dict[str, str] = {}
        for e in index.entries("bundle"):
            if skip is None or (root / e.path).resolve() != skip:
                out.setdefault(e.key, str(root / e.where))
        return out
