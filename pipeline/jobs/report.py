"""The nightly job's `report.md`: deterministic (no clock), so reruns give the same bytes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence, Set
from typing import Protocol

from pipeline import __version__
from pipeline.formats.curves import shape_text
from pipeline.formats.night import BUNDLE_FILE, LOG_FILE
from pipeline.jobs.assembler import Assembly, digit_layout
from pipeline.rating.tiers import TIER_NAMES


class NightlyOptions(Protocol):
    """What the heading says about a night (`nightly.NightlyOptions`; a protocol, so the report
    does not import the job that calls it)."""

    @property
    def date_text(self) -> str: ...
    @property
    def curve_text(self) -> str: ...
    @property
    def levels(self) -> int: ...
    @property
    def stages(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def stock(self) -> bool: ...


class _Plan(Protocol):
    @property
    def cells(self) -> int: ...
    @property
    def adds(self) -> int: ...


class TierStats(Protocol):
    """What generation and validation did for one tier (`nightly.TierStats`)."""

    @property
    def plan(self) -> _Plan: ...
    @property
    def generated(self) -> int: ...
    @property
    def attempts(self) -> int: ...
    @property
    def invalid(self) -> int: ...
    @property
    def rejected(self) -> Mapping[str, int]: ...
    @property
    def from_stock(self) -> int: ...
    @property
    def short(self) -> int: ...
    @property
    def unreached(self) -> str: ...
    @property
    def stand_ins(self) -> int: ...
    @property
    def stand_in_tier(self) -> str: ...


def render_report(
    options: NightlyOptions,
    stats: Mapping[str, TierStats],
    assembly: Assembly,
    valid: int,
    from_stock: Set[str] = frozenset(),
    aside: Sequence[object] = (),
) -> str:
    """The Markdown report; deterministic (no clock), so reruns give the same bytes.
    `from_stock`: the ids of the puzzles the night drew from the stock; `aside`: the stock files
    it found invalid and moved out of the draw (one line each)."""
    generated = sum(s.generated for s in stats.values())
    attempts = sum(s.attempts for s in stats.values())
    out = _heading(options, assembly)
    if options.stock:
        out += _stock(stats, assembly, from_stock)
        if aside:
            out[-1:-1] = [f"- {line}." for line in map(str, aside)]
    drawn = sum(s.from_stock for s in stats.values())
    out += _tier_table(stats, assembly, valid, generated, attempts, options.stock)
    out += _short_of_tier(stats, assembly)
    out += _work_per_phase(assembly, valid, generated + drawn, attempts, generated)
    out += _targets(assembly)
    out += _curve(assembly)
    return "\n".join(out)


def _heading(options: NightlyOptions, assembly: Assembly) -> list[str]:
    first = assembly.first_level
    where = (
        f" (Levels {first}-{first + len(assembly.levels) - 1} of the game, continuing the last night)"
        if first != 1
        else ""
    )
    return [
        f"# Nightly bundle {options.date_text}",
        "",
        f"`{BUNDLE_FILE}`: id `nightly-{options.date_text}`, {shape_text(options.levels, options.stages)}{where}"
        f" on curve `{options.curve_text}`, seed {options.seed}, numbermatch {__version__}, ruleset"
        f" {assembly.placements[0].puzzle.ruleset}. Wall-clock time per phase: `{LOG_FILE}`.",
        "",
    ]


def _stock(stats: Mapping[str, TierStats], assembly: Assembly, from_stock: Set[str]) -> list[str]:
    """What came from the stock and what was made: the night generates only the shortfall."""
    drawn = sum(s.from_stock for s in stats.values())
    made = sum(s.generated for s in stats.values())
    used = sum(1 for p in assembly.placements if p.puzzle.id in from_stock)
    short = [
        f"{t}: {s.short} Stage(s) with no stock puzzle near their target" if s.short else t
        for t, s in stats.items()
        if s.generated
    ]
    return [
        "## Stock",
        "",
        f"- from the stock: {used} of the {len(assembly.placements)} Stages ({drawn} puzzles drawn:"
        f" {per_tier({t: s.from_stock for t, s in stats.items()})}); they leave the stock with this night.",
        f"- made tonight: {made} puzzles, only the shortfall"
        + (f" ({', '.join(short)})" if short else ": the stock covered every tier")
        + f"; {len(assembly.placements) - used} Stages use them, the unused go to the stock.",
        "",
    ]


def _tier_table(
    stats: Mapping[str, TierStats],
    assembly: Assembly,
    valid: int,
    generated: int,
    attempts: int,
    stock: bool = False,
) -> list[str]:
    """Puzzles generated, tried, valid and used per tier (and drawn from the stock, on a night
    that uses it), and the generator's rejections."""
    used = Counter(p.puzzle.tier for p in assembly.placements)
    out = [
        "## Puzzles per tier",
        "",
        "| tier | cells | adds |"
        + (" from stock |" if stock else "")
        + " generated | attempts | acceptance | valid | used |",
        "|---|---:|---:|" + ("---:|" if stock else "") + "---:|---:|---:|---:|---:|",
    ]
    for tier in TIER_NAMES:
        if tier not in stats:
            continue
        s = stats[tier]
        drawn = f" {s.from_stock} |" if stock else ""
        out.append(
            f"| {tier} | {s.plan.cells} | {s.plan.adds} |{drawn} {s.generated} | {s.attempts} |"
            f" {percent(s.generated, s.attempts)} | {s.generated + s.from_stock - s.invalid} | {used[tier]} |"
        )
    drawn_all = f" {sum(s.from_stock for s in stats.values())} |" if stock else ""
    out += [
        f"| all | | |{drawn_all} {generated} | {attempts} | {percent(generated, attempts)} | {valid} | {sum(used.values())} |",
        "",
    ]
    reasons: Counter[str] = Counter()
    for s in stats.values():
        reasons.update(s.rejected)
    if reasons:
        out.append(
            "Generator rejections: "
            + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
            + "."
        )
        out.append("")
    return out


