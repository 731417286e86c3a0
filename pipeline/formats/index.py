"""An index of the level files under one folder: every puzzle they hold, by canonical key.

The files stay the source of truth; the index is a cache (SQLite from the standard library)
outside the folder, in the user's cache folder (`index_file`: `$NUMBERMATCH_CACHE`, else
`$XDG_CACHE_HOME/numbermatch`, else `~/.cache/numbermatch`; one file per indexed folder), so
it is never committed and the folder holds only what the pipeline publishes. `refresh()` brings it up to date with
the files incrementally: it walks the folder (hidden folders skipped, as the validator does),
compares each `*.yaml`/`*.yml` file's size, modification time and inode with what it recorded,
and re-reads only the files that changed; a file gone is dropped. A corrupt or foreign index
file is rebuilt silently, and one that cannot be written is kept in memory.

Each row is one puzzle in one place: a puzzle file (`place` empty) or a Stage of a bundle
(`place` `L3.S2`, numbered as in the file), with its canonical key
(`pipeline.engine.canonical`), id, ruleset, active cells, adds, tier, score and, for stock
files, the date it was stocked. A puzzle file is *stock* when it lies in the stock's layout,
`stock/<ruleset>/<cells>x<adds>/<id>.yaml` (`generated/stock/1/27x3/nm1-....yaml`); a bundle Stage is *shipped*; any other puzzle
file (a `pool/`, a designer's folder) is just a puzzle. `repeats()` lists keys that are shipped
twice or shipped and still in stock.

Reading: puzzle files the pipeline wrote are read by one anchored pattern over their fixed key
order (a night's 100,000 stock files in seconds); anything else is parsed as YAML. A file that
does not read as a puzzle or a bundle adds no row (the validator is what reports it).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from pipeline.engine.canonical import canonical_key
from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle, BundleError
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.files import follow_link
from pipeline.formats.stock_layout import STOCK_DIR as STOCK_DIR  # re-exported
from pipeline.formats.stock_layout import is_stock_path
from pipeline.limits import MAX_FILE_BYTES

CACHE_ENV = "NUMBERMATCH_CACHE"
SCHEMA = 1  # bump when the tables change: an index of another version is rebuilt
_SUFFIXES = (".yaml", ".yml")

try:  # the C loader when PyYAML was built with libyaml
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

# A puzzle file as `write_puzzles` writes it: header comments, then the keys in their fixed order.
_PUZZLE = re.compile(
    r"(?:#[^\n]*\n)*schema_version: 1\nkind: puzzle\nid: (nm[0-9]+-[0-9a-f]{12})\nruleset: ([0-9]+)\n"
    r"board: (?:'([0-9./]*)'|([0-9./]+))\nadds: ([0-9]+)\nsolution:\n(?:- [^\n]*\n)*difficulty:\n"
    r"(?:  version: [0-9]+\n)?  tier: ([a-z]+)\n  score: ([0-9.]+|null)\n",
    re.ASCII,
)
_STOCKED = re.compile(r"^  stocked: '?([0-9]{4}-[0-9]{2}-[0-9]{2})'?$", re.MULTILINE | re.ASCII)


def index_file(root: Path) -> Path:
    """Where the index of `root` lives: the cache folder, a file named after root's real path."""
    base = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "numbermatch",
    )
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:20]
    return Path(base) / "index" / f"{digest}.sqlite3"


class IndexFolderError(NumberMatchError):
    """The folder to index does not exist."""


@dataclass(frozen=True)
class Entry:
    """One puzzle in one place. `kind`: `stock`, `bundle` (a shipped Stage) or `puzzle`."""

    path: str  # relative to the index root, with `/`
    place: str  # "" for a puzzle file, "L3.S2" for a bundle Stage
    kind: str
    key: str
    id: str
    ruleset: int
    cells: int
    adds: int
    tier: str
    score: float | None
    stocked: str = ""  # YYYY-MM-DD for stock files that say when they were stocked

    @property
    def where(self) -> str:
        return f"{self.path}:{self.place}" if self.place else self.path

    def __str__(self) -> str:
        return f"{self.where} ({self.id}, {self.tier})"


class Candidate(NamedTuple):
    """A stock puzzle as a night's choice sees it."""

    score: float | None
    stocked: str
    id: str
    key: str
    path: str


