"""Building a night in its staging folder: draw from the stock, generate the rest, validate,
assemble, and write the bundle, the reports, the pool or the stock move, and run.log."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.atomic import write_guarded
from pipeline.engine.rulesets import DEFAULT
from pipeline.errors import NumberMatchError
from pipeline.formats.curves import Curve, curve_params, shape_text
from pipeline.formats.files import write_puzzles
from pipeline.formats.index import LevelIndex
from pipeline.formats.night import (
    BUNDLE_FILE,
    LOG_FILE,
    POOL_DIR,
    REPORT_FILE,
    REPORT_HTML,
)
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.formats.stock_layout import STOCK_DIR
from pipeline.generation.requests import (
    BAND,
    TOLERANCE,
    Band,
    generation_bands,
    generation_counts,
    shortfall,
    stage_bands,
    stream_seed,
    tier_plan,
    tier_targets,
)
from pipeline.jobs.assembler import Assembly, assemble
from pipeline.jobs.bundle import bundle_document, write_bundle
from pipeline.jobs.nightly.options import Log, NightlyError, NightlyOptions
from pipeline.jobs.nightly.streams import Progress, TierStats, make_up, run_streams
from pipeline.jobs.report import per_tier, percent, render_report
from pipeline.jobs.report_html import render_report_html
from pipeline.problems import Problem, first_problem
from pipeline.rating.tiers import TIER_NAMES
from pipeline.stock.night import Drawn, draw, stage_move, taken_back
from pipeline.validator import validate_paths, validate_texts


@dataclass
class Built:
    """A night built in its staging folder: what it holds and how long each phase took."""

    assembly: Assembly
    tiers: dict[str, TierStats]
    seconds: dict[str, float]
    log_lines: list[str]


@dataclass(frozen=True)
class Shelf:
    """What the output folder held when the night started, read from its index once: where a
    bundle other than this night's ships each key, the stock's files by id, the ids of plain
    puzzle files, and key -> ids of everything shipped elsewhere or stocked."""

    elsewhere: dict[str, str]
    stocked: dict[str, Path]
    filed: set[str]
    known: dict[str, set[str]]

    @classmethod
    def read(cls, options: NightlyOptions) -> Shelf:
        out = Path(options.out)
        mine = options.date_text + "/"  # the night a rerun replaces: its bundle goes
        elsewhere: dict[str, str] = {}
        stocked: dict[str, Path] = {}
        filed: set[str] = set()
        known: dict[str, set[str]] = {}
        with LevelIndex(out) as index:
            index.refresh()
            for e in index.entries():
                if e.kind == "bundle" and not e.path.startswith(mine):
                    elsewhere[e.key] = e.where
                    known.setdefault(e.key, set()).add(e.id)
                elif e.kind == STOCK_DIR:
                    stocked[e.id] = out / e.path
                    known.setdefault(e.key, set()).add(e.id)
                elif e.kind == "puzzle":
                    filed.add(e.id)
        return cls(elsewhere, stocked, filed, known)


def build_night(
    options: NightlyOptions, curve: Curve, staging: Path, log: Log, progress: Progress | None
) -> Built:
    """The whole night in `staging` (validated); NightlyError names the phase that failed."""
    seconds: dict[str, float] = {}
    lines: list[str] = []

    def summary(phase: str, text: str, started: float) -> None:
        seconds[phase] = time.perf_counter() - started
        line = f"{phase}: {text} ({seconds[phase]:.1f} s)"
        lines.append(line)
        log(line)

    shelf = Shelf.read(options)
    started = time.perf_counter()
    drawn = _draw(options, curve)
    if options.stock:
        count = sum(len(v) for v in drawn.puzzles.values())
        summary(
            "stock",
            f"{count} puzzles drawn from {Path(options.out) / STOCK_DIR}"
            + (f" ({per_tier({t: len(v) for t, v in drawn.puzzles.items()})})" if count else ""),
            started,
        )
        for aside in map(str, drawn.aside):  # invalid stock files, moved out of the draw
            lines.append(aside)
            log(aside)

    started = time.perf_counter()
    needs = tier_targets(curve, options.levels, options.stages, options.first_level)
    tiers = [t for t in TIER_NAMES if t in needs]
    bands = _requests(options, curve, drawn, {t: len(needs[t]) for t in tiers})
    stats = {
        tier: TierStats(
            wanted=sum(b.count for b in bands if b.tier == tier),
            plan=tier_plan(tier, options.cells, options.adds),
            seed=stream_seed(options.seed, tier),
            from_stock=drawn.count(tier),
            short=len(drawn.uncovered.get(tier, ())),
        )
        for tier in tiers
    }
    puzzles = run_streams(options, bands, tiers, drawn.puzzles, shelf.known, progress, stats)
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
    elsewhere = shelf.elsewhere
    valid, pins = _stand_ins(options, curve, valid, stats, set(elsewhere), lines, log)
    assembly = _assemble(options, curve, valid, pins)
    if any(p.puzzle.key in elsewhere for p in assembly.placements):
        # a rerun made again a puzzle that a later night has since shipped (only when the
        # generator changed: else its first run left it unused): place the night without them,
        # with others made in their place where a tier is left short
        usable = [p for p in valid if p.key not in elsewhere]
        have = Counter(p.tier for p in usable)
        short = {t: len(needs[t]) - have[t] for t in tiers if len(needs[t]) > have[t]}
        extra = make_up(options, short, set(elsewhere) | {p.key for p in usable}, stats)
        assembly = _assemble(options, curve, usable + _validate_puzzles(extra, stats), pins)
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
    write_guarded(
        staging / REPORT_FILE,
        render_report(options, stats, assembly, len(valid), drawn_ids, drawn.aside),
    )
    if options.stock:  # the unused go to the stock (with the publish), where swap also looks
        _stage_stock_move(options, staging, assembly, drawn, shelf)
    else:
        _write_pool(staging, assembly)
    write_guarded(staging / REPORT_HTML, render_report_html(doc), kinds=("html",))
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
    write_guarded(
        staging / LOG_FILE,
        "".join(
            f"{line}\n" for line in [f"nightly {options.date_text} seed {options.seed}"] + lines
        ),
    )
    return Built(assembly, stats, seconds, lines)


def _requests(
    options: NightlyOptions, curve: Curve, drawn: Drawn, needs: Mapping[str, int]
) -> list[Band]:
    """What the night asks the generator for: with the stock, only what it did not cover (the
    Stages it had nothing close enough for; under a rating profile, whose scores are not the
    curve's, each tier's shortfall anywhere in it); without, every Stage target (under a
    profile, each tier's need and spare anywhere in it)."""
    by_score = options.profile is None
    if options.stock and by_score:
        return [b for t in needs for b in stage_bands(t, drawn.uncovered.get(t, ()), True)]
    if options.stock:
        return [
            Band(t, None, BAND, shortfall(max(0, need - drawn.count(t))))
            for t, need in needs.items()
        ]
    if by_score:
        return generation_bands(curve, options.levels, options.stages, options.first_level)
    counts = generation_counts(curve, options.levels, options.stages, options.first_level)
    return [Band(t, None, BAND, n) for t, n in counts.items()]


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
            tier_targets(curve, options.levels, options.stages, options.first_level),
            wanted,
            DEFAULT.number,
            night=options.date_text,
            within=TOLERANCE if options.profile is None else None,
            taken_back=back,
            set_invalid_aside=True,
            scale=options.profile,
        )
    except NumberMatchError as exc:
        raise NightlyError("stock", str(exc)) from exc


