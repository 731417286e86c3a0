"""The CLI agrees with itself (issue 23.6): a puzzle id is looked up in generated/ without --in,
`render --out -` writes the picture to standard output, `play` and `show` draw the same grid."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import run
from pipeline.cli.play_cmds import Game
from pipeline.engine.board import parse

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def nights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A folder like a game repository: generated/<night>/pool/ with one committed puzzle file
    (from anywhere under generated/); the current folder. Returns the puzzle's id."""
    committed = sorted(REPO.glob("generated/**/nm*-*.yaml"))[0]
    pool = tmp_path / "generated" / "2026-01-01" / "pool"
    pool.mkdir(parents=True)
    shutil.copy(committed, pool)
    monkeypatch.chdir(tmp_path)
    return committed.stem


def test_show_id_without_in_looks_in_generated(nights: str) -> None:
    result = run(*["show", nights])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{nights}: ")
    same = run(*["show", nights, "--in", "generated"])
    assert same.stdout == result.stdout


def test_an_id_not_in_generated_says_where_it_looked(nights: str) -> None:
    result = run(*["solve", "nm1-000000000000"])
    assert result.exit_code == 1
    assert "under generated (looked in the default folder; --in PATH looks elsewhere)" in result.stderr


def test_without_generated_an_id_asks_for_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(*["show", "nm1-000000000000"])
    assert result.exit_code == 1
    assert "there is no generated/ folder here to look in; say where to look with --in PATH" in result.stderr


def test_render_out_dash_writes_the_svg_to_stdout(tmp_path: Path) -> None:
    piped = run(*["render", "19......./5.......5/2", "--adds", "1", "--next", "--out", "-"])
    assert piped.exit_code == 0, piped.output
    assert piped.stdout.startswith("<svg ") and piped.stdout.rstrip().endswith("</svg>")
    assert ", next move 1,0-1,8 highlighted" in piped.stderr
    out = tmp_path / "board.svg"
    assert run(*["render", "19......./5.......5/2", "--adds", "1", "--next", "--out", str(out)]).exit_code == 0
    assert out.read_text(encoding="utf-8") == piped.stdout
    assert not (Path.cwd() / "-").exists()


def test_play_and_show_draw_the_same_grid() -> None:
    board = "123456789/98.654321/135"
    shown = run(*["show", board]).stdout.splitlines()
    played = Game(parse(board), 0).picture().splitlines()
    assert played == shown[: len(played)]
    assert len(played) == 4 and played[2] == "  1   9  8  .  6  5  4  3  2  1"

