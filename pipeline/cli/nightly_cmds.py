"""`nightly`: the unattended job, with progress on a terminal and clean-up on SIGTERM."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType

import typer

from pipeline.cli.base import app
from pipeline.cli.common import emit_json, error_text, fail
from pipeline.errors import NumberMatchError, Terminated, shorten
from pipeline.formats.curve_names import CURVE_HELP, CURVE_METAVAR, shape_text
from pipeline.formats.night import NIGHTS_FOLDER, night_date
from pipeline.generation import SCHEDULER_ENV
from pipeline.limits import MAX_JOBS, MAX_LEVELS, MAX_STAGES


class _Terminal:
    """A line as each part of the generation is done, so a long night is never minutes of
    silence; on a terminal, also a counter (one rewritten line) while a part runs, cleared before
    each line is printed, so the lines stay on the screen as in a log file or cron's mail."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.open = False
        self.since = time.perf_counter()

    def progress(self, what: str, done: int, total: int) -> None:
        if done == total:
            self.log(
                f"{what}: {done} of {total} puzzles ({time.perf_counter() - self.since:.1f} s)"
            )
        elif self.tty:
            sys.stderr.write(f"\r\x1b[Knightly: {what}: {done}/{total}")
            sys.stderr.flush()
            self.open = True

    def log(self, line: str) -> None:
        if self.open:
            sys.stderr.write("\r\x1b[K")
            self.open = False
        sys.stderr.write(f"nightly: {line}\n")
        sys.stderr.flush()
        self.since = time.perf_counter()


_MAIN_PID = os.getpid()


