"""`report.html`: one self-contained page a producer opens to understand a night.

It shows the whole night's difficulty curve, then per Level its curve (targets and actual
scores over the tier bands) and every Stage: a picture of its board as the game draws it (the
first move of the certificate marked), its tier, score, target and adds, and its metrics
explained (value, weight, points towards the score, which ones decide the tier, one line in
plain words).

It is rendered from the bundle document alone (`render_report_html(doc)`), so the nightly job
and `numbermatch report BUNDLE` (after a `swap`, say) give the same page for the same bundle.
No network, no scripts, no external assets: inline CSS and inline SVG. No clock and fixed
number formatting, so the same bundle gives byte-identical HTML.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pipeline.atomic import snapshot, write_guarded
from pipeline.engine.board import parse
from pipeline.engine.moves import Move
from pipeline.formats.bundle import Bundle, Stage
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.night import BUNDLE_FILE, REPORT_FILE, REPORT_HTML
from pipeline.formats.scale import block_profile, bundle_scale, tier_of, tiers_of
from pipeline.jobs.picture import board_svg
from pipeline.rating.explain import explain
from pipeline.rating.tiers import RATING_VERSION, TIERS

TIER_COLOURS = {
    "easy": "#2f9e44",
    "medium": "#1c7ed6",
    "hard": "#e8590c",
    "expert": "#c2255c",
    "unsolvable": "#495057",
}
TIER_BANDS = {"easy": "#ebfbee", "medium": "#e7f5ff", "hard": "#fff4e6", "expert": "#fff0f6"}
# The icon of report.html and of the studio: a 3x3 board with a matched pair.
FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 30 30"><rect width="30" height="30" rx="5" fill="#1f2933"/>'
    '<g font-family="Helvetica,Arial,sans-serif" font-size="9" font-weight="bold" text-anchor="middle">'
    '<text x="6" y="10" fill="#fff">3</text><text x="15" y="10" fill="#fff">7</text><text x="24" y="10" fill="#fff">5</text>'
    '<text x="6" y="19" fill="#fff">1</text><text x="15" y="19" fill="#ffd43b">5</text><text x="24" y="19" fill="#ffd43b">5</text>'
    '<text x="6" y="28" fill="#fff">9</text><text x="15" y="28" fill="#fff">2</text><text x="24" y="28" fill="#fff">8</text></g></svg>'
)


def tier_badge_css() -> str:
    """The tier badges' colours, shared by report.html and the studio (one palette)."""
    return " ".join(
        f".tier.t-{name} {{ background: {colour}; color: #fff; }}"
        for name, colour in TIER_COLOURS.items()
    )


def favicon_link() -> str:
    """A <link rel="icon"> carrying FAVICON_SVG, so the self-contained report needs no file."""
    return f'<link rel="icon" href="data:image/svg+xml,{quote(FAVICON_SVG)}">'


CSS = """
body { font-family: Helvetica, Arial, sans-serif; color: #1f2933; margin: 24px; max-width: 1180px; }
figure.curve { margin: 0; overflow-x: auto; }
figure.curve svg { max-width: 100%; height: auto; display: block; }
#curve-all svg { min-width: 560px; }
h1 { margin-bottom: 4px; } h2 { margin-top: 36px; border-bottom: 2px solid #d9e2ec; padding-bottom: 4px; }
.meta { color: #52606d; margin-top: 0; }
.legend span, .tier { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-size: 13px; }
.legend span { margin-right: 6px; }
nav a { margin-right: 10px; }
.stages { display: flex; flex-wrap: wrap; gap: 14px; }
.stage { border: 1px solid #d9e2ec; border-radius: 8px; padding: 10px 12px; width: 340px; max-width: 100%; box-sizing: border-box; background: #fff; }
.stage svg { max-width: 100%; height: auto; }
.stage h3 { margin: 0 0 6px 0; font-size: 16px; }
.facts { font-size: 13px; margin: 6px 0; }
.facts code { font-size: 11px; word-break: break-all; }
.facts code.id { white-space: nowrap; word-break: normal; }
.summary { font-size: 13px; font-style: italic; margin: 6px 0; }
table.metrics { border-collapse: collapse; font-size: 12px; width: 100%; }
table.metrics th, table.metrics td { padding: 2px 4px; border-bottom: 1px solid #e4e7eb; text-align: right; }
table.metrics th:first-child, table.metrics td:first-child { text-align: left; }
tr.decides td { font-weight: bold; }
.note { font-size: 12px; color: #52606d; }
@media (max-width: 600px) { body { margin: 12px; } .stage { width: 100%; } }
"""


