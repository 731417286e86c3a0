"""The nightly job: generate -> validate -> assemble -> write `<out>/<date>/`, unattended.

One night's output is a folder `<out>/<date>/` holding

- `bundle.yaml`: the bundle (see `pipeline.jobs.bundle`);
- `report.md`: a short human report: Puzzles per tier, acceptance rates, the work each phase
  did, and the difficulty curve of each Level;
- `report.html`: the same night for a browser: curves as charts, every Stage's board drawn, its
  metrics explained (`pipeline.jobs.report_html`);
- `pool/<id>.yaml` (without the stock): the validated Puzzles the bundle did not use, the first
  place `swap` looks; with the stock they go to `<out>/stock/` and the night keeps
  `.stock-taken.json`, the stock puzzles its bundle took (so a rerun draws as it did);
- `run.log`: the one summary line per phase that the job also logs, with its wall-clock time.

The curve is a built-in name or a designer's curve file (`FILE[:NAME]`); the night generates
every tier the curve asks for, expert included. A night can continue the game's Level sequence
(`continue_from`): its Levels are numbered on from the last night's and ask the curve for those
Levels, so Level 51 is harder than Level 50 although they were made on different nights.

`bundle.yaml`, `report.md`, `report.html` and `pool/` depend only on the date, seed, sizes, curve
and first Level (and, for a night from the stock, on the stock as it was before that date: a
rerun puts back what the night took and ignores what was stocked after it), so rerunning a night
gives byte-identical files (the seed defaults from the date). Wall-clock times would break that,
so they live only in `run.log`.

The job never leaves a partial bundle where a good one was: it builds the whole folder as
`<out>/.<date>.tmp-XXXX/`, validates the bundle there, and only then swaps it in (the old folder
is renamed aside, the new one renamed in, the old one deleted). Any failure raises NightlyError
and leaves the previous output untouched; a killed run leaves only a hidden temp folder, which
the next run sweeps away. A lock on the output folder keeps two runs from racing.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import os
import resource
import shutil
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.atomic import WriteRefused, snapshot, write_atomic
from pipeline.engine.rulesets import DEFAULT
from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle
from pipeline.formats.curves import (
    DEFAULT_CURVE,
    Curve,
    CurveError,
    curve_from_data,
    curve_params,
    shape_text,
)
from pipeline.formats.files import write_puzzles
from pipeline.formats.index import STOCK_DIR, LevelIndex
from pipeline.formats.loader import load_file
from pipeline.formats.night import NIGHTS_FOLDER, POOL_DIR
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.generation.executors import SchedulerError, open_executor
from pipeline.generation.generator import GenerateParams, Target, derived_seed, generate
from pipeline.jobs.assembler import Assembly, assemble
from pipeline.jobs.bundle import bundle_document, write_bundle
from pipeline.jobs.curve_specs import load_curve, read_curve_file, targets, tier_needs
from pipeline.jobs.publish import PublishError, locked, make_staging, publish, publish_over, sweep
from pipeline.jobs.report import (
    BUNDLE_FILE,
    LOG_FILE,
    REPORT_FILE,
    per_tier,
    percent,
    render_report,
)
from pipeline.jobs.report_html import REPORT_HTML, render_report_html
from pipeline.limits import MAX_LEVELS, MAX_STAGES
from pipeline.problems import Problem, first_problem
from pipeline.rating.profile import RatingProfile
from pipeline.stock.night import Drawn, draw, pick, stage_aside, stage_move, taken_back
from pipeline.stock.night import finish as finish_stock
from pipeline.stock.store import StockError, refill, stock_day
from pipeline.validator import validate_paths, validate_texts
from pipeline.validator.profiles import read_profile

if TYPE_CHECKING:
    from pipeline.generation.executors import Executor

DEFAULT_LEVELS = 10
DEFAULT_STAGES = 6
NIGHT_CURVE = "campaign"  # the default night's curve: shipped, and reaches expert (a boss Stage from Level 3 on)
DEFAULT_OUT = NIGHTS_FOLDER  # where a puzzle id is looked up without --in, too
SPARE = 0.25  # generate this share more than the curve needs per tier, so the assignment can choose
BAND = 6.0  # each band of Stage targets asks the generator for scores within this of its middle
# a stock puzzle serves a Stage only this close to its target, the window the generator takes
# around a target (wider, the nearest-first draw and the missing spare leave nights further from
# their curve than generated ones; docs/stock.md)
TOLERANCE = BAND
DEFAULT_REFILL_SECONDS = (
    600.0  # the refill after a night starts no new batch past this many seconds
)
REFILL_BATCH = 8  # puzzles per refill batch: the refill checks its time bound between batches


@dataclass(frozen=True)
class TierPlan:
    """Generator settings that reach a tier: board size and adds allocation."""

    cells: int
    adds: int
    strategy: str = "search"


# Chosen from what the rating gives: for each tier, a size and adds allocation whose generated
# boards often land in it (the measured shares are in docs/nightly.md: re-measure them when the
# rating changes). Hard shares medium's size, so one generator stream serves both and a board
# rated for one tier's band serves the other's. More cells and fewer adds make a Stage harder.
TIER_PLANS: dict[str, TierPlan] = {
    "easy": TierPlan(cells=27, adds=3),
    "medium": TierPlan(cells=30, adds=2),
    "hard": TierPlan(cells=30, adds=2),
    "expert": TierPlan(cells=36, adds=1),
}


class NightlyError(NumberMatchError):
    """The night failed; `phase` says where. The previous output is intact."""

    def __init__(self, phase: str, message: str, *, remedy: str | None = None) -> None:
        super().__init__(f"{phase}: {message}", remedy=remedy)
        self.phase = phase


@dataclass(frozen=True)
class NightlyOptions:
    """What decides a night's output (jobs and progress only change how fast it comes)."""

    date: _dt.date
    seed: int
    levels: int = DEFAULT_LEVELS
    stages: int = DEFAULT_STAGES
    # a built-in name, FILE[:NAME], or a curve read from a bundle. The library's plain default is
    # `ramp` (any shape); the default night of the CLI (`plan_night`) is NIGHT_CURVE.
    curve: str | Curve = DEFAULT_CURVE
    out: Path = Path(DEFAULT_OUT)
    jobs: int | None = None
    scheduler: str | None = None  # a Dask scheduler address or local:N (see generation.executors)
    first_level: int = 1  # the game-wide number of the night's first Level
    force: bool = False  # replace the job's files in a night that exists (others are kept)
    profile: RatingProfile | None = (
        None  # rate for this audience (`--profile`, or the job file's `profile:`)
    )
    stock: bool = False  # draw from `<out>/stock/` first and hand back what was made and not used
    # the refill after the night: None: what the next night needs (its Stage targets); a mapping:
    # that, then each tier named kept at its level; {}: no refill
    keep: Mapping[str, int] | None = field(default_factory=dict)
    refill_seconds: float = DEFAULT_REFILL_SECONDS

    @property
    def date_text(self) -> str:
        return self.date.isoformat()

    @property
    def curve_text(self) -> str:
        return self.curve if isinstance(self.curve, str) else self.curve.name