def _stage_stock_move(
    options: NightlyOptions, staging: Path, assembly: Assembly, drawn: Drawn, shelf: Shelf
) -> None:
    """The stock move that travels with the publish: the stock files the bundle used out, the
    new puzzles it did not use in."""
    placed = [p.puzzle for p in assembly.placements]
    # a drawn puzzle, or a rerun's own puzzle made again that its first run stocked
    used = [
        drawn.files.get(p.id) or shelf.stocked[p.id]
        for p in placed
        if p.id in drawn.files or p.id in shelf.stocked
    ]
    for p in placed:
        # the filters above keep this from happening; the promise is checked all the same
        if p.key in shelf.elsewhere:
            raise NightlyError(
                "assemble",
                f"{p.id} (or a relabelled copy) is shipped already at {shelf.elsewhere[p.key]}",
            )
    drawn_ids = drawn.ids
    stage_move(
        staging,
        Path(options.out),
        used,
        [
            p
            for p in assembly.unused
            # an id already filed (e.g. an older night's pool/): the same id in two files is NM304
            if p.id not in drawn_ids and p.id not in shelf.filed and p.key not in shelf.elsewhere
        ],
        options.date,
        taken=[p for p in placed if p.id in drawn_ids],
        back=[p for p in drawn.back.values() if p.id not in {q.id for q in placed}],
    )