def _num(value: Any, digits: int = 2) -> str:
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return escape(str(value))


def _tier_chip(tier: str) -> str:
    colour = TIER_COLOURS.get(tier, "#495057")
    return f'<span class="tier" style="background:{colour}">{escape(tier)}</span>'


def curve_svg(
    points: Sequence[tuple[str, float, float | None, str]],
    *,
    breaks: Sequence[int] = (),
    ticks: Sequence[str] | None = None,
    width: int = 720,
    legend: tuple[str, str] = ("target", "actual score (dot: its tier)"),
    tiers: Sequence[tuple[str, float, float]] = TIERS,
) -> str:
    """A line chart over the tier bands: per point (label, target, score, tier), the target
    (dashed) and the actual score (solid, dots in the tier's colour). `breaks`: indices before
    which a vertical separator is drawn (Level boundaries); `ticks`: the x-axis text per point
    (default: the labels; empty strings are skipped); `legend`: what the dashed and the solid
    line show, as the legend under the chart says it.
    `tiers`: the bands of the scale the scores and targets are on (a rescored bundle's profile's)."""
    height, left, right, top, bottom = 240, 44, 60, 14, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(points)

    def x(i: int) -> float:
        return left + (plot_w * (i + 0.5) / n if n else 0)

    def y(score: float) -> float:
        return top + plot_h * (1 - score / 100.0)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        ' role="img" font-family="Helvetica, Arial, sans-serif" font-size="11">',
        f"<title>{escape(legend[0])} (dashed) and {escape(legend[1])} (solid)</title>",
    ]
    for name, low, high in tiers:
        out.append(
            f'<rect x="{left}" y="{y(high):.1f}" width="{plot_w}" height="{y(low) - y(high):.1f}" fill="{TIER_BANDS.get(name, "#f8f9fa")}"/>'
        )
        out.append(
            f'<text x="{left + plot_w + 6}" y="{(y(high) + y(low)) / 2 + 4:.1f}" fill="{TIER_COLOURS.get(name, "#495057")}">{escape(name)}</text>'
        )
    for tick in (0, 25, 50, 75, 100):
        out.append(
            f'<line x1="{left - 4}" y1="{y(tick):.1f}" x2="{left}" y2="{y(tick):.1f}" stroke="#52606d"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" fill="#52606d">{tick}</text>'
        )
    out.append(
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#9aa5b1"/>'
    )
    for b in breaks:
        bx = left + plot_w * b / n
        out.append(
            f'<line x1="{bx:.1f}" y1="{top}" x2="{bx:.1f}" y2="{top + plot_h}" stroke="#9aa5b1" stroke-dasharray="2 3"/>'
        )
    for i, label in enumerate(ticks if ticks is not None else [p[0] for p in points]):
        if label:
            out.append(
                f'<text x="{x(i):.1f}" y="{height - bottom + 14}" text-anchor="middle" fill="#52606d">{escape(label)}</text>'
            )
    cuts = [0, *breaks, n]
    for a, b in itertools.pairwise(cuts):
        # one line per Level: a Level's curve does not run into the next
        segment = range(a, b)
        targets = " ".join(f"{x(i):.1f},{y(points[i][1]):.1f}" for i in segment)
        out.append(
            f'<polyline points="{targets}" fill="none" stroke="#616e7c" stroke-width="1.5" stroke-dasharray="5 4"/>'
        )
        actual = " ".join(
            f"{x(i):.1f},{y(s):.1f}" for i in segment if (s := points[i][2]) is not None
        )
        out.append(f'<polyline points="{actual}" fill="none" stroke="#1f2933" stroke-width="2"/>')
    for i, (label, target, score, tier) in enumerate(points):
        out.append(
            f'<circle cx="{x(i):.1f}" cy="{y(target):.1f}" r="3" fill="#fff" stroke="#616e7c">'
            f"<title>{escape(label)} target {target:.2f}</title></circle>"
        )
        if score is not None:
            out.append(
                f'<circle cx="{x(i):.1f}" cy="{y(score):.1f}" r="4.5" fill="{TIER_COLOURS.get(tier, "#495057")}">'
                f"<title>{escape(label)} score {score:.2f} ({escape(tier)})</title></circle>"
            )
    lx = left + 8
    out.append(
        f'<line x1="{lx}" y1="{height - 8}" x2="{lx + 24}" y2="{height - 8}" stroke="#616e7c" stroke-dasharray="5 4"/>'
    )
    out.append(f'<text x="{lx + 30}" y="{height - 4}" fill="#52606d">{escape(legend[0])}</text>')
    solid = max(lx + 80, lx + 40 + round(6.2 * len(legend[0])))  # after the first entry's text
    out.append(
        f'<line x1="{solid}" y1="{height - 8}" x2="{solid + 24}" y2="{height - 8}" stroke="#1f2933" stroke-width="2"/>'
    )
    out.append(f'<text x="{solid + 30}" y="{height - 4}" fill="#52606d">{escape(legend[1])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _explain_block(difficulty: Mapping[str, Any]) -> str:
    """The metrics explained: value, weight, points, which decide the tier, a plain summary."""
    rows = _explanation(difficulty)
    if rows is None:
        return '<p class="note">no explanation: the difficulty block lacks the metrics the score needs</p>'
    parts, decide, summary = rows
    out = [f'<p class="summary">{escape(summary)}</p>'] if summary else []
    out.append(
        '<table class="metrics"><tr><th>metric</th><th>value</th><th>weight</th><th>points</th></tr>'
    )
    for name, label, value, weight, points in parts:
        cls = ' class="decides"' if name in decide else ""
        out.append(
            f'<tr{cls}><td title="{escape(label)}">{escape(name)}{" *" if name in decide else ""}</td>'
            f"<td>{_num(value, 3)}</td><td>{weight:.3f}</td><td>{points:.2f}</td></tr>"
        )
    out.append("</table>")
    if decide:
        out.append('<p class="note">* decides the tier</p>')
    return "\n".join(out)


def _explanation(
    difficulty: Mapping[str, Any],
) -> tuple[list[tuple[str, str, Any, float, float]], tuple[str, ...], str] | None:
    """(rows of name, label, value, weight, points; deciding metric names; summary), from the
    rating's own `explain`, or None when the block lacks what the score needs."""
    try:
        e = explain(difficulty)
    except ValueError:
        return None
    return (
        [(p.name, p.label, p.value, p.weight, p.points) for p in e.parts],
        tuple(e.decide),
        e.summary,
    )


def _first_pair(solution: Any) -> tuple[int, ...]:
    if not isinstance(solution, list) or not solution:
        return ()
    try:
        move = Move.parse(str(solution[0]))
    except ValueError:
        return ()
    return () if move.first is None or move.second is None else (move.first, move.second)


def _stage_card(level: int, stage: Mapping[str, Any]) -> str:
    number = stage.get("stage")
    puzzle = stage.get("puzzle") or {}
    d = puzzle.get("difficulty") or {}
    rated = Difficulty.from_dict(d)
    tier, score = rated.tier, rated.score
    target = stage.get("target_score")
    board = str(puzzle.get("board", ""))
    cells = parse(board)
    pair = _first_pair(puzzle.get("solution"))
    picture = board_svg(
        cells, highlight=pair, cell=32, title=f"L{level}.S{number} {puzzle.get('id')}: {board}"
    )
    dev = (
        f", off by {abs(score - target):.2f}"
        if isinstance(score, (int, float)) and isinstance(target, (int, float))
        else ""
    )
    metrics = (
        f"certificate {_num(d.get('certificate_length'))} moves, branching {_num(d.get('mean_branching'))},"
        f" collapse openings {_num(d.get('collapse_openings'), 3)}, min adds {_num(d.get('min_adds'))}"
    )
    return "\n".join(
        [
            f'<article class="stage" id="L{level}.S{number}">',
            f"<h3>Stage {number} {_tier_chip(tier)} score {_num(score)}</h3>",
            picture,
            f'<p class="facts">target {_num(target)} ({escape(tier_of(float(target), block_profile(d)) if isinstance(target, (int, float)) and 0 <= target <= 100 else "?")}){dev};'
            f" {_num(puzzle.get('adds'))} add{'s' if puzzle.get('adds') != 1 else ''}; id <code class='id'>{escape(str(puzzle.get('id')))}</code>;"
            f" board <code>{escape(board)}</code>{'; first move marked' if pair else ''}</p>",
            f'<p class="facts">{metrics}</p>',
            _explain_block(d),
            "</article>",
        ]
    )


def render_report_html(doc: Mapping[str, Any]) -> str:
    """The page for a bundle document (a schema-valid bundle mapping)."""
    levels = Bundle.from_dict(doc).levels
    tiers = tiers_of(bundle_scale(doc), _version(levels))  # bands, targets, scores: one scale
    gen = doc.get("generator") or {}
    params = gen.get("params") or {}
    title = f"Bundle {doc.get('id')}"
    stages = [s for lv in levels for s in lv]
    scores = [(s.puzzle.rated.score, s.target_score) for s in stages]
    deviation = sum(
        abs(score - float(target or 0.0)) for score, target in scores if score is not None
    )
    shape = f"{len(levels)} Level{'s' if len(levels) != 1 else ''} of {len(levels[0]) if levels else 0} Stages"
    meta = (
        f"{shape} on curve {escape(str(params.get('curve', '?')))}, seed {escape(str(gen.get('seed')))},"
        f" {escape(str(gen.get('name')))} {escape(str(gen.get('version')))}, ruleset {escape(str(doc.get('ruleset')))};"
        f" total deviation from the curve {deviation:.2f} points (mean {deviation / max(1, len(stages)):.2f} per Stage)"
    )
    legend = " ".join(
        f'<span style="background:{TIER_COLOURS.get(name, "#495057")}">{escape(name)} {low:g}-{high:g}</span>'
        for name, low, high in tiers
    ) + (f" (rating profile {escape(tiers_name)})" if (tiers_name := _scale_label(doc)) else "")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        favicon_link(),
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">{meta}</p>',
        f'<p class="legend">Tiers by score: {legend}</p>',
        "<nav>"
        + " ".join(
            f'<a href="#level-{lv[0].slot.level}">Level {lv[0].slot.level}</a>' for lv in levels
        )
        + "</nav>",
        "<h2>The night's curve</h2>",
    ]
    points: list[tuple[str, float, float | None, str]] = []
    breaks: list[int] = []
    ticks: list[str] = []
    for lv in levels:
        if points:
            breaks.append(len(points))
        level_points = _points(lv, full=True)
        ticks += [f"L{lv[0].slot.level}"] + [""] * (len(level_points) - 1)
        points += level_points
    out.append(
        f'<figure class="curve" id="curve-all">{curve_svg(points, breaks=breaks, ticks=ticks, width=1100, tiers=tiers)}</figure>'
    )
    for lv in levels:
        n = lv[0].slot.level
        out += [
            f'<section id="level-{n}">',
            f"<h2>Level {n}</h2>",
            f'<figure class="curve" id="curve-{n}">{curve_svg(_points(lv), width=560, tiers=tiers)}</figure>',
            '<div class="stages">',
            *(_stage_card(n, s.data) for s in lv),
            "</div>",
            "</section>",
        ]
    out += [
        '<p class="note">Each board is drawn as the game shows it (gaps shaded, row and column numbers as in moves);'
        " the highlighted cells are the certificate's first pair. Points are what each metric adds to the score;"
        " the score is their sum.</p>",
        "</body>",
        "</html>",
    ]
    return "\n".join(out) + "\n"