def default_seed(date: _dt.date) -> int:
    """The night's seed when none is given: the date as YYYYMMDD, so a night can be rerun exactly."""
    return int(date.strftime("%Y%m%d"))


def tier_seed(seed: int, tier: str) -> int:
    """An independent generator seed per tier, derived from the night's seed."""
    return derived_seed(seed, tier)


@dataclass(frozen=True)
class Band:
    """One request to the generator: `count` Puzzles of `tier` scoring within `within` of
    `score` (None: anywhere in the tier)."""

    tier: str
    score: float | None
    within: float
    count: int


def generation_bands(
    curve: str | Curve, levels: int, stages: int, first_level: int = 1, by_score: bool = True
) -> list[Band]:
    """What the night asks the generator for, tier by tier: the Stages' targets in bands at most
    2 x BAND wide, each aimed at its middle (so every Stage gets a Puzzle near its target), then
    SPARE of the tier's need anywhere in the tier, so the assignment can choose. Without
    `by_score` (a rating profile's scores are not the curve's), the tier's need anywhere in it."""
    found = _tier_targets(curve, levels, stages, first_level)
    bands: list[Band] = []
    for tier in tier_needs(curve, levels, stages, first_level):
        scores = sorted(found[tier])
        if not by_score:
            bands += [
                Band(tier, None, BAND, len(scores)),
                Band(tier, None, BAND, spare(len(scores))),
            ]
        else:
            bands += target_bands(tier, scores, spare(len(scores)))
    return bands


def spare(need: int) -> int:
    """The puzzles generated beyond a tier's `need`, so the assignment can choose (none for none)."""
    return max(1, math.ceil(need * SPARE)) if need > 0 else 0


def target_bands(tier: str, scores: Sequence[float], extra: int = 0) -> list[Band]:
    """Bands for these Stage targets of one tier (see `generation_bands`), then `extra` puzzles
    anywhere in the tier."""
    bands: list[Band] = []
    left = sorted(scores)
    while left:
        group = [x for x in left if x <= left[0] + 2 * BAND]
        left = left[len(group) :]
        bands.append(Band(tier, round((group[0] + group[-1]) / 2, 2), BAND, len(group)))
    return bands + ([Band(tier, None, BAND, extra)] if extra else [])


def generation_counts(
    curve: str | Curve, levels: int, stages: int, first_level: int = 1
) -> dict[str, int]:
    """How many Puzzles the night generates per tier (its bands' counts added up)."""
    counts: dict[str, int] = {}
    for band in generation_bands(curve, levels, stages, first_level):
        counts[band.tier] = counts.get(band.tier, 0) + band.count
    return counts


@dataclass(frozen=True)
class Previous:
    """Where the last published night left the game: its folder, next Level, curve and sizes."""

    folder: Path
    next_level: int
    curve: str | Curve
    levels: int
    stages: int