def on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM in the main process unwinds like Ctrl-C (as `Terminated`), so the temp folder is
    removed; forked generator workers (which inherit the handler) just die, as their pool expects."""
    if os.getpid() != _MAIN_PID:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    raise Terminated


@app.command()
def nightly(
    date: str | None = typer.Option(
        None, "--date", help="Night to build, YYYY-MM-DD (default: today, UTC)."
    ),
    seed: int | None = typer.Option(None, "--seed", help="Seed (default: the date as YYYYMMDD)."),
    levels: int | None = typer.Option(
        None,
        "--levels",
        min=1,
        max=MAX_LEVELS,
        help="Number of Levels (default: job file, last night, 10).",
    ),
    stages: int | None = typer.Option(
        None,
        "--stages",
        min=1,
        max=MAX_STAGES,
        help="Stages per Level (default: job file, last night, 6).",
    ),
    curve: str | None = typer.Option(
        None,
        "--curve",
        metavar=CURVE_METAVAR,
        help=CURVE_HELP + " Default: job file, last night's, campaign.",
    ),
    job: Path | None = typer.Option(
        None, "--job", help="Curve file whose `job:` names the curve, levels and stages."
    ),
    continue_from: Path | None = typer.Option(
        None,
        "--continue",
        help="Folder of earlier nights: number the Levels on from the last one and continue its curve (default: the output folder's nights).",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Output folder; the night goes to OUT/<date>/ (default: the --continue folder, else generated).",
    ),
    jobs: int | None = typer.Option(
        None, "--jobs", "-j", min=1, max=MAX_JOBS, help="Worker processes (default: all cores)."
    ),
    scheduler: str | None = typer.Option(
        None,
        "--scheduler",
        envvar=SCHEDULER_ENV,
        show_envvar=True,
        help="Generate on a Dask cluster: tcp://HOST:PORT, or local:N for N local worker processes "
        "(needs the optional dask extra; --jobs is then unused). Same bundle as the process pool.",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Rebuild a night that exists: replace the files the job makes, keep every other file.",
    ),
    profile: Path | None = typer.Option(
        None,
        "--profile",
        metavar="FILE",
        help="A rating profile (`numbermatch calibrate`): rate the night for that audience (default: the job file's `profile:`).",
    ),
    skip_existing: bool = typer.Option(
        False,
        "--skip-existing",
        help="A night that exists is not an error: say so, write nothing and exit 0 (what `make nightly` does); --force wins.",
    ),
    stock: bool = typer.Option(
        True,
        "--stock/--no-stock",
        help="Draw from OUT/stock/ first (puzzles near each Stage's target), generate only the shortfall, stock "
        "what was made and not used, then refill the stock with what the next night needs and the job's keep "
        "levels (--no-stock: generate everything, write pool/).",
    ),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON object instead of the bundle's path: date, seed, folder, bundle, levels, stages, curve, deviation (points), tiers (per tier: wanted, from_stock, generated, attempts, invalid, short: Stages given another tier's puzzle), seconds (per phase), changed (committed files the night changed).",
    ),
) -> None:
    """Generate, validate and assemble tonight's bundle into OUT/<date>/: bundle.yaml, report.md,
    report.html, run.log and .stock-taken.json; the valid puzzles the bundle did not use go to
    OUT/stock/, or with --no-stock to the night's pool/, for swaps."""
    from pipeline.jobs.nightly import (  # start-up time: not for --help
        NightlyError,
        default_seed,
        plan_night,
        run_nightly,
    )
    from pipeline.jobs.tracked import Watch

    # a night's date is its folder's name: one rule (formats.night) for both
    night = night_date(date) if date is not None else _dt.datetime.now(_dt.UTC).date()
    if night is None:
        fail(f"--date {shorten(date)} is not a date: expected YYYY-MM-DD")
    terminal = _Terminal()
    try:
        options = plan_night(
            night,
            seed=default_seed(night) if seed is None else seed,
            levels=levels,
            stages=stages,
            curve=curve,
            job=job,
            continue_from=continue_from,
            out=out or continue_from or Path(NIGHTS_FOLDER),
            jobs=jobs,
            scheduler=scheduler or None,
            profile=profile,
            stock=stock,
            log=terminal.log,
        )
        options = dataclasses.replace(options, force=force)
    except NumberMatchError as exc:
        fail(
            f"nightly failed {'in ' if isinstance(exc, NightlyError) else ''}{error_text(exc)}; previous output left intact"
        )
    previous = signal.signal(signal.SIGTERM, on_sigterm)  # clean up the temp folder on kill
    watch = Watch(options.out)  # the committed files a night in a git checkout changes
    try:
        terminal.log(
            f"{options.date_text}: seed {options.seed}, {shape_text(options.levels, options.stages)},"
            f" curve {options.curve_text}"
            + (f", from Level {options.first_level}" if options.first_level != 1 else "")
        )
        result = run_nightly(options, log=terminal.log, progress=terminal.progress)
    except (KeyboardInterrupt, Terminated):
        terminal.log("interrupted")
        fail("nightly interrupted; previous output left intact", 130)
    except NumberMatchError as exc:
        if exc.remedy == "force" and skip_existing:
            said = str(exc).removeprefix(f"{exc.phase}: ") if isinstance(exc, NightlyError) else exc
            terminal.log(f"{said} ({_force_hint()})")
            raise typer.Exit(0) from None
        terminal.log("failed")
        where = "in " if isinstance(exc, NightlyError) else ""
        text = f"{exc} ({_force_hint()})" if exc.remedy == "force" else error_text(exc)
        fail(f"nightly failed {where}{text}; previous output left intact")
    except OSError as exc:
        fail(f"nightly failed: {exc}; previous output left intact")
    finally:
        signal.signal(signal.SIGTERM, previous)
    changed = watch.lines()
    for line in changed:
        terminal.log(line)
    terminal.log(f"published {result.folder}/")
    if json_out:
        emit_json(
            {
                "date": options.date_text,
                "seed": options.seed,
                "folder": str(result.folder),
                "bundle": str(result.bundle_path),
                "levels": options.levels,
                "stages": options.stages,
                "curve": options.curve_text,
                "deviation": round(result.assembly.cost / 100, 2),
                "tiers": {
                    name: {
                        "wanted": s.wanted,
                        "from_stock": s.from_stock,
                        "generated": s.generated,
                        "attempts": s.attempts,
                        "invalid": s.invalid,
                        "short": s.stand_ins,
                    }
                    for name, s in result.tiers.items()
                },
                "seconds": {k: round(v, 2) for k, v in result.seconds.items()},
                "changed": changed,
            }
        )
        return
    typer.echo(str(result.bundle_path))


# Set by the Makefile's `nightly` target to the command that runs this one, so that advice names
# what the user typed (`make nightly ARGS=--force`), not an option make does not pass.
MAKE_ENV = "NUMBERMATCH_MAKE"


def _force_hint() -> str:
    """How to rebuild a night that exists, as the user would type it."""
    via = os.environ.get(MAKE_ENV, "").strip()
    force = f'{via} ARGS="--force"' if via else "--force"
    return f"{force} rebuilds it: replaces the files the job makes and keeps the others"
