"""`rate`: how hard a Stage is for a player (score 0-100, tier, and every metric by name; the work
is in `runs`)."""

from __future__ import annotations

from pathlib import Path

import typer

from pipeline.cli import runs
from pipeline.cli.base import app
from pipeline.cli.common import IN_HELP, SOURCE_HELP, run
from pipeline.limits import MAX_ADDS, MAX_PLAYOUTS
from pipeline.rating import CONFIRM_SEED, DEFAULT_PLAYOUTS, DEFAULT_SEED


@app.command("rate")
def rate_cmd(
    board: str = typer.Argument(
        ...,
        metavar="SOURCE",
        help=SOURCE_HELP + " '-' reads 'BOARD ADDS' lines from stdin (JSON Lines out).",
    ),
    adds: int | None = typer.Option(
        None,
        "--adds",
        min=0,
        max=MAX_ADDS,
        help="Adds allocation of the Stage (default: the puzzle's, else 0).",
    ),
    playouts: int = typer.Option(
        DEFAULT_PLAYOUTS,
        "--playouts",
        min=1,
        max=MAX_PLAYOUTS,
        help="Games per simulated player at the base share (the rating gives cheap players more, costly ones fewer; the counts are stored).",
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        show_default=False,
        help=f"Seed of the simulated players (same seed, same rating). Default: the seed of the puzzle's stored rating (provenance.rating_seed; {CONFIRM_SEED} for a Stage rated by a version that confirms), else {DEFAULT_SEED}.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    explain_out: bool = typer.Option(
        False,
        "--explain",
        help="Also show each weighed metric's weight and points, what decides the tier, and why.",
    ),
    search: list[Path] | None = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
    profile_file: Path | None = typer.Option(
        None,
        "--profile",
        metavar="FILE",
        help="A rating profile (`numbermatch calibrate`): the score is the share of that audience's games predicted lost, the tier by its table.",
    ),
) -> None:
    """Rate a Stage: simulated players' win rates, the fewest adds that win, a score 0-100 and a tier."""
    run(lambda: runs.rate(board, adds, playouts, seed, json_out, explain_out, search, profile_file))
