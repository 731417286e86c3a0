"""`moves`, `apply`, `show`: the rules engine at the terminal (the work is in `engine_run`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer

from pipeline.cli import engine_run
from pipeline.cli.base import app
from pipeline.cli.common import IN_HELP, SOURCE_HELP, fail
from pipeline.errors import NumberMatchError
from pipeline.limits import MAX_ADDS

render_grid = engine_run.render_grid


def _run(command: Callable[[], int]) -> None:
    try:
        code = command()
    except NumberMatchError as exc:
        fail(str(exc))
    if code:
        raise typer.Exit(code)


@app.command()
def moves(
    board: str = typer.Argument(
        ..., metavar="SOURCE", help=SOURCE_HELP + " '-' reads one board per line from stdin."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    search: list[Path] | None = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
) -> None:
    """List the legal pairs of a board."""
    _run(lambda: engine_run.moves(board, json_out, search))


@app.command()
def apply(
    board: str = typer.Argument(..., metavar="SOURCE", help="Starting board: " + SOURCE_HELP),
    move_list: list[str] | None = typer.Argument(
        None, metavar="MOVE...", help="Moves in order: R,C-R,C for a pair, + for an add."
    ),
    adds: int | None = typer.Option(
        None,
        "--adds",
        min=0,
        max=MAX_ADDS,
        help="Adds allocation of the Stage (default: the puzzle's, else 0).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    search: list[Path] | None = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
) -> None:
    """Apply moves in order and print the resulting board and status."""
    _run(lambda: engine_run.apply(board, move_list or [], adds, json_out, search))


@app.command()
def show(
    board: str = typer.Argument(..., metavar="SOURCE", help=SOURCE_HELP),
    search: list[Path] | None = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
) -> None:
    """Draw a board as a grid with its legal pairs."""
    _run(lambda: engine_run.show(board, search))