def previous_night(out: Path, before: _dt.date) -> Previous | None:
    """The latest night in `out` dated before `before` (a rerun of a night continues from the
    night before it, not from itself), read from its bundle; None when there is none."""
    nights = []
    for child in out.iterdir() if out.is_dir() else ():
        try:
            day = _dt.date.fromisoformat(child.name)
        except ValueError:
            continue
        # a night whose bundle is there in any form counts (a broken one is refused below,
        # never skipped: skipping it would continue from the night before and repeat Levels)
        if day < before and child.is_dir() and os.path.lexists(child / BUNDLE_FILE):
            nights.append((day, child))
    if not nights:
        return None
    folder = max(nights)[1]
    path = folder / BUNDLE_FILE
    if not path.is_file():
        what = (
            "a link to a missing file"
            if not path.exists()
            else "a folder"
            if path.is_dir()
            else "not a regular file"
        )
        raise NightlyError("continue", f"{path} is {what}, not a bundle; cannot continue from it")
    problems = _validate_files([path])
    if problems:
        raise NightlyError("continue", f"{path} is not a valid bundle: {first_problem(problems)}")

    loaded = load_file(path)
    if loaded.document is None:  # changed since it was validated
        raise NightlyError("continue", f"{path} cannot be read: {first_problem(loaded.problems)}")
    doc = loaded.document.data
    if not isinstance(doc, dict) or doc.get("kind") != "bundle":
        kind = doc.get("kind") if isinstance(doc, dict) else None
        raise NightlyError(
            "continue",
            f"{path} is {'a ' + str(kind) + ' file' if isinstance(kind, str) else 'not a bundle'},"
            " not a bundle; cannot continue from it",
        )
    bundle = Bundle.from_dict(doc, str(path))
    params = (doc.get("generator") or {}).get("params") or {}
    name = str(params.get("curve", DEFAULT_CURVE))
    definition = params.get("curve_definition")
    try:
        curve: str | Curve = (
            curve_from_data(name, definition) if isinstance(definition, dict) else load_curve(name)
        )
    except CurveError as exc:
        raise NightlyError("continue", f"{path}: cannot continue its curve: {exc}") from exc
    return Previous(
        folder=folder,
        next_level=bundle.first_level + len(bundle.levels),
        curve=curve,
        levels=len(bundle.levels),
        stages=len(bundle.levels[-1]),
    )


@dataclass
class TierStats:
    """What generation and validation did for one tier."""

    wanted: int
    plan: TierPlan
    seed: int
    generated: int = 0
    attempts: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    invalid: int = 0
    work: str = ""  # where the attempts ran, with worker names: run.log only, never the report
    from_stock: int = 0  # puzzles of this tier drawn from the stock (the rest was generated)
    short: int = 0  # Stages of this tier with no stock puzzle within TOLERANCE of their target
    seconds: float = 0.0  # generation's wall-clock time for the tier: run.log only

    @property
    def acceptance(self) -> float:
        return self.generated / self.attempts if self.attempts else 0.0


@dataclass
class NightlyResult:
    """A published night: where it went, what it holds, and how long each phase took."""

    folder: Path
    bundle_path: Path
    assembly: Assembly
    tiers: dict[str, TierStats]
    seconds: dict[str, float]
    log_lines: list[str]
    stock_lines: list[str] = field(
        default_factory=list
    )  # what finishing the stock move and the refill did


Progress = Callable[[str, int, int], None]  # (what, done, total)
Log = Callable[[str], None]


def read_job(path: Path) -> dict[str, Any]:
    """A curve file's `job:` settings, its curve as a spec that loads from anywhere."""
    try:
        data = read_curve_file(path)
    except CurveError as exc:
        raise NightlyError("setup", f"job file: {exc}") from exc
    job = dict(data.get("job") or {})
    if not job:
        raise NightlyError(
            "setup", f"job file {path}: the file has no `job:` section (curve, levels, stages)"
        )
    names = {c.get("name") for c in data.get("curves") or () if isinstance(c, dict)}
    if job.get("curve") in names:
        job["curve"] = f"{path}:{job['curve']}"
    return job


def plan_night(
    date: _dt.date,
    *,
    seed: int,
    levels: int | None = None,
    stages: int | None = None,
    curve: str | None = None,
    job: Path | None = None,
    continue_from: Path | None = None,
    out: Path = Path(DEFAULT_OUT),
    jobs: int | None = None,
    scheduler: str | None = None,
    profile: Path | None = None,
    stock: bool = True,
    log: Log = lambda line: None,
) -> NightlyOptions:
    """The night's options: flags win over the job file, which wins over the night continued
    (`continue_from`: numbering goes on from its last Level; by default the output folder's
    nights), which wins over the defaults. The job file's `keep` and `refill_seconds` set the
    stock's refill (default: what the next night needs)."""
    settings = read_job(job) if job is not None else {}
    prev = None
    asked = continue_from is not None
    if continue_from is None and out.is_dir():
        # the default night goes on from the last one in `out`
        continue_from = out
    if continue_from is not None:
        if not continue_from.is_dir():
            raise NightlyError("continue", f"{continue_from}: no such folder of earlier nights")
        prev = previous_night(continue_from, date)
        if prev is not None:
            log(f"continue: after {prev.folder.name}, from Level {prev.next_level}")
        elif asked:
            log(
                f"continue: no night before {date.isoformat()} in {continue_from}; starting at Level 1"
            )
    chosen: str | Curve = curve or settings.get("curve") or (prev.curve if prev else NIGHT_CURVE)
    profile_path = profile or (
        job.parent / settings["profile"] if job is not None and settings.get("profile") else None
    )
    return NightlyOptions(
        date=date,
        seed=seed,
        levels=levels or settings.get("levels") or (prev.levels if prev else DEFAULT_LEVELS),
        stages=stages or settings.get("stages") or (prev.stages if prev else DEFAULT_STAGES),
        curve=chosen,
        out=out,
        jobs=jobs,
        scheduler=scheduler,
        first_level=prev.next_level if prev else 1,
        profile=None if profile_path is None else _read_profile(profile_path),
        stock=stock,
        keep=settings.get("keep"),
        refill_seconds=float(settings.get("refill_seconds", DEFAULT_REFILL_SECONDS)),
    )


