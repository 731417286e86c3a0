"""The documented limits on input size and work (docs/limits.md): one place, one number each.

Beyond a limit the library raises LimitError (a NumberMatchError, so the CLI prints one line and
exits non-zero); none of them is reached by real content, and each keeps time and memory
bounded for hostile input.
"""

from __future__ import annotations

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
# Curves in one curves file, and its size (a game has a handful of curves, ~300 bytes each;
# reading 100,000 of them took 13-26 s and 440 MB, most of it YAML parsing, so the size is
# checked before parsing a file whose top-level `kind:` line says curves).
MAX_CURVES = 100
MAX_CURVE_FILE_BYTES = 256 * 1024
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
MAX_STUDIO_MOVES = 1000  # far more than a 36-cell board with a few adds can take
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
TELEMETRY_MEMORY = "1GB"
# Attempts per puzzle `telemetry simulate` plays.
MAX_SIMULATE_ATTEMPTS = 1_000_000


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
        raise LimitError(f"playouts {playouts:,} is more than the limit of {limit:,} (docs/limits.md)")
