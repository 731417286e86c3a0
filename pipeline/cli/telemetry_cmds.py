"""`telemetry simulate`, `observed`, `calibrate`, `rescore`: play telemetry in, a calibrated rating out.

The telemetry library (DuckDB underneath) is imported inside each command, never at module
level: `numbermatch --help` and every other command start without paying for it.
"""

from __future__ import annotations

import datetime as _dt
import sys
from enum import Enum
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
from pipeline.cli.help_text import EXAMPLES
from pipeline.errors import NumberMatchError, printable
from pipeline.limits import MAX_JOBS

if TYPE_CHECKING:
    from pipeline.telemetry.catalogue import Catalogue
    from pipeline.telemetry.records import Telemetry

telemetry_app = typer.Typer(
    help="Play telemetry: simulate it with the rating's player models.", no_args_is_help=True
)
app.add_typer(telemetry_app, name="telemetry", epilog=f"Example: {EXAMPLES['telemetry']}")


@telemetry_app.callback()
def telemetry_group() -> None:
    """Play telemetry: simulate it with the rating's player models (`observed` and `calibrate` read it)."""


LEVELS_HELP = "Puzzle files, bundles or folders the telemetry is about (repeat --levels for more)."
STRICT_HELP = "Fail (exit 1) on any bad record instead of counting and skipping it."
FORCE_HELP = "Replace --out even when it is a file of another kind."


class ObservedFormat(str, Enum):
    text = "text"
    json = "json"
    html = "html"


def _inputs(telemetry: list[Path], levels: list[Path], strict: bool) -> tuple[Catalogue, Telemetry]:
    # start-up time: DuckDB and the loaders load to read, not for --help
    from pipeline.telemetry.catalogue import load_catalogue
    from pipeline.telemetry.records import read_telemetry

    try:
        catalogue = load_catalogue(levels)
        return catalogue, read_telemetry(telemetry, catalogue, strict=strict)
    except NumberMatchError as exc:
        fail(str(exc))


def _report_bad(data: Telemetry) -> None:
    for bad in data.bad:
        typer.echo(f"numbermatch: skipped {printable(str(bad))}", err=True)