def _read_profile(path: Path) -> RatingProfile:
    """The night's rating profile (a file named by --profile, or by the job file relative to it)."""
    try:
        return read_profile(path)
    except NumberMatchError as exc:
        raise NightlyError("setup", f"rating profile: {exc}") from exc


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
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NightlyError(
            "setup", f"cannot create output folder {out}: {exc.strerror or exc}"
        ) from exc
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
                result = _build(options, curve, staging, log, progress)
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
            result.stock_lines = finish_stock(out)
            for line in result.stock_lines:
                log(f"stock: {line}")
            if options.stock:
                night_cpu = cpu_seconds() - cpu_started
                result.stock_lines += _refill(options, curve, out, log)
                log(
                    f"stock: CPU: {night_cpu:.1f} s for the night, {cpu_seconds() - cpu_started - night_cpu:.1f} s"
                    " for the refill after it"
                )
    except PublishError as exc:
        raise NightlyError("setup", str(exc)) from exc
    except WriteRefused as exc:
        raise NightlyError("publish", str(exc)) from exc
    folder = out / options.date_text
    result.folder = folder
    result.bundle_path = folder / BUNDLE_FILE
    return result


def _refuse_rerun(final: Path, options: NightlyOptions) -> None:
    """A night that exists is a designer's work (swaps, notes, playtests): never replaced
    without --force, and even then only the files the job makes (`publish_over`)."""
    if os.path.lexists(final) and not options.force:
        raise NightlyError(
            "setup",
            f"{final} exists: the night of {options.date_text} is already published; nothing written",
            remedy="force",
        )


# --- the phases ---------------------------------------------------------------------------


def _build(
    options: NightlyOptions, curve: Curve, staging: Path, log: Log, progress: Progress | None
) -> NightlyResult:
    seconds: dict[str, float] = {}
    lines: list[str] = []

    def summary(phase: str, text: str, started: float) -> None:
        seconds[phase] = time.perf_counter() - started
        line = f"{phase}: {text} ({seconds[phase]:.1f} s)"
        lines.append(line)
        log(line)

    started = time.perf_counter()
    drawn = _draw(options, curve)
    if options.stock:
        count = sum(len(v) for v in drawn.puzzles.values())
        summary(
            "stock",
            f"{count} puzzles drawn from {Path(options.out) / 'stock'}"
            + (f" ({per_tier({t: len(v) for t, v in drawn.puzzles.items()})})" if count else ""),
            started,
        )
        for aside in map(str, drawn.aside):  # invalid stock files, moved out of the draw
            lines.append(aside)
            log(aside)

    started = time.perf_counter()
    stats, puzzles = _generate(options, curve, progress, drawn)
    total_attempts = sum(s.attempts for s in stats.values())
    drawn_ids = drawn.ids
    made = [p for p in puzzles if p.id not in drawn_ids]
    if options.stock and not made and not total_attempts:
        summary("generate", "nothing: the stock covered every tier", started)
    else:
        summary(
            "generate",
            f"{len(made)} puzzles ({per_tier({t: s.generated for t, s in stats.items() if s.generated})})"
            f" from {total_attempts} attempts, acceptance {percent(len(made), total_attempts)}"
            + (", only the stock's shortfall" if options.stock else ""),
            started,
        )
    lines.extend(f"generate {tier}: {s.work}" for tier, s in stats.items() if s.work)

    started = time.perf_counter()
    valid = _validate_puzzles(puzzles, stats)
    summary("validate", f"{len(valid)} of {len(puzzles)} puzzles valid", started)

    started = time.perf_counter()
    elsewhere, stocked = _shipped_elsewhere(options)
    assembly = _assemble(options, curve, valid)
    if any(p.puzzle.key in elsewhere for p in assembly.placements):
        # a rerun made again a puzzle that a later night has since shipped (only when the
        # generator changed: else its first run left it unused): place the night without them,
        # with others made in their place where a tier is left short
        usable = [p for p in valid if p.key not in elsewhere]
        assembly = _assemble(
            options, curve, usable + _make_up(options, curve, usable, set(elsewhere), stats)
        )
    summary(
        "assemble",
        f"{shape_text(options.levels, options.stages)} on curve {options.curve_text}"
        + (f" from Level {options.first_level}" if options.first_level != 1 else "")
        + ","
        f" total deviation {assembly.cost / 100:.2f} points, {assembly.nodes} search node(s)",
        started,
    )

    started = time.perf_counter()
    final = Path(options.out) / options.date_text
    bundle_path = staging / BUNDLE_FILE
    doc = bundle_document(
        assembly,
        bundle_id=f"nightly-{options.date_text}",
        seed=options.seed,
        params=_params(options, curve, stats),
    )
    write_bundle(bundle_path, doc, hint_for=final / BUNDLE_FILE)
    problems = _validate_files([bundle_path])
    if problems:
        raise NightlyError("write", f"the bundle fails validation: {first_problem(problems)}")
    write_atomic(
        staging / REPORT_FILE,
        render_report(options, stats, assembly, len(valid), drawn_ids, drawn.aside),
    )
    if options.stock:  # the unused go to the stock (with the publish), where swap also looks
        placed = [p.puzzle for p in assembly.placements]
        # a drawn puzzle, or a rerun's own puzzle made again that its first run stocked
        used = [
            drawn.files.get(p.id) or stocked[p.id]
            for p in placed
            if p.id in drawn.files or p.id in stocked
        ]
        filed = _filed_ids(
            options
        )  # e.g. an older night's pool/: the same id in two files is NM304
        for p in placed:
            # the filters above keep this from happening; the promise is checked all the same
            if p.key in elsewhere:
                raise NightlyError(
                    "assemble",
                    f"{p.id} (or a relabelled copy) is shipped already at {elsewhere[p.key]}",
                )
        stage_move(
            staging,
            Path(options.out),
            used,
            [
                p
                for p in assembly.unused
                if p.id not in drawn_ids and p.id not in filed and p.key not in elsewhere
            ],
            options.date,
            taken=[p for p in placed if p.id in drawn_ids],
            back=[p for p in drawn.back.values() if p.id not in {q.id for q in placed}],
        )
    else:
        _write_pool(staging, assembly)
    write_atomic(staging / REPORT_HTML, render_report_html(doc))
    unused = (
        f"{len([p for p in assembly.unused if p.id not in drawn_ids])} unused new puzzles for the stock"
        if options.stock
        else f"{POOL_DIR}/ ({len(assembly.unused)} unused puzzles)"
    )
    summary(
        "write",
        f"{BUNDLE_FILE} ({bundle_path.stat().st_size} bytes) valid, {REPORT_FILE}, {REPORT_HTML},"
        f" {unused}",
        started,
    )
    total = sum(seconds.values())
    lines.append(f"total: {total:.1f} s")
    write_atomic(
        staging / LOG_FILE,
        "".join(
            f"{line}\n" for line in [f"nightly {options.date_text} seed {options.seed}"] + lines
        ),
    )
    return NightlyResult(staging, bundle_path, assembly, stats, seconds, lines)


