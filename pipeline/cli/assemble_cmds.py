"""`assemble` and `nightly`: Puzzles into Levels and YAML bundles, by hand or unattended."""

from __future__ import annotations

import datetime as _dt
import os
import signal
import sys
from pathlib import Path
from types import FrameType

import typer

from pipeline.levels.assembler import assemble as assemble_puzzles
from pipeline.levels.assembler import load_puzzles
from pipeline.levels.bundle import bundle_document, default_bundle_id, write_bundle
from pipeline.levels.curves import CURVES, shape_text
from pipeline.errors import NumberMatchError
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
from pipeline.cli import app
from pipeline.cli.common import fail

_CURVE_HELP = f"Target difficulty curve: {', '.join(CURVES)}."


@app.command()
def assemble(
    puzzles: list[Path] = typer.Argument(..., help="Puzzle files (or folders of them, or bundles to reuse)."),
    levels: int = typer.Option(..., "--levels", min=1, help="Number of Levels."),
    stages: int = typer.Option(..., "--stages", min=1, help="Stages per Level."),
    curve: str = typer.Option(DEFAULT_CURVE, "--curve", help=_CURVE_HELP),
    out: Path = typer.Option(..., "--out", help="Bundle file to write (atomically)."),
    bundle_id: str | None = typer.Option(None, "--id", help="Bundle id (default: derived from its content)."),
    seed: int = typer.Option(0, "--seed", help="Seed recorded in the bundle's generator block."),
) -> None:
    """Order validated Puzzles into Levels along a difficulty curve and write a YAML bundle."""
    if curve not in CURVES:
        fail(f"unknown curve {curve!r}: expected one of {', '.join(CURVES)}")
    try:
        pool = load_puzzles(puzzles)
        result = assemble_puzzles(pool, levels=levels, stages=stages, curve=curve)
    except NumberMatchError as exc:
        fail(str(exc))
    params = {"curve": curve, "levels": levels, "stages": stages, "candidates": len(pool)}
    doc = bundle_document(result, bundle_id=bundle_id or default_bundle_id(result), seed=seed, params=params)
    try:
        write_bundle(out, doc)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    typer.echo(
        f"{out}: {shape_text(levels, stages)}"
        f" from {len(pool)} puzzles on curve {curve}, total deviation {result.cost / 100:.2f} points",
        err=True,
    )


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
    curve: str = typer.Option(DEFAULT_CURVE, "--curve", help=_CURVE_HELP),
    out: Path = typer.Option(Path(DEFAULT_OUT), "--out", help="Output folder; the night goes to OUT/<date>/."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores)."),
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