def _version(levels: Sequence[Sequence[Stage]]) -> int:
    """The rating version of a bundle's first scored Stage (its tier table, without a profile)."""
    return next(
        (s.puzzle.rated.version for lv in levels for s in lv if s.puzzle.rated.score is not None),
        RATING_VERSION,
    )


def _scale_label(doc: Mapping[str, Any]) -> str:
    scale = bundle_scale(doc)
    return "" if scale is None else scale.name


def _points(
    level: Sequence[Stage], full: bool = False
) -> list[tuple[str, float, float | None, str]]:
    """Chart points of a Level's Stages; `full` labels them L<level>.S<stage>, else S<stage>."""
    out = []
    for s in level:
        rated = s.puzzle.rated
        out.append(
            (
                str(s.slot) if full else f"S{s.slot.stage}",
                s.target_score or 0.0,
                rated.score,
                rated.tier,
            )
        )
    return out


STALE_MARK = "> **Stale:**"
# the note's record of the night as generated, per Stage a digest of its puzzle (an HTML
# comment: a Markdown reader shows none of it)
_GENERATED = "<!-- as generated: "


def stage_digests(doc: Mapping[str, Any]) -> dict[str, str]:
    """Stage (`L1.S2`) -> a short digest of its puzzle mapping, as the bundle `doc` holds them."""
    try:
        bundle = Bundle.from_dict(dict(doc), BUNDLE_FILE)
    except (ValueError, TypeError, KeyError):
        return {}
    return {
        str(s.slot): hashlib.sha256(
            json.dumps(s.data.get("puzzle"), sort_keys=True, default=str).encode()
        ).hexdigest()[:12]
        for s in bundle.stages
    }


