"""`numbermatch observed`: per puzzle, the loss rate the game's players showed against the rated one.

For each puzzle with telemetry: finished attempts (won or lost; abandons apart), the observed
loss rate with its 90% Wilson interval, the rated loss rate (score / 100: the score is the
percentage of games the rated audience is predicted to lose) and the tier. A puzzle is flagged
when its whole interval lies outside its tier's range: then the tier is wrong for these players
at 90% confidence, whatever the sample size. The summary compares observed with rated by tier
band, with Spearman's rank correlation and the mean absolute error, and gives each bundle
Level's curve of rated and observed loss rates. Reporters: `text`, `json` and `html` (the look of
report.html, a calibration plot and the per-Level charts).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from html import escape
from typing import Any

from pipeline.jobs.report_html import CSS, TIER_COLOURS, curve_svg
from pipeline.rating.profile import RatingProfile, profile_of
from pipeline.rating.tiers import tier_range
from pipeline.telemetry.catalogue import Catalogue, StageRef
from pipeline.telemetry.records import Telemetry, counted
from pipeline.telemetry.stats import mae, spearman, wilson


@dataclass(frozen=True)
class PuzzleObserved:
    """One puzzle's observed against rated figures (rates 0-1, score 0-100)."""

    puzzle: str
    attempts: int
    finished: int
    abandons: int
    losses: int
    observed: float | None
    low: float
    high: float
    score: float
    tier: str
    tier_low: float
    tier_high: float
    stages: tuple[str, ...]

    @property
    def rated(self) -> float:
        return self.score / 100.0

    @property
    def flag(self) -> str | None:
        """`harder` / `easier` when the interval lies wholly above / below the tier's range."""
        if self.observed is None:
            return None
        if self.low * 100 >= self.tier_high:
            return "harder"
        if self.high * 100 < self.tier_low:
            return "easier"
        return None

    def flag_text(self) -> str:
        if self.flag is None or self.observed is None:
            return ""
        return (
            f"plays {self.flag} than rated: lost {self.observed:.0%} ({self.low * 100:.0f}-{self.high * 100:.0f}%), "
            f"rated {self.tier} {self.tier_low:g}-{self.tier_high:g}"
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["stages"] = list(self.stages)
        out["rated"] = round(self.rated, 4)
        out["observed"] = None if self.observed is None else round(self.observed, 4)
        out["low"], out["high"] = round(self.low, 4), round(self.high, 4)
        out["flag"] = self.flag
        return out


@dataclass(frozen=True)
class Band:
    """One tier's puzzles: how many, mean rated and observed loss rate, how many flagged."""

    name: str
    low: float
    high: float
    puzzles: int
    rated: float
    observed: float
    flagged: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "tier": self.name,
            "range": [self.low, self.high],
            "puzzles": self.puzzles,
            "rated": round(self.rated, 4),
            "observed": round(self.observed, 4),
            "flagged": self.flagged,
        }


@dataclass(frozen=True)
class Observation:
    """Every puzzle's figures, the band summary and the per-Level curves."""

    puzzles: tuple[PuzzleObserved, ...]
    profile: RatingProfile | None
    stages: tuple[StageRef, ...]
    telemetry: Telemetry

    def measured(self) -> list[PuzzleObserved]:
        return [p for p in self.puzzles if p.observed is not None]

    def spearman(self) -> float | None:
        m = self.measured()
        return spearman([p.rated for p in m], [p.observed or 0.0 for p in m])

    def mae(self) -> float:
        m = self.measured()
        return mae([p.rated for p in m], [p.observed or 0.0 for p in m])

    def bands(self) -> list[Band]:
        """Per tier: puzzles, mean rated and mean observed loss rate, and how many are flagged."""
        out = []
        for name, low, high in (self.profile or RatingProfile.default()).tiers:
            rows = [p for p in self.measured() if p.tier == name]
            if rows:
                out.append(
                    Band(
                        name,
                        low,
                        high,
                        len(rows),
                        sum(p.rated for p in rows) / len(rows),
                        sum(p.observed or 0.0 for p in rows) / len(rows),
                        sum(p.flag is not None for p in rows),
                    )
                )
        return out

    def curves(self) -> list[dict[str, Any]]:
        """Per bundle Level: each Stage's rated and observed loss rate (None without telemetry)."""
        by_id = {p.puzzle: p for p in self.puzzles}
        levels: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for s in self.stages:
            p = by_id.get(s.puzzle)
            levels.setdefault((s.bundle, s.level), []).append(
                {
                    "stage": s.stage,
                    "puzzle": s.puzzle,
                    "rated": None if p is None else round(p.rated, 4),
                    "observed": None if p is None or p.observed is None else round(p.observed, 4),
                    "tier": None if p is None else p.tier,
                }
            )
        return [{"bundle": b, "level": lv, "stages": st} for (b, lv), st in levels.items()]

    def to_dict(self) -> dict[str, Any]:
        sp = self.spearman()
        return {
            "profile": None
            if self.profile is None
            else {"name": self.profile.name, "digest": self.profile.digest},
            "telemetry": {
                "files": list(self.telemetry.files),
                "records": self.telemetry.records,
                "bad": {
                    b.kind: {"count": b.count, "first": list(b.first)} for b in self.telemetry.bad
                },
                "digest": self.telemetry.digest,
            },
            "summary": {
                "puzzles": len(self.measured()),
                "spearman": None if sp is None else round(sp, 4),
                "mae": round(self.mae() * 100, 2),  # points, as the text and the page say
                "flagged": sum(p.flag is not None for p in self.puzzles),
                "bands": [b.to_dict() for b in self.bands()],
            },
            "puzzles": [p.to_dict() for p in self.puzzles],
            "curves": self.curves(),
        }


