"""Reading play telemetry with DuckDB: attempt records (or aggregated counts) per puzzle.

Formats (by file suffix; docs/telemetry.md and `schemas/telemetry-*.schema.json` describe them):
- `.jsonl` / `.ndjson`: one JSON object per line;
- `.csv`: a header row naming the fields, then one record per row;
- `.parquet`: one record per row.
A record is either one attempt (`outcome` won/lost/abandoned, `adds_used`, `moves`, optional
`seconds`, `player`, `client`, `at`, `attempt`) or, for teams that aggregate in their warehouse,
one puzzle's counts (`attempts`, `wins`, `abandons`). It names a puzzle by `puzzle` (its id) or a
bundle Stage by `bundle`, `level` and `stage`. Fields not listed are ignored.

Bad records are counted by kind (`BAD_KINDS`) with the first few places (`file:line`; CSV
lines count the header; Parquet names the row) and skipped; `strict` refuses the input when
there is any. Abandoned attempts are counted apart: an observed loss rate is losses over games
played to an end (won or lost), the quantity the score predicts (docs/telemetry.md says why).

DuckDB does the reading and counting (multi-threaded, with a memory cap: `make bench`,
`python -m pipeline.bench telemetry`, reads ten million records). A JSON Lines file without
blank lines goes through DuckDB's own JSON reader, a record's position being its line; any other
(or one that reader refuses: a line that is not an object, or too long) is read line by line so
that every line can be named. A field's value is read as text either way (a number written as a
string is a number, as in CSV); an object or a list where a value belongs is a bad field. Only the
telemetry commands import this module (and so DuckDB), inside their command functions.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import resource
import shutil
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import NumberMatchError, os_message
from pipeline.limits import (
    MAX_ADDS,
    MAX_TELEMETRY_FILES,
    MAX_TELEMETRY_LINE_BYTES,
    MAX_TELEMETRY_MOVES,
    MAX_TELEMETRY_PARQUET_ROWS,
    MAX_TELEMETRY_TEXT,
    TELEMETRY_MEMORY,
)
from pipeline.telemetry.catalogue import Catalogue

FORMAT_BY_SUFFIX = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}
OUTCOMES = ("won", "lost", "abandoned")
FIRST_PLACES = 5  # places listed per kind of bad record
# kind of bad record -> what it means (the order they are reported in)
BAD_KINDS: dict[str, str] = {
    "not-json": "not a JSON object",
    "bad-field": "a field missing or of the wrong type or range",
    "unknown-puzzle": "names a puzzle or bundle Stage not in --levels",
    "duplicate-attempt": "an `attempt` id seen before (the first is kept)",
}
TEXT_FIELDS = ("puzzle", "bundle", "outcome", "player", "client", "at", "attempt")
INT_FIELDS = ("level", "stage", "adds_used", "moves", "attempts", "wins", "abandons")
NUMBER_FIELDS = ("seconds",)
FIELDS = TEXT_FIELDS + INT_FIELDS + NUMBER_FIELDS


class TelemetryError(NumberMatchError):
    """Telemetry that cannot be read at all (names the file), or bad records under --strict."""


@dataclass(frozen=True)
class PuzzleCounts:
    """One puzzle's attempts: `attempts` counts every attempt, abandoned ones included."""

    puzzle: str
    attempts: int
    wins: int
    abandons: int

    @property
    def finished(self) -> int:
        """Attempts played to an end (won or lost): what a loss rate is taken over."""
        return self.attempts - self.abandons

    @property
    def losses(self) -> int:
        return self.finished - self.wins

    @property
    def loss_rate(self) -> float | None:
        return self.losses / self.finished if self.finished else None


@dataclass(frozen=True)
class BadRecords:
    """Bad records of one kind: how many, and where the first few are (`file:line`)."""

    kind: str
    count: int
    first: tuple[str, ...]

    def __str__(self) -> str:
        more = ", ..." if self.count > len(self.first) else ""
        return f"{self.count} {self.kind} ({BAD_KINDS[self.kind]}): {', '.join(self.first)}{more}"


