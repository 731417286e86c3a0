"""`solve`: decide a Stage with the solver and print the certificate, a proof verdict or `unknown`."""

from __future__ import annotations

from pathlib import Path

import typer

from pipeline.cli.base import app
from pipeline.cli.common import (
    IN_HELP,
    SOURCE_HELP,
    board_adds_stream,
    emit_json,
    fail,
    load_source,
)
from pipeline.engine.board import Board
from pipeline.errors import NumberMatchError
from pipeline.limits import MAX_ADDS
from pipeline.solver.budgets import DEFAULT_BUDGET_NODES


def _budget(nodes: int | None) -> int | None:
    """0 means no node limit."""
    return None if nodes == 0 else nodes


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
    from pipeline.solver.search import SOLVED, solve  # start-up time: not for --help

    if board == "-":
        budget = _budget(budget_nodes)
        board_adds_stream(
            lambda _t, cells, a: solve(cells, a, budget_nodes=budget, timeout=timeout).to_json()
        )
        return
    source = load_source(board, search)
    b = Board(source.cells)
    adds = source.adds_or(adds)
    try:
        result = solve(
            b, adds, ruleset=source.ruleset, budget_nodes=_budget(budget_nodes), timeout=timeout
        )
    except NumberMatchError as exc:
        fail(str(exc))
    if json_out:
        emit_json(result.to_json())
        return
    typer.echo(f"{b or '(empty board)'} with {adds} add{'s' if adds != 1 else ''}: {result.status}")
    typer.echo(f"nodes: {result.nodes}, time: {result.seconds:.3f} s")
    if result.status == SOLVED:
        assert result.moves is not None
        typer.echo(
            f"moves ({len(result.moves)}): " + (" ".join(map(str, result.moves)) or "(none)")
        )