def _assemble(options: NightlyOptions, curve: Curve, puzzles: Sequence[Puzzle]) -> Assembly:
    try:
        return assemble(
            puzzles,
            levels=options.levels,
            stages=options.stages,
            curve=curve,
            curve_name=options.curve_text,
            first_level=options.first_level,
        )
    except NumberMatchError as exc:
        raise NightlyError("assemble", str(exc)) from exc


def _write_pool(staging: Path, assembly: Assembly) -> None:
    """The validated Puzzles the bundle did not use, as `pool/<id>.yaml`: what `swap` takes first."""
    write_puzzles(sorted(assembly.unused, key=lambda p: p.id), staging / POOL_DIR)


def _draw(options: NightlyOptions, curve: Curve) -> Drawn:
    """The stock's puzzles for this night, per tier (none when the night does not use the stock):
    each within TOLERANCE of the Stage target it is taken for, as the generator would make it (any
    distance under a rating profile, whose scores are not the curve's). A rerun puts back in
    play what the night took at its first run."""
    if not options.stock:
        return Drawn({}, {})
    wanted = generation_counts(curve, options.levels, options.stages, options.first_level)
    back = taken_back(Path(options.out) / options.date_text)
    try:
        return draw(
            Path(options.out),
            _tier_targets(curve, options.levels, options.stages, options.first_level),
            wanted,
            DEFAULT.number,
            night=options.date_text,
            within=TOLERANCE if options.profile is None else None,
            taken_back=back,
            set_invalid_aside=True,
        )
    except NumberMatchError as exc:
        raise NightlyError("stock", str(exc)) from exc


def _tier_targets(
    curve: str | Curve, levels: int, stages: int, first_level: int
) -> dict[str, list[float]]:
    """The Stage target scores of a night, per tier (in the order the curve first needs each)."""
    found: dict[str, list[float]] = {}
    for level in targets(curve, levels, stages, first_level):
        for target in level:
            found.setdefault(target.tier, []).append(target.score)
    return found


def shortfall(missing: int) -> int:
    """Puzzles to generate for a tier whose stock had nothing close enough for `missing` of its
    Stages: none when the stock covers it, else the missing ones plus SPARE of them for choice."""
    return missing + spare(missing)


