"""A night's options: from the flags, the job file and the night it continues (the previous
night in the output folder), and which night comes after it (what the stock's refill prepares)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle
from pipeline.formats.curves import DEFAULT_CURVE, Curve, CurveError, curve_from_data
from pipeline.formats.loader import load_file
from pipeline.formats.night import BUNDLE_FILE, NIGHTS_FOLDER, night_date
from pipeline.jobs.curve_specs import load_curve, read_curve_file
from pipeline.problems import first_problem
from pipeline.rating.profile import RatingProfile
from pipeline.stock.refill import NextNight
from pipeline.stock.store import stock_day
from pipeline.validator import Validator
from pipeline.validator.profiles import read_profile

DEFAULT_LEVELS = 10
DEFAULT_STAGES = 6
NIGHT_CURVE = "campaign"  # the default night's curve: shipped, and reaches expert (a boss Stage from Level 3 on)
DEFAULT_OUT = NIGHTS_FOLDER  # where a puzzle id is looked up without --in, too
DEFAULT_REFILL_SECONDS = (
    600.0  # the refill after a night starts no new batch past this many seconds
)

Log = Callable[[str], None]


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
    # rate for this audience (`--profile`, or the job file's `profile:`)
    profile: RatingProfile | None = None
    stock: bool = False  # draw from `<out>/stock/` first and hand back what was made and not used
    # the refill after the night: None: what the next night needs (its Stage targets); a mapping:
    # that, then each tier named kept at its level; {}: no refill
    keep: Mapping[str, int] | None = field(default_factory=dict)
    refill_seconds: float = DEFAULT_REFILL_SECONDS
    # a job that fixes every Stage's board size and adds (`cells: 35`, `adds: 5`), whatever its tier
    cells: int | None = None
    adds: int | None = None

    @property
    def date_text(self) -> str:
        return self.date.isoformat()

    @property
    def curve_text(self) -> str:
        return self.curve if isinstance(self.curve, str) else self.curve.name


def default_seed(date: _dt.date) -> int:
    """The night's seed when none is given: the date as YYYYMMDD, so a night can be rerun exactly."""
    return int(date.strftime("%Y%m%d"))


@dataclass(frozen=True)
class Previous:
    """Where the last published night left the game: its folder, next Level, curve and sizes."""

    folder: Path
    next_level: int
    curve: str | Curve
    levels: int
    stages: int

    @property
    def date(self) -> _dt.date:
        day = night_date(self.folder.name)
        assert day is not None  # previous_night finds only nights
        return day


def previous_night(out: Path, before: _dt.date) -> Previous | None:
    """The latest night in `out` dated before `before` (a rerun of a night continues from the
    night before it, not from itself), read from its bundle (read and validated once); None when
    there is none."""
    nights = []
    for child in out.iterdir() if out.is_dir() else ():
        day = night_date(child.name)
        # a night whose bundle is there in any form counts (a broken one is refused below,
        # never skipped: skipping it would continue from the night before and repeat Levels)
        if day is not None and day < before and os.path.lexists(child / BUNDLE_FILE):
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
    loaded = load_file(path)
    problems = [
        dataclasses.replace(p, file=Path(p.file).name)
        for p in Validator().add_loaded(loaded, str(path))
    ]
    if problems or loaded.document is None:
        raise NightlyError("continue", f"{path} is not a valid bundle: {first_problem(problems)}")
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


def next_night(options: NightlyOptions, curve: Curve) -> NextNight | str:
    """The night after the latest one in the output folder (what the refill prepares for), or
    why it cannot be known: after this night when it is the latest, else (a rerun of an older
    night) after the latest one."""
    out = Path(options.out)
    if stock_day(out, options.date) <= options.date:
        # this night is the latest: the next one continues it
        return NextNight(
            options.date + _dt.timedelta(days=1),
            options.first_level + options.levels,
            options.levels,
            options.stages,
            curve,
        )
    try:
        latest = previous_night(out, _dt.date.max)  # a rerun of an older night
        if latest is None:
            raise NightlyError("refill", f"no night in {out} to continue")
        return NextNight(
            latest.date + _dt.timedelta(days=1),
            latest.next_level,
            latest.levels,
            latest.stages,
            load_curve(latest.curve),
        )
    except (NumberMatchError, CurveError) as exc:
        return str(exc)


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
    fixed = settings.get("cells"), settings.get("adds")
    if stock and fixed != (None, None):
        # the stock holds each tier at its own size: a night of one fixed size generates it all
        log(f"stock: not used: the job fixes cells/adds at {fixed[0]}/{fixed[1]}")
        stock = False
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
        cells=fixed[0],
        adds=fixed[1],
    )


def _read_profile(path: Path) -> RatingProfile:
    """The night's rating profile (a file named by --profile, or by the job file relative to it)."""
    try:
        return read_profile(path)
    except NumberMatchError as exc:
        raise NightlyError("setup", f"rating profile: {exc}") from exc
