"""`solve`: decide a Stage with the solver and print the certificate, a proof verdict or `unknown`
(the work is in `runs`)."""

from __future__ import annotations

from pathlib import Path

import typer

from pipeline.cli import runs
from pipeline.cli.base import app
from pipeline.cli.common import IN_HELP, SOURCE_HELP, run
from pipeline.limits import MAX_ADDS
from pipeline.solver.budgets import DEFAULT_BUDGET_NODES


@app.command("solve")
def solve_cmd(
    board: str = typer.Argument(
        ..., metavar="SOURCE", help=SOURCE_HELP + " '-' reads 'BOARD ADDS' lines from stdin."
    ),
    adds: int | None = typer.Option(
        None,
        "--adds",
        min=0,
        max=MAX_ADDS,
        help="Adds allocation of the Stage (default: the puzzle's, else 0).",
    ),
    budget_nodes: int = typer.Option(
        DEFAULT_BUDGET_NODES, "--budget-nodes", min=0, help="Search node budget (0: no limit)."
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        min=0.0,
        help="Wall-clock limit in seconds (makes the answer machine-dependent).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    search: list[Path] | None = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
) -> None:
    """Solve a Stage: `solved` with a certificate, `unsolvable` (proved) or `unknown` (budget ran out)."""
    run(lambda: runs.solve(board, adds, budget_nodes, timeout, json_out, search))