def _generate(
    options: NightlyOptions, curve: Curve, progress: Progress | None, drawn: Drawn
) -> tuple[dict[str, TierStats], list[Puzzle]]:
    needs = tier_needs(curve, options.levels, options.stages, options.first_level)
    if options.stock and options.profile is None:
        # the Stages the stock had nothing close enough for
        bands = [
            b
            for t in needs
            for b in target_bands(
                t, drawn.uncovered.get(t, ()), spare(len(drawn.uncovered.get(t, ())))
            )
        ]
    elif options.stock:  # under a profile: per tier, what the stock did not cover
        bands = [
            Band(t, None, BAND, shortfall(max(0, need - drawn.count(t))))
            for t, need in needs.items()
        ]
    elif options.profile is None:  # each Stage's target, in the rating's own scores
        bands = generation_bands(curve, options.levels, options.stages, options.first_level)
    else:  # under a profile: the tier's need and spare anywhere in it
        bands = [
            Band(t, None, BAND, n)
            for t, n in generation_counts(
                curve, options.levels, options.stages, options.first_level
            ).items()
        ]
    counts = {t: sum(b.count for b in bands if b.tier == t) for t in needs}
    if not any(counts.values()):  # the stock covers the night: no executor, no workers
        return _generate_tiers(options, progress, None, counts, bands, drawn)
    try:  # one executor (pool, or Dask cluster connection) serves every tier
        with open_executor(options.jobs, options.scheduler) as executor:
            return _generate_tiers(options, progress, executor, counts, bands, drawn)
    except SchedulerError as exc:
        raise NightlyError("generate", str(exc)) from exc


def _generate_tiers(
    options: NightlyOptions,
    progress: Progress | None,
    executor: Executor | None,
    counts: Mapping[str, int],
    bands: Sequence[Band],
    drawn: Drawn,
) -> tuple[dict[str, TierStats], list[Puzzle]]:
    stats: dict[str, TierStats] = {}
    puzzles: list[Puzzle] = [p for tier in counts for p in drawn.puzzles.get(tier, ())]
    known = _known(options)  # key -> ids: a regenerated puzzle of a rerun is itself, not a repeat
    for p in puzzles:
        known.setdefault(p.key, set()).add(p.id)
    for tier, count in counts.items():
        stats[tier] = TierStats(
            wanted=count,
            plan=TIER_PLANS[tier],
            seed=tier_seed(options.seed, tier),
            from_stock=drawn.count(tier),
            short=len(drawn.uncovered.get(tier, ())),
        )
    # one stream per board size: a board rated on one Stage band's behalf serves any band (of any
    # tier of that size) it lands in
    streams: dict[TierPlan, list[str]] = {}
    for tier, count in counts.items():
        if count and executor is not None:
            streams.setdefault(TIER_PLANS[tier], []).append(tier)
    for plan, tiers in streams.items():
        asked = [
            (Target(b.tier, b.score), b.count)
            for t in tiers
            for b in bands
            if b.tier == t and b.count
        ]
        lead = stats[tiers[0]]
        params = GenerateParams(
            cells=plan.cells,
            adds=plan.adds,
            targets=tuple(t for t, _ in asked),
            within=BAND,
            # the search's estimate is of the rating's own score, not a profile's
            strategy=plan.strategy if options.profile is None else None,
            seed=lead.seed,
            profile=options.profile,
        )
        name = "+".join(tiers)
        report = (
            (lambda done, total, name=name: progress(f"generate {name}", done, total))
            if progress
            else None
        )
        try:
            result = generate(
                sum(n for _, n in asked),
                params,
                exclude_ids={p.id for p in puzzles},
                progress=report,
                executor=executor,
                quotas=[n for _, n in asked],
            )
        except NumberMatchError as exc:
            raise NightlyError("generate", f"{name}: {exc}") from exc
        fresh = []
        for p in result.puzzles:  # never a puzzle (or a relabelled copy) shipped or stocked before
            if known.get(p.key, {p.id}) == {p.id}:
                known[p.key] = {p.id}
                fresh.append(p)
        made = Counter(p.tier for p in fresh)
        for tier, attempts in zip(tiers, _shares(result.attempts, [made[t] for t in tiers])):
            st = stats[tier]
            st.generated += made[tier]
            st.attempts += attempts  # a shared stream's attempts, in proportion to the puzzles made
            if len(tiers) > 1 and st is not lead:
                st.seed = lead.seed  # the stream's (the bundle's params say what made each tier)
                st.work = f"in one stream with {tiers[0]} ({plan.cells} cells, {plan.adds} adds)"
        lead.rejected = dict(sorted((Counter(lead.rejected) + Counter(result.rejected)).items()))
        lead.seconds += result.seconds
        lead.work = f"{lead.seconds:.1f} s on {result.work}"
        for tier in tiers:
            if made[tier] < counts[tier]:
                raise NightlyError(
                    "generate",
                    f"{tier}: only {made[tier]} of {counts[tier]} puzzles after {result.attempts} attempts"
                    f" (cells {plan.cells}, adds {plan.adds})",
                )
        puzzles.extend(fresh)
    return stats, puzzles


