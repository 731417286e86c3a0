"""`generate` without typer: what the command does, called by the typer command
(`generate_cmds`) and by the start-up fast path (`fast`) alike, so both run one code path.

`generate` prints the files' names (or one JSON object) and the summary line and returns the
exit code; a refusal the command words itself raises `runs.Failed`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.cli import runs
from pipeline.errors import NumberMatchError

if TYPE_CHECKING:
    from pipeline.formats.puzzle import Puzzle
    from pipeline.generation.executors import Executor
    from pipeline.generation.generator import GenerateParams, GenerateResult

# count -> a context manager giving `update(n)` (typer's progress bar on a terminal)
ProgressBar = Callable[[int], AbstractContextManager[Any]]


def generate(
    *,
    count: int,
    cells: int,
    adds: int,
    tier: str | None,
    score: float | None,
    within: float,
    target: Sequence[str] | None,
    seed: int,
    out: Path,
    jobs: int | None,
    scheduler: str | None,
    strategy: str | None,
    digits: str | None,
    max_attempts: int | None,
    solve_nodes: int,
    playouts: int | None,
    rating_version: int | None,
    attempt: int | None,
    profile_file: Path | None,
    json_out: bool,
    progress_bar: ProgressBar | None = None,
) -> int:
    """Propose, solve and rate boards; write the ones in the tier as puzzle files."""
    # start-up time: the generator and the file writer load to generate, not for --help
    from pipeline.generation.generator import GenerateParams, GenerationError, Target

    if jobs is not None and jobs < 1:
        raise runs.Failed(f"--jobs {jobs} must be at least 1")
    try:
        targets = tuple(Target.parse(t) for t in target or ())
    except GenerationError as exc:
        raise runs.Failed(f"--target: {exc}") from exc
    runs.writable_folder(out, "--out")  # before any generation work
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
        profile=runs.read_profile_option(profile_file),
        rating_version=rating_version,
    )
    try:
        if attempt is not None:
            return _one_attempt(params, attempt, out, json_out)
        from pipeline.generation.executors import open_executor  # start-up time: not for --attempt

        with open_executor(jobs, scheduler) as executor:
            result = _run(count, params, executor, out, progress_bar)
    except GenerationError as exc:
        if exc.partial is not None and exc.partial.puzzles:
            _write(exc.partial, out)
        raise runs.Failed(str(exc)) from exc
    except (NumberMatchError, OSError) as exc:
        raise runs.Failed(str(exc)) from exc
    written = _write(result, out, not json_out)
    if json_out:
        runs.emit_json(
            {
                "written": written,
                "attempts": result.attempts,
                "acceptance": round(result.acceptance_rate, 4),
                "rejected": dict(sorted(result.rejected.items())),
                "seconds": round(result.seconds, 2),
            }
        )
        return 0
    runs.echo(result.summary(), err=True)
    if scheduler and result.work is not None:
        runs.echo(f"ran on {result.work}", err=True)
    return 0


def _run(
    count: int,
    params: GenerateParams,
    executor: Executor,
    out: Path,
    progress_bar: ProgressBar | None,
) -> GenerateResult:
    from pipeline.generation.generator import existing_ids  # start-up time
    from pipeline.generation.generator import generate as generate_puzzles

    exclude = existing_ids(out)
    if progress_bar is None or not sys.stderr.isatty():
        return generate_puzzles(count, params, exclude_ids=exclude, executor=executor)
    with progress_bar(count) as bar:
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
            runs.echo(str(path))
        out.append(
            {"path": str(path), "id": puzzle.id, "tier": puzzle.tier, "score": puzzle.rated.score}
        )
    return out


def _one_attempt(params: GenerateParams, attempt: int, out: Path, json_out: bool) -> int:
    from pipeline.formats.files import write_puzzles  # start-up time
    from pipeline.generation.generator import run_attempt

    if attempt < 0:
        raise runs.Failed(f"--attempt {attempt} must be 0 or more")
    outcome = run_attempt(params, attempt)
    if outcome.puzzle is None:
        raise runs.Failed(
            f"attempt {attempt} with seed {params.seed} gives no puzzle: rejected as {outcome.reason}"
        )
    written = _written(write_puzzles([outcome.puzzle], out), [outcome.puzzle], not json_out)
    if json_out:
        runs.emit_json({"written": written, "attempt": attempt, "seed": params.seed})
    return 0
