"""`play`: a Stage at the terminal, one command per line (the game is in `play_run`)."""

from __future__ import annotations

from pathlib import Path

import typer

from pipeline.cli import play_run
from pipeline.cli.base import app
from pipeline.cli.common import IN_HELP, SOURCE_HELP, run
from pipeline.limits import MAX_ADDS
from pipeline.solver.budgets import HINT_NODES

# the game's parts, where tests and callers have found them
Game = play_run.Game
HELP = play_run.HELP
MAX_COMMAND = play_run.MAX_COMMAND
read_command = play_run.read_command
_wrapped = play_run._wrapped


@app.command()
def play(
    source: str = typer.Argument(..., metavar="SOURCE", help=SOURCE_HELP),
    adds: int | None = typer.Option(
        None, "--adds", min=0, max=MAX_ADDS, help="Adds allocation (default: the puzzle's, else 0)."
    ),
    search: list[Path] | None = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
    hint_nodes: int = typer.Option(
        HINT_NODES,
        "--hint-nodes",
        min=1,
        help="Solver node budget behind each hint and winnable check.",
    ),
) -> None:
    """Play a Stage in the terminal: type pairs, + to add, u to undo, ? for a hint, h for help.

    Reads one command per line, so it can be scripted: printf '0,0-0,8\\nq\\n' | numbermatch play 1.......9/3.5
    """
    run(lambda: play_run.run(source, adds, search, hint_nodes))
