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
) -> str:
    """The board `cells` (bytes in reading order, 0 = gap) as an SVG document string.

    `highlight`: flat cell indices to mark (off-board indices are refused with ValueError);
    `numbers`: draw row and column numbers; `cell`: cell size in pixels; `title`: an
    accessible title (shown as a tooltip by browsers).
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
        for c in range(WIDTH):
            x = margin + c * cell + cell // 2
            out.append(
                f'<text x="{x}" y="{margin - 6}" font-size="{small}" fill="{LABEL}" text-anchor="middle">{c}</text>'
            )
        for r in range(rows if n else 0):
            y = margin + r * cell + cell // 2 + small // 3
            out.append(
                f'<text x="{margin - 6}" y="{y}" font-size="{small}" fill="{LABEL}" text-anchor="end">{r}</text>'
            )
    hl = set(marked)
    for i, v in enumerate(cells):
        r, c = divmod(i, WIDTH)
        x, y = margin + c * cell, margin + r * cell
        if i in hl:
            fill, edge, stroke = HIGHLIGHT_FILL, HIGHLIGHT_EDGE, 3
        else:
            fill, edge, stroke = (CELL_FILL if v else GAP_FILL), GRID, 1
        out.append(
            f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" stroke="{edge}" stroke-width="{stroke}"/>'
        )
        if v:
            out.append(
                f'<text x="{x + cell // 2}" y="{y + cell // 2 + font // 3}" font-size="{font}" fill="{INK}"'
                f' text-anchor="middle" font-weight="bold">{v}</text>'
            )
    if not n:
        out.append(
            f'<text x="{margin + WIDTH * cell // 2}" y="{margin + cell // 2 + small // 3}" font-size="{small}"'
            f' fill="{LABEL}" text-anchor="middle">empty board: the Stage is won</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
