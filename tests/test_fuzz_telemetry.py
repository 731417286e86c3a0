"""Fuzzing the telemetry readers: random records and random file shapes through `read_telemetry`.

Records (hostile values in every field: fractions, hex, exponents, signs, `infinity`, booleans,
lists, long text, duplicate attempt ids, the aggregated form, lines that are not objects) are
written as JSON Lines, CSV and Parquet. Every read must agree with `expected`, an independent
reading of the documented rules in plain Python (docs/telemetry.md, docs/security.md), and the
three formats must agree with each other. Random file shapes (bytes cut, repeated, replaced,
blank lines, CRLF, a BOM, lines over the limit) must give counts or one TelemetryError line
naming the file, never a traceback.

The default run is short and derandomized; `make fuzz` runs NM_FUZZ_EXAMPLES examples of each.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent
BUNDLE = REPO / "generated" / "2026-11-29" / "bundle.yaml"
CAMPAIGN = int(os.environ.get("NM_FUZZ_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=CAMPAIGN or 30,
    deadline=None,
    derandomize=not CAMPAIGN,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
SEEN: Counter[str] = Counter()  # what the campaign met, printed at the end

UNKNOWN = "nm1-000000000000"


def mostly(good: list[Any], hostile: list[Any]) -> st.SearchStrategy[Any]:
    """A good value five times in six: most records are good, each field is hostile often."""
    return st.integers(0, 5).flatmap(
        lambda k: st.sampled_from(hostile) if k == 5 else st.sampled_from(good)
    )


INTS = mostly(
    [0, 1, 2, "1", 3.0],
    [20, 2.5, 0.6, -0.4, -1, 10**20, True, None, [1], {"a": 1}]
    + ["0x1", "1e3", "1_000", " 7", "+7", "3.0", "infinity", "-0"],
)
COUNTS = mostly([0, 1, 2, 5, 9, "4"], [2.5, -1, "0x3e8", "1e3", None, True])
TEXT = mostly(["p1", "p2", None, "a,b", 'say "hi"'], ["x" * 300, 5, True, [1]])
SECONDS = mostly([1.5, 87.9, 0, None, "12.5", "1e3"], [-1, "inf", "nan", "0x1", "infinity"])
AT = mostly(
    ["2026-10-04T01:57:17Z", "2026-10-04", "2026-10-04 01:57:17+02:00", None],
    ["infinity", "x", 5],
)
OUTCOME = mostly(["won", "lost", "abandoned"], ["tied", "WON", 1, None])
ATTEMPT = st.sampled_from([None, "a1", "a2", "a3"])


@pytest.fixture(scope="module")
def catalogue() -> Any:
    from pipeline.telemetry.catalogue import load_catalogue

    return load_catalogue([BUNDLE])


def records(ids: list[str]) -> st.SearchStrategy[list[dict[str, Any]]]:
    puzzle = mostly(ids, [UNKNOWN, None, 7])
    attempt = st.fixed_dictionaries(
        {
            "puzzle": puzzle,
            "outcome": OUTCOME,
            "adds_used": INTS,
            "moves": INTS,
            "seconds": SECONDS,
            "at": AT,
            "attempt": ATTEMPT,
            "player": TEXT,
        }
    )
    aggregate = st.fixed_dictionaries(
        {"puzzle": puzzle, "attempts": COUNTS, "wins": COUNTS, "abandons": COUNTS}
    )
    return st.lists(st.one_of(attempt, attempt, aggregate), min_size=1, max_size=12)


# --- the rules, read independently ---------------------------------------------------------------

NAT = re.compile(r"[0-9]{1,18}(\.0+)?")
NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")
STAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?"
    r"(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?"
)
TEXT_FIELDS = ("puzzle", "bundle", "outcome", "player", "client", "at", "attempt")


def text_of(value: Any) -> str | None:
    """A JSON value as the reader sees it: text, '!' for an object or a list, None if absent."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return "!"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def nat(text: str | None, top: int) -> int | None:
    if text is None or not NAT.fullmatch(text):
        return None
    value = int(text.split(".")[0])
    return value if value <= top else None


def expected(rows: list[dict[str, Any] | str], catalogue: Any) -> tuple[int, dict, Counter]:
    """(good records, counts per puzzle, bad records by kind) as the docs say."""
    counts: dict[str, list[int]] = {}
    bad: Counter[str] = Counter()
    good = 0
    seen_attempts: set[str] = set()
    for row in rows:
        if not isinstance(row, dict):
            bad["not-json"] += 1
            continue
        t = {k: text_of(v) for k, v in row.items()}
        pid = t.get("puzzle")
        if any(t.get(f) == "!" or len(t.get(f) or "") > 256 for f in TEXT_FIELDS) or any(
            v == "!" for v in t.values()
        ):
            bad["bad-field"] += 1
            continue
        if pid is None:  # no bundle Stages in these records
            bad["bad-field"] += 1
            continue
        if t.get("attempts") is not None:
            a, w, ab = (nat(t.get(f), 1_000_000_000) for f in ("attempts", "wins", "abandons"))
            if a is None or w is None or ab is None or w + ab > a:
                bad["bad-field"] += 1
                continue
            add = (a, w, ab)
        else:
            ok = t.get("outcome") in ("won", "lost", "abandoned")
            ok = ok and nat(t.get("adds_used"), 16) is not None
            ok = ok and nat(t.get("moves"), 100_000) is not None
            secs = t.get("seconds")
            if secs is not None:
                ok = ok and bool(NUMBER.fullmatch(secs)) and math.isfinite(float(secs))
            at = t.get("at")
            if at is not None:
                ok = ok and bool(STAMP.fullmatch(at))
            if not ok:
                bad["bad-field"] += 1
                continue
            add = (1, int(t["outcome"] == "won"), int(t["outcome"] == "abandoned"))
        if pid not in catalogue.puzzles:
            bad["unknown-puzzle"] += 1
            continue
        if t.get("attempts") is None and nat(t.get("adds_used"), 16) > catalogue.puzzles[pid].adds:  # type: ignore[operator]
            bad["bad-field"] += 1
            continue
        if t.get("attempts") is None and t.get("attempt") is not None:
            if t["attempt"] in seen_attempts:
                bad["duplicate-attempt"] += 1
                continue
            seen_attempts.add(t["attempt"])  # type: ignore[arg-type]
        c = counts.setdefault(pid, [0, 0, 0])
        for k in range(3):
            c[k] += add[k]
        good += 1
    return good, {p: tuple(c) for p, c in counts.items()}, bad


