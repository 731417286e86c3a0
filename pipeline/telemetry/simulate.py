"""`telemetry simulate`: telemetry written by the rating's own player models, so a team (and the
tests) can try the loop without a live game.

Each attempt at a puzzle is one game by a player drawn from the audience mix (`random:0.5,
planner:0.3,proximity:0.2`); with probability `abandon` the attempt is abandoned part-way
(drawn independently of how the game would have ended: the reading of abandons as "no
information about difficulty" in docs/telemetry.md is then exactly true here). Every draw comes
from `random.Random` objects seeded by (seed, puzzle id), so the same seed gives the same file,
and each player's games on a puzzle are one `play_many` sequence like the rating's own.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random
from typing import Any

import duckdb

from pipeline.atomic import PARQUET_MARK, write_guarded
from pipeline.engine.board import parse
from pipeline.engine.rulesets import ruleset_for
from pipeline.errors import NumberMatchError
from pipeline.limits import MAX_SIMULATE_ATTEMPTS
from pipeline.rating.players import PLAYERS_V3, Player, play_many
from pipeline.telemetry.catalogue import Catalogue
from pipeline.telemetry.records import sql_text, telemetry_format

PLAYERS_BY_NAME: dict[str, Player] = {p.name: p for p in PLAYERS_V3}
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)  # simulated `at` timestamps count from here
FIELD_ORDER = (
    "attempt",
    "puzzle",
    "outcome",
    "adds_used",
    "moves",
    "seconds",
    "player",
    "client",
    "at",
)


class AudienceError(NumberMatchError):
    """An audience mix that cannot be read (names the text and what is wrong)."""


def parse_audience(text: str) -> tuple[tuple[str, float], ...]:
    """`name:weight,...` over the rating's players, weights above 0 summing to 1 (±0.001)."""
    out: list[tuple[str, float]] = []
    for part in text.split(","):
        name, sep, weight = part.strip().partition(":")
        if not sep:
            raise AudienceError(f"audience {text!r}: {part.strip()!r} is not NAME:WEIGHT")
        if name not in PLAYERS_BY_NAME:
            raise AudienceError(
                f"audience {text!r}: unknown player {name!r} (players: {', '.join(PLAYERS_BY_NAME)})"
            )
        try:
            w = float(weight)
        except ValueError:
            raise AudienceError(
                f"audience {text!r}: weight {weight!r} of {name} is not a number"
            ) from None
        if not 0 < w <= 1:
            raise AudienceError(
                f"audience {text!r}: weight of {name} must be above 0 and at most 1"
            )
        if name in dict(out):
            raise AudienceError(f"audience {text!r}: {name} named twice")
        out.append((name, w))
    total = sum(w for _, w in out)
    if abs(total - 1) > 1e-3:
        raise AudienceError(f"audience {text!r}: the weights sum to {total:g}, not 1")
    return tuple(out)


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def simulate(
    catalogue: Catalogue,
    audience: Iterable[tuple[str, float]],
    attempts: int,
    seed: int,
    *,
    abandon: float = 0.05,
) -> list[dict[str, Any]]:
    """`attempts` attempt records per puzzle of the catalogue (in id order), as dicts."""
    if not 1 <= attempts <= MAX_SIMULATE_ATTEMPTS:
        raise AudienceError(f"attempts must be 1-{MAX_SIMULATE_ATTEMPTS:,}, got {attempts:,}")
    if not 0 <= abandon < 1:
        raise AudienceError(f"abandon must be at least 0 and below 1, got {abandon}")
    mix = tuple(audience)
    names = [n for n, _ in mix]
    weights = [w for _, w in mix]
    records: list[dict[str, Any]] = []
    for pid in sorted(catalogue.puzzles):
        puzzle = catalogue.puzzles[pid]
        cells, rs = parse(puzzle.board), ruleset_for(puzzle.ruleset)
        rng = Random(_seed(seed, pid, "draws"))
        drawn = rng.choices(names, weights, k=attempts)
        games = {
            n: iter(
                play_many(
                    PLAYERS_BY_NAME[n],
                    cells,
                    puzzle.adds,
                    drawn.count(n),
                    _seed(seed, pid),
                    ruleset=rs,
                )[1]
            )
            for n in names
            if n in drawn
        }
        for k, name in enumerate(drawn):
            game = next(games[name])
            moves, adds_used, outcome = game.moves, game.adds_used, "won" if game.won else "lost"
            if rng.random() < abandon:
                moves = rng.randrange(moves + 1) if moves else 0
                adds_used = sum(m.is_add for m in game.path[:moves])
                outcome = "abandoned"
            player = f"p{rng.randrange(1_000_000):06d}"
            at = EPOCH + timedelta(seconds=rng.randrange(365 * 86_400))
            records.append(
                {
                    "attempt": f"{pid}-{seed}-{k}",
                    "puzzle": pid,
                    "outcome": outcome,
                    "adds_used": adds_used,
                    "moves": moves,
                    "seconds": round(moves * rng.uniform(2.0, 6.0), 1),
                    "player": player,
                    "client": f"simulated-{name}",
                    "at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
            )
    return records


def records_jsonl(records: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(dict(r), separators=(",", ":")) + "\n" for r in records)


def records_csv(records: Iterable[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELD_ORDER, lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow(dict(r))
    return buf.getvalue()


def write_records(
    path: str | os.PathLike[str], records: list[dict[str, Any]], *, force: bool = False
) -> Path:
    """Write records in the format the suffix names (JSON Lines, CSV or Parquet) through the
    guarded write: it replaces only simulated telemetry (a real export is another kind of file)
    unless `force`."""
    target = Path(path)
    fmt = telemetry_format(target)
    if fmt == "jsonl":
        data = records_jsonl(records).encode("utf-8")
    elif fmt == "csv":
        data = records_csv(records).encode("utf-8")
    else:
        data = records_parquet(records)
    return write_guarded(target, data, kinds=("simulated-telemetry",), force=force)


def records_parquet(records: list[dict[str, Any]]) -> bytes:
    """The Parquet bytes of `records`, marked in the file's metadata as simulated (so a later
    run may replace it: `pipeline.atomic.file_kind`). DuckDB writes it inside a temp folder made
    here and removed after."""
    folder = Path(tempfile.mkdtemp(prefix="numbermatch-simulate-"))
    try:
        staged = write_guarded(folder / "records.jsonl", records_jsonl(records))
        out = folder / "records.parquet"
        columns = ", ".join(
            f"'{f}': '{'BIGINT' if f in ('adds_used', 'moves') else 'DOUBLE' if f == 'seconds' else 'VARCHAR'}'"
            for f in FIELD_ORDER
        )
        mark = PARQUET_MARK.decode("ascii")
        con = duckdb.connect(config={"threads": 1})  # one thread: the same records, the same bytes
        try:
            con.execute(
                f"COPY (SELECT * FROM read_json({sql_text(staged)}, format = 'newline_delimited', columns = {{{columns}}})) "
                f"TO {sql_text(out)} (FORMAT parquet, KV_METADATA {{generator: '{mark}'}})"
            )
        finally:
            con.close()
        return out.read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the folder made above, and only it
