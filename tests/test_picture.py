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
    bad = run("render", src, "--out", str(tmp_path / "x.png"))
    assert bad.exit_code == 1 and "name an .svg file" in bad.output
    assert not (tmp_path / "x.png").exists()


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
