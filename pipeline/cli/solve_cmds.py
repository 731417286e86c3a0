"""`solve`: decide a Stage with the solver and print the certificate, a proof verdict or `unknown`."""

from __future__ import annotations

import sys

import typer

from ..board import parse
from ..errors import NumberMatchError
from ..solver import DEFAULT_BUDGET_NODES, SOLVED, solve
from . import app
from .common import emit_json, fail, parse_board_arg, split_board_adds, stdin_lines


def _budget(nodes: int | None) -> int | None:
    """0 means no node limit."""
    return None if nodes == 0 else nodes


def _solve_stream(budget_nodes: int | None, timeout: float | None) -> None:
    """JSON Lines: one result per `BOARD ADDS` stdin line; bad lines get an error and the run goes on."""
    errors = 0
    for _, line in stdin_lines():
        if not line.strip():
            continue
        try:
            text, adds = split_board_adds(line)
            cells = parse(text)
        except (NumberMatchError, ValueError) as exc:
            errors += 1
            emit_json({"board": line, "error": str(exc)})
            continue
        result = solve(cells, adds, budget_nodes=budget_nodes, timeout=timeout)
        emit_json({"board": text, "adds": adds, **result.to_json()})
        sys.stdout.flush()
    if errors:
        raise typer.Exit(1)


@app.command("solve")
def solve_cmd(
    board: str = typer.Argument(..., help="Board notation; '-' reads 'BOARD ADDS' lines from stdin."),
    adds: int = typer.Option(0, "--adds", min=0, help="Adds allocation of the Stage."),
    budget_nodes: int = typer.Option(
        DEFAULT_BUDGET_NODES, "--budget-nodes", min=0, help="Search node budget (0: no limit)."
    ),
    timeout: float = typer.Option(None, "--timeout", min=0.0, help="Wall-clock limit in seconds (makes the answer machine-dependent)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
) -> None:
    """Solve a Stage: `solved` with a certificate, `unsolvable` (proved) or `unknown` (budget ran out)."""
    if board == "-":
        _solve_stream(_budget(budget_nodes), timeout)
        return
    b = parse_board_arg(board)
    result = solve(b, adds, budget_nodes=_budget(budget_nodes), timeout=timeout)
    if json_out:
        emit_json(result.to_json())
        return
    typer.echo(f"{b or '(empty board)'} with {adds} add{'s' if adds != 1 else ''}: {result.status}")
    typer.echo(f"nodes: {result.nodes}, time: {result.seconds:.3f} s")
    if result.status == SOLVED:
        assert result.moves is not None
        typer.echo(f"moves ({len(result.moves)}): " + (" ".join(map(str, result.moves)) or "(none)"))