@dataclass(frozen=True)
class Refreshed:
    """What a refresh did: files seen, re-read and dropped."""

    files: int
    read: int
    dropped: int


def _cells(board: str) -> int:
    return sum(1 for ch in board if ch not in "./")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _entry(path: str, place: str, kind: str, data: Any, stocked: str = "") -> Entry | None:
    """The row of one puzzle mapping, or None when it is not a readable puzzle."""
    if not isinstance(data, dict):
        return None
    board, adds, ruleset = data.get("board"), data.get("adds", 0), data.get("ruleset", 1)
    if not isinstance(board, str) or type(adds) is not int or type(ruleset) is not int:
        return None
    found = data.get("difficulty")
    try:
        key = canonical_key(board, adds, ruleset)
        rated = Difficulty.from_dict(found if isinstance(found, dict) else {})
    except (ValueError, TypeError):
        # bad notation, unknown ruleset, a broken block: the validator says so
        return None
    return Entry(
        path,
        place,
        kind,
        key,
        str(data.get("id")),
        ruleset,
        _cells(board),
        adds,
        str(rated.tier),
        _number(rated.score),
        stocked,
    )


def read_entries(text: str, rel: str) -> list[Entry]:
    """The puzzles a level file's text holds (see the module docstring)."""
    parts = rel.split("/")
    kind = STOCK_DIR if is_stock_path(parts) else "puzzle"
    match = _PUZZLE.match(text)
    if match:
        ident, ruleset, quoted, plain, adds, tier, score = match.groups()
        board = quoted if quoted is not None else plain
        stocked = _STOCKED.search(text, match.end())
        try:
            key = canonical_key(board, int(adds), int(ruleset))
        except ValueError:
            return []
        return [
            Entry(
                rel,
                "",
                kind,
                key,
                ident,
                int(ruleset),
                _cells(board),
                int(adds),
                tier,
                None if score == "null" else float(score),
                stocked.group(1) if stocked else "",
            )
        ]
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError:
        return []
    if not isinstance(data, dict):
        return []
    if data.get("kind") == "puzzle":
        provenance = data.get("provenance")
        stocked = provenance.get("stocked") if isinstance(provenance, dict) else None
        entry = _entry(rel, "", kind, data, str(stocked or ""))
        return [entry] if entry else []
    try:
        bundle = Bundle.from_dict(data, rel)
    except BundleError:
        return []  # not a bundle, or a malformed one: the validator reports it, the index skips it
    out = []
    for stage in bundle.stages:
        entry = _entry(rel, str(stage.slot), "bundle", stage.data.get("puzzle"))
        if entry:
            out.append(entry)
    return out


def _walk(root: Path) -> Iterator[tuple[str, int, int, int]]:
    """(relative path, size, mtime_ns, inode) of every level file under root, hidden folders
    skipped, a linked folder followed when it leads outside root (`files.follow_link`)."""
    stack = [(root, "")]
    top, followed = os.path.realpath(root), set[str]()
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for item in entries:
            name = item.name
            if name.startswith("."):
                continue
            try:
                if item.is_dir(follow_symlinks=False) or (
                    item.is_symlink() and follow_link(item.path, top, followed)
                ):
                    stack.append((Path(item.path), f"{prefix}{name}/"))
                elif name.endswith(_SUFFIXES) and item.is_file():
                    st = item.stat()
                    yield f"{prefix}{name}", st.st_size, st.st_mtime_ns, st.st_ino
            except OSError:
                continue


_COLUMNS = "path, place, kind, key, id, ruleset, cells, adds, tier, score, stocked"
_TABLES = f"""
CREATE TABLE IF NOT EXISTS meta (schema INTEGER);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, inode INTEGER);
CREATE TABLE IF NOT EXISTS entries ({_COLUMNS});
CREATE INDEX IF NOT EXISTS entries_path ON entries (path);
CREATE INDEX IF NOT EXISTS entries_key ON entries (key);
CREATE INDEX IF NOT EXISTS entries_stock ON entries (kind, tier, ruleset, cells, adds, score);
INSERT INTO meta SELECT {SCHEMA} WHERE NOT EXISTS (SELECT 1 FROM meta);
"""


