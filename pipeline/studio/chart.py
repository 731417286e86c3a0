"""The bundle's difficulty curve as one inline SVG: tier bands, each Level's target and actual scores.

Stages run left to right in play order, Levels separated by a rule; the score axis is 0-100
with the tier table's bands behind. The text depends only on the input (no ids, no clock).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pipeline.rating.tiers import TIERS
from pipeline.studio.library import StageSlot

BAND_FILLS = {"easy": "#e3f4e8", "medium": "#fdf3d7", "hard": "#fde2cf", "expert": "#f8d7da"}
TARGET = "#52606d"
ACTUAL = "#1d4ed8"
LEFT, RIGHT, TOP, BOTTOM = 44, 86, 12, 30
HEIGHT = 220


def _score(slot: StageSlot) -> float | None:
    difficulty = slot.puzzle.get("difficulty")
    score = difficulty.get("score") if isinstance(difficulty, dict) else None
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def curve_svg(slots: Sequence[StageSlot], *, step: int | None = None, changed: Sequence[str] = ()) -> str:
    """The chart for `slots` (a bundle's Stages in order); `changed` marks draft swaps (`L.S`).
    `step` is the width per Stage (default: wider for short bundles, 22 px from 30 Stages)."""
    n = max(1, len(slots))
    step = step or max(22, min(60, 660 // n))
    width = LEFT + RIGHT + step * n
    plot_h = HEIGHT - TOP - BOTTOM

    def x(k: int) -> float:
        return LEFT + step * k + step / 2

    def y(score: float) -> float:
        return TOP + plot_h * (1 - max(0.0, min(100.0, score)) / 100)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="curve" width="{width}" height="{HEIGHT}"'
        f' viewBox="0 0 {width} {HEIGHT}" role="img" aria-labelledby="curve-title"'
        ' font-family="Helvetica, Arial, sans-serif" font-size="11">',
        '<title id="curve-title">Difficulty curve: target (dashed) and actual score per Stage, tier bands behind</title>',
    ]
    for name, low, high in TIERS:
        top, bottom = y(high), y(low)
        out.append(
            f'<rect x="{LEFT}" y="{top:.1f}" width="{step * n}" height="{bottom - top:.1f}" fill="{BAND_FILLS.get(name, "#eee")}"/>'
        )
        out.append(f'<text x="{LEFT + step * n + 6}" y="{(top + bottom) / 2 + 4:.1f}" fill="#3e4c59">{escape(name)}</text>')
    for score in (0, 25, 50, 75, 100):
        out.append(f'<text x="{LEFT - 6}" y="{y(score) + 4:.1f}" text-anchor="end" fill="#616e7c">{score}</text>')
    levels: dict[int, list[tuple[int, StageSlot]]] = {}
    for k, slot in enumerate(slots):
        levels.setdefault(slot.level, []).append((k, slot))
    for level, members in levels.items():
        first = members[0][0]
        if first:
            out.append(f'<line x1="{LEFT + step * first}" y1="{TOP}" x2="{LEFT + step * first}" y2="{TOP + plot_h}" stroke="#9aa5b1"/>')
        mid = (x(first) + x(members[-1][0])) / 2
        out.append(f'<text x="{mid:.1f}" y="{HEIGHT - 10}" text-anchor="middle" fill="#3e4c59">L{level}</text>')
        targets = [(x(k), y(s.target)) for k, s in members if s.target is not None]
        if len(targets) > 1:
            pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in targets)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{TARGET}" stroke-width="1.5" stroke-dasharray="4 3"/>')
        actual = [(k, s, _score(s)) for k, s in members]
        pts = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, _, v in actual if v is not None)
        if pts.count(",") > 1:
            out.append(f'<polyline points="{pts}" fill="none" stroke="{ACTUAL}" stroke-width="2"/>')
        for k, s, v in actual:
            if v is None:
                continue
            mark = ' stroke="#c2410c" stroke-width="3"' if s.at in changed else ""
            label = f"L{s.level}.S{s.stage}: score {v:.1f}" + ("" if s.target is None else f", target {s.target:.1f}")
            out.append(f'<circle class="point" cx="{x(k):.1f}" cy="{y(v):.1f}" r="4" fill="{ACTUAL}"{mark}><title>{escape(label)}</title></circle>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{step * n}" height="{plot_h}" fill="none" stroke="#9aa5b1"/>')
    out.append("</svg>")
    return "\n".join(out)
