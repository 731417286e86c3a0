"""Running one night: refuse bad sizes and curves before any work, hold the output folder's
lock, build the night in a staging folder, publish it atomically (or, with --force, replace only
the job's files in the night that exists), finish the stock move, then refill the stock."""

from __future__ import annotations

import os
import resource
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.atomic import WriteRefused, check_writable_folder, check_writable_tree, snapshot
from pipeline.formats.curves import Curve, CurveError
from pipeline.formats.night import BUNDLE_FILE
from pipeline.formats.stock_layout import STOCK_DIR
from pipeline.jobs.assembler import Assembly
from pipeline.jobs.curve_specs import load_curve
from pipeline.jobs.nightly.build import build_night
from pipeline.jobs.nightly.options import Log, NightlyError, NightlyOptions, next_night
from pipeline.jobs.nightly.streams import Progress, TierStats
from pipeline.jobs.publish import PublishError, locked, make_staging, publish, publish_over, sweep
from pipeline.limits import MAX_LEVELS, MAX_STAGES
from pipeline.stock.night import finish as finish_stock
from pipeline.stock.night import stage_aside
from pipeline.stock.refill import Refill, refill_after_night


@dataclass
class NightlyResult:
    """A published night: where it went, what it holds, and how long each phase took."""

    folder: Path
    bundle_path: Path
    assembly: Assembly
    tiers: dict[str, TierStats]
    seconds: dict[str, float]
    log_lines: list[str]
    # what finishing the stock move and the refill did
    stock_lines: list[str] = field(default_factory=list)


def run_nightly(
    options: NightlyOptions,
    *,
    log: Log = lambda line: None,
    progress: Progress | None = None,
) -> NightlyResult:
    """Run one night and publish `<out>/<date>/`; raises NightlyError (previous output intact)."""
    if options.levels < 1 or options.stages < 1:
        raise NightlyError(
            "setup", f"need at least 1 level of 1 stage, got {options.levels} x {options.stages}"
        )
    if options.levels > MAX_LEVELS or options.stages > MAX_STAGES:
        raise NightlyError(
            "setup",
            f"{options.levels} levels x {options.stages} stages is past the limit of "
            f"{MAX_LEVELS:,} levels x {MAX_STAGES} stages (docs/limits.md)",
        )
    try:  # the curve, resolved once for the whole run; refused (bad, or unable to give this
        # night's Levels) before any work
        curve = load_curve(options.curve)
        curve.targets(options.levels, options.stages, options.first_level)
    except CurveError as exc:
        raise NightlyError("setup", str(exc)) from exc
    out = Path(options.out)
    try:  # a folder this user cannot write is refused before any work, not after the publish
        check_writable_folder(out, "output folder")
    except WriteRefused as exc:
        raise NightlyError("setup", str(exc).removesuffix("; nothing written")) from exc
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NightlyError(
            "setup", f"cannot create output folder {out}: {exc.strerror or exc}"
        ) from exc
    if options.stock:  # the night moves puzzles out of the stock and puts its leftovers in
        try:
            check_writable_tree(out / STOCK_DIR, "stock folder")
        except WriteRefused as exc:
            said = str(exc).removesuffix("; nothing written")
            raise NightlyError("setup", said, remedy="stock") from exc
    final = out / options.date_text
    cpu_started = cpu_seconds()
    try:
        with locked(out):
            sweep(out)
            _refuse_rerun(final, options)
            base = (
                snapshot(final / BUNDLE_FILE) if os.path.lexists(final) and final.is_dir() else None
            )
            finish_stock(out)  # a night killed after its publish: complete its stock move first
            staging = make_staging(out, options.date_text)
            try:
                built = build_night(options, curve, staging, log, progress)
                if os.path.lexists(final):  # --force: the job's files only
                    aside = make_staging(out, options.date_text)  # the stock move, swept if killed
                    try:
                        moved = stage_aside(staging, aside)
                        for line in publish_over(staging, final, base):
                            log(f"publish: {line}")
                        stage_aside(aside, final, moved)  # the manifest last: then the move is due
                    finally:
                        shutil.rmtree(aside, ignore_errors=True)
                else:
                    publish(staging, final)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            stock_lines = finish_stock(out)
            for line in stock_lines:
                log(f"stock: {line}")
            if options.stock:
                night_cpu = cpu_seconds() - cpu_started
                stock_lines += _refill(options, curve, log)
                log(
                    f"stock: CPU: {night_cpu:.1f} s for the night, {cpu_seconds() - cpu_started - night_cpu:.1f} s"
                    " for the refill after it"
                )
    except PublishError as exc:
        raise NightlyError("setup", str(exc)) from exc
    except WriteRefused as exc:
        raise NightlyError("publish", str(exc)) from exc
    return NightlyResult(
        final,
        final / BUNDLE_FILE,
        built.assembly,
        built.tiers,
        built.seconds,
        built.log_lines,
        stock_lines,
    )


def _refill(options: NightlyOptions, curve: Curve, log: Log) -> list[str]:
    """The stock's refill after the night (`pipeline.stock.refill`), logged line by line."""
    if options.keep == {}:  # no refill: not even the next night is looked for
        return []
    started = time.perf_counter()
    ask = Refill(
        options.date,
        options.seed,
        options.keep,
        options.refill_seconds,
        by_score=options.profile is None,
        jobs=options.jobs,
        scheduler=options.scheduler,
    )
    lines = refill_after_night(Path(options.out), ask, next_night(options, curve))
    for line in lines:
        log(f"stock: {line}")
    if lines:
        log(f"stock: refill took {time.perf_counter() - started:.1f} s")
    return lines


def _refuse_rerun(final: Path, options: NightlyOptions) -> None:
    """A night that exists is a designer's work (swaps, notes, playtests): never replaced
    without --force, and even then only the files the job makes (`publish_over`)."""
    if os.path.lexists(final) and not options.force:
        raise NightlyError(
            "setup",
            f"{final} exists: the night of {options.date_text} is already published; nothing written",
            remedy="force",
        )


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished workers (for the log only, never the output)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )
