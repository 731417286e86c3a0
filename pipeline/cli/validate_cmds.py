"""`validate`: check puzzle and bundle files (parse, schema, rules, certificates) for CI and people
(the work is in `runs`)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from pipeline.cli import runs
from pipeline.cli.base import app
from pipeline.cli.common import run


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
    run(lambda: runs.validate(paths, fmt.value, deep, profile_file, against))
