"""The typer-free fast path (`pipeline.cli.fast`) says exactly what typer says: the same stdout,
stderr and exit code for plain and hostile command lines of `solve`, `rate`, `validate`, the
engine commands and `--help`; the help pages it serves are what typer renders now (`make
help-pages` after a help change). What it imports is tests/test_cli_startup.py."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import fast, help_render
from pipeline.cli.help_pages import PAGES
from tests.helpers import run

ROOT = Path(__file__).resolve().parent.parent
PUZZLE = sorted((ROOT / "generated").glob("**/nm*-*.yaml"))[0]
_TIMES = re.compile(r'("seconds": )[0-9.e-]+|(time: )[0-9.]+( s)')


def _steady(text: str) -> str:
    """Wall-clock times (the solver's `seconds`) are the one thing two runs may not share."""
    return _TIMES.sub(lambda m: (m.group(1) or m.group(2)) + "T" + (m.group(3) or ""), text)


@pytest.fixture()
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(PUZZLE, tmp_path / "puzzle.yaml")
    (tmp_path / "broken.yaml").write_text("kind: puzzle\nboard: [\n")
    (tmp_path / "notes.txt").write_text("not a level file\n")
    (tmp_path / "folder").mkdir()
    shutil.copy(PUZZLE, tmp_path / "folder" / "again.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# command lines the fast path runs itself
PLAIN = [
    ["solve", "19"],
    ["solve", "19", "--json"],
    ["solve", "123456789/987654321/135", "--adds", "1"],
    ["solve", "123456789/987654321/135", "--adds=1", "--budget-nodes", "10", "--json"],
    ["solve", "123456789/987654321/135", "--budget-nodes", "0", "--timeout", "5"],
    ["solve", "puzzle.yaml", "--json"],
    ["solve", "12x"],
    ["solve", "missing.yaml"],
    ["solve", "missing\x1b[31m\nred.yaml"],
    ["validate", "missing\x1b]0;title\x07.yaml"],
    ["render", "19", "--out", "a\nb.txt"],
    ["solve", "19", "--adds", "16"],
    ["solve", "nm1-000000000000", "--in", "folder", "--in", "puzzle.yaml"],
    ["rate", "19", "--playouts", "1"],
    ["rate", "19", "--playouts", "2", "--seed", "3", "--json", "--explain"],
    ["rate", "puzzle.yaml", "--playouts", "1", "--explain"],
    ["rate", "19", "--playouts", "1", "--profile", "missing.yaml"],
    ["rate", "19", "--playouts", "1", "--profile", "notes.txt"],
    ["rate", "5.......5/2", "--adds", "0", "--playouts", "1"],
    ["validate", "puzzle.yaml"],
    ["validate", "puzzle.yaml", "--format", "json"],
    ["validate", "--format=github", "puzzle.yaml", "broken.yaml"],
    ["validate", "folder", "puzzle.yaml"],
    ["validate", "broken.yaml"],
    ["validate", "notes.txt"],
    ["validate", "missing.yaml"],
    ["validate", "puzzle.yaml", "--profile", "missing.yaml"],
    ["validate", "puzzle.yaml", "--profile", "puzzle.yaml"],
    ["render", "19", "--out", "-"],
    ["render", "puzzle.yaml", "--out", "-", "--next", "--no-labels"],
    ["render", "123456789/987654321/135", "--out=-", "--next", "--adds", "1", "--labels"],
    ["render", "19", "--out", "pic.svg"],
    ["render", "19", "--out", "pic.png", "--next"],
    ["render", "19", "--out", "pic.txt"],
    ["render", "19", "--out", "notes.txt/pic.svg"],
    ["render", "19", "--out", "puzzle.yaml"],
    ["render", "12x", "--out", "-"],
    ["play", "19"],
    ["play", "1.......9/3.5", "--adds", "1", "--hint-nodes", "50"],
    ["play", "puzzle.yaml"],
    ["play", "missing.yaml"],
    ["play", "123456789/987654321/135", "--adds=2"],
    ["show", "123456789/98.654321/135"],
    ["moves", "1.......9/3.5", "--json"],
    ["apply", "19", "0,0-0,1", "--adds", "1", "--json"],
    [
        "generate",
        "--cells",
        "18",
        "--adds",
        "1",
        "--seed",
        "1",
        "--strategy",
        "random",
        "--attempt",
        "0",
        "--playouts",
        "1",
        "--out",
        "gen",
    ],
    [
        "generate",
        "--cells",
        "18",
        "--adds",
        "1",
        "--seed",
        "1",
        "--strategy",
        "random",
        "--attempt",
        "0",
        "--playouts",
        "1",
        "--out",
        "gen",
        "--json",
    ],
    [
        "generate",
        "--cells",
        "18",
        "--adds",
        "1",
        "--seed",
        "1",
        "--strategy",
        "random",
        "--attempt",
        "0",
        "--playouts",
        "1",
        "--tier",
        "easy",
        "--out",
        "gen",
    ],
    [
        "generate",
        "--cells",
        "18",
        "--adds",
        "1",
        "--seed",
        "1",
        "--strategy",
        "random",
        "--attempt",
        "0",
        "--playouts",
        "1",
        "--out",
        "notes.txt",
    ],
]

# command lines it leaves to typer (the usage errors and anything it is not sure about)
UNUSUAL = [
    ["solve"],
    ["solve", "19", "20"],
    ["solve", "19", "--bogus"],
    ["solve", "19", "--adds", "1", "--adds", "2"],
    ["solve", "19", "--json", "--json"],
    ["solve", "19", "--json=1"],
    ["solve", "19", "--adds", "17"],
    ["solve", "19", "--adds", "x"],
    ["solve", "19", "--adds", "-1"],
    ["solve", "19", "--adds", "٣"],
    ["solve", "19", "--adds"],
    ["solve", "19", "--timeout", "1e3"],
    ["solve", "19", "-x"],
    ["solve", "19", "--", "x"],
    ["rate", "19", "--playouts", "0"],
    ["rate", "19", "--playouts", "10001"],
    ["rate", "19", "--seed", "-4", "--playouts", "1"],
    ["validate"],
    ["validate", "puzzle.yaml", "--format", "xml"],
    ["validate", "puzzle.yaml", "--format", "JSON"],
    ["validate", "puzzle.yaml", "--deep", "--deep"],
    ["validate", "puzzle.yaml", "--profile"],
    ["validate", "püzzle.yaml"],
    ["render", "19"],
    ["render", "19", "--out", "-", "--labels", "--no-labels"],
    ["render", "19", "--out", "-", "--no-numbers"],
    ["render", "19", "--out", "-x"],
    ["play", "19", "--hint-nodes", "0"],
    ["play", "19", "20"],
    ["show", "٣"],
    ["solve", "--help", "19"],
    ["generate", "--cells", "x", "--adds", "1"],
    ["generate", "--cells", "18", "--adds", "1", "--count", "0"],
    ["generate", "--cells", "18", "--adds", "1", "--bogus"],
    ["generate", "--cells", "18", "--adds", "1", "--seed", "1", "--seed", "2"],
    ["generate", "--cells", "18", "--adds", "1", "--tier", "nosuch"],
    ["generate", "--cells", "18", "--adds", "1", "--attempt"],
    ["generate", "--cells", "18"],
    ["generate", "--cells", "18", "--adds", "1", "--score", "50"],
]


def _fast(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int | None, str, str]:
    capsys.readouterr()
    code = fast.try_run(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_the_fast_path_says_what_typer_says(
    argv: list[str],
    files: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdin = "m\n?\nw\n0,0-0,1\n+\nu\nh\n12345\n" + "x" * 300 + "\nq\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code, out, err = _fast(argv, capsys)
    assert code is not None, "the fast path left a plain command line to typer"
    slow = run(*argv, input=stdin)
    assert (code, _steady(out), err) == (slow.exit_code, _steady(slow.stdout), slow.stderr)


@pytest.mark.parametrize("argv", UNUSUAL, ids=" ".join)
def test_the_fast_path_leaves_usage_errors_to_typer(
    argv: list[str], files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _fast(argv, capsys) == (None, "", "")


def test_the_option_tables_are_the_commands_options() -> None:
    """Every option the fast path takes is the typer command's, with the same name."""
    import typer.main

    import pipeline.cli as cli
    from pipeline.cli import app

    assert fast.COMMANDS == set(fast.shapes()) == cli._FAST
    group = typer.main.get_command(app)
    for name, (options, repeatable, _, _) in fast.shapes().items():
        params = {
            opt: p
            for p in group.commands[name].params  # type: ignore[attr-defined]
            for opt in [*p.opts, *p.secondary_opts]
        }
        assert set(options) <= set(params), name
        for opt in options:
            assert params[opt].is_flag == (options[opt] is None), (name, opt)
            assert params[opt].multiple == (opt in repeatable), (name, opt)


def _console(argv: list[str], env: dict[str, str], fast_path: bool) -> tuple[int, bytes, bytes]:
    code = (
        "import sys; sys.argv[0] = 'numbermatch'; from pipeline.cli import main;"
        f" main(fast={fast_path})"
    )
    full = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | env
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, env=full, check=False
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (["--help"], {"COLUMNS": "80"}),
        (["--help"], {}),
        (["solve", "--help"], {"COLUMNS": "200"}),
        (["validate", "--help"], {"COLUMNS": "60"}),  # narrower: typer renders it
        (["stock", "--help"], {"COLUMNS": "79"}),
        (["generate", "--help"], {"COLUMNS": "x"}),
        (["conformance", "--help"], {"COLUMNS": "81"}),
        (["nosuch", "--help"], {}),
        (["stock", "refill", "--help"], {}),
        (["solve", "19", "--json"], {}),
        (["validate", str(PUZZLE), "--format", "github"], {}),
        (["validate", "/nonexistent/x.yaml"], {}),
        (["solve", "19", "--adds", "99"], {}),
    ],
)
def test_the_console_script_says_what_typer_says(argv: list[str], env: dict[str, str]) -> None:
    code, out, err = _console(argv, env, True)
    slow_code, slow_out, slow_err = _console(argv, env, False)
    assert code == slow_code
    assert _steady(out.decode()) == _steady(slow_out.decode())
    assert err == slow_err


@pytest.mark.parametrize("value", [None, "80", "200", "60", "0", "-5", "x", "", " 90"])
def test_the_width_is_the_one_click_measures(
    value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", value)
    assert fast.columns() == shutil.get_terminal_size().columns


@pytest.mark.slow
def test_the_help_pages_are_what_typer_renders_now() -> None:
    """A help text changed without `make help-pages` fails here."""
    assert help_render.render_all() == PAGES


def test_the_help_pages_cover_every_command() -> None:
    assert list(PAGES) == help_render.keys()
