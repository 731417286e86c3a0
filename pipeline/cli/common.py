"""What every command shares: printing JSON, failing with one clear line, reading stdin lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from pipeline.cli import runs

# shared with the typer-free paths
from pipeline.cli.runs import emit_json as emit_json
from pipeline.cli.runs import error_text as error_text
from pipeline.cli.runs import split_board_adds as split_board_adds

if TYPE_CHECKING:
    from pipeline.formats.source import Source

REMEDY_OPTIONS = runs.REMEDY_OPTIONS


def fail(message: str, code: int = 1) -> NoReturn:
    """Print `numbermatch: error: message` to stderr and exit with `code` (no traceback)."""
    typer.echo(runs.failure_line(message), err=True)
    raise typer.Exit(code)


def writable_folder(folder: Path, option: str) -> None:
    """Refuse in one line, before any work, an output folder that cannot be created or written
    (the nearest existing ancestor must be a writable folder)."""
    try:
        runs.writable_folder(folder, option)
    except runs.Failed as exc:
        fail(exc.message, exc.code)


SOURCE_HELP = (
    "Board notation (123456789/98765), a puzzle file, a bundle stage (bundle.yaml:L3.S2)"
    " or a puzzle id (looked up in generated/, or where --in says)."
)
IN_HELP = "Where to look up a puzzle id SOURCE instead of generated/: puzzle files, bundles or folders (repeatable)."


def load_source(text: str, search: list[Path] | None = None) -> Source:
    """Resolve a SOURCE argument (`pipeline.formats.source`); a bad one exits 1 with one line."""
    try:
        return runs.load_source(text, search)
    except runs.Failed as exc:
        fail(exc.message, exc.code)


def board_adds_stream(handle: Callable[[str, bytes, int], dict[str, Any]]) -> None:
    """`runs.board_adds_stream`, exit 1 at the end if any line was bad."""
    code = runs.board_adds_stream(handle)
    if code:
        raise typer.Exit(code)


def run(command: Callable[[], int]) -> None:
    """Run a typer-free command body (`runs`): its `Failed` as the one line, its exit code."""
    try:
        code = command()
    except runs.Failed as exc:
        fail(exc.message, exc.code)
    if code:
        raise typer.Exit(code)


PROFILE_HELP = (
    "A rating profile (`numbermatch calibrate`): score the puzzles under it (the share of that audience's "
    "games predicted lost; its tier table), recorded in each difficulty block."
)


def read_profile_option(path: Path | None) -> Any:  # -> RatingProfile | None
    """The rating profile `--profile FILE` names (read and checked like a level file), or None;
    one line and exit 1 when it cannot be used."""
    try:
        return runs.read_profile_option(path)
    except runs.Failed as exc:
        fail(exc.message, exc.code)
