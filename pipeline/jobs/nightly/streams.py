"""Running a night's generator streams: one stream per board size (a board rated on one Stage
band's behalf serves any band, of any tier of that size, it lands in), never a puzzle shipped or
stocked before, and each tier's statistics (attempts, rejections, where the work ran)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field

from pipeline.errors import NumberMatchError
from pipeline.formats.puzzle import Puzzle
from pipeline.generation.executors import Executor, SchedulerError, open_executor
from pipeline.generation.generator import GenerateParams, GenerationError, Target, generate
from pipeline.generation.requests import BAND, Band, TierPlan, stream_seed, tier_plan
from pipeline.jobs.nightly.options import NightlyError, NightlyOptions

Progress = Callable[[str, int, int], None]  # (what, done, total)


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
    # why the generator made fewer puzzles of the tier than asked within its budget ("": it did not)
    unreached: str = ""
    stand_ins: int = 0  # Stages of the tier that got a puzzle of `stand_in_tier` instead
    stand_in_tier: str = ""

    @property
    def acceptance(self) -> float:
        return self.generated / self.attempts if self.attempts else 0.0


def run_streams(
    options: NightlyOptions,
    bands: Sequence[Band],
    tiers: Sequence[str],
    drawn: Mapping[str, Sequence[Puzzle]],
    known: Mapping[str, Set[str]],
    progress: Progress | None,
    stats: dict[str, TierStats],
) -> list[Puzzle]:
    """Generate what `bands` ask for (the tiers in `tiers`' order; `stats` has a row per tier)
    after the puzzles `drawn` from the stock, on one executor for every stream (none when
    nothing is asked). `known`: canonical key -> ids shipped or stocked under the output folder
    (a regenerated puzzle of a rerun is itself, not a repeat). Returns the drawn and the made."""
    counts = {t: sum(b.count for b in bands if b.tier == t) for t in tiers}
    puzzles: list[Puzzle] = [p for tier in counts for p in drawn.get(tier, ())]
    if not any(counts.values()):  # the stock covers the night: no executor, no workers
        return puzzles
    try:  # one executor (pool, or Dask cluster connection) serves every tier
        with open_executor(options.jobs, options.scheduler) as executor:
            return _streams(options, progress, executor, counts, bands, puzzles, known, stats)
    except SchedulerError as exc:
        raise NightlyError("generate", str(exc)) from exc


def _streams(
    options: NightlyOptions,
    progress: Progress | None,
    executor: Executor,
    counts: Mapping[str, int],
    bands: Sequence[Band],
    puzzles: list[Puzzle],
    known_before: Mapping[str, Set[str]],
    stats: dict[str, TierStats],
) -> list[Puzzle]:
    known = {key: set(ids) for key, ids in known_before.items()}
    for p in puzzles:
        known.setdefault(p.key, set()).add(p.id)
    streams: dict[TierPlan, list[str]] = {}
    for tier, count in counts.items():
        if count:
            streams.setdefault(tier_plan(tier, options.cells, options.adds), []).append(tier)
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
        reason, began = "", time.perf_counter()
        try:
            result = generate(
                sum(n for _, n in asked),
                params,
                exclude_ids={p.id for p in puzzles},
                progress=report,
                executor=executor,
                quotas=[n for _, n in asked],
            )
        except GenerationError as exc:
            if exc.partial is None:  # bad parameters: nothing was tried
                raise NightlyError("generate", f"{name}: {exc}") from exc
            # a tier not reached within the budget: the night places what was made, and the
            # build records the Stages left short of their tier (`build._stand_ins`)
            result, reason = exc.partial, str(exc)
            result.seconds = time.perf_counter() - began  # a partial result carries no clock
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
        lead.work = f"{lead.seconds:.1f} s on {result.work or executor.description}"
        for tier in tiers:
            if made[tier] < counts[tier]:
                stats[tier].unreached = reason or (
                    f"only {made[tier]} of {counts[tier]} puzzles after {result.attempts} attempts"
                    f" (cells {plan.cells}, adds {plan.adds})"
                )
        puzzles.extend(fresh)
    return puzzles


def make_up(
    options: NightlyOptions,
    short: Mapping[str, int],
    taken: Set[str],
    stats: dict[str, TierStats],
) -> list[Puzzle]:
    """`short[tier]` more puzzles of each tier, anywhere in it, never a key in `taken` (counted
    in `stats`; the caller validates them)."""
    made: list[Puzzle] = []
    if not short:
        return made
    with open_executor(options.jobs, options.scheduler) as executor:
        for tier, count in short.items():
            plan = tier_plan(tier, options.cells, options.adds)
            params = GenerateParams(
                cells=plan.cells,
                adds=plan.adds,
                tier=tier,
                seed=stream_seed(options.seed, f"{tier}/make-up"),
                strategy=plan.strategy if options.profile is None else None,
                profile=options.profile,
            )
            try:
                # a key covers the puzzle itself and every relabelled copy
                result = generate(count, params, exclude_keys=taken, executor=executor)
            except NumberMatchError as exc:
                raise NightlyError("generate", f"{tier}: {exc}") from exc
            stats[tier].generated += len(result.puzzles)
            stats[tier].attempts += result.attempts
            made += result.puzzles
    return made


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