def read(paths: list[Path], catalogue: Any) -> tuple[int, dict, Counter]:
    from pipeline.telemetry.records import read_telemetry

    t = read_telemetry(paths, catalogue)
    return (
        t.records,
        {p: (c.attempts, c.wins, c.abandons) for p, c in t.counts.items()},
        Counter({b.kind: b.count for b in t.bad}),
    )


def as_csv(rows: list[dict[str, Any]]) -> str:
    fields = ["puzzle", "outcome", "adds_used", "moves", "seconds", "at", "attempt", "player"]
    fields += ["attempts", "wins", "abandons"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(fields)
    for r in rows:
        writer.writerow(["" if r.get(f) is None else text_of(r.get(f)) for f in fields])
    return buf.getvalue()


@pytest.mark.slow
def test_records_in_every_format_read_as_the_rules_say(catalogue: Any, tmp_path: Path) -> None:
    import duckdb

    ids = sorted(catalogue.puzzles)[:3]

    @SETTINGS
    @given(
        rows=records(ids),
        junk=st.lists(st.sampled_from(["not json", "[1, 2]", "", "  "]), max_size=3),
    )
    def one(rows: list[dict[str, Any]], junk: list[str]) -> None:
        lines: list[dict[str, Any] | str] = [*rows, *junk]
        text = "".join(
            (
                json.dumps({k: v for k, v in r.items() if v is not None})
                if isinstance(r, dict)
                else r
            )
            + "\n"
            for r in lines
        )
        jsonl = tmp_path / "t.jsonl"
        jsonl.write_text(text)
        want = expected([r for r in lines if not isinstance(r, str) or r.strip()], catalogue)
        got = read([jsonl], catalogue)
        assert got == want, (rows, junk)
        SEEN.update(got[2])
        SEEN["records"] += got[0]
        scalar = [r for r in rows if not any(isinstance(v, (list, dict)) for v in r.values())]
        if not scalar:
            return
        # CSV and Parquet (its columns as text): the same counts as JSON Lines of the same records
        sheet = tmp_path / "t.csv"
        sheet.write_text(as_csv(scalar))
        want = expected(list(scalar), catalogue)
        assert read([sheet], catalogue) == want, scalar
        parquet = tmp_path / "t.parquet"
        con = duckdb.connect()
        try:
            con.execute(
                f"COPY (SELECT * FROM read_csv('{sheet}', all_varchar = true, header = true)) "
                f"TO '{parquet}' (FORMAT parquet)"
            )
        finally:
            con.close()
        assert read([parquet], catalogue) == want, scalar

    one()
    print(f"\ntelemetry records fuzz: {dict(SEEN)}")


@pytest.mark.slow
def test_file_shapes_give_counts_or_one_line(catalogue: Any, tmp_path: Path) -> None:
    from pipeline.telemetry.records import TelemetryError, read_telemetry

    pid = sorted(catalogue.puzzles)[0]
    good = json.dumps({"puzzle": pid, "outcome": "won", "adds_used": 0, "moves": 9}) + "\n"
    seeds = {
        "jsonl": (good * 5).encode(),
        "csv": (f"puzzle,outcome,adds_used,moves\n{pid},won,0,9\n{pid},lost,0,3\n").encode(),
    }
    edits = st.lists(
        st.tuples(
            st.sampled_from(["cut", "insert", "repeat", "replace"]),
            st.integers(0, 400),
            st.sampled_from(
                [b"\n", b"\n\n", b"\r\n", b"\xef\xbb\xbf", b'"', b",", b"\xff", b"\x00", b"{"]
                + [b"x" * 70_000, b'"' + b"y\n" * 33_000]
            ),
        ),
        max_size=4,
    )
    outcomes: Counter[str] = Counter()

    @SETTINGS
    @given(fmt=st.sampled_from(sorted(seeds)), changes=edits)
    def one(fmt: str, changes: list[tuple[str, int, bytes]]) -> None:
        data = seeds[fmt]
        for op, at, piece in changes:
            at = at % (len(data) + 1)
            if op == "cut":
                data = data[:at] + data[at + len(piece) :]
            elif op == "insert":
                data = data[:at] + piece + data[at:]
            elif op == "repeat":
                data = data + data[at:]
            else:
                data = data[:at] + piece + data[at + len(piece) :]
        path = tmp_path / f"shape.{fmt}"
        path.write_bytes(data)
        try:
            read_telemetry([path], catalogue)
            outcomes["read"] += 1
        except TelemetryError as exc:
            message = str(exc)
            assert "\n" not in message and message.startswith(str(path)), message
            outcomes["one line"] += 1

    one()
    print(f"\ntelemetry file shapes fuzz: {dict(outcomes)}")
