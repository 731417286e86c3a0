"""The CLI's start-up: only the asked command's module loads, the engine commands run without
typer (the fast path prints what typer would), plain coercion stands in for pydantic's, and
`--help` loads no heavy module. (What help says is tests/test_cli_help.py.)"""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main

import pipeline.cli as cli
from pipeline.cli import COMMANDS, app
from pipeline.cli.help_text import EXAMPLES
from tests.helpers import run

pytestmark = pytest.mark.slow


def test_the_command_table_names_every_command_and_its_module() -> None:
    group = typer.main.get_command(app)
    assert set(group.commands) == set(COMMANDS) == set(EXAMPLES)  # type: ignore[attr-defined]
    for name, module in COMMANDS.items():
        callback = group.commands[name].callback  # type: ignore[attr-defined]
        assert callback is not None and callback.__module__ == f"pipeline.cli.{module}"


def _modules_after(
    *argv: str, stdin: str | None = None, cwd: str | None = None, fast: bool = True
) -> set[str]:
    """The modules a `numbermatch ARGV` process has imported when it ends (`fast=False`: through
    typer even where the fast path would run it)."""
    code = (
        "import sys\n"
        f"sys.argv = ['numbermatch', *{list(argv)!r}]\n"
        "from pipeline.cli import main\n"
        f"try:\n    main(fast={fast})\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    )
    return set(proc.stderr.split("\n")[-2].split())


@pytest.mark.parametrize(
    "argv",
    [
        ("show", "123"),
        ("moves", "1.......9/3.5", "--json"),
        ("apply", "19", "0,0-0,1", "--adds", "1"),
        ("solve", "19", "--adds", "1", "--json"),
        ("rate", "19", "--playouts", "1"),
        ("render", "19", "--out", "-"),
        ("--help",),
        ("solve", "--help"),
        ("generate", "--help"),
    ],
)
def test_fast_path_commands_start_without_typer_or_the_heavy_modules(argv: tuple[str, ...]) -> None:
    loaded = _modules_after(*argv)
    assert (
        "pipeline.cli.help_pages" if argv[-1] == "--help" else "pipeline.engine.stage"
    ) in loaded
    heavy = ["typer", "pydantic", "yaml", "jsonschema", "networkx", "pipeline.validator"]
    if argv[0] not in ("solve", "rate"):
        heavy.append("pipeline.solver.search")
    for name in heavy:
        assert name not in loaded


def test_a_typer_command_loads_only_its_own_module() -> None:
    loaded = _modules_after("solve", "19", fast=False)
    assert "pipeline.cli.solve_cmds" in loaded and "typer" in loaded
    for other in (
        "pipeline.cli.generate_cmds",
        "pipeline.cli.assemble_cmds",
        "networkx",
        "jsonschema",
    ):
        assert other not in loaded


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "123456789/98.654321/135"],
        ["moves", "1.......9/3.5"],
        ["moves", "123456789/987654321/135", "--json"],
        ["apply", "19......./5.......5/2", "0,0-0,1", "0,0-0,8", "--json"],
        ["apply", "1.......9/5", "0,0-0,8", "+", "--adds=1"],
        ["apply", "5.......5/2", "0,0-1,8"],
        ["show", "12x"],
        ["moves", "missing.yaml"],
    ],
)
def test_the_fast_path_prints_what_the_typer_command_prints(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.cli import fast

    code = fast.try_run(argv)
    fast_out = capsys.readouterr()
    slow = run(*argv)
    assert code == slow.exit_code
    assert fast_out.out == slow.stdout and fast_out.err == slow.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "--help", "--json"],
        ["apply", "19", "--adds", "-1"],
        ["apply", "19", "--adds", "1", "--adds", "2"],
        ["show", "1", "2"],
        ["moves", "1", "--bogus"],
    ],
)
def test_the_fast_path_leaves_anything_unusual_to_typer(argv: list[str]) -> None:
    from pipeline.cli import fast

    assert fast.try_run(argv) is None


def test_moves_stdin_through_the_fast_path() -> None:
    code = "import sys; sys.argv=['numbermatch','moves','-']; from pipeline.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code], input="1.......9/3.5\n12x\n", capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == '{"board": "1.......9/3.5", "pairs": ["0,0-0,8"]}'
    assert "'x' at column 2" in proc.stdout.splitlines()[1]


def test_pipeline_cli_app_has_every_command() -> None:
    assert cli.load_commands() is app


_SAMPLES = (
    "0",
    "5",
    "16",
    "17",
    "-1",
    "+3",
    "007",
    "x",
    "",
    " 5",
    "1.5",
    "1e3",
    "٣",
    "9" * 30,
    "ramp",
    "RAMP",
    "bogus",
    "text",
    "a/b",
    "-",
    "tests",
    "pyproject.toml",
    "nul\x00byte",
)


