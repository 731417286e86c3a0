"""A picture of a board as the game draws it: a self-contained SVG string.

Cells sit on a 9-column grid in reading order; an active cell shows its digit, a gap is an
empty shaded cell, and the last row stops where the board does. Optional row and column
numbers (the `R,C` of moves) go along the edges, and `highlight` marks cells, for example the
two cells of the certificate's next move.

The text depends only on the arguments (no ids from a counter, no clock, fixed number
formatting), so the same board gives byte-identical SVG, and several pictures can be inlined
in one HTML page without clashing (no `id` attributes, no shared definitions).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pipeline.engine.board import WIDTH

CELL = 36  # pixels per cell
MARGIN = 22  # room for row / column numbers
INK = "#1f2933"
GRID = "#9aa5b1"
GAP_FILL = "#e4e7eb"
CELL_FILL = "#ffffff"
HIGHLIGHT_FILL = "#ffd166"
HIGHLIGHT_EDGE = "#c2410c"
LABEL = "#616e7c"


def board_svg(
    cells: bytes,
    *,
    highlight: Sequence[int] = (),
    numbers: bool = True,
    cell: int = CELL,
    title: str | None = None,
    compact: bool = False,
) -> str:
    """The board `cells` (bytes in reading order, 0 = gap) as an SVG document string.

    `highlight`: flat cell indices to mark (off-board indices are refused with ValueError);
    `numbers`: draw row and column numbers; `cell`: cell size in pixels; `title`: an
    accessible title (shown as a tooltip by browsers); `compact`: the same picture in fewer
    bytes, for pages that inline many boards (the cells as one path per paint, a row's digits as
    one text with a position per digit), instead of an element per cell.
    """
    n = len(cells)
    marked = sorted(set(highlight))
    for i in marked:
        if not 0 <= i < n:
            raise ValueError(f"highlight cell {i} is off the board of {n} cells")
    rows = max(1, (n + WIDTH - 1) // WIDTH)
    margin = MARGIN if numbers else 2
    width = margin + WIDTH * cell + 2
    height = margin + rows * cell + 2
    font = round(cell * 0.55)
    small = max(9, round(cell * 0.32))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" role="img" font-family="Helvetica, Arial, sans-serif">'
    ]
    label = (
        title if title is not None else ("empty board (won)" if not n else f"board of {rows} rows")
    )
    out.append(f"<title>{escape(label)}</title>")
    out.append(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f5f7fa"/>')
    if numbers:
        out.append(f'<g font-size="{small}" fill="{LABEL}" text-anchor="middle">')
        for c in range(WIDTH):
            out.append(f'<text x="{margin + c * cell + cell // 2}" y="{margin - 6}">{c}</text>')
        out.append(f'</g>\n<g font-size="{small}" fill="{LABEL}" text-anchor="end">')
        for r in range(rows if n else 0):
            y = margin + r * cell + cell // 2 + small // 3
            out.append(f'<text x="{margin - 6}" y="{y}">{r}</text>')
        out.append("</g>")
    # The cells' shared paint sits on the groups (a page inlines dozens of boards): a gap and a
    # highlighted cell override the fill (and the highlight its edge).
    hl = set(marked)
    if compact:
        out += _compact_cells(cells, hl, margin, cell, font)
    else:
        out.append(f'<g fill="{CELL_FILL}" stroke="{GRID}" stroke-width="1">')
        for i, v in enumerate(cells):
            r, c = divmod(i, WIDTH)
            box = f'x="{margin + c * cell}" y="{margin + r * cell}" width="{cell}" height="{cell}"'
            if i in hl:
                out.append(
                    f'<rect {box} fill="{HIGHLIGHT_FILL}" stroke="{HIGHLIGHT_EDGE}" stroke-width="3"/>'
                )
            else:
                out.append(f"<rect {box}/>" if v else f'<rect {box} fill="{GAP_FILL}"/>')
        out.append("</g>")
        if any(cells):
            out.append(
                f'<g font-size="{font}" fill="{INK}" text-anchor="middle" font-weight="bold">'
            )
            for i, v in enumerate(cells):
                if v:
                    r, c = divmod(i, WIDTH)
                    x, y = margin + c * cell + cell // 2, margin + r * cell + cell // 2 + font // 3
                    out.append(f'<text x="{x}" y="{y}">{v}</text>')
            out.append("</g>")
    if not n:
        out.append(
            f'<text x="{margin + WIDTH * cell // 2}" y="{margin + cell // 2 + small // 3}" font-size="{small}"'
            f' fill="{LABEL}" text-anchor="middle">empty board: the Stage is won</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _compact_cells(cells: bytes, hl: set[int], margin: int, cell: int, font: int) -> list[str]:
    """`board_svg(compact=True)`'s cells: a path per paint (cells, gaps), highlighted cells as
    rectangles on top, and per row one text whose digits each have their x."""
    boxes: dict[bool, list[str]] = {True: [], False: []}
    for i, v in enumerate(cells):
        r, c = divmod(i, WIDTH)
        if i not in hl:
            x, y = margin + c * cell, margin + r * cell
            boxes[bool(v)].append(f"M{x} {y}h{cell}v{cell}h-{cell}z")
    out = [f'<g stroke="{GRID}" stroke-width="1">']
    for active, fill in ((True, CELL_FILL), (False, GAP_FILL)):
        if boxes[active]:
            out.append(f'<path fill="{fill}" d="{"".join(boxes[active])}"/>')
    for i in sorted(hl):
        r, c = divmod(i, WIDTH)
        out.append(
            f'<rect x="{margin + c * cell}" y="{margin + r * cell}" width="{cell}" height="{cell}"'
            f' fill="{HIGHLIGHT_FILL}" stroke="{HIGHLIGHT_EDGE}" stroke-width="3"/>'
        )
    out.append("</g>")
    lines = []
    for s in range(0, len(cells), WIDTH):
        row = [(i - s, v) for i, v in enumerate(cells[s : s + WIDTH], s) if v]
        if row:
            xs = " ".join(str(margin + c * cell + cell // 2) for c, _ in row)
            y = margin + (s // WIDTH) * cell + cell // 2 + font // 3
            lines.append(f'<text x="{xs}" y="{y}">{"".join(str(v) for _, v in row)}</text>')
    if lines:
        out.append(f'<g font-size="{font}" fill="{INK}" text-anchor="middle" font-weight="bold">')
        out += lines
        out.append("</g>")
    return out