def _busy(exc: sqlite3.DatabaseError) -> bool:
    """SQLite's answer when another connection holds the file: not damage."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class LevelIndex:
    """The index of one folder (see the module docstring). Call `refresh()` before querying."""

    def __init__(
        self, root: str | os.PathLike[str], *, file: str | os.PathLike[str] | None = None
    ) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise IndexFolderError(f"{self.root}: no such folder to index")
        self.file = Path(file) if file is not None else index_file(self.root)
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            pass  # then the connect below fails and the index lives in memory for this run
        for attempt in range(2):
            try:
                db = sqlite3.connect(self.file, timeout=60, isolation_level=None)
                if self._usable(db):
                    return db
                db.close()
            except sqlite3.Error:
                pass
            if attempt == 0:  # corrupt, foreign or of another version: start again
                for suffix in ("", "-journal", "-wal", "-shm"):
                    try:
                        os.unlink(f"{self.file}{suffix}")
                    except OSError:
                        pass
        return self._memory()  # not writable: a cache for this run

    @staticmethod
    def _memory() -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.executescript(_TABLES)
        return db

    @staticmethod
    def _usable(db: sqlite3.Connection) -> bool:
        tables = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if not tables:  # a new file: processes racing to create it take turns (IF NOT EXISTS)
            db.executescript("BEGIN IMMEDIATE;" + _TABLES + "COMMIT;")
            return True
        if tables != {"meta", "files", "entries"}:
            return False
        row = db.execute("SELECT schema FROM meta").fetchone()
        db.execute("SELECT count(*) FROM entries").fetchone()
        return row is not None and row[0] == SCHEMA

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> LevelIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(self) -> Refreshed:
        """Bring the index up to date with the files; only changed files are read."""
        try:
            return self._refresh()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            if not _busy(exc):  # the file was damaged under us: rebuild it from the files
                try:
                    os.unlink(self.file)
                except OSError:
                    pass
                self.db = self._open()
                try:
                    return self._refresh()
                except sqlite3.DatabaseError:
                    self.db.close()
            # another process holds the index file (or it is still unusable): the files are the
            # truth, so this run indexes them in memory rather than fail or wait any longer
            self.db = self._memory()
            return self._refresh()

    def _refresh(self) -> Refreshed:
        known = {
            row[0]: (row[1], row[2], row[3])
            for row in self.db.execute("SELECT path, size, mtime, inode FROM files")
        }
        seen: set[str] = set()
        changed: list[tuple[str, int, int, int]] = []
        for rel, size, mtime, inode in _walk(self.root):
            seen.add(rel)
            if known.get(rel) != (size, mtime, inode):
                changed.append((rel, size, mtime, inode))
        gone = [rel for rel in known if rel not in seen]
        if not changed and not gone:
            return Refreshed(len(seen), 0, 0)
        rows: list[tuple[Any, ...]] = []
        for rel, size, _, _ in changed:
            rows.extend(_row(e) for e in self._read(rel, size))
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            stale = [(rel,) for rel in gone] + [(c[0],) for c in changed]
            db.executemany("DELETE FROM entries WHERE path = ?", stale)
            db.executemany("DELETE FROM files WHERE path = ?", stale)
            db.executemany("INSERT INTO files VALUES (?, ?, ?, ?)", changed)
            db.executemany(f"INSERT INTO entries ({_COLUMNS}) VALUES ({', '.join('?' * 11)})", rows)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite may have rolled back already (e.g. on SQLITE_BUSY)
                db.execute("ROLLBACK")
            raise
        return Refreshed(len(seen), len(changed), len(gone))

    def _read(self, rel: str, size: int) -> list[Entry]:
        if size > MAX_FILE_BYTES:
            return []
        try:
            text = (self.root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        return read_entries(text, rel)

    # --- queries ----------------------------------------------------------------------------

    def oversized(self) -> list[tuple[str, int]]:
        """(relative path, size) of each level file too large to read (`limits.MAX_FILE_BYTES`):
        it adds no row, so nothing is known of what it holds."""
        sql = "SELECT path, size FROM files WHERE size > ? ORDER BY path"
        return [(row[0], row[1]) for row in self.db.execute(sql, (MAX_FILE_BYTES,))]

    def _entries(self, where: str = "", args: Iterable[Any] = ()) -> list[Entry]:
        sql = f"SELECT {_COLUMNS} FROM entries {where}"
        return [Entry(*row) for row in self.db.execute(sql, tuple(args))]

    def entries(self, kind: str | None = None) -> list[Entry]:
        """Every row (of one kind), in path and place order."""
        if kind is None:
            return self._entries("ORDER BY path, place")
        return self._entries("WHERE kind = ? ORDER BY path, place", (kind,))

    def by_keys(self, keys: Iterable[str]) -> dict[str, list[Entry]]:
        """The rows of each given key (shipped and stock rows only), in path and place order."""
        out: dict[str, list[Entry]] = {}
        wanted = sorted(set(keys))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for e in self._entries(
                f"WHERE key IN ({marks}) AND kind != 'puzzle' ORDER BY path, place", chunk
            ):
                out.setdefault(e.key, []).append(e)
        return out

    def shipped_keys(self, besides: str | None = None) -> set[str]:
        """Keys a bundle ships; `besides`: a folder (relative, e.g. a night being rerun) whose
        bundles do not count."""
        sql, args = _shipped(besides)
        return {row[0] for row in self.db.execute(sql, args)}

    def stock_keys(self) -> set[str]:
        return {
            row[0]
            for row in self.db.execute("SELECT DISTINCT key FROM entries WHERE kind = 'stock'")
        }

    def stock(
        self,
        tier: str | None = None,
        *,
        ruleset: int | None = None,
        cells: int | None = None,
        adds: int | None = None,
        besides: str | None = None,
    ) -> list[Entry]:
        """Stock puzzles not shipped anywhere under the root (bundles under `besides` aside),
        oldest first (then by id)."""
        shipped, args = _shipped(besides)
        where = ["kind = 'stock'", f"key NOT IN ({shipped})"]
        for column, value in (
            ("tier", tier),
            ("ruleset", ruleset),
            ("cells", cells),
            ("adds", adds),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        return self._entries(f"WHERE {' AND '.join(where)} ORDER BY stocked, id, path", args)

    def candidates(
        self, tier: str, *, ruleset: int, besides: str | None = None, before: str | None = None
    ) -> list[Candidate]:
        """What a night chooses from: the unshipped stock puzzles of a tier as light tuples
        (a night's query over 100,000 stock puzzles builds no Entry per row), oldest first;
        `before`: only those stocked before that date (YYYY-MM-DD; an undated one counts as old)."""
        shipped, args = _shipped(besides)
        sql = (
            f"SELECT score, stocked, id, key, path FROM entries WHERE kind = 'stock' AND key NOT IN ({shipped})"
            " AND tier = ? AND ruleset = ?"
            + (" AND stocked < ?" if before is not None else "")
            + " ORDER BY stocked, id, path"
        )
        return list(
            map(
                Candidate._make,
                self.db.execute(
                    sql, (*args, tier, ruleset, *([before] if before is not None else []))
                ),
            )
        )

    def repeats(self) -> list[tuple[Entry, Entry]]:
        """Each place that repeats an earlier one's key: shipped twice, shipped and in stock, or
        in stock twice; (first place, repeat) in path and place order, shipped places first."""
        rows = self._entries(
            "WHERE kind != 'puzzle' AND key IN (SELECT key FROM entries WHERE kind != 'puzzle'"
            " GROUP BY key HAVING count(*) > 1) ORDER BY key, kind, path, place"
        )
        out: list[tuple[Entry, Entry]] = []
        first: Entry | None = None
        for e in rows:
            if first is None or first.key != e.key:
                first = e
            else:
                out.append((first, e))
        return out


def _shipped(besides: str | None) -> tuple[str, list[Any]]:
    """The SQL of the shipped keys, bundles under the folder `besides` aside."""
    sql = "SELECT DISTINCT key FROM entries WHERE kind = 'bundle'"
    if besides is None:
        return sql, []
    return sql + " AND substr(path, 1, ?) != ?", [len(besides) + 1, besides.rstrip("/") + "/"]


def _row(e: Entry) -> tuple[Any, ...]:
    return (
        e.path,
        e.place,
        e.kind,
        e.key,
        e.id,
        e.ruleset,
        e.cells,
        e.adds,
        e.tier,
        e.score,
        e.stocked,
    )


__all__ = [
    "CACHE_ENV",
    "STOCK_DIR",
    "Candidate",
    "Entry",
    "IndexFolderError",
    "LevelIndex",
    "Refreshed",
    "index_file",
    "is_stock_path",
    "read_entries",
]
