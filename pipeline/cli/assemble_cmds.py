"""`assemble` and `nightly`: Puzzles into Levels and YAML bundles, by hand or unattended."""

from __future__ import annotations

from pathlib import Path

import typer

from pipeline.cli.base import app
from pipeline.cli.common import (
    PROFILE_HELP,
    emit_json,
    error_text,
    fail,
    read_profile_option,
    writable_folder,
)
from pipeline.errors import NumberMatchError
from pipeline.formats.curve_names import CURVE_HELP, CURVE_METAVAR, DEFAULT_CURVE, shape_text
from pipeline.formats.slot import Slot
from pipeline.limits import MAX_LEVELS, MAX_STAGES


def parse_pin(text: str) -> tuple[tuple[int, int], str]:
    """`--pin L3.S2=nm1-...` -> ((3, 2), 'nm1-...'): the command line parses its own option."""
    at, sep, pid = text.partition("=")
    if not sep or not pid.strip():
        raise NumberMatchError(
            f"--pin {text!r}: write it as L<level>.S<stage>=PUZZLE_ID (e.g. L3.S2=nm1-3f2a9c0d1e7b)"
        )
    slot = Slot.parse(at)
    return (slot.level, slot.stage), pid.strip()


@app.command()
def assemble(
    puzzles: list[Path] = typer.Argument(
        ..., help="Puzzle files (or folders of them, or bundles to reuse)."
    ),
    levels: int = typer.Option(..., "--levels", min=1, max=MAX_LEVELS, help="Number of Levels."),
    stages: int = typer.Option(..., "--stages", min=1, max=MAX_STAGES, help="Stages per Level."),
    curve: str = typer.Option(DEFAULT_CURVE, "--curve", metavar=CURVE_METAVAR, help=CURVE_HELP),
    first_level: int = typer.Option(
        1, "--first-level", min=1, help="Game-wide number of the first Level."
    ),
    out: Path = typer.Option(..., "--out", help="Bundle file to write (atomically)."),
    bundle_id: str | None = typer.Option(
        None, "--id", help="Bundle id (default: derived from its content)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed recorded in the bundle's generator block."),
    pin: list[str] | None = typer.Option(
        None,
        "--pin",
        metavar="L.S=ID",
        help="Put this puzzle at Level L, Stage S (from 1), whatever its tier (repeatable).",
    ),
    exclude: list[str] | None = typer.Option(
        None, "--exclude", metavar="ID", help="Leave this puzzle out (repeatable)."
    ),
    curation: Path | None = typer.Option(
        None,
        "--curation",
        metavar="FILE",
        help="Pins and excludes saved by the studio (BUNDLE.curation.txt), added to --pin and --exclude.",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace an existing --out file (a bundle, or a file of another kind).",
    ),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON object instead of the summary line: out, id, levels, stages, curve, candidates, deviation (points), placed (per Stage: stage, id, tier, score, target).",
    ),
    profile_file: Path | None = typer.Option(None, "--profile", metavar="FILE", help=PROFILE_HELP),
) -> None:
    """Order validated Puzzles into Levels along a difficulty curve and write a YAML bundle."""
    # start-up time: the assembler (networkx), the loaders and the validator load when assembling, not for --help
    from pipeline.atomic import write_guarded
    from pipeline.formats.bundle import Bundle
    from pipeline.formats.curation import read_curation
    from pipeline.formats.curves import curve_params
    from pipeline.formats.scale import check_same
    from pipeline.jobs.assembler import assemble as assemble_puzzles
    from pipeline.jobs.bundle import (
        bundle_document,
        bundle_id_problem,
        bundle_text,
        default_bundle_id,
    )
    from pipeline.jobs.curate import constraints
    from pipeline.jobs.curve_specs import load_curve
    from pipeline.jobs.inputs import load_puzzles
    from pipeline.validator import validate_texts

    writable_folder(out.parent, "--out")  # before the loading and the search

    if bundle_id is not None and (problem := bundle_id_problem(bundle_id)) is not None:
        fail(f"--id {problem}", 2)
    profile = read_profile_option(profile_file)
    try:
        spec = load_curve(curve)
        spec.targets(
            levels, stages, first_level
        )  # refuse a curve that cannot give this shape first
        pins = dict(parse_pin(text) for text in pin or [])
        if len(pins) != len(pin or []):
            fail("--pin names the same stage twice")
        # a --pin given here wins over the curation file's for the same Stage
        kept = read_curation(curation) if curation is not None else None
        pins, excluded = constraints(pins, exclude or (), kept)
        pool = [p.under(profile) for p in load_puzzles(puzzles)]
        check_same((p.id, p.difficulty) for p in pool)  # one scale, or refused in one line
        result = assemble_puzzles(
            pool,
            levels=levels,
            stages=stages,
            curve=spec,
            curve_name=curve,
            first_level=first_level,
            pins=pins,
            exclude=excluded,
        )
    except NumberMatchError as exc:
        fail(error_text(exc))
    params = {
        **curve_params(curve, spec),
        "levels": levels,
        "stages": stages,
        "candidates": len(pool),
    }
    doc = bundle_document(
        result, bundle_id=bundle_id or default_bundle_id(result), seed=seed, params=params
    )
    text = bundle_text(doc, hint_for=out)
    checked = validate_texts([(str(out), text)])  # never write what the validator rejects
    if not checked.ok:
        fail(f"the bundle would not pass validation, nothing written: {checked.first_problem()}")
    try:
        write_guarded(
            out, text, force=force
        )  # an existing bundle is a night's work: only with --force
    except NumberMatchError as exc:
        fail(error_text(exc))
    if json_out:
        emit_json(
            {
                "out": str(out),
                "id": bundle_id or default_bundle_id(result),
                "levels": levels,
                "stages": stages,
                "curve": curve,
                "candidates": len(pool),
                "deviation": round(result.cost / 100, 2),
                "placed": [
                    {
                        "stage": str(s.slot),
                        "id": s.puzzle.id,
                        "tier": s.puzzle.tier,
                        "score": s.puzzle.rated.score,
                        "target": s.target_score,
                    }
                    for s in Bundle.from_dict(doc).stages
                ],
            }
        )
        return
    typer.echo(
        f"{out}: {shape_text(levels, stages)}"
        f" from {len(pool)} puzzles on curve {curve}, total deviation {result.cost / 100:.2f} points",
        err=True,
    )