def _make_up(
    options: NightlyOptions,
    curve: Curve,
    usable: Sequence[Puzzle],
    taken: Set[str],
    stats: dict[str, TierStats],
) -> list[Puzzle]:
    """Puzzles for the tiers `usable` leaves short of the curve's need: anywhere in the tier, never
    a key in `taken` (shipped elsewhere) or one usable already has; validated (counted in `stats`)."""
    have = Counter(p.tier for p in usable)
    short = {
        t: n - have[t]
        for t, n in tier_needs(curve, options.levels, options.stages, options.first_level).items()
        if n > have[t]
    }
    made: list[Puzzle] = []
    if not short:
        return made
    with open_executor(options.jobs, options.scheduler) as executor:
        for tier, count in short.items():
            plan = TIER_PLANS[tier]
            params = GenerateParams(
                cells=plan.cells,
                adds=plan.adds,
                tier=tier,
                seed=tier_seed(options.seed, f"{tier}/make-up"),
                strategy=plan.strategy if options.profile is None else None,
                profile=options.profile,
            )
            try:
                # a key covers the puzzle itself and every relabelled copy
                result = generate(
                    count, params, exclude_keys=taken | {p.key for p in usable}, executor=executor
                )
            except NumberMatchError as exc:
                raise NightlyError("generate", f"{tier}: {exc}") from exc
            stats[tier].generated += len(result.puzzles)
            stats[tier].attempts += result.attempts
            made += result.puzzles
    return _validate_puzzles(made, stats)


def _shares(total: int, weights: Sequence[int]) -> list[int]:
    """`total` split in proportion to `weights` (largest remainders; all to the first when they add up to 0)."""
    whole = sum(weights)
    if not whole:
        return [total] + [0] * (len(weights) - 1)
    exact = [total * w / whole for w in weights]
    parts = [int(x) for x in exact]
    for i in sorted(range(len(weights)), key=lambda i: parts[i] - exact[i])[: total - sum(parts)]:
        parts[i] += 1
    return parts


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished workers (for the log only, never the output)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )


def _shipped_elsewhere(options: NightlyOptions) -> tuple[dict[str, str], dict[str, Path]]:
    """Key -> where a bundle under the output folder other than this night's ships it, and
    id -> the stock file of each stock puzzle."""
    with LevelIndex(options.out) as index:
        index.refresh()
        shipped = {
            e.key: e.where
            for e in index.entries("bundle")
            if not e.path.startswith(options.date_text + "/")
        }
        return shipped, {e.id: Path(options.out) / e.path for e in index.entries(STOCK_DIR)}


def _filed_ids(options: NightlyOptions) -> set[str]:
    """Ids of the plain puzzle files under the output folder (not stock, not bundles)."""
    with LevelIndex(options.out) as index:
        index.refresh()
        return {e.id for e in index.entries("puzzle")}


def _known(options: NightlyOptions) -> dict[str, set[str]]:
    """Canonical key -> puzzle ids, of what is shipped or in stock under the output folder (the
    night a rerun replaces does not count: its bundle goes)."""
    known: dict[str, set[str]] = {}
    with LevelIndex(options.out) as index:
        index.refresh()
        for e in index.entries():
            if e.kind == "stock" or (
                e.kind == "bundle" and not e.path.startswith(options.date_text + "/")
            ):
                known.setdefault(e.key, set()).add(e.id)
    return known


def _refill(options: NightlyOptions, curve: Curve, out: Path, log: Log) -> list[str]:
    """Refill the stock after the night: first what the next night will need (its Stage targets
    are known: the curve, the Level numbering and the sizes go on), aimed at those targets as
    that night would generate them, then each tier up to the job's keep level; no batch starts
    past `refill_seconds`. Returns (and logs) one line per part done. `keep` {}: no refill."""
    if options.keep == {}:
        return []
    started = time.perf_counter()
    lines: list[str] = []
    try:
        with open_executor(options.jobs, options.scheduler) as executor:
            # one pool for the whole refill
            lines += _refill_ahead(options, curve, out, executor, started)
            lines += _refill_keep(options, out, executor, started)
    except SchedulerError as exc:
        lines.append(f"refill: stopped: {exc}")
    for line in lines:
        log(f"stock: {line}")
    if lines:
        log(f"stock: refill took {time.perf_counter() - started:.1f} s")
    return lines


def _next_night(
    options: NightlyOptions, curve: Curve, out: Path
) -> tuple[_dt.date, int, int, int, Curve]:
    """The night after the latest one in `out`: its date, first Level, sizes and curve."""
    if stock_day(out, options.date) <= options.date:
        # this night is the latest: the next one continues it
        return (
            options.date + _dt.timedelta(days=1),
            options.first_level + options.levels,
            options.levels,
            options.stages,
            curve,
        )
    latest = previous_night(out, _dt.date.max)  # a rerun of an older night: after the latest one
    if latest is None:
        raise NightlyError("refill", f"no night in {out} to continue")
    return (
        _dt.date.fromisoformat(latest.folder.name) + _dt.timedelta(days=1),
        latest.next_level,
        latest.levels,
        latest.stages,
        load_curve(latest.curve),
    )


