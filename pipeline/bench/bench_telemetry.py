"""Telemetry: reading and counting 10 million attempt records (issue 24: at most 60 s on two cores).

The records (JSON Lines, and the same records as Parquet) name the committed night's puzzles,
with a duplicate attempt and a bad record every so often; they are written by DuckDB from a
seeded formula (the same file every run). `read_telemetry` (every check, de-duplication, the
counts) runs in a child process on two threads, so its peak memory (max RSS) is its own. The
baseline in the same run is the plain-Python way (json.loads per line, the same checks, dicts)
over a slice of the file, scaled to the whole file by its share of the lines; the ratio is
baseline / DuckDB. NM_BENCH_TELEMETRY_RECORDS changes the size (default 10,000,000).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from pipeline.telemetry.catalogue import load_catalogue
from pipeline.telemetry.records import read_telemetry

RECORDS = int(os.environ.get("NM_BENCH_TELEMETRY_RECORDS", "10000000"))
BASELINE_SLICE = 200_000
NIGHT = Path(__file__).resolve().parents[2] / "generated" / "2026-11-29" / "bundle.yaml"
TARGET_S = 60.0


def write_records(folder: Path, n: int) -> tuple[Path, Path]:
    """n attempt records as JSON Lines and as Parquet (DuckDB writes both; deterministic)."""
    ids = sorted(load_catalogue([NIGHT]).puzzles)
    jsonl, parquet = folder / "attempts.jsonl", folder / "attempts.parquet"
    con = duckdb.connect(config={"threads": 2})
    con.execute(
        "CREATE TEMP TABLE ids AS SELECT * FROM (VALUES "
        + ", ".join(f"({k}, '{p}')" for k, p in enumerate(ids))
        + ") t(k, id)"
    )
    select = f"""
        SELECT CASE WHEN i % 100003 = 7 THEN 'a' || (i - 1) ELSE 'a' || i END AS attempt,
               CASE WHEN i % 50021 = 3 THEN 'nm1-000000000000' ELSE ids.id END AS puzzle,
               CASE WHEN hash(i) % 20 = 0 THEN 'abandoned' WHEN hash(i * 7) % 100 < 40 THEN 'lost' ELSE 'won' END AS outcome,
               CAST(hash(i * 3) % 2 AS BIGINT) AS adds_used,
               CAST(10 + hash(i * 5) % 30 AS BIGINT) AS moves,
               round(20 + (hash(i * 11) % 2000) / 10.0, 1) AS seconds,
               'p' || (hash(i * 13) % 100000) AS player,
               'ios-5.2' AS client,
               '2026-11-30T12:00:00Z' AS at
        FROM range({n}) r(i) JOIN ids ON ids.k = i % {len(ids)}
        ORDER BY i"""
    con.execute(f"COPY ({select}) TO '{jsonl}' (FORMAT json)")
    con.execute(f"COPY ({select}) TO '{parquet}' (FORMAT parquet)")
    con.close()
    return jsonl, parquet


def _child(path: str) -> None:
    """Run in a child process: read and count, print seconds and the summary as JSON."""
    catalogue = load_catalogue([NIGHT])
    start = time.perf_counter()
    t = read_telemetry([path], catalogue, threads=2)
    took = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(
        json.dumps(
            {
                "seconds": took,
                "records": t.records,
                "bad": {b.kind: b.count for b in t.bad},
                "rss_mib": rss,
            }
        )
    )


def plain_python(path: Path, lines: int, ids: set[str]) -> tuple[float, dict[str, list[int]]]:
    """The baseline: the first `lines` lines, parsed and counted in plain Python."""
    counts: dict[str, list[int]] = {}
    seen: set[str] = set()
    start = time.perf_counter()
    with open(path, encoding="utf-8") as fh:
        for k, line in enumerate(fh):
            if k >= lines:
                break
            try:
                r = json.loads(line)
            except ValueError:
                continue
            pid, outcome = r.get("puzzle"), r.get("outcome")
            if (
                pid not in ids
                or outcome not in ("won", "lost", "abandoned")
                or not isinstance(r.get("moves"), int)
            ):
                continue
            if r.get("attempt") in seen:
                continue
            seen.add(r["attempt"])
            c = counts.setdefault(pid, [0, 0, 0])
            c[0] += 1
            c[1] += outcome == "won"
            c[2] += outcome == "abandoned"
    return time.perf_counter() - start, counts


def main() -> None:
    print(
        f"   machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {RECORDS:,} attempt records; target {TARGET_S:.0f} s on 2 threads"
    )
    with tempfile.TemporaryDirectory(prefix="nm-bench-telemetry-") as tmp:
        start = time.perf_counter()
        jsonl, parquet = write_records(Path(tmp), RECORDS)
        print(
            f"   wrote the records in {time.perf_counter() - start:.1f} s: JSON Lines {jsonl.stat().st_size / 2**20:,.0f} MiB, "
            f"Parquet {parquet.stat().st_size / 2**20:,.0f} MiB"
        )
        ids = set(load_catalogue([NIGHT]).puzzles)
        slice_lines = min(BASELINE_SLICE, RECORDS)
        base_s, _ = plain_python(jsonl, slice_lines, ids)
        base_full = base_s * RECORDS / slice_lines
        print(
            f"   baseline, plain Python (json.loads, dicts) on {slice_lines:,} lines: {base_s:.2f} s -> {base_full:.1f} s for all (scaled)"
        )
        for label, path in (("JSON Lines", jsonl), ("Parquet", parquet)):
            proc = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"from pipeline.bench.bench_telemetry import _child; _child({str(path)!r})",
                ],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
                print(f"   DuckDB, {label:<10}: FAILED (exit {proc.returncode}): {last}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            verdict = "within" if r["seconds"] <= TARGET_S else "OVER"
            print(
                f"   DuckDB, {label:<10}: {r['seconds']:6.1f} s ({verdict} the {TARGET_S:.0f} s target), {r['records']:,} records counted, "
                f"bad {r['bad']}, peak memory {r['rss_mib']:,.0f} MiB; {base_full / r['seconds']:.1f}x the baseline"
            )


if __name__ == "__main__":
    main()
