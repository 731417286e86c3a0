"""Refilling the stock after a night: first what the next night will need (its Stage targets are
known: the curve, the Level numbering and the sizes go on), aimed at those targets as that night
would generate them, then each tier up to the job's keep level. No batch starts past the time
bound; the seeds derive from the night's, so a rerun refills the same."""

from __future__ import annotations

import datetime as _dt
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pipeline.engine.rulesets import DEFAULT
from pipeline.formats.curves import Curve, CurveError
from pipeline.formats.index import LevelIndex
from pipeline.generation.executors import Executor, SchedulerError, open_executor
from pipeline.generation.requests import (
    BAND,
    TIER_PLANS,
    TOLERANCE,
    Band,
    stage_bands,
    stream_seed,
    tier_targets,
)
from pipeline.stock.night import pick
from pipeline.stock.store import Refilled, StockError, refill, stock_day

REFILL_BATCH = 8  # puzzles per refill batch: the refill checks its time bound between batches


@dataclass(frozen=True)
class NextNight:
    """The night the refill prepares for: its date, first Level, sizes and curve."""

    date: _dt.date
    first_level: int
    levels: int
    stages: int
    curve: Curve


@dataclass(frozen=True)
class Refill:
    """What the refill after the night `date` (seed `seed`) is asked to do."""

    date: _dt.date
    seed: int
    keep: Mapping[str, int] | None  # None: only what the next night needs; {}: no refill
    seconds: float  # no batch starts past this many seconds from the refill's start
    by_score: bool  # aim at Stage targets (False under a rating profile, whose scores differ)
    jobs: int | None = None
    scheduler: str | None = None


def refill_after_night(out: Path, ask: Refill, ahead: NextNight | str) -> list[str]:
    """Refill the stock under `out` for the night `ahead` (or, as text, why it cannot be known),
    then up to the keep levels. One line per part done (an executor that fails stops it)."""
    if ask.keep == {}:
        return []
    started = time.perf_counter()
    lines: list[str] = []
    try:
        with open_executor(ask.jobs, ask.scheduler) as executor:  # one pool for the whole refill
            if isinstance(ahead, str):
                lines.append(f"refill for the next night: not done: {ahead}")
            else:
                lines += _refill_ahead(out, ask, ahead, executor, started)
            lines += _refill_keep(out, ask, executor, started)
    except SchedulerError as exc:
        lines.append(f"refill: stopped: {exc}")
    return lines


def _refill_ahead(
    out: Path, ask: Refill, ahead: NextNight, executor: Executor, started: float
) -> list[str]:
    """Generate into the stock, aimed at their targets, puzzles for the next night's Stages that
    the stock has nothing within TOLERANCE of (as that night's draw will see it): first in the
    bands a generated night asks for, with its spare, then, for the Stages those puzzles still
    miss (a band is wider than the tolerance), one target at a time."""
    try:
        wanted = tier_targets(ahead.curve, ahead.levels, ahead.stages, ahead.first_level)
    except CurveError as exc:
        return [f"refill for the next night: not done: {exc}"]
    stamp = stock_day(out, ask.date)
    within = TOLERANCE if ask.by_score else None
    made: Counter[str] = Counter()
    attempts: Counter[str] = Counter()
    covered: dict[str, int] = {}
    notes: dict[str, str] = {}
    for round_ in range(2):
        with LevelIndex(out) as index:
            index.refresh()
            missing = {
                tier: pick(
                    index.candidates(tier, ruleset=DEFAULT.number, before=ahead.date.isoformat()),
                    scores,
                    len(scores),
                    within,
                )[1]
                for tier, scores in wanted.items()
            }
        for tier, scores in wanted.items():
            covered.setdefault(tier, len(scores) - len(missing[tier]))
            if round_ == 0:  # what that night would generate for these Stages, spare included
                bands = stage_bands(tier, missing[tier], ask.by_score)
            elif ask.by_score:
                bands = [Band(tier, t, BAND, n) for t, n in sorted(Counter(missing[tier]).items())]
            else:
                bands = []
            for k, band in enumerate(bands):
                if tier in notes:
                    break
                if time.perf_counter() - started >= ask.seconds:
                    notes[tier] = f", stopped at the time bound ({ask.seconds:.0f} s)"
                    break
                seed = stream_seed(ask.seed, f"ahead/{tier}/{round_}/{k}")
                try:
                    done = _batch(out, tier, band.count, seed, stamp, executor, band)
                except StockError as exc:
                    notes[tier] = f", stopped: {exc}"
                    break
                made[tier] += len(done.written)
                attempts[tier] += done.attempts
    last = ahead.first_level + ahead.levels - 1
    return [
        f"refill {tier} for {ahead.date.isoformat()} (Levels {ahead.first_level}-{last}): {covered[tier]} of {len(scores)}"
        f" Stage(s) covered by the stock, {made[tier]} made from {attempts[tier]} attempts{notes.get(tier, '')}"
        for tier, scores in wanted.items()
    ]


def _batch(
    out: Path,
    tier: str,
    count: int,
    seed: int,
    day: _dt.date,
    executor: Executor,
    band: Band | None = None,
) -> Refilled:
    """One refill batch of `count` puzzles of `tier` at its plan, aimed at `band` (None:
    anywhere in the tier), stocked as of `day`."""
    plan = TIER_PLANS[tier]
    return refill(
        out,
        tier=tier,
        cells=plan.cells,
        adds=plan.adds,
        count=count,
        strategy=plan.strategy,
        seed=seed,
        day=day,
        executor=executor,
        score=None if band is None else band.score,
        within=BAND if band is None else band.within,  # unused without a score
    )


def _refill_keep(out: Path, ask: Refill, executor: Executor, started: float) -> list[str]:
    """Top each tier of the stock up to the job's keep level, in batches."""
    lines: list[str] = []
    stamp = stock_day(out, ask.date)
    for tier, level in (ask.keep or {}).items():
        with LevelIndex(out) as index:
            index.refresh()
            have = len(index.stock(tier))
        batch, written, attempts = 0, 0, 0
        while have + written < level and time.perf_counter() - started < ask.seconds:
            count = min(REFILL_BATCH, level - have - written)
            seed = stream_seed(ask.seed, f"refill/{tier}/{batch}")
            try:
                done = _batch(out, tier, count, seed, stamp, executor)
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
                    else f", {level - have - written} short (time bound {ask.seconds:.0f} s)"
                )
            )
    return lines
