"""`stock`: what the stock holds, topping it up, and dropping what the pipeline would no longer ship."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path

import typer

from pipeline.cli.base import app
from pipeline.cli.common import emit_json, fail
from pipeline.cli.help_text import EXAMPLES
from pipeline.errors import NumberMatchError
from pipeline.generation import SCHEDULER_ENV, STRATEGY_NAMES
from pipeline.limits import MAX_COUNT, MAX_JOBS, MAX_PRUNE_SHARE
from pipeline.rating.tiers import TIER_NAMES

stock_app = typer.Typer(
    name="stock",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="The stock of validated, unshipped puzzles under OUT/stock/ (OUT: default generated).",
    epilog=f"Example: {EXAMPLES['stock']}",
)
app.add_typer(stock_app, name="stock")

_OUT_HELP = "The nights' output folder; the stock is OUT/stock/<ruleset>/<cells>x<adds>/<id>.yaml."


def _prepare(out: Path) -> None:
    """Finish a night killed between its publish and its stock move, under the nights' lock."""
    from pipeline.jobs.publish import (  # start-up time: the stock's modules load to run, not for --help
        PublishError,
        locked,
    )
    from pipeline.stock.night import finish

    if not out.is_dir():
        fail(f"{out}: no such folder (the nightly job's --out)")
    try:
        with locked(out):
            finish(out)
    except PublishError as exc:
        fail(str(exc))


@stock_app.callback(invoke_without_command=True)
def stock(
    ctx: typer.Context,
    out: Path = typer.Option(Path("generated"), "--out", help=_OUT_HELP),
    json_out: bool = typer.Option(
        False, "--json", help="One JSON object: the groups with their tier counts and histograms."
    ),
) -> None:
    """Stock puzzles per group (ruleset/cells x adds) and tier, with a score histogram (10-point bins)."""
    if ctx.invoked_subcommand is not None:
        return
    # start-up time: the index and YAML load to count, not for --help
    from pipeline.formats.index import LevelIndex
    from pipeline.stock.store import HISTOGRAM_BIN, counts

    _prepare(out)
    with LevelIndex(out) as index:
        index.refresh()
        groups = counts(index.stock())
    if json_out:
        emit_json(
            {
                "stock": str(out / "stock"),
                "total": sum(g.total for g in groups),
                "groups": [g.to_dict() for g in groups],
            }
        )
        return
    total = sum(g.total for g in groups)
    typer.echo(
        f"{out / 'stock'}: {total} puzzle{'s' if total != 1 else ''} in {len(groups)} group(s)"
    )
    bins = list(range(0, 100, HISTOGRAM_BIN))
    for g in groups:
        tiers = ", ".join(f"{t} {g.tiers[t]}" for t in TIER_NAMES if t in g.tiers)
        typer.echo(f"  {g.name}: {g.total} ({tiers})")
        typer.echo("    score " + " ".join(f"{b:>3}" for b in bins))
        typer.echo("    count " + " ".join(f"{g.histogram.get(b, 0):>3}" for b in bins))


