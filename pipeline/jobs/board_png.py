"""The board picture of `picture.board_svg` as a PNG, for chat and slides where an SVG will not
paste: the same layout and colours, drawn into pixels here and encoded with zlib and struct.

The board is rectangles and digits, so nothing heavier is needed: cells are filled rectangles
with a one-pixel grid edge (a highlighted cell a thicker one), and digits come from a small
built-in 5x7 bitmap font, scaled up. The picture is drawn at `SCALE` times the SVG's size so it
stays sharp on high-density screens. The bytes depend only on the arguments (no clock, no
metadata chunks), so the same board gives a byte-identical file.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from pipeline.engine.board import WIDTH
from pipeline.jobs.picture import (
    CELL,
    CELL_FILL,
    GAP_FILL,
    GRID,
    HIGHLIGHT_EDGE,
    HIGHLIGHT_FILL,
    INK,
    LABEL,
    MARGIN,
)

SCALE = 2  # pixels per SVG unit
BACKGROUND = "#f5f7fa"

# 5 columns x 7 rows per digit, one string per row ("#" = ink)
FONT: dict[str, tuple[str, ...]] = {
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
}
GLYPH_W, GLYPH_H = 5, 7


def _rgb(colour: str) -> bytes:
    return bytes.fromhex(colour.lstrip("#"))


class _Canvas:
    """An RGB pixel buffer with the two drawing operations the board needs."""

    def __init__(self, width: int, height: int, fill: str) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray(_rgb(fill) * (width * height))

    def rect(self, x: int, y: int, w: int, h: int, colour: str) -> None:
        x0, y0 = max(0, x), max(0, y)
        x1, y1 = min(self.width, x + w), min(self.height, y + h)
        if x1 <= x0 or y1 <= y0:
            return
        run = _rgb(colour) * (x1 - x0)
        for row in range(y0, y1):
            start = (row * self.width + x0) * 3
            self.pixels[start : start + len(run)] = run

    def frame(self, x: int, y: int, w: int, h: int, edge: int, colour: str) -> None:
        self.rect(x, y, w, edge, colour)
        self.rect(x, y + h - edge, w, edge, colour)
        self.rect(x, y, edge, h, colour)
        self.rect(x + w - edge, y, edge, h, colour)

    def text(
        self, cx: int, cy: int, digits: str, dot: int, colour: str, anchor: str, bold: int = 0
    ) -> None:
        """Digits of `dot`-pixel dots, vertically centred on cy; `anchor` middle or end at cx;
        `bold` widens each dot by that many pixels."""
        gap = dot
        width = len(digits) * GLYPH_W * dot + (len(digits) - 1) * gap
        x = (cx - width // 2 if anchor == "middle" else cx - width) - bold // 2
        y = cy - GLYPH_H * dot // 2
        for ch in digits:
            for r, line in enumerate(FONT[ch]):
                for c, mark in enumerate(line):
                    if mark == "#":
                        self.rect(x + c * dot, y + r * dot, dot + bold, dot, colour)
            x += GLYPH_W * dot + gap

    def png(self) -> bytes:
        rows = b"".join(
            b"\x00" + bytes(self.pixels[r * self.width * 3 : (r + 1) * self.width * 3])
            for r in range(self.height)
        )

        def chunk(kind: bytes, body: bytes) -> bytes:
            crc = zlib.crc32(kind + body) & 0xFFFFFFFF
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows, 9))
            + chunk(b"IEND", b"")
        )


def board_png(
    cells: bytes, *, highlight: Sequence[int] = (), numbers: bool = True, cell: int = CELL
) -> bytes:
    """The board `cells` as PNG bytes, laid out as `board_svg` lays it out (same arguments:
    `highlight` cells marked, row and column `numbers` along the edges), at `SCALE`x its size."""
    n = len(cells)
    marked = set(highlight)
    for i in marked:
        if not 0 <= i < n:
            raise ValueError(f"highlight cell {i} is off the board of {n} cells")
    s = SCALE
    rows = max(1, (n + WIDTH - 1) // WIDTH)
    margin = MARGIN if numbers else 2
    canvas = _Canvas((margin + WIDTH * cell + 2) * s, (margin + rows * cell + 2) * s, BACKGROUND)
    big = max(1, round(cell * 0.55 * s / GLYPH_H))  # a digit about as tall as the SVG's
    small = max(1, round(max(9, round(cell * 0.32)) * s / GLYPH_H))
    if numbers:
        for c in range(WIDTH):
            canvas.text(
                (margin + c * cell + cell // 2) * s,
                (margin - 10) * s,
                str(c),
                small,
                LABEL,
                "middle",
            )
        for r in range(rows if n else 0):
            canvas.text(
                (margin - 6) * s, (margin + r * cell + cell // 2) * s, str(r), small, LABEL, "end"
            )
    for i, v in enumerate(cells):  # the highlighted cells last: their thick edge on top
        r, c = divmod(i, WIDTH)
        x, y, w = (margin + c * cell) * s, (margin + r * cell) * s, cell * s
        if i not in marked:
            canvas.rect(x, y, w + s, w + s, CELL_FILL if v else GAP_FILL)
            canvas.frame(x, y, w + s, w + s, s, GRID)
    for i in sorted(marked):
        r, c = divmod(i, WIDTH)
        x, y, w = (margin + c * cell) * s, (margin + r * cell) * s, cell * s
        canvas.rect(x, y, w + s, w + s, HIGHLIGHT_FILL)
        canvas.frame(x - s, y - s, w + 3 * s, w + 3 * s, 3 * s, HIGHLIGHT_EDGE)
    for i, v in enumerate(cells):
        if v:
            r, c = divmod(i, WIDTH)
            cx, cy = (margin + c * cell + cell // 2) * s, (margin + r * cell + cell // 2) * s
            canvas.text(cx, cy, str(v), big, INK, "middle", bold=big // 2)
    return canvas.png()
