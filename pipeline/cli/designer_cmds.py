"""`puzzle`, `swap`, `render`: a designer's own boards into puzzle files, one Stage replaced,
and pictures of boards."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.cli import runs
from pipeline.cli.base import app
from pipeline.cli.common import (
    IN_HELP,
    PROFILE_HELP,
    SOURCE_HELP,
    emit_json,
    error_text,
    fail,
    load_source,
    read_profile_option,
    run,
    writable_folder,
)
from pipeline.errors import NumberMatchError, os_message
from pipeline.formats.night import POOL_DIR
from pipeline.formats.slot import Slot, SlotError
from pipeline.formats.stock_layout import STOCK_DIR
from pipeline.limits import MAX_ADDS
from pipeline.solver.budgets import DEFAULT_BUDGET_NODES

if TYPE_CHECKING:
    pass

_PUZZLE_SOURCES = (
    "The board to author: "
    + SOURCE_HELP[0].lower()
    + SOURCE_HELP[1:]
    + " With --refresh: the puzzle files, or bundle stages (bundle.yaml:L1.S2), to refresh."
)


@app.command()
def puzzle(
    sources: list[str] | None = typer.Argument(
        None, metavar="BOARD | FILE...", help=_PUZZLE_SOURCES
    ),
    adds: int | None = typer.Option(
        None,
        "--adds",
        min=0,
        max=MAX_ADDS,
        help="Adds each Stage gets (required for board notation).",
    ),
    out_text: str | None = typer.Option(
        None,
        "--out",
        metavar="PATH",
        help="Puzzle file to write, or a folder (existing, or ending in /) for <id>.yaml.",
    ),
    refresh: bool = typer.Option(
        False,
        "--refresh",
        help="Re-derive id, certificate and difficulty of hand-edited puzzle files or bundle stages.",
    ),
    budget_nodes: int = typer.Option(
        DEFAULT_BUDGET_NODES, "--budget-nodes", min=0, help="Solver node budget (0: no limit)."
    ),
    search: list[Path] | None = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace an existing --out file that is not a puzzle file (a bundle, notes).",
    ),
) -> None:
    """Author a puzzle file from a board: solved, rated, id derived, validated, written atomically.

    With --refresh FILE..., re-derive id, certificate and difficulty of hand-edited puzzle files
    or bundle stages (bundle.yaml:L1.S2: only that Stage's puzzle is rewritten), print what
    changed, and rewrite each only when it is valid afterwards.
    """
    # start-up time: the solver, the rating and the validator load when authoring, not for --help
    from pipeline.atomic import write_guarded
    from pipeline.jobs.authoring import AuthoringError, author, puzzle_text, validation_problem

    budget = None if budget_nodes == 0 else budget_nodes
    if refresh:
        _refresh(sources or [], budget, out_text, adds)
        return
    if not sources or len(sources) != 1:
        fail("puzzle takes one BOARD (or --refresh FILE...)")
    if out_text is None:
        fail("puzzle needs --out FILE (or a folder)")
    out = Path(out_text)
    folder = out if out.is_dir() or out_text.endswith(("/", os.sep)) else out.parent
    writable_folder(folder, "--out")
    if out.exists() and not out.is_dir() and not out.is_file():
        fail(f"--out {out}: is not a regular file")
    src = load_source(sources[0], search)
    if src.adds is None and adds is None:
        fail("--adds N is required: say how many adds each Stage of this puzzle gets")
    stage_adds = src.adds_or(adds)
    try:
        made = author(src.cells, stage_adds, budget_nodes=budget, ruleset=src.ruleset)
    except AuthoringError as exc:
        fail(error_text(exc))
    target = folder / f"{made.id}.yaml" if folder is out else out
    text = puzzle_text(made, target.parent)
    problem = validation_problem(str(target), text)
    if problem is not None:  # pragma: no cover - author() makes valid puzzles; this guards the file
        fail(f"the puzzle would not validate: {problem}")
    try:
        write_guarded(target, text, kinds=("puzzle",), force=force)
    except NumberMatchError as exc:
        fail(error_text(exc))
    typer.echo(
        f"{target}: {made.id} {made.board} with {made.adds} add{'s' if made.adds != 1 else ''}:"
        f" {made.rated}, certificate {len(made.solution)} moves"
    )


def _refresh(files: list[str], budget: int | None, out: str | None, adds: int | None) -> None:
    from pipeline.atomic import WriteRefused, write_guarded  # start-up time (see `puzzle`)
    from pipeline.jobs.authoring import refresh, validation_problem

    if not files:
        fail("--refresh needs one or more puzzle files or bundle stages (bundle.yaml:L1.S2)")
    if out is not None or adds is not None:
        fail(
            "--refresh rewrites each file in place; --out and --adds do not apply (edit adds in the file)"
        )
    bad = 0
    for name in files:
        stage = _bundle_stage(name)
        if stage is not None:
            bad += _refresh_stage(name, *stage, budget)
            continue
        path = Path(name)
        try:
            result = refresh(path, budget_nodes=budget)
        except NumberMatchError as exc:
            bad += 1
            typer.echo(f"numbermatch: error: {error_text(exc)}", err=True)
            continue
        problem = validation_problem(str(path), result.text)
        if problem is not None:  # pragma: no cover - refresh() rebuilds the file from checked parts
            bad += 1
            typer.echo(
                f"numbermatch: error: {path}: not rewritten, it would not validate: {problem}",
                err=True,
            )
            continue
        if result.base is not None and result.base.text == result.text:
            typer.echo(f"{path}: unchanged ({result.puzzle.id})")
            continue
        try:
            write_guarded(path, result.text, base=result.base)
        except WriteRefused as exc:
            bad += 1
            typer.echo(f"numbermatch: error: {exc}", err=True)
            continue
        renamed = ""
        old_id = result.old_id
        if old_id and path.stem == old_id and old_id != result.puzzle.id:
            renamed = f" (the file is named after the old id; its new name would be {result.puzzle.id}{path.suffix})"
        typer.echo(
            f"{path}: rewritten: " + ("; ".join(result.changes) or "formatting only") + renamed
        )
    if bad:
        raise typer.Exit(1)


def _bundle_stage(name: str) -> tuple[Path, int, int] | None:
    """(bundle, level, stage) when NAME is `BUNDLE:L<level>.S<stage>` and not a file itself."""
    head, sep, tail = name.rpartition(":")
    if not sep or not head or Path(name).exists():
        return None
    try:
        slot = Slot.parse(tail)
    except SlotError:
        return None
    return Path(head), slot.level, slot.stage


def _refresh_stage(name: str, bundle: Path, level: int, stage: int, budget: int | None) -> int:
    """Refresh one Stage of a bundle in place; 1 if it failed (said on stderr), else 0."""
    from pipeline.jobs.swap import refresh_stage  # start-up time (see `puzzle`)

    try:
        before = bundle.read_text(encoding="utf-8")
        text, made, changes = refresh_stage(bundle, level, stage, budget_nodes=budget)
    except NumberMatchError as exc:  # a WriteRefused too: the bundle changed meanwhile
        typer.echo(f"numbermatch: error: {error_text(exc)}", err=True)
        return 1
    except OSError as exc:
        typer.echo(f"numbermatch: error: cannot rewrite {bundle}: {os_message(exc)}", err=True)
        return 1
    if text == before:
        typer.echo(f"{name}: unchanged ({made.id})")
    else:
        typer.echo(f"{name}: rewritten: " + ("; ".join(changes) or "formatting only"))
    return 0


@app.command()
def swap(
    bundle: Path = typer.Argument(..., metavar="BUNDLE", help="Bundle file to edit in place."),
    stage: str = typer.Argument(
        ..., metavar="L.S", help="The Stage to replace, e.g. L3.S2 (both from 1)."
    ),
    with_id: str | None = typer.Option(
        None,
        "--with",
        metavar="ID",
        help="The pool puzzle to put there (default: the nearest to the target score in its tier).",
    ),
    pool: list[Path] | None = typer.Option(
        None,
        "--pool",
        metavar="PATH",
        help="Puzzle files, folders or bundles to take from (default: the bundle's pool/ folder, else the nights' stock ../stock/; either then also takes back the puzzle swapped out).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would change; write nothing."),
    profile_file: Path | None = typer.Option(None, "--profile", metavar="FILE", help=PROFILE_HELP),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON object instead of text: bundle, stage, target, old and new (id, tier, score), dry_run, kept (where the old puzzle went, or null), reports (the files updated).",
    ),
) -> None:
    """Replace one Stage of a bundle by a pool puzzle; every other Stage stays byte-identical."""
    # start-up time: the loaders, the validator and the stock load when swapping, not for --help
    from pipeline.jobs import curate

    try:
        slot = Slot.parse(stage)
        level, number = slot.level, slot.stage
    except NumberMatchError as exc:
        fail(error_text(exc))
    profile = read_profile_option(profile_file)
    if not bundle.is_file():
        fail(f"{bundle}: no such file")
    source = curate.open_source(bundle, pool or ())
    if not source.kind:
        fail(
            f"--pool PATH is needed: neither {bundle.parent / POOL_DIR} nor {source.nights / STOCK_DIR} exists (the nightly job writes them)"
        )
    try:
        result, kept = curate.swap(
            source, bundle, level, number, with_id=with_id, dry_run=dry_run, profile=profile
        )
    except curate.StockBusy:
        fail(
            f"{source.nights}: the stock is in use (a nightly run, a stock command or another swap holds it);"
            " nothing written: swap again when it has finished"
        )
    except NumberMatchError as exc:
        fail(error_text(exc))
    except OSError as exc:
        fail(f"cannot read {exc.filename or bundle}: {os_message(exc)}")
    if not json_out:
        typer.echo(("(dry run) " if dry_run else "") + result.summary())
    if kept is not None and not json_out:
        where = "back in the stock at" if source.kind == curate.STOCK else "kept in"
        typer.echo(f"{result.old_id} {where} {kept} (swap it back with --with {result.old_id})")
    lines: list[str] = []
    if not dry_run:
        # the night's reports follow the bundle (report.md, which holds the run's figures, is
        # marked stale with the Stages changed, and unmarked when a swap back undoes them)
        try:
            before = result.base.text if result.base is not None else result.text
            lines = curate.refresh_reports(bundle, result.text, before)
        except NumberMatchError as exc:
            fail(
                f"the swap is saved, but the night's reports are not updated: {exc}; run"
                f" `numbermatch report {bundle} --out {bundle.with_name('report.html')}`"
            )
    if json_out:
        emit_json(
            {
                "bundle": str(bundle),
                "stage": f"L{level}.S{number}",
                "target": result.target_score,
                "old": {"id": result.old_id, "tier": result.old_tier, "score": result.old_score},
                "new": {
                    "id": result.new.id,
                    "tier": result.new.tier,
                    "score": result.new.rated.score,
                },
                "dry_run": dry_run,
                "kept": None if kept is None else str(kept),
                "reports": [str(bundle.parent / line) for line in lines],
            }
        )
        return
    for line in lines:
        typer.echo(f"{bundle.parent / line}")


@app.command()
def render(
    source: str = typer.Argument(..., metavar="SOURCE", help=SOURCE_HELP),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Picture file to write (atomically): .svg, or .png for chat and slides; - writes the SVG to standard output.",
    ),
    next_move: bool = typer.Option(
        False,
        "--next",
        help="Highlight the next move of the certificate (the puzzle's, else the solver's).",
    ),
    labels: bool = typer.Option(
        True,
        "--labels/--no-labels",
        help="Draw the row and column numbers along the edges (the cells' digits are always drawn).",
    ),
    no_numbers: bool = typer.Option(
        False, "--no-numbers", hidden=True, help="Deprecated: --no-labels."
    ),
    adds: int | None = typer.Option(
        None,
        "--adds",
        min=0,
        max=MAX_ADDS,
        help="Adds for the solver with --next on a bare board (default: the puzzle's, else 0).",
    ),
    search: list[Path] | None = typer.Option(None, "--in", metavar="PATH", help=IN_HELP),
) -> None:
    """Draw a board as the game shows it, as an SVG (or PNG) picture."""
    run(lambda: runs.render(source, out, next_move, labels, no_numbers, adds, search))


@app.command()
def report(
    bundle: str = typer.Argument(..., metavar="BUNDLE", help="Bundle file to show."),
    out: Path = typer.Option(..., "--out", help="HTML file to write (atomically)."),
) -> None:
    """Write the self-contained HTML report of a bundle (curves, boards, explained metrics).

    The nightly job writes one next to each bundle; run this after a swap to see the new night.
    """
    # start-up time: the validator loads when reporting, not for --help
    from pipeline.atomic import write_guarded
    from pipeline.formats.source import read_document
    from pipeline.jobs.report_html import render_report_html
    from pipeline.validator import validate_paths

    if out.suffix.lower() not in (".html", ".htm"):
        fail(f"--out {out}: name an .html file")
    writable_folder(out.parent, "--out")
    path = Path(bundle)
    if not path.is_file():
        fail(f"{path}: no such file")
    checked = validate_paths([path])
    if not checked.ok:
        fail(f"{checked.first_problem()} (the report needs a valid bundle)")
    try:
        doc = read_document(path)
    except NumberMatchError as exc:
        fail(error_text(exc))
    if doc.get("kind") != "bundle":
        fail(f"{path}: is a {doc.get('kind')}, not a bundle")
    try:
        write_guarded(out, render_report_html(doc), kinds=("html",))
    except NumberMatchError as exc:
        fail(error_text(exc))
    typer.echo(f"{out}: {doc.get('id')}")
