"""`generate`: write new puzzle files that hit a difficulty tier."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from pipeline.cli import generate_run
from pipeline.cli.base import app
from pipeline.cli.common import PROFILE_HELP, run
from pipeline.generation import DEFAULT_WITHIN, SCHEDULER_ENV, STRATEGY_NAMES
from pipeline.limits import MAX_COUNT, MAX_JOBS, MAX_PLAYOUTS
from pipeline.rating.tiers import TIER_NAMES
from pipeline.solver.budgets import DEFAULT_SOLVE_NODES


@app.command()
def generate(
    count: int = typer.Option(
        1, "--count", "-n", min=1, max=MAX_COUNT, help="How many puzzles to write."
    ),
    cells: int = typer.Option(
        ..., "--cells", help="Cells of the starting board (no gaps, rows of 9)."
    ),
    adds: int = typer.Option(..., "--adds", help="Add numbers each Stage gets."),
    tier: str | None = typer.Option(
        None, "--tier", metavar="|".join(TIER_NAMES), help="Keep only this tier."
    ),
    score: float | None = typer.Option(
        None,
        "--score",
        help="Keep only scores within --within of this (0-100; with --tier, also in the tier).",
    ),
    within: float = typer.Option(
        DEFAULT_WITHIN, "--within", help="Half-width of the --score (or --target) target."
    ),
    target: list[str] | None = typer.Option(
        None,
        "--target",
        metavar="TIER[:SCORE]",
        help="Several targets in one run, any of which will do (repeat it; instead of --tier/--score): a tier, or a "
        "score within --within in a tier. A nightly puzzle's provenance lists its targets: with its seed and "
        "--attempt they rebuild it.",
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed; the same seed and options give the same files."
    ),
    out: Path = typer.Option(Path("."), "--out", help="Output folder; files are <id>.yaml."),
    jobs: int | None = typer.Option(
        None, "--jobs", "-j", max=MAX_JOBS, help="Worker processes (default: every core)."
    ),
    scheduler: str | None = typer.Option(
        None,
        "--scheduler",
        envvar=SCHEDULER_ENV,
        show_envvar=True,
        help="Run the attempts on a Dask cluster: tcp://HOST:PORT, or local:N for N local worker processes "
        "(needs the optional dask extra; --jobs is then unused). Same files as the process pool.",
    ),
    strategy: str | None = typer.Option(
        None,
        "--strategy",
        metavar="|".join(STRATEGY_NAMES),
        help="random (digits drawn independently), constructive (solvable by construction), search (random boards "
        "screened by a cheap estimate, only likely ones fully rated) or climb (the most promising board changed step by step "
        "toward the target). Default for a tier or score: climb where random boards do not reach (4 adds and expert, 5 adds and hard or expert), else search at 1-3 adds (where its estimate was fitted); otherwise random.",
    ),
    digits: str | None = typer.Option(
        None,
        "--digits",
        help="Digit distribution: digits to draw from (1123456789) or weights (1:1,5:2). Default uniform 1-9.",
    ),
    max_attempts: int | None = typer.Option(
        None,
        "--max-attempts",
        help="Give up after this many attempts (default 1000 + 200 per puzzle).",
    ),
    solve_nodes: int = typer.Option(
        DEFAULT_SOLVE_NODES, "--solve-nodes", help="Solver node budget per board."
    ),
    playouts: int | None = typer.Option(
        None,
        "--playouts",
        max=MAX_PLAYOUTS,
        help="Rating playouts per simulated player (default: the rating's).",
    ),
    rating_version: int | None = typer.Option(
        None,
        "--rating-version",
        help="Rate by this rating version (default: the current one); versions from 4 on confirm each accepted board on an independent draw of games.",
    ),
    attempt: int | None = typer.Option(
        None,
        "--attempt",
        help="Rebuild only this attempt (from a puzzle's provenance) instead of searching.",
    ),
    profile_file: Path | None = typer.Option(None, "--profile", metavar="FILE", help=PROFILE_HELP),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON object instead of the files' names and the summary line: written (per file: path, id, tier, score), attempts, acceptance, rejected (per reason), seconds.",
    ),
) -> None:
    """Propose, solve and rate boards; write the ones in the tier as puzzle files."""
    run(
        lambda: generate_run.generate(
            count=count,
            cells=cells,
            adds=adds,
            tier=tier,
            score=score,
            within=within,
            target=target,
            seed=seed,
            out=out,
            jobs=jobs,
            scheduler=scheduler,
            strategy=strategy,
            digits=digits,
            max_attempts=max_attempts,
            solve_nodes=solve_nodes,
            playouts=playouts,
            rating_version=rating_version,
            attempt=attempt,
            profile_file=profile_file,
            json_out=json_out,
            progress_bar=_progress_bar,
        )
    )


def _progress_bar(count: int) -> Any:
    return typer.progressbar(length=count, label="generating", file=sys.stderr)