def _outcome(runtime: object, value: object, param: object, ctx: object) -> tuple[str, object]:
    try:
        return "value", runtime.coerce(value, param=param, ctx=ctx)  # type: ignore[attr-defined]
    except Exception as exc:
        return type(exc).__name__, getattr(exc, "message", str(exc))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_plain_coercion_gives_what_typers_pydantic_coercion_gives(name: str) -> None:
    """Every parameter of every command, over awkward values: the same value or the same error."""
    from typer import _coercion

    from pipeline.cli.base import click
    from pipeline.cli.coercion import PlainParam

    group = typer.main.get_command(app)
    command = group.commands[name]  # type: ignore[attr-defined]
    ctx = click.Context(command)
    for param in command.params:
        if not hasattr(param, "type_descriptor"):
            continue
        plain = PlainParam(param.type_descriptor, _coercion.build_runtime_param)
        reference = _coercion.build_runtime_param(param.type_descriptor)
        multi = param.multiple or param.nargs == -1
        values: list[object] = [None, param.default]
        values += [(v,) if multi else v for v in _SAMPLES]
        values += [("1", "2"), ["tests", "x"]] if multi else []
        for value in values:
            assert _outcome(plain, value, param, ctx) == _outcome(reference, value, param, ctx), (
                name,
                param.name,
                value,
            )


@pytest.mark.parametrize(
    "argv", [("--help",), ("solve", "--help"), ("solve", "19", "--adds", "1"), ("rate", "--help")]
)
def test_typer_commands_start_without_pydantic_or_rich(argv: tuple[str, ...]) -> None:
    loaded = _modules_after(*argv, fast=False)
    assert "typer" in loaded
    for heavy in ("pydantic", "pydantic_core", "rich"):
        assert heavy not in loaded, f"numbermatch {' '.join(argv)} imports {heavy}"


def test_a_bad_value_still_gets_typers_message() -> None:
    result = run(*["solve", "19", "--adds", "17"])
    assert result.exit_code == 2
    assert "Invalid value for '--adds': Input should be less than or equal to 16" in result.stderr


# What the work of a heavier command needs, never its help nor the light commands: the
# graph library (the assembler), the JSON Schema engines (only a file the fast check rejects; the
# fast check is generated ahead), the
# YAML parser (only files), pydantic and rich (typer's, replaced), the jobs and the validator.
_HEAVY = ("networkx", "jsonschema", "referencing", "pydantic", "rich", "fastjsonschema")
_WORK = (
    "yaml",
    "pipeline.jobs",
    "pipeline.validator",
    "pipeline.generation.generator",
    "pipeline.solver.search",
    "pipeline.rating.players",
)


def _heavy(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted({m for m in loaded for n in names if m == n or m.startswith(n + ".")})


@pytest.mark.parametrize("argv", [("--help",)] + [(name, "--help") for name in sorted(COMMANDS)])
def test_help_loads_no_heavy_module(argv: tuple[str, ...]) -> None:
    loaded = _modules_after(*argv, fast=False)  # typer's help (the fast path's is a page)
    assert _heavy(loaded, _HEAVY + _WORK) == []


def test_light_commands_load_only_what_their_work_needs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil
    from pathlib import Path

    committed = sorted(
        (Path(__file__).resolve().parent.parent / "generated").glob("**/nm*-*.yaml")
    )[0]
    puzzle = Path(shutil.copy(committed, tmp_path / "puzzle.yaml"))
    runs = {
        "solve": (("solve", "19"), None),
        "rate": (("rate", "19", "--playouts", "1"), None),
        "play": (("play", "19"), "q\n"),
        "render": (("render", "19", "--out", "-"), None),
        "validate": (("validate", str(puzzle)), None),
        "generate": (
            (
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
                str(tmp_path / "out"),
            ),
            None,
        ),
    }
    for name, (argv, stdin) in runs.items():
        for fast in (True, False):
            loaded = _modules_after(*argv, stdin=stdin, cwd=str(tmp_path), fast=fast)
            typer_free = fast and name in (
                "solve",
                "rate",
                "validate",
                "render",
                "play",
                "generate",
            )
            assert (
                ("pipeline.cli.generate_run" if name == "generate" else "pipeline.cli.runs")
                if typer_free
                else f"pipeline.cli.{COMMANDS[name]}"
            ) in loaded
            assert ("typer" in loaded) is not typer_free, name
            assert _heavy(loaded, _HEAVY) == [], name
    assert (
        _heavy(
            _modules_after("solve", "19"),
            ("yaml", "pipeline.jobs", "pipeline.validator", "pipeline.rating.players"),
        )
        == []
    )


# What `--help` (every command module loaded) must not define: the curves' and the index's value
# classes, the proposal strategies, the executors (ctypes, signals) — the command's work loads them.
_NOT_FOR_HELP = (
    "pipeline.formats.curves",
    "pipeline.formats.index",
    "pipeline.generation.strategies",
    "pipeline.generation.executors",
    "pipeline.procs",
    "ctypes",
    "sqlite3",
)


@pytest.mark.parametrize("argv", [("--help",), ("assemble", "--help"), ("stock", "--help")])
def test_help_defines_no_curve_strategy_or_executor(argv: tuple[str, ...]) -> None:
    assert _heavy(_modules_after(*argv, fast=False), _NOT_FOR_HELP) == []


def test_validating_one_file_opens_no_index(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil
    from pathlib import Path

    committed = sorted(
        (Path(__file__).resolve().parent.parent / "generated").glob("**/nm*-*.yaml")
    )[0]
    puzzle = Path(shutil.copy(committed, tmp_path / "puzzle.yaml"))
    loaded = _modules_after("validate", str(puzzle), cwd=str(tmp_path))
    assert "pipeline.validator" in loaded
    assert _heavy(loaded, ("sqlite3", "pipeline.formats.index", "pipeline.formats.curves")) == []


def test_the_strategy_names_help_shows_are_the_strategies() -> None:
    from pipeline.generation import STRATEGY_NAMES
    from pipeline.generation.strategies import STRATEGIES

    assert STRATEGY_NAMES == STRATEGIES