def stale_report(text: str, now: Mapping[str, str], before: Mapping[str, str]) -> str:
    """report.md's text with its stale note as the bundle now is: naming every Stage whose
    puzzle differs from the night as generated (recorded in the note when it was first made,
    from `before`, the bundle before the first edit), or without a note once none does."""
    head, sep, rest = text.partition("\n")
    generated = dict(before)
    if rest.startswith("\n" + STALE_MARK):
        note, _, rest = rest[1:].partition("\n")
        recorded = note.partition(_GENERATED)[2].partition(" -->")[0]
        if not recorded:  # a note from before notes kept the night as generated: kept as it is
            return text
        generated = dict(item.split("=", 1) for item in recorded.split(";") if "=" in item)
    changed = [at for at in now if generated.get(at) != now[at]]
    changed += [at for at in generated if at not in now]
    if not changed:
        return head + sep + rest
    kept = ";".join(f"{at}={digest}" for at, digest in generated.items())
    note = (
        f"\n{STALE_MARK} {BUNDLE_FILE} was edited after this report was written"
        f" ({', '.join(changed)} swapped); the figures below describe the night as the nightly"
        f" job made it. {REPORT_HTML} shows the bundle as it is now. {_GENERATED}{kept} -->\n"
    )
    return head + sep + note + rest


