"""`validate`: check puzzle and bundle files (parse, schema, rules, certificates) for CI and people."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.cli.base import app
from pipeline.cli.common import fail
from pipeline.errors import NumberMatchError

if TYPE_CHECKING:
    from pipeline.rating.profile import RatingProfile
    from pipeline.validator import ValidationReport


class Format(str, Enum):
    text = "text"
    json = "json"
    github = "github"


@app.command()
def validate(
    paths: list[str] = typer.Argument(
        ..., metavar="PATH...", help="Files, or folders searched recursively for *.yaml and *.yml."
    ),
    fmt: Format = typer.Option(
        Format.text,
        "--format",
        help="text (file:line:col: code: message), json, or github (workflow annotations).",
    ),
    deep: bool = typer.Option(
        False,
        "--deep",
        help="Also re-run the solver and the rating and report disagreements (slow).",
    ),
    profile_file: Path | None = typer.Option(
        None,
        "--profile",
        metavar="FILE",
        help="A rating profile: puzzles scored under a profile must name this one (NM318); the file is checked too.",
    ),
    against: Path | None = typer.Option(
        None,
        "--against",
        metavar="FOLDER",
        help="Also check the shipped and stock puzzles of PATH... for repeats (NM321) against every level file "
        "under FOLDER, through its index (a cache in ~/.cache/numbermatch or $NUMBERMATCH_CACHE): pre-commit passes the "
        "changed files and `--against .`.",
    ),
) -> None:
    """Validate level files. Exit 0: all valid; 1: a file is invalid; 2: usage error."""
    from pipeline.validator import PathError, validate_paths  # start-up time: not for --help
    from pipeline.validator.profiles import read_profile
    from pipeline.validator.reporters import render, summary

    try:
        profile = None if profile_file is None else read_profile(profile_file)
    except NumberMatchError as exc:
        fail(f"--profile: {exc}", 2)
    try:
        if deep and sys.stderr.isatty():
            report = _deep_with_progress(paths, profile, against)
        else:
            report = validate_paths(paths, deep=deep, profile=profile, against=against)
    except PathError as exc:
        fail(str(exc), 2)
    sys.stdout.write(render(report, fmt.value))
    if fmt is not Format.json:
        typer.echo(summary(report), err=True)
    sys.stdout.flush()
    raise typer.Exit(0 if report.ok else 1)


def _deep_with_progress(
    paths: list[str], profile: RatingProfile | None = None, against: Path | None = None
) -> ValidationReport:
    """`validate_paths(paths, deep=True)`, showing on the terminal how far the deep checks are."""
    from pipeline.validator import Validator, collect_files  # start-up time

    files = collect_files(paths)
    count = [0]

    def tick(name: str) -> None:
        count[0] += 1
        sys.stderr.write(
            f"\rdeep check: {count[0]} puzzle{'s' if count[0] != 1 else ''} re-solved and re-rated ({name})\x1b[K"
        )
        sys.stderr.flush()

    run = Validator(deep=True, on_deep=tick, profile=profile)
    for k, path in enumerate(files, 1):
        sys.stderr.write(f"\rdeep check: file {k} of {len(files)}: {path}\x1b[K")
        sys.stderr.flush()
        run.add_file(path)
    sys.stderr.write("\r\x1b[K")
    if against is not None:
        run.check_against(against)
    return run.report