@dataclass(frozen=True)
class Telemetry:
    """Counts per puzzle read from telemetry files, and what was skipped."""

    counts: dict[str, PuzzleCounts]
    records: int  # good records read
    bad: tuple[BadRecords, ...]
    digest: str  # sha256 of the files' bytes, in the order given
    files: tuple[str, ...]

    @property
    def bad_total(self) -> int:
        return sum(b.count for b in self.bad)

    def summary(self) -> str:
        attempts = sum(c.attempts for c in self.counts.values())
        abandons = sum(c.abandons for c in self.counts.values())
        return (
            f"{counted(self.records, 'record')} ({counted(attempts, 'attempt')}, {abandons:,} abandoned) on "
            f"{counted(len(self.counts), 'puzzle')}; {counted(self.bad_total, 'bad record')} skipped"
        )


def telemetry_format(path: Path) -> str:
    fmt = FORMAT_BY_SUFFIX.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(FORMAT_BY_SUFFIX)
        raise TelemetryError(
            f"{path}: unknown telemetry format {path.suffix or '(no suffix)'!r}; expected {known}"
        )
    return fmt


def counted(n: int, word: str, plural: str | None = None) -> str:
    """`1 record`, `2,400 records`."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def open_telemetry(path: Path) -> int:
    """A read-only descriptor of the telemetry file `path`, named literally (no pattern, no `~`:
    DuckDB is handed `/dev/fd/N`, never the name). What is not a regular file is refused in one
    line saying what it is, without opening it (a FIFO would block until someone writes)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise TelemetryError(f"{path}: is a link to a missing file") from None
        raise TelemetryError(f"{path}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TelemetryError(
                f"{path}: is a loop of symbolic links (a link that leads back to itself); no file to read"
            ) from exc
        raise TelemetryError(f"{path}: cannot read: {os_message(exc)}") from exc
    _check_regular(path, info.st_mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise TelemetryError(f"{path}: cannot read: {os_message(exc)}") from exc
    try:
        _check_regular(path, os.fstat(fd).st_mode)  # replaced between the stat and the open
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_regular(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        what = "a folder, not a telemetry file (name the files in it)"
    elif stat.S_ISFIFO(mode):
        what = "a named pipe (FIFO), not a file: telemetry is read from files (a pipe is never opened: it would wait for a writer)"
    elif stat.S_ISSOCK(mode):
        what = "a socket, not a file"
    else:
        what = "a device, not a regular file"
    raise TelemetryError(f"{path}: is {what}")


def fd_path(fd: int) -> Path:
    """The name DuckDB reads an open descriptor by (no glob character, no `~` in it)."""
    return Path(f"/dev/fd/{fd}")


@dataclass
class _Scan:
    """What one pass over a file's bytes found (text: whether every line holds something; no
    blank line: a record's position is then its line number, which lets JSON Lines take
    DuckDB's fast reader)."""

    sha: Any  # the run's hash, which this file's length and bytes went into
    dense: bool = True


def _scan(path: Path, fd: int, fmt: str, sha: Any) -> _Scan:
    """Read the file once, in bounded memory: its hash, and for JSON Lines and CSV the checks
    DuckDB would make too late or not at all: UTF-8 (naming the line of the first bad byte), the
    record limit (a line, or a CSV record over several lines, longer than
    MAX_TELEMETRY_LINE_BYTES ends the read naming its line before DuckDB holds it), and a CSV
    quote never closed."""
    sha.update(f"{os.fstat(fd).st_size}:".encode())  # as before: the length, then the bytes
    scan = _Scan(sha)
    with open(fd, "rb", closefd=False) as fh:
        fh.seek(0)
        if fmt == "parquet":
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                sha.update(chunk)
            return scan
        _scan_text(path, fh, fmt == "csv", scan)
    return scan


def _too_long(path: Path, line: int, what: str = "the line") -> TelemetryError:
    limit = MAX_TELEMETRY_LINE_BYTES
    return TelemetryError(
        f"{path}:{line}: {what} is longer than {limit:,} bytes, the limit of one telemetry "
        f"record (docs/limits.md)"
    )


def _scan_text(path: Path, fh: Any, csv: bool, scan: _Scan) -> None:
    limit = MAX_TELEMETRY_LINE_BYTES
    blank = re.compile(rb"\n[ \t\r]*\n")
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1  # the line the current (partial) line is
    run = 0  # its bytes so far
    record, record_bytes, quoted = 1, 0, False  # CSV: where the record began, its bytes, in "..."
    tail = b"\n"  # the file's start counts as after a line end
    for chunk in iter(lambda: fh.read(1 << 20), b""):
        scan.sha.update(chunk)
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            where = line + chunk.count(b"\n", 0, exc.start)
            raise TelemetryError(f"{path}:{where}: not UTF-8 text") from None
        if scan.dense and blank.search(tail + chunk):
            scan.dense = False
        tail = chunk[-64:]
        parts = chunk.split(b"\n")  # parts[0] goes on with the current line; the last is partial
        if not csv or (not quoted and b'"' not in chunk):
            if run + len(parts[0]) > limit or max(map(len, parts)) > limit:
                for i, part in enumerate(parts):
                    if (run if i == 0 else 0) + len(part) > limit:
                        raise _too_long(path, line + i)
            if len(parts) > 1:
                line += len(parts) - 1
                run = len(parts[-1])
            else:
                run += len(parts[0])
            record, record_bytes = line, run
            continue
        last = len(parts) - 1
        for i, part in enumerate(parts):
            run += len(part)
            record_bytes += len(part)
            if run > limit:
                raise _too_long(path, line)
            if record_bytes > limit:
                raise _too_long(
                    path, record, "the record starting here (a quoted field over several lines)"
                )
            if part.count(b'"') & 1:
                quoted = not quoted
            if i < last:
                line += 1
                run = 0
                if quoted:
                    record_bytes += 1
                else:
                    record, record_bytes = line, 0
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise TelemetryError(
            f"{path}:{line}: not UTF-8 text (the file ends inside a character)"
        ) from None
    if quoted:
        raise TelemetryError(
            f'{path}:{record}: a quoted field opened on this line is never closed (a " missing)'
        )


def sql_text(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _json_source(src: int, path: Path) -> str:
    """One row per line: every field as text ('!' when of the wrong JSON type), and whether the
    line is a JSON object. Blank lines are dropped (after numbering). Each line is parsed twice
    (the fields' types, their text), never once per field: that is most of the reading time."""
    paths = ", ".join(f"'$.{f}'" for f in FIELDS)
    cols = []
    for k, f in enumerate(FIELDS, 1):
        cols.append(
            f"CASE WHEN NOT ok OR t[{k}] IS NULL OR t[{k}] = 'NULL' THEN NULL "
            f"WHEN t[{k}] IN ('OBJECT', 'ARRAY') THEN '!' ELSE v[{k}] END AS \"{f}\""
        )
    return f"""
        SELECT {src} AS src, line, ok, {", ".join(cols)}
        FROM (
            SELECT line, t IS NOT NULL AND starts_with(ltrim(j), '{{') AS ok, t,
                   CASE WHEN t IS NOT NULL THEN json_extract_string(j, [{paths}]) END AS v
            FROM (
                SELECT line, j, try(json_type(j, [{paths}])) AS t
                FROM (
                    SELECT row_number() OVER () AS line, j
                    FROM read_csv({sql_text(path)}, columns = {{'j': 'VARCHAR'}}, header = false, delim = '\x01',
                                  quote = '', escape = '', auto_detect = false, strict_mode = false,
                                  new_line = '\\r\\n', max_line_size = {MAX_TELEMETRY_LINE_BYTES}, parallel = false)
                )
                WHERE j IS NOT NULL AND trim(j) <> ''
            )
        )"""


def _fast_json_source(src: int, path: Path) -> str:
    """JSON Lines through DuckDB's own reader (parallel, several times faster than the line
    path): every field as text, a record's position as its line (only used when the file has no
    blank line). It refuses a file with a line that is not a JSON object, or too long; then the
    line path reads it and says where."""
    cols = ", ".join(f"'{f}': 'JSON'" for f in FIELDS)
    # read as JSON, not VARCHAR: as text a list or an object would pass for the string "[1]"
    quoted = ", ".join(
        f"CASE WHEN json_type(\"{f}\") IN ('OBJECT', 'ARRAY') THEN '!' "
        f'ELSE json_extract_string("{f}", \'$\') END AS "{f}"'
        for f in FIELDS
    )
    return (
        f"SELECT {src} AS src, row_number() OVER () AS line, true AS ok, {quoted} "
        f"FROM read_json({sql_text(path)}, format = 'newline_delimited', columns = {{{cols}}}, "
        f"maximum_object_size = {MAX_TELEMETRY_LINE_BYTES})"
    )


def _table_source(con: Any, src: int, path: Path, fmt: str) -> str:
    """CSV or Parquet: one row per record, the known columns as text (absent ones NULL)."""
    if fmt == "csv":
        scan = (
            f"read_csv({sql_text(path)}, all_varchar = true, header = true, delim = ',', quote = '\"', "
            f"escape = '\"', max_line_size = {MAX_TELEMETRY_LINE_BYTES})"
        )
        numbered = f"SELECT *, row_number() OVER () + 1 AS line__ FROM {scan}"
    else:
        scan = f"read_parquet({sql_text(path)}, file_row_number = true)"
        numbered = f"SELECT *, file_row_number + 1 AS line__ FROM {scan}"
    columns = {
        str(row[0]).lower(): str(row[0])
        for row in con.execute(f"DESCRIBE SELECT * FROM {scan}").fetchall()
    }
    cols = []
    for f in FIELDS:
        name = columns.get(f)
        # a value longer than any field may be is '!' (a bad field) before it is stored: a
        # Parquet dictionary can repeat one long value many times at no cost in the file
        cols.append(
            f"CASE WHEN strlen(CAST(\"{name}\" AS VARCHAR)) > {MAX_TELEMETRY_TEXT} THEN '!' "
            f'ELSE nullif(CAST("{name}" AS VARCHAR), \'\') END AS "{f}"'
            if name
            else f'CAST(NULL AS VARCHAR) AS "{f}"'
        )
    return f"SELECT {src} AS src, line__ AS line, true AS ok, {', '.join(cols)} FROM ({numbered})"


def _parquet_rows(con: Any, path: Path, read: Path) -> int:
    """A Parquet file's rows, from its footer, after checking the footer against the caps (a
    small file can hold a billion rows, or values that decompress to gigabytes: both are
    refused before a row is read)."""
    [(rows,)] = con.execute(
        f"SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata({sql_text(read)})"
    ).fetchall()
    if rows > MAX_TELEMETRY_PARQUET_ROWS:
        raise TelemetryError(
            f"{path}: {counted(int(rows), 'row')}; the limit of Parquet telemetry is "
            f"{MAX_TELEMETRY_PARQUET_ROWS:,} rows per run (docs/limits.md)"
        )
    known = ", ".join(f"'{f}'" for f in FIELDS)
    bloated = con.execute(
        f"SELECT path_in_schema, total_uncompressed_size, num_values "
        f"FROM parquet_metadata({sql_text(read)}) "
        f"WHERE lower(path_in_schema) IN ({known}) AND total_uncompressed_size > "
        f"greatest(num_values, 1) * {MAX_TELEMETRY_LINE_BYTES} LIMIT 1"
    ).fetchall()
    if bloated:
        column, size, values = bloated[0]
        raise TelemetryError(
            f"{path}: column {column!r} decompresses to {int(size):,} bytes for "
            f"{counted(int(values), 'value')}, more than {MAX_TELEMETRY_LINE_BYTES:,} bytes a "
            f"value (the limit of one record, docs/limits.md)"
        )
    return int(rows)


def _bad_field_sql() -> str:
    """The condition that makes a (JSON-object) record's fields bad, over the text columns."""
    q = {f: f'"{f}"' for f in FIELDS}  # quoted: `at` is an SQL keyword
    text_bad = " OR ".join(
        f"{q[f]} = '!' OR length({q[f]}) > {MAX_TELEMETRY_TEXT}" for f in TEXT_FIELDS
    )
    num_bad = " OR ".join(f"{q[f]} = '!'" for f in INT_FIELDS + NUMBER_FIELDS)

    def nat(f: str, top: int) -> str:  # not a whole number 0..top
        # digits (a whole JSON number may read 3.0): DuckDB's casts would round 2.5 and read
        # "0x1", "1e3", "1_000", " 7" and "+7"
        return (
            f"({q[f]} IS NULL OR NOT regexp_full_match({q[f]}, '[0-9]{{1,18}}(\\.0+)?') "
            f"OR try_cast({q[f]} AS BIGINT) > {top})"
        )

    secs = f"try_cast({q['seconds']} AS DOUBLE)"
    number = r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?"  # a decimal number: no hex, inf, nan, _
    stamp = (  # ISO 8601 (a date, or a date and time, with an optional zone): no "infinity"
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?"
        r"(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?"
    )
    where = f"({q['puzzle']} IS NULL AND ({q['bundle']} IS NULL OR {nat('level', 1_000_000)} OR {nat('stage', 1_000_000)}))"
    attempt = (
        f"({q['outcome']} IS NULL OR {q['outcome']} NOT IN {OUTCOMES} OR {nat('adds_used', MAX_ADDS)} "
        f"OR {nat('moves', MAX_TELEMETRY_MOVES)} "
        f"OR ({q['seconds']} IS NOT NULL AND (NOT regexp_full_match({q['seconds']}, '{number}') "
        f"OR {secs} IS NULL OR NOT isfinite({secs}))) "
        f"OR ({q['at']} IS NOT NULL AND (NOT regexp_full_match({q['at']}, '{stamp}') "
        f"OR try_cast({q['at']} AS TIMESTAMPTZ) IS NULL)))"
    )
    top = 1_000_000_000
    aggregate = (
        f"({nat('attempts', top)} OR {nat('wins', top)} OR {nat('abandons', top)} "
        f"OR try_cast({q['wins']} AS BIGINT) + try_cast({q['abandons']} AS BIGINT) > try_cast({q['attempts']} AS BIGINT))"
    )
    return f"({text_bad} OR {num_bad} OR {where} OR CASE WHEN {q['attempts']} IS NOT NULL THEN {aggregate} ELSE {attempt} END)"


def read_telemetry(
    files: Iterable[str | os.PathLike[str]],
    catalogue: Catalogue,
    *,
    strict: bool = False,
    threads: int | None = None,
) -> Telemetry:
    """Count the telemetry in `files` per puzzle of `catalogue`; bad records counted and skipped
    (TelemetryError under `strict` when there is any, or when a file cannot be read at all)."""
    paths = [Path(f) for f in files]
    if not paths:
        raise TelemetryError("no telemetry files given")
    if len(paths) > MAX_TELEMETRY_FILES:
        raise TelemetryError(
            f"{len(paths):,} telemetry files; the limit is {MAX_TELEMETRY_FILES:,} (docs/limits.md)"
        )
    for path in paths:
        telemetry_format(path)  # an unknown suffix is refused before any file is opened
    _allow_open_files(len(paths))
    fds: list[int] = []
    spill = ""
    try:
        sha = hashlib.sha256()  # of the files' bytes in order, each prefixed by its length
        scans = []
        for path in paths:
            fds.append(open_telemetry(path))
            scans.append(_scan(path, fds[-1], telemetry_format(path), sha))
        digest = "sha256:" + sha.hexdigest()
        config: dict[str, Any] = {
            "memory_limit": TELEMETRY_MEMORY,
            "preserve_insertion_order": True,
        }
        if threads is not None:
            config["threads"] = threads
        # beyond the memory cap DuckDB spills here, not into the cwd
        spill = tempfile.mkdtemp(prefix="numbermatch-duckdb-")
        config["temp_directory"] = spill
        con = duckdb.connect(config=config)
        try:
            con.execute(
                "SET enable_progress_bar = false"
            )  # DuckDB draws one on a long query: never on our stderr
            sources = [
                _Source(path, fd_path(fd), scan.dense)
                for path, fd, scan in zip(paths, fds, scans, strict=True)
            ]
            telemetry = _read(con, sources, catalogue, digest)
        except duckdb.Error as exc:
            raise _duckdb_error(exc, paths, fds) from exc
        finally:
            con.close()
    finally:
        for fd in fds:
            os.close(fd)
        if spill:
            shutil.rmtree(spill, ignore_errors=True)  # the folder made above, and only it
    if strict:
        check_strict(telemetry)
    return telemetry


def _allow_open_files(files: int) -> None:
    """Every file stays open while it is read (DuckDB reads the descriptor the scan hashed), so
    the process may need more descriptors than the usual soft limit of 1,024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = files + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        top = want if hard == resource.RLIM_INFINITY else min(want, hard)
        if top > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))


@dataclass(frozen=True)
class _Source:
    """A telemetry file as named (for messages) and as DuckDB reads it (`/dev/fd/N`)."""

    path: Path
    read: Path
    dense: bool


def _duckdb_error(exc: Exception, paths: list[Path], fds: list[int]) -> TelemetryError:
    """A DuckDB error as one line naming the file (DuckDB names it `/dev/fd/N`)."""
    text = str(exc).strip()
    which = next(
        (p for p, fd in zip(paths, fds, strict=True) if str(fd_path(fd)) in text),
        None,
    )
    for p, fd in zip(paths, fds, strict=True):
        text = text.replace(str(fd_path(fd)), str(p))
    first = text.splitlines()[0] if text else type(exc).__name__
    if "out of memory" in first.lower() or "memory limit" in first.lower():
        first = f"more memory than the cap of {TELEMETRY_MEMORY} (docs/limits.md): {first[:160]}"
    named = str(which) if which is not None else ", ".join(map(str, paths))
    return TelemetryError(f"{named}: cannot read the telemetry: {first[:200]}")


def _read(con: Any, sources: list[_Source], catalogue: Catalogue, digest: str) -> Telemetry:
    con.execute("CREATE TEMP TABLE puzzles (id VARCHAR, adds BIGINT)")
    con.executemany(
        "INSERT INTO puzzles VALUES (?, ?)", [(pid, p.adds) for pid, p in catalogue.puzzles.items()]
    )
    con.execute(
        "CREATE TEMP TABLE stages (bundle VARCHAR, level BIGINT, stage BIGINT, puzzle VARCHAR)"
    )
    if catalogue.stages:
        con.executemany(
            "INSERT INTO stages VALUES (?, ?, ?, ?)",
            [(s.bundle, s.level, s.stage, s.puzzle) for s in catalogue.stages],
        )
    # materialised once per file: each line is parsed once, whatever the checks below refer to
    paths = [s.path for s in sources]
    rows = 0
    for source in sources:
        if telemetry_format(source.path) == "parquet":
            rows += _parquet_rows(con, source.path, source.read)
            if rows > MAX_TELEMETRY_PARQUET_ROWS:
                raise TelemetryError(
                    f"{', '.join(map(str, paths))}: {rows:,} Parquet rows in all; the limit is "
                    f"{MAX_TELEMETRY_PARQUET_ROWS:,} rows per run (docs/limits.md)"
                )
    for src, source in enumerate(sources):
        fmt = telemetry_format(source.path)
        if fmt == "jsonl" and source.dense:
            try:
                con.execute(f"CREATE TEMP TABLE raw{src} AS {_fast_json_source(src, source.read)}")
                continue
            except duckdb.Error:
                # a line that is not a JSON object: the line path says where
                con.execute(f"DROP TABLE IF EXISTS raw{src}")
        select = (
            _json_source(src, source.read)
            if fmt == "jsonl"
            else _table_source(con, src, source.read, fmt)
        )
        con.execute(f"CREATE TEMP TABLE raw{src} AS {select}")
    con.execute(
        "CREATE TEMP VIEW raw AS "
        + " UNION ALL ".join(f"SELECT * FROM raw{src}" for src in range(len(sources)))
    )
    con.execute(f"""
        CREATE TEMP TABLE rec AS
        SELECT r.src, r.line, r.attempt, r.attempts IS NOT NULL AS aggregated, r.outcome, r.attempts, r.wins, r.abandons,
            coalesce(p.id, s.puzzle) AS pid,
            CASE
                WHEN NOT r.ok THEN 'not-json'
                WHEN r.bad_field THEN 'bad-field'
                WHEN coalesce(p.id, s.puzzle) IS NULL THEN 'unknown-puzzle'
                WHEN try_cast(r.adds_used AS BIGINT) > coalesce(p.adds, ps.adds) THEN 'bad-field'
            END AS bad
        FROM (SELECT *, ok AND {_bad_field_sql()} AS bad_field FROM raw) AS r
        LEFT JOIN puzzles p ON r.puzzle IS NOT NULL AND p.id = r.puzzle
        LEFT JOIN stages s ON r.puzzle IS NULL AND s.bundle = r.bundle
            AND s.level = try_cast(r.level AS BIGINT) AND s.stage = try_cast(r.stage AS BIGINT)
        LEFT JOIN puzzles ps ON ps.id = s.puzzle
    """)
    con.execute("""
        UPDATE rec SET bad = 'duplicate-attempt' FROM (
            SELECT src, line FROM (
                SELECT src, line, row_number() OVER (PARTITION BY attempt ORDER BY src, line) AS k
                FROM rec WHERE bad IS NULL AND attempt IS NOT NULL AND NOT aggregated
            ) WHERE k > 1
        ) AS d WHERE rec.src = d.src AND rec.line = d.line
    """)
    rows = con.execute("""
        SELECT pid,
            sum(CASE WHEN aggregated THEN CAST(attempts AS BIGINT) ELSE 1 END),
            sum(CASE WHEN aggregated THEN CAST(wins AS BIGINT) ELSE CAST(outcome = 'won' AS BIGINT) END),
            sum(CASE WHEN aggregated THEN CAST(abandons AS BIGINT) ELSE CAST(outcome = 'abandoned' AS BIGINT) END),
            count(*)
        FROM rec WHERE bad IS NULL GROUP BY pid ORDER BY pid
    """).fetchall()
    counts = {pid: PuzzleCounts(pid, int(a), int(w), int(ab)) for pid, a, w, ab, _ in rows}
    records = sum(int(r[4]) for r in rows)
    bad_rows = con.execute("""
        SELECT bad, count(*) FROM rec WHERE bad IS NOT NULL GROUP BY bad
    """).fetchall()
    firsts = con.execute(f"""
        SELECT bad, src, line FROM (
            SELECT bad, src, line, row_number() OVER (PARTITION BY bad ORDER BY src, line) AS k
            FROM rec WHERE bad IS NOT NULL
        ) WHERE k <= {FIRST_PLACES} ORDER BY bad, src, line
    """).fetchall()
    places: dict[str, list[str]] = {}
    for kind, src, line in firsts:
        unit = "row " if telemetry_format(paths[src]) == "parquet" else ""
        places.setdefault(kind, []).append(f"{paths[src]}:{unit}{line}")
    found = dict(bad_rows)
    bad = tuple(
        BadRecords(k, int(found[k]), tuple(places.get(k, ()))) for k in BAD_KINDS if k in found
    )
    return Telemetry(counts, records, bad, digest, tuple(map(str, paths)))


def check_strict(telemetry: Telemetry) -> None:
    """`--strict`: refuse telemetry with any bad record (one line, the counts and places)."""
    if telemetry.bad:
        raise TelemetryError(
            f"--strict: {counted(telemetry.bad_total, 'bad record')}: "
            + "; ".join(map(str, telemetry.bad))
        )