def refresh_reports(
    bundle: Path, doc: Mapping[str, Any], before: Mapping[str, Any] | None = None
) -> list[str]:
    """After an edit of a night's bundle (`doc` now; `before`, as it was before the edit):
    re-render the night's report.html from the bundle, and mark its report.md stale (it reports
    the nightly run's own figures, which cannot be re-derived from the bundle) naming the Stages
    that differ from the night as generated, or unmark it when none does (a swap undone). Only
    files that are already there are touched; returns one line per file, naming it as
    `<folder>/<name>` relative to the bundle's."""
    if bundle.name != BUNDLE_FILE:
        return []
    lines = []
    html = bundle.with_name(REPORT_HTML)
    if html.is_file():
        write_guarded(html, render_report_html(doc), kinds=("html",))
        lines.append(f"{REPORT_HTML} re-rendered")
    md = bundle.with_name(REPORT_FILE)
    if md.is_file():
        base = snapshot(md)
        now = stage_digests(doc)
        text = stale_report(base.text, now, stage_digests(before) if before is not None else now)
        if text != base.text:
            write_guarded(md, text, base=base)
        if STALE_MARK in text:
            lines.append(
                f"{REPORT_FILE} marked stale (it describes the night as generated; {REPORT_HTML} is current)"
            )
        else:
            lines.append(f"{REPORT_FILE} current again (the bundle is the night as generated)")
    return lines
