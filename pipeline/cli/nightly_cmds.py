"""`nightly`: the unattended job, with progress on a terminal and clean-up on SIGTERM."""

from __future__ import annotations

import datetime as _dt
import os
import signal
import sys
from pathlib import Path
from types import FrameType

import typer

from pipeline.cli.base import app
from pipeline.cli.common import fail
from pipeline.errors import NumberMatchError
from pipeline.generation.executors import SCHEDULER_ENV
from pipeline.levels.curves import CURVES, shape_text
from pipeline.levels.nightly import (
    DEFAULT_CURVE,
    DEFAULT_LEVELS,
    DEFAULT_OUT,
    DEFAULT_STAGES,
    NightlyError,
    NightlyOptions,
    default_seed,
    run_nightly,
)

_CURVE_HELP = f"Target difficulty curve: {', '.join(CURVES)}."


class _Terminal:
    """Progress on a terminal (one rewritten line); nothing but summary lines otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.open = False

    def progress(self, what: str, done: int, total: int) -> None:
        if self.tty:
            sys.stderr.write(f"\r\x1b[Knightly: {what}: {done}/{total}")
            sys.stderr.flush()
            self.open = True

    def log(self, line: str) -> None:
        if self.open:
            sys.stderr.write("\r\x1b[K")
            self.open = False
        sys.stderr.write(f"nightly: {line}\n")
        sys.stderr.flush()


_MAIN_PID = os.getpid()


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM in the main process unwinds like Ctrl-C, so the temp folder is removed; forked
    generator workers (which inherit the handler) just die, as their pool expects."""
    if os.getpid() != _MAIN_PID:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    raise KeyboardInterrupt


@app.command()
def nightly(
    date: str | None = typer.Option(None, "--date", help="Night to build, YYYY-MM-DD (default: today, UTC)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed (default: the date as YYYYMMDD)."),
    levels: int = typer.Option(DEFAULT_LEVELS, "--levels", min=1, help="Number of Levels."),
    stages: int = typer.Option(DEFAULT_STAGES, "--stages", min=1, help="Stages per Level."),
    curve: str = typer.Option(DEFAULT_CURVE, "--curve", metavar="|".join(CURVES), help=_CURVE_HELP),
    out: Path = typer.Option(Path(DEFAULT_OUT), "--out", help="Output folder; the night goes to OUT/<date>/."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores)."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", envvar=SCHEDULER_ENV, show_envvar=True,
        help="Generate on a Dask cluster: tcp://HOST:PORT, or local:N for N local worker processes "
        "(needs the optional dask extra; --jobs is then unused). Same bundle as the process pool.",
    ),
) -> None:
    """Generate, validate and assemble tonight's bundle into OUT/<date>/ (bundle.yaml, report.md, run.log)."""
    try:
        night = _dt.date.fromisoformat(date) if date else _dt.datetime.now(_dt.timezone.utc).date()
    except ValueError:
        fail(f"--date {date!r} is not a date: expected YYYY-MM-DD")
    options = NightlyOptions(
        date=night,
        seed=default_seed(night) if seed is None else seed,
        levels=levels,
        stages=stages,
        curve=curve,
        out=out,
        jobs=jobs,
        scheduler=scheduler or None,
    )
    terminal = _Terminal()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)  # clean up the temp folder on kill
    try:
        terminal.log(f"{options.date_text}: seed {options.seed}, {shape_text(levels, stages)}, curve {curve}")
        result = run_nightly(options, log=terminal.log, progress=terminal.progress)
    except KeyboardInterrupt:
        terminal.log("interrupted")
        fail("nightly interrupted; previous output left intact", 130)
    except NumberMatchError as exc:
        terminal.log("failed")
        where = "in " if isinstance(exc, NightlyError) else ""
        fail(f"nightly failed {where}{exc}; previous output left intact")
    except OSError as exc:
        fail(f"nightly failed: {exc}; previous output left intact")
    finally:
        signal.signal(signal.SIGTERM, previous)
    terminal.log(f"published {result.folder}/")
    typer.echo(str(result.bundle_path))
