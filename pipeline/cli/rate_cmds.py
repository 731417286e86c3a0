"""`rate`: how hard a Stage is for a player (score 0-100, tier, and every metric by name)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from pipeline.cli.base import app
from pipeline.cli.common import (
    IN_HELP,
    SOURCE_HELP,
    board_adds_stream,
    emit_json,
    fail,
    load_source,
    read_profile_option,
)
from pipeline.engine.board import Board
from pipeline.errors import NumberMatchError
from pipeline.limits import MAX_ADDS, MAX_PLAYOUTS
from pipeline.rating import DEFAULT_PLAYOUTS, DEFAULT_SEED

if TYPE_CHECKING:
    from pipeline.rating.score import Rating


def _text(board: str, adds: int, r: Rating) -> str:
    m = r.metrics
    score = "no score" if r.score is None else f"score {r.score:.2f}"
    if r.min_adds is not None:
        min_adds = str(r.min_adds)
    elif r.score is None:
        min_adds = f"more than {adds} (cannot be won with {adds})"
    else:
        min_adds = "unknown (solver budget ran out)"
    lines = [
        f"{board or '(empty board)'} with {adds} add{'s' if adds != 1 else ''}: {r.tier} ({score})",
        f"  min adds            {min_adds}",
    ]
    for name, st in m["players"].items():
        lines.append(
            f"  {name:<19} wins {st['win_rate'] * 100:5.1f}% of {st['playouts']} games, {st['mean_moves']:.1f} moves on average"
        )
    if m["trap_density"] is not None:  # rating versions 1 and 2 measure traps
        lines += [
            f"  trap density        {m['trap_density']:.3f} of first pairs ({m['trap_unknown']} unknown)",
            f"  trap density, play  {m['trap_density_sampled']:.3f} of pairs along the way ({m['trap_unknown_sampled']} unknown)",
        ]
    lines += [
        f"  certificate length  {m['certificate_length'] if m['certificate_length'] is not None else 'none found'}",
        f"  mean branching      {m['mean_branching']:.2f} legal pairs per turn",
        f"  collapse openings   {m['collapse_openings']:.3f} of row collapses open a new pair",
    ]
    return "\n".join(lines)


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
    seed: int = typer.Option(
        DEFAULT_SEED, "--seed", help="Seed of the simulated players (same seed, same rating)."
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
    # start-up time: the players and the solver load to rate, not for --help
    from pipeline.rating.explain import explain
    from pipeline.rating.profile import rated_under
    from pipeline.rating.score import rate

    profile = read_profile_option(profile_file)

    def rated(cells: object, a: int, **kw: object) -> Rating:
        return rated_under(rate(cells, a, playouts=playouts, seed=seed, **kw), profile)  # type: ignore[arg-type]

    def as_json(r: Rating) -> dict[str, Any]:
        out = r.to_json()
        if explain_out:
            out["explain"] = explain(r.to_dict()).to_dict()
        return out

    if board == "-":
        board_adds_stream(lambda _t, cells, a: as_json(rated(cells, a)))
        return
    source = load_source(board, search)
    b = Board(source.cells)
    adds = source.adds_or(adds)
    try:
        rating = rated(b, adds, solution=source.certificate(adds), ruleset=source.ruleset)
    except NumberMatchError as exc:
        fail(str(exc))
    if json_out:
        emit_json({"board": str(b), "adds": adds, **as_json(rating)})
    else:
        typer.echo(_text(str(b), adds, rating))
        if explain_out:
            typer.echo(str(explain(rating.to_dict())))
