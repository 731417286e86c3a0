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
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import NumberMatchError
from pipeline.limits import (
    MAX_ADDS,
    MAX_TELEMETRY_FILES,
    MAX_TELEMETRY_LINE_BYTES,
    MAX_TELEMETRY_MOVES,
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
            f"{self.records:,} records ({attempts:,} attempts, {abandons:,} abandoned) on "
            f"{len(self.counts):,} puzzles; {self.bad_total:,} bad records skipped"
        )


def telemetry_format(path: Path) -> str:
    fmt = FORMAT_BY_SUFFIX.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(FORMAT_BY_SUFFIX)
        raise TelemetryError(
            f"{path}: unknown telemetry format {path.suffix or '(no suffix)'!r}; expected {known}"
        )
    return fmt


def file_digest(paths: Sequence[Path]) -> str:
    """`sha256:` of the files' bytes in order (each prefixed by its length, so splits differ)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(f"{path.stat().st_size}:".encode())
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


def _check_utf8(path: Path) -> bool:
    """Refuse a JSON Lines or CSV file that is not UTF-8, naming the line of the first bad byte.
    Returns whether every line holds something (no blank line: then a record's position is its
    line number, which lets JSON Lines take DuckDB's fast reader)."""
    blank = re.compile(rb"\n[ \t\r]*\n")
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    dense = True
    tail = b"\n"  # the file's start counts as after a line end
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                where = line + chunk.count(b"\n", 0, exc.start)
                raise TelemetryError(f"{path}:{where}: not UTF-8 text") from None
            line += chunk.count(b"\n")
            if dense and blank.search(tail + chunk):
                dense = False
            tail = chunk[-64:]
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise TelemetryError(
                f"{path}:{line}: not UTF-8 text (the file ends inside a character)"
            ) from None
    return dense


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
    cols = ", ".join(f"'{f}': 'VARCHAR'" for f in FIELDS)
    quoted = ", ".join(f'"{f}"' for f in FIELDS)
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
        cols.append(
            f'nullif(CAST("{name}" AS VARCHAR), \'\') AS "{f}"'
            if name
            else f'CAST(NULL AS VARCHAR) AS "{f}"'
        )
    return f"SELECT {src} AS src, line__ AS line, true AS ok, {', '.join(cols)} FROM ({numbered})"


def _bad_field_sql() -> str:
    """The condition that makes a (JSON-object) record's fields bad, over the text columns."""
    q = {f: f'"{f}"' for f in FIELDS}  # quoted: `at` is an SQL keyword
    text_bad = " OR ".join(
        f"{q[f]} = '!' OR length({q[f]}) > {MAX_TELEMETRY_TEXT}" for f in TEXT_FIELDS
    )
    num_bad = " OR ".join(f"{q[f]} = '!'" for f in INT_FIELDS + NUMBER_FIELDS)

    def nat(f: str, top: int) -> str:  # not a whole number 0..top
        v = f"try_cast({q[f]} AS BIGINT)"
        return f"({q[f]} IS NULL OR {v} IS NULL OR {v} < 0 OR {v} > {top})"

    secs = f"try_cast({q['seconds']} AS DOUBLE)"
    where = f"({q['puzzle']} IS NULL AND ({q['bundle']} IS NULL OR {nat('level', 1_000_000)} OR {nat('stage', 1_000_000)}))"
    attempt = (
        f"({q['outcome']} IS NULL OR {q['outcome']} NOT IN {OUTCOMES} OR {nat('adds_used', MAX_ADDS)} "
        f"OR {nat('moves', MAX_TELEMETRY_MOVES)} "
        f"OR ({q['seconds']} IS NOT NULL AND ({secs} IS NULL OR NOT isfinite({secs}) OR {secs} < 0)) "
        f"OR ({q['at']} IS NOT NULL AND try_cast({q['at']} AS TIMESTAMPTZ) IS NULL))"
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
        if not path.is_file():
            raise TelemetryError(f"{path}: no such file")
    dense = {path: _check_utf8(path) for path in paths if telemetry_format(path) != "parquet"}
    config: dict[str, Any] = {"memory_limit": TELEMETRY_MEMORY, "preserve_insertion_order": True}
    if threads is not None:
        config["threads"] = threads
    spill = tempfile.mkdtemp(
        prefix="numbermatch-duckdb-"
    )  # beyond the memory cap DuckDB spills here, not into the cwd
    config["temp_directory"] = spill
    con = duckdb.connect(config=config)
    con.execute(
        "SET enable_progress_bar = false"
    )  # DuckDB draws one on a long query: never on our stderr
    try:
        telemetry = _read(con, paths, catalogue, dense)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        which = next((p for p in paths if str(p) in str(exc)), None)
        raise TelemetryError(
            f"{which or ', '.join(map(str, paths))}: cannot read the telemetry: {first[:200]}"
        ) from None
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)  # the folder made above, and only it
    if strict:
        check_strict(telemetry)
    return telemetry


def _read(con: Any, paths: list[Path], catalogue: Catalogue, dense: dict[Path, bool]) -> Telemetry:
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
    for src, path in enumerate(paths):
        fmt = telemetry_format(path)
        if fmt == "jsonl" and dense.get(path, False):
            try:
                con.execute(f"CREATE TEMP TABLE raw{src} AS {_fast_json_source(src, path)}")
                continue
            except duckdb.Error:
                # a line that is not a JSON object, or too long: the line path says where
                con.execute(f"DROP TABLE IF EXISTS raw{src}")
        source = _json_source(src, path) if fmt == "jsonl" else _table_source(con, src, path, fmt)
        con.execute(f"CREATE TEMP TABLE raw{src} AS {source}")
    con.execute(
        "CREATE TEMP VIEW raw AS "
        + " UNION ALL ".join(f"SELECT * FROM raw{src}" for src in range(len(paths)))
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
    return Telemetry(counts, records, bad, file_digest(paths), tuple(map(str, paths)))


def check_strict(telemetry: Telemetry) -> None:
    """`--strict`: refuse telemetry with any bad record (one line, the counts and places)."""
    if telemetry.bad:
        raise TelemetryError(
            f"--strict: {telemetry.bad_total:,} bad records: " + "; ".join(map(str, telemetry.bad))
        )
