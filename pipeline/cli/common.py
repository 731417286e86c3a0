"""What every command shares: printing JSON, failing with one clear line, reading stdin lines."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from pipeline.cli.engine_run import stdin_lines
from pipeline.engine.board import parse
from pipeline.errors import NumberMatchError, clip, shorten
from pipeline.limits import MAX_ADDS, check_adds

if TYPE_CHECKING:
    from pipeline.formats.source import Source

_ADDS = re.compile(r"[0-9]{1,6}", re.ASCII)


def emit_json(obj: Any) -> None:
    """One compact JSON document on its own line."""
    sys.stdout.write(json.dumps(obj, separators=(", ", ": ")) + "\n")


# How the command line phrases an error's `remedy` (what to change): its own option.
REMEDY_OPTIONS = {
    "with": "--with ID",
    "budget_nodes": "--budget-nodes N, 0 = no limit",
    "force": "--force replaces the files the job makes and keeps the others",
    "curve": "--curve FILE",
}


def error_text(exc: NumberMatchError) -> str:
    """A library error as the command line says it: the message, then the option that helps."""
    option = REMEDY_OPTIONS.get(exc.remedy or "")
    return f"{exc} ({option})" if option else str(exc)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print `numbermatch: error: message` to stderr and exit with `code` (no traceback)."""
    typer.echo(f"numbermatch: error: {message}", err=True)
    raise typer.Exit(code)


def writable_folder(folder: Path, option: str) -> None:
    """Refuse in one line, before any work, an output folder that cannot be created or written
    (the nearest existing ancestor must be a writable folder)."""
    probe = folder
    while not probe.exists():
        parent = probe.parent
        if parent == probe:
            break
        probe = parent
    if not probe.is_dir():
        fail(f"{option} {folder}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        fail(f"{option} {folder}: {probe} is not writable")


SOURCE_HELP = (
    "Board notation (123456789/98765), a puzzle file, a bundle stage (bundle.yaml:L3.S2)"
    " or a puzzle id (looked up in generated/, or where --in says)."
)
IN_HELP = "Where to look up a puzzle id SOURCE instead of generated/: puzzle files, bundles or folders (repeatable)."


def load_source(text: str, search: list[Path] | None = None) -> Source:
    """Resolve a SOURCE argument (`pipeline.formats.source`); a bad one exits 1 with one line."""
    from pipeline.formats.source import resolve  # start-up time: not for --help

    try:
        return resolve(text, search or ())
    except NumberMatchError as exc:
        fail(str(exc))


def split_board_adds(line: str, default_adds: int | None = None) -> tuple[str, int]:
    """`BOARD ADDS` (ADDS optional when a default is given) from one stdin line."""
    parts = line.split()
    if not parts:
        if default_adds is None:
            raise ValueError("empty line: expected 'BOARD ADDS'")
        return "", default_adds
    if len(parts) == 1:
        if default_adds is None:
            raise ValueError(f"line {shorten(line)} has no adds count: expected 'BOARD ADDS'")
        return parts[0], default_adds
    if len(parts) > 2:
        raise ValueError(f"line {shorten(line)} has {len(parts)} fields: expected 'BOARD ADDS'")
    if not _ADDS.fullmatch(parts[1]):  # int() would take '٣', '1_0' and 4,000 digits
        raise ValueError(
            f"adds {shorten(parts[1])} is not a whole number 0-{MAX_ADDS} in ASCII digits"
        )
    adds = int(parts[1])
    check_adds(adds)
    return parts[0], adds


def board_adds_stream(handle: Callable[[str, bytes, int], dict[str, Any]]) -> None:
    """JSON Lines over `BOARD ADDS` stdin lines: `handle(text, cells, adds)` gives each line's
    object; a bad line gets `{"board", "line", "error"}` and the run goes on; exit 1 at the end
    if any line was bad. Blank lines are skipped."""
    errors = 0
    for number, line in stdin_lines():
        if not line.strip():
            continue
        try:
            text, adds = split_board_adds(line)
            cells = parse(text)
            out = handle(text, cells, adds)
        except ValueError as exc:  # NumberMatchError is a ValueError
            errors += 1
            emit_json({"board": clip(line), "line": number, "error": str(exc)})
            continue
        emit_json({"board": text, "adds": adds, **out})
        sys.stdout.flush()
    if errors:
        raise typer.Exit(1)


PROFILE_HELP = (
    "A rating profile (`numbermatch calibrate`): score the puzzles under it (the share of that audience's "
    "games predicted lost; its tier table), recorded in each difficulty block."
)


def read_profile_option(path: Path | None) -> Any:  # -> RatingProfile | None
    """The rating profile `--profile FILE` names (read and checked like a level file), or None;
    one line and exit 1 when it cannot be used."""
    if path is None:
        return None
    from pipeline.validator.profiles import read_profile  # start-up time: only with --profile

    try:
        return read_profile(path)
    except NumberMatchError as exc:
        fail(str(exc))