def _stand_ins(
    options: NightlyOptions,
    curve: Curve,
    valid: list[Puzzle],
    stats: dict[str, TierStats],
    elsewhere: set[str],
    lines: list[str],
    log: Log,
) -> tuple[list[Puzzle], dict[tuple[int, int], str]]:
    """Where the generator did not reach a tier within its budget (`TierStats.unreached`), the
    Stages left without a puzzle of their tier: each gets a puzzle of the nearest tier it did
    reach, the one nearest its target that tier can spare (made up anywhere in that tier when
    it has too few), pinned. Returns the puzzles (with those made up) and the pins, (Level,
    Stage) -> id; the Stages keep their targets, so the bundle and the report show them short."""
    slots = [
        t for row in curve.targets(options.levels, options.stages, options.first_level) for t in row
    ]
    need = Counter(t.tier for t in slots)
    have = Counter(p.tier for p in valid)
    short = {t: need[t] - have[t] for t in TIER_NAMES if need[t] > have[t]}
    if not short:
        return valid, {}
    reached = [t for t in TIER_NAMES if need[t] and t not in short]
    if not reached:
        raise NightlyError(
            "generate",
            "no tier of the night was reached: "
            + "; ".join(f"{t}: {stats[t].unreached}" for t in short if stats[t].unreached),
        )
    order = {t: i for i, t in enumerate(TIER_NAMES)}

    def nearest(tier: str) -> str:  # the reached tier nearest it, the one below on a tie
        return min(reached, key=lambda t: (abs(order[t] - order[tier]), order[t] > order[tier]))

    wanted: Counter[str] = Counter()
    for t, n in short.items():
        wanted[nearest(t)] += n
    spare = {t: have[t] - need[t] for t in wanted}
    missing = {t: n - spare[t] for t, n in wanted.items() if n > spare[t]}
    if missing:
        taken = elsewhere | {p.key for p in valid}
        extra = _validate_puzzles(make_up(options, missing, taken, stats), stats)
        valid = valid + extra
        have = Counter(p.tier for p in valid)
        line = f"short: made up {per_tier(Counter(p.tier for p in extra))} to stand in"
        lines.append(line)
        log(line)
    pins: dict[tuple[int, int], str] = {}
    used: set[str] = set()
    for tier, n in short.items():
        sub = nearest(tier)
        below = order[sub] < order[tier]
        room = have[sub] - need[sub] - sum(1 for p in valid if p.id in used and p.tier == sub)
        # the tier's Stages next to the stand-in tier, and its puzzles nearest them, matched in
        # order (the least total distance on a line)
        ends = sorted(
            (t for t in slots if t.tier == tier), key=lambda t: (t.score, t.level, t.stage)
        )
        pool = sorted(
            (p for p in valid if p.tier == sub and p.id not in used),
            key=lambda p: (_score(p), p.id),
        )
        k = min(n, room)
        mine = ends[:k] if below else ends[len(ends) - k :]
        picked = pool[len(pool) - k :] if below else pool[:k]
        for target, puzzle in zip(mine, picked, strict=True):
            used.add(puzzle.id)
            pins[target.level + 1, target.stage + 1] = puzzle.id
        stats[tier].stand_ins = len(mine)
        stats[tier].stand_in_tier = sub
        line = (
            f"short: {len(mine)} {tier} Stage(s) have {sub} puzzles: {stats[tier].unreached}"
            if stats[tier].unreached
            else f"short: {len(mine)} {tier} Stage(s) have {sub} puzzles"
        )
        lines.append(line)
        log(line)
    return valid, pins


def _score(p: Puzzle) -> float:
    return float(p.rated.score or 0.0)


def _assemble(
    options: NightlyOptions,
    curve: Curve,
    puzzles: Sequence[Puzzle],
    pins: dict[tuple[int, int], str] | None = None,
) -> Assembly:
    try:
        return assemble(
            puzzles,
            levels=options.levels,
            stages=options.stages,
            curve=curve,
            curve_name=options.curve_text,
            first_level=options.first_level,
            pins={k: v for k, v in (pins or {}).items() if v in {p.id for p in puzzles}},
        )
    except NumberMatchError as exc:
        raise NightlyError("assemble", str(exc)) from exc


def _write_pool(staging: Path, assembly: Assembly) -> None:
    """The validated Puzzles the bundle did not use, as `pool/<id>.yaml`: what `swap` takes first."""
    write_puzzles(sorted(assembly.unused, key=lambda p: p.id), staging / POOL_DIR)


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
                # Stages of the tier with another tier's puzzle: the generator did not reach it
                **(
                    {
                        "short": s.stand_ins,
                        "stand_in_tier": s.stand_in_tier,
                        "unreached": s.unreached,
                    }
                    if s.stand_ins
                    else {}
                ),
            }
            for tier, s in stats.items()
        },
    }
