"""Board pictures: `board_svg` and `numbermatch render` (to a file or, with `--out -`, to standard
output)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.engine.board import parse
from pipeline.formats.source import resolve
from pipeline.jobs.picture import board_svg
from tests.helpers import run


def test_board_svg_draws_cells_gaps_and_highlights_deterministically() -> None:
    cells = parse("1.......9/3.5")
    svg = board_svg(cells, highlight=(0, 8))
    assert svg == board_svg(cells, highlight=(8, 0))
    assert svg.startswith("<svg") and "http" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert svg.count('fill="#ffd166"') == 2  # two highlighted cells
    assert svg.count("<rect") == 1 + len(cells)  # background + one per cell (gaps included)
    assert ">9</text>" in svg and ">5</text>" in svg
    with pytest.raises(ValueError, match="off the board"):
        board_svg(cells, highlight=(99,))
    assert "the Stage is won" in board_svg(b"")


def test_render_writes_an_svg_with_the_next_move(night: Path, tmp_path: Path) -> None:
    out = tmp_path / "stage.svg"
    src = f"{night / 'bundle.yaml'}:L1.S1"
    result = run("render", src, "--next", "--out", str(out))
    assert result.exit_code == 0 and "highlighted" in result.output
    first = resolve(src)
    move = first.solution[0]
    assert out.read_text().count('fill="#ffd166"') == (0 if move == "+" else 2)
    again = tmp_path / "again.svg"
    assert run("render", src, "--next", "--out", str(again)).exit_code == 0
    assert again.read_bytes() == out.read_bytes()
    bad = run("render", src, "--out", str(tmp_path / "x.gif"))
    assert bad.exit_code == 1 and "name an .svg or .png file" in bad.output
    assert not (tmp_path / "x.gif").exists()


def test_render_out_dash_writes_the_svg_to_stdout(tmp_path: Path) -> None:
    piped = run(*["render", "19......./5.......5/2", "--adds", "1", "--next", "--out", "-"])
    assert piped.exit_code == 0, piped.output
    assert piped.stdout.startswith("<svg ") and piped.stdout.rstrip().endswith("</svg>")
    assert ", next move 1,0-1,8 highlighted" in piped.stderr
    out = tmp_path / "board.svg"
    assert (
        run(
            *["render", "19......./5.......5/2", "--adds", "1", "--next", "--out", str(out)]
        ).exit_code
        == 0
    )
    assert out.read_text(encoding="utf-8") == piped.stdout
    assert not (Path.cwd() / "-").exists()


def _decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, RGB rows) of an 8-bit RGB PNG with filter 0 on every row (what we write)."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0] == (
            zlib.crc32(kind + body) & 0xFFFFFFFF
        )
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 2)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + 3 * width
    rows = [raw[r * stride : (r + 1) * stride] for r in range(height)]
    assert all(row[0] == 0 for row in rows)
    return width, height, [row[1:] for row in rows]


def test_board_png_draws_the_svgs_layout_in_pixels_deterministically() -> None:
    from pipeline.jobs.board_png import SCALE, board_png
    from pipeline.jobs.picture import CELL, GAP_FILL, HIGHLIGHT_FILL, INK, MARGIN

    cells = parse("1.......9/3.5")
    png = board_png(cells, highlight=(0,))
    assert png == board_png(cells, highlight=(0,))
    width, height, rows = _decode_png(png)
    assert (width, height) == ((MARGIN + 9 * CELL + 2) * SCALE, (MARGIN + 2 * CELL + 2) * SCALE)

    def cell_pixels(i: int) -> set[bytes]:
        r, c = divmod(i, 9)
        x0, y0 = (MARGIN + c * CELL + 4) * SCALE, (MARGIN + r * CELL + 4) * SCALE
        span = (CELL - 8) * SCALE
        return {
            rows[y][x * 3 : x * 3 + 3] for y in range(y0, y0 + span) for x in range(x0, x0 + span)
        }

    ink, gap, marked = (bytes.fromhex(c.lstrip("#")) for c in (INK, GAP_FILL, HIGHLIGHT_FILL))
    assert cell_pixels(0) == {marked, ink}  # highlighted, with its digit
    assert ink in cell_pixels(8) and ink in cell_pixels(11)  # the 9 and the 5
    assert cell_pixels(1) == {gap}  # a gap: no digit
    bare = _decode_png(board_png(cells, numbers=False))
    assert bare[0] == (2 + 9 * CELL + 2) * SCALE
    with pytest.raises(ValueError, match="off the board"):
        board_png(cells, highlight=(99,))


def test_render_writes_a_png_and_no_labels_replaces_no_numbers(tmp_path: Path) -> None:
    out = tmp_path / "board.png"
    result = run("render", "19......./5.......5/2", "--adds", "1", "--next", "--out", str(out))
    assert result.exit_code == 0 and "next move 1,0-1,8 highlighted" in result.output
    width, height, _ = _decode_png(out.read_bytes())
    assert (width, height) == (2 * 348, 2 * 132)
    plain = tmp_path / "plain.svg"
    assert run("render", "19", "--no-labels", "--out", str(plain)).exit_code == 0
    old = tmp_path / "old.svg"
    deprecated = run("render", "19", "--no-numbers", "--out", str(old))
    assert deprecated.exit_code == 0 and "--no-numbers is deprecated: use --no-labels" in (
        deprecated.stderr
    )
    assert old.read_bytes() == plain.read_bytes() and ">0</text>" not in plain.read_text()
    helped = run("render", "--help").stdout
    assert "--no-labels" in helped and "--no-numbers" not in helped
    (tmp_path / "notes.png").write_text("my notes\n")
    refused = run("render", "19", "--out", str(tmp_path / "notes.png"))
    assert refused.exit_code == 1 and "another kind" in refused.output