@stock_app.command(
    "refill",
    epilog="Example: numbermatch stock refill --tier hard --cells 30 --adds 1 --count 20 --out generated",
)
def refill_cmd(
    tier: str = typer.Option(
        ..., "--tier", metavar="|".join(TIER_NAMES), help="Tier of the new puzzles."
    ),
    cells: int = typer.Option(..., "--cells", help="Cells of the starting board."),
    adds: int = typer.Option(..., "--adds", help="Add numbers each Stage gets."),
    count: int = typer.Option(
        ..., "--count", "-n", min=1, max=MAX_COUNT, help="How many new puzzles to stock."
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed; the same seed, options and stock give the same files."
    ),
    out: Path = typer.Option(Path("generated"), "--out", help=_OUT_HELP),
    jobs: int | None = typer.Option(
        None, "--jobs", "-j", min=1, max=MAX_JOBS, help="Worker processes (default: every core)."
    ),
    scheduler: str | None = typer.Option(
        None,
        "--scheduler",
        envvar=SCHEDULER_ENV,
        show_envvar=True,
        help="Run the attempts on a Dask cluster: tcp://HOST:PORT, or local:N (same files as the process pool).",
    ),
    strategy: str | None = typer.Option(
        None,
        "--strategy",
        metavar="|".join(STRATEGY_NAMES),
        help="The generator's strategy (see generate --help). Default: as generate's for a tier.",
    ),
    max_attempts: int | None = typer.Option(
        None, "--max-attempts", help="Give up after this many attempts."
    ),
) -> None:
    """Generate COUNT new puzzles of a tier and size into the stock (none repeating a stocked or
    shipped puzzle, relabelled copies included); prints the files written."""
    # start-up time: the generator and its executors load to refill, not for --help
    from pipeline.generation.executors import SchedulerError, open_executor
    from pipeline.jobs.publish import (
        PublishError,
        locked,
    )
    from pipeline.stock.night import finish
    from pipeline.stock.store import refill, stock_day

    if tier not in TIER_NAMES:
        fail(f"--tier {tier!r}: expected one of {', '.join(TIER_NAMES)}", 2)
    # start-up time: the checks below load to refill, not for --help
    from pipeline.atomic import WriteRefused, check_writable_folder, check_writable_tree
    from pipeline.formats.stock_layout import STOCK_DIR

    try:  # before any attempt: an unwritable stock would only show after the generating
        check_writable_folder(out, "output folder")
        out.mkdir(parents=True, exist_ok=True)
        check_writable_tree(out / STOCK_DIR, "stock folder")
    except WriteRefused as exc:
        fail(str(exc))
    progress = None
    if sys.stderr.isatty():

        def progress(done: int, total: int) -> None:
            sys.stderr.write(f"\r\x1b[Kstock refill: {done}/{total}")
            sys.stderr.flush()

    try:
        with locked(out), open_executor(jobs, scheduler) as executor:
            finish(out)
            result = refill(
                out,
                tier=tier,
                cells=cells,
                adds=adds,
                count=count,
                seed=seed,
                strategy=strategy,
                day=stock_day(out, _dt.datetime.now(_dt.UTC).date()),
                executor=executor,
                max_attempts=max_attempts,
                progress=progress,
            )
    except (NumberMatchError, SchedulerError, PublishError) as exc:
        fail(str(exc))
    if progress is not None:
        sys.stderr.write("\r\x1b[K")
    for path in result.written:
        typer.echo(str(path))
    typer.echo(
        f"stock refill: {len(result.written)} new {tier} puzzle(s) from {result.attempts} attempts"
        f" in {result.seconds:.1f} s",
        err=True,
    )


@stock_app.command("prune", epilog="Example: numbermatch stock prune --out generated --dry-run")
def prune_cmd(
    out: Path = typer.Option(Path("generated"), "--out", help=_OUT_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would go; delete nothing."),
    force: bool = typer.Option(
        False,
        "--force",
        help=f"Drop them even when they are more than {MAX_PRUNE_SHARE:.0%} of the stock's files"
        " (else refused: nothing dropped, the list printed).",
    ),
) -> None:
    """Drop stock puzzles the pipeline would no longer ship: invalid files (a ruleset no longer
    shipped included), an older rating version, already shipped, a second copy of one puzzle.
    One line per file: the file and why."""
    # start-up time: the validator and the stock load to prune, not for --help
    from pipeline.atomic import WriteRefused
    from pipeline.jobs.publish import (
        PublishError,
        locked,
    )
    from pipeline.stock.night import finish
    from pipeline.stock.store import PruneRefused, StockError, prune

    if not out.is_dir():
        fail(f"{out}: no such folder (the nightly job's --out)")
    try:
        with locked(out):
            finish(out)
            dropped = prune(out, dry_run=dry_run, force=force)
    except PruneRefused as exc:
        for d in exc.dropped:
            typer.echo(f"would drop {d}")
        fail(str(exc))
    except (PublishError, StockError, WriteRefused) as exc:
        fail(str(exc))
    for d in dropped:
        typer.echo(str(d))
    verb = "would drop" if dry_run else "dropped"
    typer.echo(f"stock prune: {verb} {len(dropped)} puzzle(s)", err=True)
