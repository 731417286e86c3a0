"""`moves`, `apply`, `show`: the rules engine at the terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from pipeline.engine.board import WIDTH, Board, format_board, parse
from pipeline.errors import NumberMatchError
from pipeline.engine.moves import Move
from pipeline.engine.rules import legal_pairs
from pipeline.engine.stage import Stage
from pipeline.cli import app
from pipeline.cli.common import IN_HELP, SOURCE_HELP, emit_json, fail, load_source, stdin_lines

_NAMES = [f"{i // WIDTH},{i % WIDTH}" for i in range(WIDTH * 512)]


def _pair_texts(cells: bytes) -> list[str]:
    names = _NAMES if len(cells) <= len(_NAMES) else [f"{i // WIDTH},{i % WIDTH}" for i in range(len(cells))]
    return [f"{names[i]}-{names[j]}" for i, j in legal_pairs(cells)]


def _moves_stream() -> None:
    """JSON Lines: one object per stdin board; malformed lines get an error and the run goes on."""
    errors = 0
    out = sys.stdout
    for _, line in stdin_lines():
        try:
            cells = parse(line)
        except NumberMatchError as exc:
            errors += 1
            emit_json({"board": line, "error": str(exc)})
            continue
        emit_json({"board": line, "pairs": _pair_texts(cells)})
    out.flush()
    if errors:
        raise typer.Exit(1)


@app.command()
def moves(
    board: str = typer.Argument(..., metavar="SOURCE", help=SOURCE_HELP + " '-' reads one board per line from stdin."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    search: Optional[list[Path]] = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
) -> None:
    """List the legal pairs of a board.

    Example: numbermatch moves 1.......9/3.5
    """
    if board == "-":
        _moves_stream()
        return
    b = Board(load_source(board, search).cells)
    pairs = _pair_texts(b.cells)
    if json_out:
        emit_json({"board": str(b), "pairs": pairs})
        return
    if not pairs:
        typer.echo(f"{b}: no legal pairs")
        return
    typer.echo(f"{b}: {len(pairs)} legal pair{'s' if len(pairs) != 1 else ''}")
    for text in pairs:
        m = Move.parse(text)
        assert m.first is not None and m.second is not None
        typer.echo(f"  {text:<9} {b.cells[m.first]}+{b.cells[m.second]}")


@app.command()
def apply(
    board: str = typer.Argument(..., metavar="SOURCE", help="Starting board: " + SOURCE_HELP),
    move_list: Optional[list[str]] = typer.Argument(None, metavar="MOVE...", help="Moves in order: R,C-R,C for a pair, + for an add."),
    adds: Optional[int] = typer.Option(None, "--adds", min=0, help="Adds allocation of the Stage (default: the puzzle's, else 0)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    search: Optional[list[Path]] = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
) -> None:
    """Apply moves in order and print the resulting board and status.

    Example: numbermatch apply 19......./5.......5/2 0,0-0,1 --adds 1
    """
    source = load_source(board, search)
    stage = Stage(source.cells, adds=source.adds_or(adds), ruleset=source.ruleset)
    for number, text in enumerate(move_list or [], 1):
        try:
            stage.play(text)
        except NumberMatchError as exc:
            fail(f"move {number}: {exc}")
    result = format_board(stage.cells)
    if json_out:
        emit_json({"board": result, "status": stage.status, "adds_left": stage.adds_left})
    else:
        typer.echo(f"{result or '(empty board)'}\nstatus: {stage.status}, adds left: {stage.adds_left}")


def render_grid(cells: bytes) -> str:
    """The board as rows of digits with row and column numbers; gaps shown as '.'."""
    lines = ["     " + " ".join(str(c) for c in range(WIDTH))]
    for r in range(0, len(cells), WIDTH):
        row = " ".join(str(v) if v else "." for v in cells[r : r + WIDTH])
        lines.append(f"{r // WIDTH:>3}  {row}")
    return "\n".join(lines)


@app.command()
def show(
    board: str = typer.Argument(..., metavar="SOURCE", help=SOURCE_HELP),
    search: Optional[list[Path]] = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
) -> None:
    """Draw a board as a grid with its legal pairs.

    Example: numbermatch show generated/2026-11-29/bundle.yaml:L1.S1
    """
    source = load_source(board, search)
    b = Board(source.cells)
    if source.puzzle is not None:
        d = source.puzzle.get("difficulty") or {}
        score = d.get("score")
        rated = f", {d.get('tier')} (score {score:.2f})" if isinstance(score, (int, float)) else ""
        typer.echo(f"{source.label}: {source.adds} add{'s' if source.adds != 1 else ''}{rated}")
    if b.is_empty:
        typer.echo("(empty board: the Stage is won)")
        return
    typer.echo(render_grid(b.cells))
    pairs = _pair_texts(b.cells)
    active = b.active_count
    typer.echo(f"\n{b.rows} rows, {active} active, {len(b) - active} gaps")
    typer.echo(f"legal pairs ({len(pairs)}): " + ("  ".join(pairs) if pairs else "none"))
