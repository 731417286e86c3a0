"""The documented limits on input size and work (docs/limits.md): one place, one number each.

Beyond a limit the library raises LimitError (a NumberMatchError, so the CLI prints one line and
exits non-zero); none of them is reached by real content, and each keeps time and memory
bounded for hostile input.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.errors import NumberMatchError

# Cells of any board the engine parses or plays, including boards grown by Add numbers (a
# move list or certificate that would grow past it is refused). Legal-pair lookups keep
# tables that grow with the square of the board, so this bounds their memory (~50 MB).
MAX_CELLS = 4_000
# Cells of a board the solver and the rating take (the solver's per-state work grows with the
# board; the rating plays ~200 games on it). Boards grown by adds past it: the solver answers
# `unknown` (never a guess) rather than growing them.
MAX_SOLVE_CELLS = 1_000
MAX_RATE_CELLS = 300
# Adds allocation of a Stage (each add can double the board). Real puzzles use 0-5.
MAX_ADDS = 16
# Adds the generator makes puzzles with (`generate --adds`, the nightly's tier plans).
MAX_GENERATED_ADDS = 5
# Moves a simulated player may make in one game: a defensive cap (a game is finite anyway: each
# pair removes two numbers).
MAX_PLAYER_MOVES = 20_000
# Positions the simulated players remember per table (legal pairs, steps, the lookahead's counts:
# `rating.players._Memo`); a full table starts over. About 16 MiB a table at the nightly's sizes;
# a rating at those sizes reaches about a third of it.
MAX_MEMO_ENTRIES = 32_768
# Closed generator runs a Dask worker remembers, so their running batches stop
# (`generation.executors._STOPPED`); the oldest is forgotten first.
MAX_STOPPED_RUNS = 1_024
# Games each simulated player plays in a rating (default 64).
MAX_PLAYOUTS = 10_000
# Puzzles one `generate` run may ask for.
MAX_COUNT = 10_000
# The nightly job and the assembler.
MAX_LEVELS = 1_000
MAX_STAGES = 100
# Worker processes for generation (more than this only adds memory and forks).
MAX_JOBS = 64
# Level files (YAML) read by the validator and the assembler.
MAX_FILE_BYTES = 16 * 1024 * 1024
# YAML in level files: nesting depth, values once aliases are expanded (stops "billion laughs"
# documents), characters of one number (Python reads ints of <= 4,300 digits).
MAX_DEPTH = 64  # the formats nest about 10 deep
MAX_NODES = 1_000_000
MAX_NUMBER_CHARS = 100
# Curves in one curves file, and its size (a game has a handful of curves, ~300 bytes each;
# reading 100,000 of them took 13-26 s and 440 MB, most of it YAML parsing, so the size is
# checked before parsing a file whose top-level `kind:` line says curves).
MAX_CURVES = 100
MAX_CURVE_FILE_BYTES = 256 * 1024
# One command line `play` reads from a pipe ("12,3-13,4" is 9 characters); the rest of a longer
# line is read in pieces and dropped.
MAX_PLAY_LINE = 200
# `--scheduler ADDRESS`: how long connecting and hearing the scheduler's Dask handshake may take
# (a scheduler answers in milliseconds; the probe keeps the whole refusal under 10 s), then how
# long distributed's client may take to connect.
SCHEDULER_PROBE_S = 5.0
SCHEDULER_CONNECT_S = 10.0
# The studio: a POST body (its forms are a few hundred bytes), and how long a client may take to
# send a request's headers (and body) or keep an idle connection open.
MAX_FORM_BYTES = 8 * 1024
HEADER_TIMEOUT_S = 10.0
KEEPALIVE_TIMEOUT_S = 5
# ... a path a request names (characters, and bytes per name: NAME_MAX on Linux and macOS), the
# edits of a draft, the moves of a game in its address.
MAX_PATH_CHARS = 1000
MAX_NAME_BYTES = 255
MAX_DRAFT_EDITS = 500
MAX_BANNER_CHARS = 4000  # a message shown on a page (a Save's lines), from its address
MAX_STUDIO_MOVES = 1000  # far more than a 36-cell board with a few adds can take
# A stock night's swap candidates in the studio, per tier its Stages target: the nearest to
# their targets (`stock.night.draw`); a stock of 100,000 puzzles is never validated on a page.
MAX_STOCK_OFFERS = 100
# The share of the stock one `stock prune` may drop without `--force` (a stock reached some other
# way than the prune expects must never vanish in one run; `--dry-run` lists what would go).
MAX_PRUNE_SHARE = 0.10
# A bundle's curation file (the studio's pins and excludes, read by `assemble --curation`).
MAX_CURATION_BYTES = 64 * 1024
# Play telemetry (`observed`, `calibrate`; docs/telemetry.md). Files per run; bytes of one JSON
# Lines or CSV record (a longer one ends the read with one line naming it); characters of a
# text field (puzzle, player, attempt id, ...: longer ones make the record bad); moves of one
# attempt. DuckDB's memory is capped (it spills to disk beyond), so any number of records reads
# in bounded memory.
MAX_TELEMETRY_FILES = 1_000
MAX_TELEMETRY_LINE_BYTES = 65_536
MAX_TELEMETRY_TEXT = 256
MAX_TELEMETRY_MOVES = 100_000
# Rows of Parquet telemetry one run reads (the footer says how many before any is read: a file of
# a megabyte can hold hundreds of millions), a bound on the time a run takes.
MAX_TELEMETRY_PARQUET_ROWS = 100_000_000
TELEMETRY_MEMORY = "1GB"
# Attempts per puzzle `telemetry simulate` plays.
MAX_SIMULATE_ATTEMPTS = 1_000_000
# The conformance kit (docs/conformance.md): an engine under test answers each request within
# ENGINE_TIMEOUT_S seconds (`check --timeout`), in one line of at most MAX_ENGINE_ANSWER_BYTES,
# in an address space of ENGINE_MEMORY_MB MiB (`check --memory-mb`); the reference server reads
# request lines of at most MAX_PROTOCOL_REQUEST_BYTES and expands at most MAX_PERFT_NODES
# positions for one `count`; a shrink asks the engine at most MAX_SHRINK_ASKS requests; an
# exported case file read back by `check --suite` is at most MAX_SUITE_FILE_BYTES.
ENGINE_TIMEOUT_S = 10.0
MAX_ENGINE_ANSWER_BYTES = 1024 * 1024
ENGINE_MEMORY_MB = 2048
MAX_PROTOCOL_REQUEST_BYTES = 4 * 1024 * 1024
MAX_PERFT_NODES = 2_000_000
MAX_SHRINK_ASKS = 3_000
MAX_SUITE_FILE_BYTES = 64 * 1024 * 1024


class LimitError(NumberMatchError):
    """An input beyond one of the documented limits."""


def check_cells(n: int, limit: int = MAX_CELLS, what: str = "board") -> None:
    """Refuse a board of n cells beyond `limit`."""
    if n > limit:
        raise LimitError(f"{what} has {n:,} cells; the limit is {limit:,} cells (docs/limits.md)")


def check_adds(adds: int, limit: int = MAX_ADDS) -> None:
    """Refuse an adds allocation beyond MAX_ADDS (negative ones are refused by the callers)."""
    if adds > limit:
        raise LimitError(f"adds {adds:,} is more than the limit of {limit} (docs/limits.md)")


def check_playouts(playouts: int, limit: int = MAX_PLAYOUTS) -> None:
    """Refuse more simulated games per player than MAX_PLAYOUTS."""
    if playouts > limit:
        raise LimitError(
            f"playouts {playouts:,} is more than the limit of {limit:,} (docs/limits.md)"
        )


# --- the table in docs/limits.md (`python -m pipeline.limits` prints it; a test compares) -------


@dataclass(frozen=True)
class Limit:
    """One row of the documented limits: what is limited, the constants, what happens beyond."""

    what: str
    names: tuple[str, ...]
    beyond: str
    value: str = ""  # for a limit kept beside its code in a module this one may not import

    def value_text(self) -> str:
        return self.value or " / ".join(_shown(name, globals()[name]) for name in self.names)


def _shown(name: str, value: object) -> str:
    if isinstance(value, int) and name.endswith("_BYTES"):
        for unit, size in (("MiB", 1024 * 1024), ("KiB", 1024)):
            if value >= size and value % size == 0:
                return f"{value // size:,} {unit}"
        return f"{value:,} bytes"
    if isinstance(value, float) and name.endswith("_SHARE"):
        return f"{value:.0%}"
    if isinstance(value, (int, float)) and name.endswith("_S"):
        return f"{value:g} s"
    return f"{value:,}" if isinstance(value, int) else str(value)


LIMITS: tuple[Limit, ...] = (
    Limit(
        "cells of any board (parsed, played, grown by `+`)",
        ("MAX_CELLS",),
        '`moves`, `show`, `apply`: exit 1 "board has N cells; the limit is ..."; a certificate whose `+` would grow past it: NM316',
    ),
    Limit(
        "cells of a board to solve",
        ("MAX_SOLVE_CELLS",),
        "`solve`: exit 1; boards the search grows past it by adds: the answer is `unknown` (never a guess)",
    ),
    Limit("cells of a board to rate", ("MAX_RATE_CELLS",), "`rate`: exit 1"),
    Limit(
        "adds allocation",
        ("MAX_ADDS",),
        "`--adds` on `apply`, `solve`, `rate`: usage error (exit 2); `adds` in a file: NM208; `BOARD ADDS` lines: an error line",
    ),
    Limit(
        "adds the generator makes puzzles with",
        ("MAX_GENERATED_ADDS",),
        "`generate --adds`: one line",
    ),
    Limit(
        "moves in one simulated player's game",
        ("MAX_PLAYER_MOVES",),
        "a defensive cap: real games end far sooner",
    ),
    Limit(
        "positions the simulated players remember, per table",
        ("MAX_MEMO_ENTRIES",),
        "the table starts over (slower, same results)",
    ),
    Limit(
        "closed generator runs a Dask worker remembers",
        ("MAX_STOPPED_RUNS",),
        "the oldest is forgotten (a batch of it still running would finish its attempts)",
    ),
    Limit("playouts per simulated player", ("MAX_PLAYOUTS",), "`rate --playouts`: usage error"),
    Limit("puzzles per `generate` run", ("MAX_COUNT",), "`generate --count`: usage error"),
    Limit(
        "levels of a night or bundle", ("MAX_LEVELS",), "`nightly`/`assemble --levels`: usage error"
    ),
    Limit("stages per level", ("MAX_STAGES",), "`--stages`: usage error"),
    Limit("worker processes", ("MAX_JOBS",), "`--jobs`: usage error"),
    Limit("level file size", ("MAX_FILE_BYTES",), "NM104"),
    Limit(
        "curves in a curves file / its size",
        ("MAX_CURVES", "MAX_CURVE_FILE_BYTES"),
        "NM104 (the size is checked before parsing); `--curve FILE`: one line",
    ),
    Limit("a number in a level file", ("MAX_NUMBER_CHARS",), "NM112"),
    Limit("YAML nesting / values after alias expansion", ("MAX_DEPTH", "MAX_NODES"), "NM107"),
    Limit(
        "one command line piped into `play`",
        ("MAX_PLAY_LINE",),
        '"a line of N characters is no command"; the rest of the line is skipped unread, the echo cut',
    ),
    Limit(
        "waiting for another writer of the same level file (`pipeline.atomic.LOCK_WAIT_SECONDS`)",
        (),
        '"another writer holds it (waited 30 s); nothing written" (docs/security.md)',
        value="30 s",
    ),
    Limit(
        "`--scheduler ADDRESS`: connect and hear a Dask handshake / the client's connection",
        ("SCHEDULER_PROBE_S", "SCHEDULER_CONNECT_S"),
        '"... is not a Dask scheduler" or "cannot reach the Dask scheduler", one line',
    ),
    Limit(
        "studio: a POST body (its forms are urlencoded)",
        ("MAX_FORM_BYTES",),
        "413 on the Content-Length, before reading (or as it streams in); multipart: 415",
    ),
    Limit(
        "studio: time to send one request (headers and body)",
        ("HEADER_TIMEOUT_S",),
        "the connection is closed",
    ),
    Limit(
        "studio: an idle kept-alive connection",
        ("KEEPALIVE_TIMEOUT_S",),
        "the connection is closed",
    ),
    Limit(
        "studio: a path in a request (characters / bytes per name)",
        ("MAX_PATH_CHARS", "MAX_NAME_BYTES"),
        "403, one line (on the command line a name over 255 bytes is one line from the file system)",
    ),
    Limit(
        "studio: a message a page shows (a Save's lines)",
        ("MAX_BANNER_CHARS",),
        "the rest is cut",
    ),
    Limit(
        "studio: edits in a draft / moves in a game's address",
        ("MAX_DRAFT_EDITS", "MAX_STUDIO_MOVES"),
        "400, one line",
    ),
    Limit(
        "studio: swap candidates from the stock, per tier a bundle targets",
        ("MAX_STOCK_OFFERS",),
        "the ones nearest the Stages' targets are offered",
    ),
    Limit(
        "generating: attempts of a round in which no board passes the search's screen and every"
        " estimate stays over 5 points from the target, at 1-3 adds where the screen was fitted"
        " (`generation.generator.SCREEN_BUDGET`)",
        (),
        "`generate`, `stock refill`, a night: one line naming the estimates seen and what to change",
        value="16",
    ),
    Limit(
        "generating: attempts of a round with nothing accepted, then the pilot's check"
        " (`generation.generator.PILOT_ATTEMPTS`); attempts of a run without `--max-attempts`",
        (),
        "no solvable non-trivial board, or every score more than 10 points"
        " (`generator.SCORE_SLACK`) beyond the target: one line; the attempts run out: one line"
        " naming the scores seen, the puzzles made so far kept",
        value="200; 1,000 + 200 per puzzle asked",
    ),
    Limit(
        "generating, the climb: random boards probed for a start / steps of an attempt / neighbours"
        " per step (`generation.climb.START_DRAWS`, `STEPS`, `BRANCH`); the deeper climb's steps /"
        " neighbours, for targets from 84 (expert) beyond the screen's fitted adds (1-3)"
        " (`generation.strategies.DEEP_CLIMB`, `DEEP_FROM`)",
        (),
        "the steps run out: the attempt offers nothing (`no-candidate`); the deeper climb offers"
        " the board it stood on nearest the aim, unscreened, and it is rated in full (unless it"
        " was already: the deeper climb offers its boards to the full rating unscreened from 2"
        " points under the window's low end, `generation.climb.OFFER_BELOW`, once its estimate"
        " was there on 2 draws in a row, `OFFER_HELD`)",
        value="64 / 150 / 8; 3,000 / 16",
    ),
    Limit(
        "generating, the climb's stop on estimates: attempts of a round with nothing accepted"
        " (`strategies.CLIMB.reach_pilot`), after which every estimate the climbs stood on and"
        " every score rated staying more than 5 points (`generator.SCREEN_REACH`) from the target"
        " stops the run; at 1-3 adds only, where the screen's lines were fitted",
        (),
        "`generate`, a night: one line naming the estimates and scores seen and what to change",
        value="4",
    ),
    Limit(
        "generating, the climb's stop on full ratings: attempts of a round with nothing accepted"
        " (`strategies.CLIMB.reach_pilot`), after which, when each of them rated a board in full and"
        " every such score stayed more than 5 points below the target, the run stops; at any adds",
        (),
        "`generate`, a night: one line naming the full ratings' range and the target",
        value="4",
    ),
    Limit(
        "generating: solver nodes per candidate board (`--solve-nodes`,"
        " `solver.budgets.DEFAULT_SOLVE_NODES`); the climb's own checks that its start and each"
        " board it keeps are still winnable use the default whatever `--solve-nodes` says",
        (),
        "over budget: the candidate is rejected (`solver-budget`), never called unsolvable; the"
        " climb neither starts from nor keeps such a board",
        value="50,000",
    ),
    Limit(
        "share of the stock one `stock prune` drops",
        ("MAX_PRUNE_SHARE",),
        "refused, one line, nothing dropped (the list is printed); `--force` drops them",
    ),
    Limit(
        "a bundle's curation file (`BUNDLE.curation.txt`)",
        ("MAX_CURATION_BYTES",),
        "`assemble --curation`, the studio: one line",
    ),
    Limit("telemetry: files per run", ("MAX_TELEMETRY_FILES",), "one line naming the count"),
    Limit(
        "telemetry: bytes of one record / characters of a text field / moves of an attempt",
        ("MAX_TELEMETRY_LINE_BYTES", "MAX_TELEMETRY_TEXT", "MAX_TELEMETRY_MOVES"),
        "a longer record ends the read with one line naming it; a longer field or more moves make the record bad",
    ),
    Limit(
        "telemetry: Parquet rows per run (from the files' footers, before reading)",
        ("MAX_TELEMETRY_PARQUET_ROWS",),
        "one line naming the file and the count; a column whose values decompress to more than one record's limit each: one line",
    ),
    Limit("telemetry: DuckDB's memory", ("TELEMETRY_MEMORY",), "DuckDB spills to disk beyond it"),
    Limit(
        "telemetry: attempts per puzzle `telemetry simulate` plays",
        ("MAX_SIMULATE_ATTEMPTS",),
        "one line",
    ),
    Limit(
        "conformance: an engine's time to answer one request / its answer line / its memory (MiB)",
        ("ENGINE_TIMEOUT_S", "MAX_ENGINE_ANSWER_BYTES", "ENGINE_MEMORY_MB"),
        "`conformance check`: the engine is killed, one line naming the request, exit 3 (`--timeout`, `--memory-mb`)",
    ),
    Limit(
        "conformance: a request line the reference reads / positions one `count` expands",
        ("MAX_PROTOCOL_REQUEST_BYTES", "MAX_PERFT_NODES"),
        "the answer is the refusal `bad-request` / `limit`",
    ),
    Limit(
        "conformance: requests one shrink sends / a case file `check --suite` reads",
        ("MAX_SHRINK_ASKS", "MAX_SUITE_FILE_BYTES"),
        "the shrink stops at the smallest found so far / one line naming the file",
    ),
)


def limits_table() -> str:
    """The Markdown table of every limit (docs/limits.md holds it between its markers)."""
    rows = [f"| {limit.what} | {limit.value_text()} | {limit.beyond} |" for limit in LIMITS]
    return "\n".join(["| what | limit | beyond it |", "|---|---|---|", *rows]) + "\n"


if __name__ == "__main__":
    print(limits_table(), end="")