@telemetry_app.command("simulate", epilog=f"Example: {EXAMPLES['telemetry']}")
def simulate_cmd(
    levels: list[Path] = typer.Argument(
        ..., metavar="LEVELS...", help="Puzzle files, bundles or folders to play."
    ),
    audience: str = typer.Option(
        ...,
        "--audience",
        metavar="MIX",
        help="The players' mix, e.g. random:0.5,planner:0.3,proximity:0.2 (weights sum to 1).",
    ),
    attempts: int = typer.Option(..., "--attempts", min=1, help="Attempts per puzzle."),
    seed: int = typer.Option(0, "--seed", help="Seed (same seed, same file)."),
    out: Path = typer.Option(
        ..., "--out", metavar="FILE", help="Where to write: .jsonl, .csv or .parquet."
    ),
    abandon: float = typer.Option(
        0.05, "--abandon", min=0.0, max=0.99, help="Share of attempts abandoned part-way."
    ),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Write telemetry by playing every puzzle with the rating's player models in a stated mix."""
    # start-up time: the players and DuckDB load to simulate, not for --help
    from pipeline.telemetry.catalogue import load_catalogue
    from pipeline.telemetry.records import counted, telemetry_format
    from pipeline.telemetry.simulate import parse_audience, simulate, write_records

    writable_folder(out.parent, "--out")  # before the playing, not after it
    try:
        telemetry_format(out)
        mix = parse_audience(audience)
        catalogue = load_catalogue(levels)
        records = simulate(catalogue, mix, attempts, seed, abandon=abandon)
        write_records(out, records, force=force)
    except NumberMatchError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{out}: cannot write: {exc.strerror or exc}")
    typer.echo(
        f"wrote {counted(len(records), 'attempt')} on {counted(len(catalogue.puzzles), 'puzzle')} to {out}"
    )


@app.command("observed")
def observed_cmd(
    telemetry: list[Path] = typer.Argument(
        ..., metavar="TELEMETRY...", help="Telemetry files: .jsonl, .csv or .parquet."
    ),
    levels: list[Path] = typer.Option(..., "--levels", metavar="PATH", help=LEVELS_HELP),
    fmt: ObservedFormat = typer.Option(
        ObservedFormat.text, "--format", help="text, json, or html (a page like report.html)."
    ),
    out: Path | None = typer.Option(
        None, "--out", metavar="FILE", help="Write the report here (atomically) instead of stdout."
    ),
    profile_file: Path | None = typer.Option(None, "--profile", metavar="FILE", help=PROFILE_HELP),
    strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Observed loss rates per puzzle and Stage against the rated ones, flags, summary and curves."""
    # start-up time: DuckDB and the loaders load to report, not for --help
    from pipeline.atomic import write_guarded
    from pipeline.telemetry.observed import REPORTER_BY_NAME, observe

    if out is not None:
        writable_folder(out.parent, "--out")  # before the reading, not after it
    profile = read_profile_option(profile_file)
    catalogue, data = _inputs(telemetry, levels, strict)
    try:
        text = REPORTER_BY_NAME[fmt.value](observe(catalogue, data, profile))
    except NumberMatchError as exc:
        fail(str(exc))
    if fmt is not ObservedFormat.text:
        _report_bad(data)
    if out is None:
        sys.stdout.write(text)
        return
    kinds = ("html",) if fmt is ObservedFormat.html else ("observed-report",)
    try:
        write_guarded(out, text, kinds=kinds, force=force)
    except NumberMatchError as exc:  # a file of another kind, read-only, a folder, ...
        fail(str(exc))
    typer.echo(f"wrote {out}", err=True)


@app.command("calibrate")
def calibrate_cmd(
    telemetry: list[Path] = typer.Argument(
        ..., metavar="TELEMETRY...", help="Telemetry files: .jsonl, .csv or .parquet."
    ),
    levels: list[Path] = typer.Option(..., "--levels", metavar="PATH", help=LEVELS_HELP),
    out: Path = typer.Option(
        ..., "--out", metavar="PROFILE.yaml", help="Where to write the rating profile."
    ),
    name: str | None = typer.Option(
        None, "--name", help="The profile's name (default: the file name without .yaml)."
    ),
    date: str | None = typer.Option(
        None,
        "--date",
        metavar="YYYY-MM-DD",
        help="The day recorded as the fit's date (default: today, UTC).",
    ),
    folds: int = typer.Option(
        5, "--folds", min=2, max=20, help="Cross-validation folds (by puzzle)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the fold assignment."),
    strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON object instead of text: out, profile (name, digest), weights, tiers, fitted_from, heldout (mae in points).",
    ),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Fit a rating profile (mix weights and tiers) to the observed loss rates, with held-out figures."""
    from pipeline.formats.profile_file import (  # start-up time: not for --help
        profile_document,
        write_profile,
    )
    from pipeline.telemetry.calibrate import calibrate

    if date is None:
        date = _dt.datetime.now(_dt.UTC).date().isoformat()
    else:
        try:
            _dt.date.fromisoformat(date)
        except ValueError:
            fail(f"--date {date!r}: not a date YYYY-MM-DD")
    writable_folder(out.parent, "--out")  # before the fit, not after it
    catalogue, data = _inputs(telemetry, levels, strict)
    _report_bad(data)
    try:
        result = calibrate(
            catalogue, data, name=name or out.stem, date=date, folds_k=folds, seed=seed
        )
        write_profile(
            out, profile_document(result.profile, result.fitted_from, result.heldout), force=force
        )
    except NumberMatchError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{out}: cannot write: {exc.strerror or exc}")
    if json_out:

        def points(d: dict[str, Any]) -> dict[str, Any]:  # mae in points, as the text says it
            return {**d, "mae": round(d["mae"] * 100, 2)}

        h = result.heldout
        emit_json(
            {
                "out": str(out),
                "profile": {"name": result.profile.name, "digest": result.profile.digest},
                "weights": dict(result.profile.weights),
                "tiers": [[n, lo, hi] for n, lo, hi in result.profile.tiers],
                "fitted_from": result.fitted_from,
                "heldout": {**h, "fitted": points(h["fitted"]), "default": points(h["default"])},
            }
        )
        return
    typer.echo(result.text())
    typer.echo(f"wrote {out}")


@app.command("rescore")
def rescore_cmd(
    paths: list[str] = typer.Argument(
        ..., metavar="PATH...", help="Puzzle files, bundles or folders to re-score in place."
    ),
    profile_file: Path | None = typer.Option(
        None,
        "--profile",
        metavar="FILE",
        help="The rating profile to score under (from the stored win rates; no game replayed).",
    ),
    rating_version: int | None = typer.Option(
        None,
        "--rating-version",
        metavar="N",
        help="Re-rate under rating version N: every puzzle's games played again (version 4 and"
        " later with the confirmation seed), blocks already at N kept.",
    ),
    jobs: int = typer.Option(
        1,
        "--jobs",
        "-j",
        min=1,
        max=MAX_JOBS,
        help="Worker processes for --rating-version's ratings (the files do not depend on it).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would change; write nothing."),
) -> None:
    """Re-score stored puzzles under a rating profile (no replay) or a rating version (re-rated)."""
    if (profile_file is None) == (rating_version is None):
        fail("give one of --profile FILE (re-score) or --rating-version N (re-rate)")
    if rating_version is not None:
        _rerate(paths, rating_version, jobs, dry_run)
        return
    # start-up time: YAML loads to rescore, not for --help
    from pipeline.atomic import check_replaceable
    from pipeline.formats.files import level_files
    from pipeline.telemetry.rescore import rescore_file, write_rescored

    profile = read_profile_option(profile_file)
    assert profile is not None
    files = level_files(paths)
    if not files:
        fail("no level files given")
    results = []
    try:
        for path in files:  # every file checked before any is written
            results.append(rescore_file(path, profile))
        if not dry_run:  # nor one written when another cannot be: all of them, or none
            for r in results:
                if r.base.text != r.text:
                    check_replaceable(r.path)
    except NumberMatchError as exc:
        fail(str(exc))
    for r in results:
        if not dry_run:
            try:
                write_rescored(r)
            except NumberMatchError as exc:  # changed on disk since it was read, read-only, ...
                fail(str(exc))
            except OSError as exc:
                fail(f"{r.path}: cannot write: {exc.strerror or exc}")
        typer.echo(
            f"{r.path}: {r.blocks} difficulty block{'s' if r.blocks != 1 else ''}, {r.changed} changed score or tier"
            + (" (dry run)" if dry_run else "")
        )


def _rerate(paths: list[str], version: int, jobs: int, dry_run: bool) -> None:
    """`rescore --rating-version N`: every file re-rated and checked before any is written."""
    # start-up time: the players load to re-rate, not for --help
    from pipeline.atomic import check_replaceable
    from pipeline.formats.files import level_files
    from pipeline.telemetry.rerate import rerate_files, write_rerated

    files = level_files(paths)
    if not files:
        fail("no level files given")
    try:
        results, _ = rerate_files(files, version, jobs=jobs)
        if not dry_run:  # nor one written when another cannot be: all of them, or none
            for r in results:
                for target in ([r.path] if r.base.text != r.text else []) + [e[0] for e in r.extra]:
                    check_replaceable(target)
    except NumberMatchError as exc:
        fail(str(exc))
    blocks = moved_tier = 0
    for r in results:
        if not dry_run:
            try:
                write_rerated(r)
            except NumberMatchError as exc:  # changed on disk since it was read, read-only, ...
                fail(str(exc))
            except OSError as exc:
                fail(f"{r.path}: cannot write: {exc.strerror or exc}")
        blocks += len(r.moved)
        moved_tier += r.changed_tier
        kept = f", {r.skipped} already version {version} or unsolvable" if r.skipped else ""
        also = "".join(f", {e[0].name} re-rendered" for e in r.extra)
        typer.echo(
            f"{r.path}: {len(r.moved)} difficulty block{'s' if len(r.moved) != 1 else ''} re-rated"
            f" to version {version}{kept}, {r.changed_tier} changed tier{also}"
            + (" (dry run)" if dry_run else "")
        )
        for m in r.moved:
            typer.echo(f"  {m}")
    if moved_tier and any(r.kind == "puzzle" for r in results):
        typer.echo(
            "a puzzle whose tier changed stays where it is: the stock's folders are by size and"
            " adds, not tier"
        )
    typer.echo(
        f"{blocks} block{'s' if blocks != 1 else ''} re-rated in {len(results)} file"
        f"{'s' if len(results) != 1 else ''}, {moved_tier} changed tier"
        + (" (dry run: nothing written)" if dry_run else "")
    )