def observe(
    catalogue: Catalogue, telemetry: Telemetry, profile: RatingProfile | None = None
) -> Observation:
    """The observed figures of every puzzle the telemetry has attempts for (catalogue order).

    Rated figures: the stored score and tier, or, with `profile`, the score and tier under it
    (re-scored from the stored win rates).
    """
    where: dict[str, list[str]] = {}
    for s in catalogue.stages:
        where.setdefault(s.puzzle, []).append(str(s))
    rows = []
    for pid, puzzle in catalogue.puzzles.items():
        counts = telemetry.counts.get(pid)
        rated = puzzle.rated
        score = rated.score_under(profile)
        if counts is None or score is None:
            continue
        d = rated.data
        scorer = profile or profile_of(d)
        tier = rated.tier_under(profile)
        rng = scorer.tier_range(tier) if scorer is not None else tier_range(tier, rated.version)
        low_t, high_t = rng or (0.0, 100.0)
        low, high = wilson(counts.losses, counts.finished)
        rows.append(
            PuzzleObserved(
                pid,
                counts.attempts,
                counts.finished,
                counts.abandons,
                counts.losses,
                counts.loss_rate,
                low,
                high,
                score,
                tier,
                low_t,
                high_t,
                tuple(where.get(pid, ())),
            )
        )
    return Observation(tuple(rows), profile, catalogue.stages, telemetry)


# --- reporters ------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "  -" if x is None else f"{x * 100:3.0f}%"


def render_text(obs: Observation) -> str:
    t = obs.telemetry
    lines = [f"telemetry: {t.summary()}"]
    for b in t.bad:
        lines.append(f"  skipped {b}")
    if obs.profile is not None:
        lines.append(f"rated under profile {obs.profile}")
    flagged = [p for p in obs.puzzles if p.flag]
    lines.append(
        f"{counted(len(obs.measured()), 'puzzle')} with finished attempts; {len(flagged)} flagged"
    )
    for p in flagged:
        at = f" ({', '.join(p.stages)})" if p.stages else ""
        lines.append(f"  {p.puzzle}{at}: {p.flag_text()}")
    lines.append("")
    lines.append(
        f"{'puzzle':<17} {'stage':<28} {'games':>6} {'aband':>5} {'lost':>5} {'90% interval':>12} {'rated':>6}  tier"
    )
    for p in obs.puzzles:
        stage = ", ".join(p.stages)[:28]
        interval = f"{p.low * 100:.0f}-{p.high * 100:.0f}%"
        mark = {"harder": "  << harder", "easier": "  >> easier"}.get(p.flag or "", "")
        lines.append(
            f"{p.puzzle:<17} {stage:<28} {p.finished:>6} {p.abandons:>5} {_pct(p.observed):>5} {interval:>12} "
            f"{_pct(p.rated):>6}  {p.tier}{mark}"
        )
    lines.append("")
    lines.append("observed against rated, by tier:")
    for band in obs.bands():
        lines.append(
            f"  {band.name:<7} {band.low:g}-{band.high:g}: {band.puzzles:>3} puzzle{'' if band.puzzles == 1 else 's'}, "
            f"rated {band.rated:.0%}, observed {band.observed:.0%}, {band.flagged} flagged"
        )
    sp = obs.spearman()
    lines.append(
        f"Spearman (rated, observed) {'n/a' if sp is None else f'{sp:.3f}'}; mean absolute error {obs.mae() * 100:.1f} points"
    )
    curves = obs.curves()
    if curves:
        lines.append("")
        lines.append("per-Level curves (loss %, rated / observed, by Stage):")
        for c in curves:
            rated = " ".join(
                "  -" if s["rated"] is None else f"{s['rated'] * 100:3.0f}" for s in c["stages"]
            )
            seen = " ".join(
                "  -" if s["observed"] is None else f"{s['observed'] * 100:3.0f}"
                for s in c["stages"]
            )
            lines.append(f"  {c['bundle']} L{c['level']}: rated {rated} | observed {seen}")
    return "\n".join(lines) + "\n"