def _short_of_tier(stats: Mapping[str, TierStats], assembly: Assembly) -> list[str]:
    """The Stages whose puzzle is not of their target's tier (the generator did not reach it
    within its budget): which, what they got, and the generator's reason. Nothing otherwise."""
    off = [p for p in assembly.placements if p.puzzle.tier != p.target.tier]
    if not off:
        return []
    out = ["## Stages short of their tier", ""]
    for tier in TIER_NAMES:
        mine = [p for p in off if p.target.tier == tier]
        if not mine:
            continue
        where = ", ".join(
            f"Level {p.target.level + 1} stage {p.target.stage + 1}"
            f" ({p.target.score:.1f}: {p.puzzle.tier} {p.puzzle.rated.score_text(1)})"
            for p in mine
        )
        of = sum(1 for p in assembly.placements if p.target.tier == tier)
        s = stats.get(tier)
        why = f" The generator: {s.unreached}." if s is not None and s.unreached else ""
        out.append(
            f"- {tier}: {len(mine)} of {of} Stages have another tier's puzzle: {where}.{why}"
        )
    return out + [""]


def _work_per_phase(
    assembly: Assembly, valid: int, checked: int, attempts: int, generated: int
) -> list[str]:
    return [
        "## Work per phase",
        "",
        f"- generate: {attempts} candidate boards tried for {generated} puzzles.",
        f"- validate: {checked} puzzles checked as puzzle files, {checked - valid} rejected; the bundle checked again.",
        f"- assemble: optimal placement, total deviation from the curve {assembly.cost / 100:.2f} points"
        f" (mean {assembly.cost / 100 / max(1, len(assembly.placements)):.2f} per stage),"
        f" {assembly.nodes} matching(s) solved.",
        "",
    ]


def _targets(assembly: Assembly) -> list[str]:
    """Per Level: the curve's targets, the placed scores and tiers, the total deviation."""
    out = [
        "## Targets and placed scores",
        "",
        "Per Level: the curve's target for each Stage, the score of the puzzle placed there, and the",
        "total deviation.",
        "",
        "| level | targets | placed | tiers | deviation |",
        "|---:|---|---|---|---:|",
    ]
    for n, level in enumerate(assembly.levels, assembly.first_level):
        targets = " ".join(f"{p.target.score:.1f}" for p in level)
        placed = " ".join(p.puzzle.rated.score_text(1) for p in level)
        tiers = " ".join(p.puzzle.tier for p in level)
        out.append(
            f"| {n} | {targets} | {placed} | {tiers} | {sum(p.cost for p in level) / 100:.2f} |"
        )
    return out


def _curve(assembly: Assembly) -> list[str]:
    """Per Level, each Stage's target, score, tier, a bar, the board and its id; then layouts."""
    out = ["", "## Difficulty curve"]
    for n, level in enumerate(assembly.levels, assembly.first_level):
        out += [
            "",
            f"### Level {n}",
            "",
            "| stage | target | score | tier | curve | board | adds | id |",
            "|---:|---:|---:|---|---|---|---:|---|",
        ]
        for p in level:
            score = p.puzzle.rated.score or 0.0  # placed puzzles are solvable: they have a score
            out.append(
                f"| {p.target.stage + 1} | {p.target.score:.2f} | {score:.2f} | {p.puzzle.tier} |"
                f" `{_bar(score)}` | `{p.puzzle.board}` | {p.puzzle.adds} | `{p.puzzle.id}` |"
            )
    layouts = [digit_layout(p.puzzle.board, p.puzzle.ruleset) for p in assembly.placements]
    out += ["", f"Distinct digit layouts: {len(set(layouts))} of {len(layouts)} stages.", ""]
    return out


def _bar(score: float, width: int = 20) -> str:
    filled = round(score / 100 * width)
    return "#" * filled + "." * (width - filled)


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def per_tier(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{t} {n}" for t, n in counts.items())