def _refill_ahead(
    options: NightlyOptions, curve: Curve, out: Path, executor: Executor, started: float
) -> list[str]:
    """Generate into the stock, aimed at their targets, puzzles for the next night's Stages that
    the stock has nothing within TOLERANCE of (as that night's draw will see it): first in the
    bands a generated night asks for, with its spare, then, for the Stages those puzzles still
    miss (a band is wider than the tolerance), one target at a time."""
    try:
        day, first, levels, stages, ahead = _next_night(options, curve, out)
        wanted = _tier_targets(ahead, levels, stages, first)
    except (NumberMatchError, CurveError) as exc:
        return [f"refill for the next night: not done: {exc}"]
    stamp = stock_day(out, options.date)
    within = TOLERANCE if options.profile is None else None
    made: Counter[str] = Counter()
    attempts: Counter[str] = Counter()
    covered: dict[str, int] = {}
    notes: dict[str, str] = {}
    for round_ in range(2):
        with LevelIndex(out) as index:
            index.refresh()
            missing = {
                tier: pick(
                    index.candidates(tier, ruleset=DEFAULT.number, before=day.isoformat()),
                    scores,
                    len(scores),
                    within,
                )[1]
                for tier, scores in wanted.items()
            }
        for tier, scores in wanted.items():
            covered.setdefault(tier, len(scores) - len(missing[tier]))
            if options.profile is not None:
                bands = (
                    [Band(tier, None, BAND, len(missing[tier]))]
                    if missing[tier] and not round_
                    else []
                )
            elif round_ == 0:  # what that night would generate for these Stages, spare included
                bands = target_bands(tier, missing[tier], spare(len(missing[tier])))
            else:
                bands = [Band(tier, t, BAND, n) for t, n in sorted(Counter(missing[tier]).items())]
            for k, band in enumerate(bands):
                if tier in notes:
                    break
                if time.perf_counter() - started >= options.refill_seconds:
                    notes[tier] = f", stopped at the time bound ({options.refill_seconds:.0f} s)"
                    break
                try:
                    done = refill(
                        out,
                        tier=tier,
                        cells=TIER_PLANS[tier].cells,
                        adds=TIER_PLANS[tier].adds,
                        count=band.count,
                        strategy=TIER_PLANS[tier].strategy,
                        seed=tier_seed(options.seed, f"ahead/{tier}/{round_}/{k}"),
                        day=stamp,
                        executor=executor,
                        score=band.score,
                        within=band.within,
                    )
                except StockError as exc:
                    notes[tier] = f", stopped: {exc}"
                    break
                made[tier] += len(done.written)
                attempts[tier] += done.attempts
    return [
        f"refill {tier} for {day.isoformat()} (Levels {first}-{first + levels - 1}): {covered[tier]} of {len(scores)}"
        f" Stage(s) covered by the stock, {made[tier]} made from {attempts[tier]} attempts{notes.get(tier, '')}"
        for tier, scores in wanted.items()
    ]


def _refill_keep(
    options: NightlyOptions, out: Path, executor: Executor, started: float
) -> list[str]:
    """Top each tier of the stock up to the job's keep level, in batches."""
    lines: list[str] = []
    stamp = stock_day(out, options.date)
    for tier, level in (options.keep or {}).items():
        plan = TIER_PLANS[tier]
        with LevelIndex(out) as index:
            index.refresh()
            have = len(index.stock(tier))
        batch, written, attempts = 0, 0, 0
        while have + written < level and time.perf_counter() - started < options.refill_seconds:
            count = min(REFILL_BATCH, level - have - written)
            try:
                done = refill(
                    out,
                    tier=tier,
                    cells=plan.cells,
                    adds=plan.adds,
                    count=count,
                    strategy=plan.strategy,
                    seed=tier_seed(options.seed, f"refill/{tier}/{batch}"),
                    day=stamp,
                    executor=executor,
                )
            except StockError as exc:
                lines.append(f"refill {tier}: stopped: {exc}")
                break
            batch, written, attempts = (
                batch + 1,
                written + len(done.written),
                attempts + done.attempts,
            )
            if not done.written:  # every new board repeated one in stock: do not spin
                break
        if written or have < level:
            lines.append(
                f"refill {tier}: {have} in stock, kept at {level}: {written} made from {attempts} attempts"
                + (
                    ""
                    if have + written >= level
                    else f", {level - have - written} short (time bound"
                    f" {options.refill_seconds:.0f} s)"
                )
            )
    return lines


def _validate_puzzles(puzzles: Sequence[Puzzle], stats: dict[str, TierStats]) -> list[Puzzle]:
    """Check each candidate as the puzzle file it would be; keep those the validator accepts."""
    report = validate_texts((f"{p.id}.yaml", dump_yaml(p.to_document())) for p in puzzles)
    bad = {Path(problem.file).stem for problem in report.problems}
    for p in puzzles:
        if p.id in bad:
            stats[p.tier].invalid += 1
    return [p for p in puzzles if p.id not in bad]


def _validate_files(paths: Sequence[Path]) -> list[Problem]:
    """The validator's problems with the files, each naming its file by name (not the staging
    folder it was checked in)."""
    report = validate_paths(paths)
    return [dataclasses.replace(p, file=Path(p.file).name) for p in report.problems]


def _params(
    options: NightlyOptions, curve: Curve, stats: Mapping[str, TierStats]
) -> dict[str, Any]:
    return {
        "date": options.date_text,
        **curve_params(options.curve_text, curve),
        "levels": options.levels,
        "stages": options.stages,
        "tiers": {
            tier: {
                "count": s.wanted,
                "cells": s.plan.cells,
                "adds": s.plan.adds,
                "strategy": s.plan.strategy,
                "seed": s.seed,
            }
            for tier, s in stats.items()
        },
    }