CALIBRATION_WIDTH = 1100  # the calibration plot's own units; the page scales it to its width
CALIBRATION_HEIGHT = 440


def _calibration_svg(obs: Observation) -> str:
    """Observed (y) against rated (x) loss rate, each puzzle a dot with its 90% interval, coloured
    by its rated tier (the legend on the right says which colour is which). Drawn wide, in a
    viewBox the page scales to its width; the y-axis title sits left of the tick labels."""
    width, height = CALIBRATION_WIDTH, CALIBRATION_HEIGHT
    left, right, top, bottom = 78, 190, 16, 46
    span_x, span_y = width - left - right, height - top - bottom

    def x(v: float) -> float:
        return left + v * span_x

    def y(v: float) -> float:
        return top + (1 - v) * span_y

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" role="img" font-family="Helvetica, Arial, sans-serif"'
        ' aria-label="observed against rated loss rate">',
        f'<rect x="{left}" y="{top}" width="{span_x}" height="{span_y}" fill="#f8f9fa" stroke="#d9e2ec"/>',
        f'<line x1="{x(0):.1f}" y1="{y(0):.1f}" x2="{x(1):.1f}" y2="{y(1):.1f}" stroke="#9aa5b1" stroke-dasharray="4 3"/>',
    ]
    for k in range(0, 101, 20):
        v = k / 100
        parts.append(
            f'<text x="{x(v):.1f}" y="{top + span_y + 16}" font-size="11" text-anchor="middle">{k}%</text>'
        )
        parts.append(
            f'<text x="{left - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">{k}%</text>'
        )
    for p in obs.measured():
        colour = TIER_COLOURS.get(p.tier, "#495057")
        parts.append(
            f'<line x1="{x(p.rated):.1f}" y1="{y(p.low):.1f}" x2="{x(p.rated):.1f}" y2="{y(p.high):.1f}" '
            f'stroke="{colour}" stroke-opacity="0.5"/>'
        )
        parts.append(
            f'<circle cx="{x(p.rated):.1f}" cy="{y(p.observed or 0.0):.1f}" r="3" fill="{colour}">'
            f"<title>{escape(p.puzzle)}: rated {p.rated:.0%}, lost {p.observed or 0.0:.0%}</title></circle>"
        )
    parts.append(
        f'<text x="{left + span_x / 2}" y="{height - 8}" font-size="12" text-anchor="middle">'
        "rated loss rate (score / 100)</text>"
    )
    mid = top + span_y / 2
    parts.append(  # left of the tick labels ("100%" ends at left - 6): no overlap
        f'<text x="18" y="{mid}" font-size="12" text-anchor="middle" transform="rotate(-90 18 {mid})">'
        "observed loss rate</text>"
    )
    lx = left + span_x + 24
    parts.append(
        f'<text x="{lx}" y="{top + 12}" font-size="12" font-weight="bold">dot: rated tier</text>'
    )
    tiers = dict.fromkeys(p.tier for p in obs.measured())
    names = [n for n in (*TIER_COLOURS,) if n in tiers] + [
        n for n in tiers if n not in TIER_COLOURS
    ]
    for k, name in enumerate(names):
        ty = top + 34 + 20 * k
        parts.append(
            f'<circle cx="{lx + 5}" cy="{ty - 4}" r="4" fill="{TIER_COLOURS.get(name, "#495057")}"/>'
            f'<text x="{lx + 16}" y="{ty}" font-size="12">{escape(name)}</text>'
        )
    ty = top + 34 + 20 * len(names) + 6
    parts.append(
        f'<line x1="{lx}" y1="{ty - 4}" x2="{lx + 10}" y2="{ty - 4}" stroke="#9aa5b1" stroke-dasharray="4 3"/>'
        f'<text x="{lx + 16}" y="{ty}" font-size="12">perfect calibration</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


# what a Level chart's two lines are here (report.html's say target and actual score)
LEVEL_LEGEND = ("rated loss rate", "observed loss rate (dot: its rated tier)")
PAGE_CSS = """
figure.calibration { margin: 0; }
figure.calibration svg { width: 100%; height: auto; display: block; }
"""


def render_html(obs: Observation) -> str:
    """One self-contained page (inline CSS and SVG, no clock), in the look of report.html."""

    def chip(tier: str) -> str:
        return f'<span class="tier" style="background:{TIER_COLOURS.get(tier, "#495057")}">{escape(tier)}</span>'

    sp = obs.spearman()
    t = obs.telemetry
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Observed difficulty</title>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<style>{CSS}{PAGE_CSS}</style></head><body>",
        "<h1>Observed difficulty</h1>",
        f'<p class="meta">{escape(t.summary())}'
        + ("" if obs.profile is None else f"; rated under profile {escape(obs.profile.name)}")
        + "</p>",
        f"<p>Spearman (rated, observed): <b>{'n/a' if sp is None else f'{sp:.3f}'}</b>; mean absolute error "
        f"<b>{obs.mae() * 100:.1f}</b> points over {len(obs.measured())} puzzles.</p>",
    ]
    body = [
        "<h2>Calibration</h2>",
        f'<figure class="calibration" id="calibration">{_calibration_svg(obs)}</figure>',
        '<p class="note">Each dot is a puzzle: its rated loss rate against the share of finished games its players lost, '
        "with the 90% Wilson interval; the dashed line is perfect calibration.</p>",
        "<h2>By tier</h2>",
        '<table class="metrics"><tr><th>tier</th><th>range</th><th>puzzles</th>'
        "<th>rated</th><th>observed</th><th>flagged</th></tr>",
    ]
    for band in obs.bands():
        body.append(
            f"<tr><td>{chip(band.name)}</td><td>{band.low:g}-{band.high:g}</td><td>{band.puzzles}</td>"
            f"<td>{band.rated:.0%}</td><td>{band.observed:.0%}</td><td>{band.flagged}</td></tr>"
        )
    body.append("</table>")
    flagged = [p for p in obs.puzzles if p.flag]
    body.append(f"<h2>Flagged ({len(flagged)})</h2>")
    body.append(
        "<ul>"
        + "".join(
            f"<li><code>{escape(p.puzzle)}</code> {escape(', '.join(p.stages))}: {escape(p.flag_text())}</li>"
            for p in flagged
        )
        + "</ul>"
        if flagged
        else "<p>None: every interval overlaps its tier.</p>"
    )
    curves = obs.curves()
    if curves:
        body.append("<h2>Per-Level curves</h2>")
        body.append(
            '<p class="note">Dashed: rated loss rate; solid: observed (dots in the rated tier\'s colour).</p>'
        )
        by_id = {p.puzzle: p for p in obs.puzzles}
        for c in curves:
            pts = []
            for s in c["stages"]:
                p = by_id.get(s["puzzle"])
                pts.append(
                    (
                        f"S{s['stage']}",
                        0.0 if p is None else p.score,
                        None if p is None or p.observed is None else p.observed * 100,
                        "unsolvable" if p is None else p.tier,
                    )
                )
            chart = curve_svg(pts, width=560, legend=LEVEL_LEGEND)
            body.append(f"<h3>{escape(c['bundle'])} Level {c['level']}</h3>{chart}")
    body.append("<h2>Puzzles</h2>")
    body.append(
        '<table class="metrics"><tr><th>puzzle</th><th>stages</th><th>games</th><th>abandoned</th><th>lost</th>'
        "<th>90% interval</th><th>rated</th><th>tier</th><th></th></tr>"
    )
    for p in obs.puzzles:
        body.append(
            f"<tr><td><code>{escape(p.puzzle)}</code></td><td>{escape(', '.join(p.stages))}</td><td>{p.finished}</td>"
            f"<td>{p.abandons}</td><td>{_pct(p.observed)}</td><td>{p.low * 100:.0f}-{p.high * 100:.0f}%</td>"
            f"<td>{_pct(p.rated)}</td><td>{chip(p.tier)}</td><td>{escape(p.flag or '')}</td></tr>"
        )
    body.append("</table></body></html>")
    return "\n".join(head + body) + "\n"


def render_json(obs: Observation) -> str:
    return json.dumps(obs.to_dict(), indent=2) + "\n"


REPORTER_BY_NAME = {"text": render_text, "json": render_json, "html": render_html}


def stage_figures(obs: Observation) -> Mapping[str, Mapping[str, Any]]:
    """Per puzzle id, the figures a stage card shows (for the studio): finished games, observed
    loss rate and interval, and the flag."""
    return {
        p.puzzle: {
            "games": p.finished,
            "abandons": p.abandons,
            "observed": p.observed,
            "low": p.low,
            "high": p.high,
            "flag": p.flag,
            "flag_text": p.flag_text(),
        }
        for p in obs.puzzles
    }
