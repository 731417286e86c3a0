"""`generate`: write new puzzle files that hit a difficulty tier."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from pipeline.cli.base import app
from pipeline.cli.common import (
    PROFILE_HELP,
    emit_json,
    fail,
    read_profile_option,
    writable_folder,
)
from pipeline.errors import NumberMatchError
from pipeline.generation import DEFAULT_WITHIN, SCHEDULER_ENV, STRATEGY_NAMES
from pipeline.limits import MAX_COUNT, MAX_JOBS, MAX_PLAYOUTS
from pipeline.rating.tiers import TIER_NAMES
from pipeline.solver.budgets import DEFAULT_SOLVE_NODES

if TYPE_CHECKING:
    from pipeline.formats.puzzle import Puzzle
    from pipeline.generation.executors import Executor
    from pipeline.generation.generator import GenerateParams, GenerateResult


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
    # start-up time: the generator and the file writer load to generate, not for --help
    from pipeline.generation.generator import GenerateParams, GenerationError, Target

    if jobs is not None and jobs < 1:
        fail(f"--jobs {jobs} must be at least 1")
    try:
        targets = tuple(Target.parse(t) for t in target or ())
    except GenerationError as exc:
        fail(f"--target: {exc}")
    writable_folder(out, "--out")  # before any generation work
    params = GenerateParams(
        cells=cells,
        adds=adds,
        tier=tier,
        score=score,
        within=within,
        targets=targets,
        strategy=strategy,
        seed=seed,
        digits=digits,
        max_attempts=max_attempts,
        solve_nodes=solve_nodes,
        playouts=playouts,
        profile=read_profile_option(profile_file),
        rating_version=rating_version,
    )
    try:
        if attempt is not None:
            _one_attempt(params, attempt, out, json_out)
            return
        from pipeline.generation.executors import open_executor  # start-up time: not for --attempt

        with open_executor(jobs, scheduler) as executor:
            result = _run(count, params, executor, out)
    except GenerationError as exc:
        if exc.partial is not None and exc.partial.puzzles:
            _write(exc.partial, out)
        fail(str(exc))
    except (NumberMatchError, OSError) as exc:
        fail(str(exc))
    written = _write(result, out, not json_out)
    if json_out:
        emit_json(
            {
                "written": written,
                "attempts": result.attempts,
                "acceptance": round(result.acceptance_rate, 4),
                "rejected": dict(sorted(result.rejected.items())),
                "seconds": round(result.seconds, 2),
            }
        )
        return
    typer.echo(result.summary(), err=True)
    if scheduler and result.work is not None:
        typer.echo(f"ran on {result.work}", err=True)


def _run(count: int, params: GenerateParams, executor: Executor, out: Path) -> GenerateResult:
    from pipeline.generation.generator import existing_ids  # start-up time
    from pipeline.generation.generator import generate as generate_puzzles

    exclude = existing_ids(out)
    if not sys.stderr.isatty():
        return generate_puzzles(count, params, exclude_ids=exclude, executor=executor)
    with typer.progressbar(length=count, label="generating", file=sys.stderr) as bar:
        done = [0]

        def progress(accepted: int, total: int) -> None:
            bar.update(accepted - done[0])
            done[0] = accepted

        return generate_puzzles(
            count, params, exclude_ids=exclude, progress=progress, executor=executor
        )


def _write(result: GenerateResult, out: Path, echo: bool = True) -> list[dict[str, Any]]:
    from pipeline.formats.files import write_puzzles  # start-up time

    return _written(write_puzzles(result.puzzles, out), result.puzzles, echo)


def _written(paths: Sequence[Path], puzzles: Sequence[Puzzle], echo: bool) -> list[dict[str, Any]]:
    """Each file written (its name printed unless `echo` is False) with its puzzle's figures."""
    out = []
    for path, puzzle in zip(paths, puzzles, strict=True):
        if echo:
            typer.echo(str(path))
        out.append(
            {"path": str(path), "id": puzzle.id, "tier": puzzle.tier, "score": puzzle.rated.score}
        )
    return out


def _one_attempt(params: GenerateParams, attempt: int, out: Path, json_out: bool = False) -> None:
    from pipeline.formats.files import write_puzzles  # start-up time
    from pipeline.generation.generator import run_attempt

    if attempt < 0:
        fail(f"--attempt {attempt} must be 0 or more")
    outcome = run_attempt(params, attempt)
    if outcome.puzzle is None:
        fail(
            f"attempt {attempt} with seed {params.seed} gives no puzzle: rejected as {outcome.reason}"
        )
    written = _written(write_puzzles([outcome.puzzle], out), [outcome.puzzle], not json_out)
    if json_out:
        emit_json({"written": written, "attempt": attempt, "seed": params.seed})
