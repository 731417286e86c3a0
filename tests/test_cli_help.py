"""What `--help` says: true to the rating version, the nightly's output, no nested brackets,
paragraphs wrapped as paragraphs, real type names, the choices (never cut mid-word), the real
limits, an example at the end. (What loading help costs is tests/test_cli_startup.py.)"""

from __future__ import annotations

import itertools
import re

import pytest
import typer.main

from pipeline.cli import COMMANDS, app
from pipeline.cli.help_text import EXAMPLES
from pipeline.limits import MAX_ADDS
from tests.helpers import run


def help_text(name: str, width: int = 80) -> str:
    result = run(*[name, "--help"], env={"COLUMNS": str(width)}, terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_rate_help_does_not_promise_traps() -> None:
    """Rating version 3 has no trap metrics."""
    flat = " ".join(help_text("rate").split())
    assert "trap" not in flat.lower()
    assert "win rates" in flat and "score 0-100" in flat


def test_nightly_help_names_everything_a_night_holds() -> None:
    flat = " ".join(help_text("nightly").split())
    for part in (
        "bundle.yaml",
        "report.md",
        "report.html",
        "run.log",
        ".stock-taken.json",
        "OUT/stock/",
        "pool/",
    ):
        assert part in flat, part


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_brackets_inside_brackets(name: str) -> None:
    flat = " ".join(help_text(name).split())
    depth = 0
    for i, ch in enumerate(flat):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        assert depth <= 1, f"{name} --help nests brackets: ...{flat[max(0, i - 50) : i + 30]}..."


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_description_paragraphs_are_not_broken_mid_line(name: str) -> None:
    """Every line of a paragraph but its last runs to near the width (a docstring's own line
    breaks are not kept)."""
    lines = [line.rstrip() for line in help_text(name).splitlines()]
    first = next(i for i, line in enumerate(lines) if line.strip().startswith("Usage:")) + 1
    description: list[str] = []
    for line in lines[first:]:
        if line.strip().startswith(("Arguments", "Options", "╭")):
            break
        description.append(line)
    for paragraph in "\n".join(description).strip("\n").split("\n\n"):
        rows = paragraph.splitlines()
        for line, after in itertools.pairwise(rows):
            room = 80 - len(line) - 1
            assert room < len(after.split()[0]), (
                f"{name} --help breaks a line early: {line!r} / {after!r}"
            )


@pytest.mark.parametrize("name", ["assemble", "nightly"])
def test_curve_choices_are_not_cut_mid_word(name: str) -> None:
    text = help_text(name)
    assert "ramp|sawtooth|flat|campaign|FILE[:NAME]" in text
    assert not re.search(r"campaig(?!n)", text)


def test_every_adds_option_shows_the_limit() -> None:
    group = typer.main.get_command(app)
    with_adds = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            if "--adds" in getattr(param, "opts", ()) and name != "generate":
                # generate: the generator's own cap
                with_adds.append(name)
                assert (param.min, param.max) == (0, MAX_ADDS), name
    assert {"play", "puzzle", "render", "solve", "rate", "apply"} <= set(with_adds)
    assert f"[0<=x<={MAX_ADDS}]" in " ".join(help_text("play").split())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_shows_real_types_and_ends_with_an_example(name: str) -> None:
    result = run(*[name, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert result.exit_code == 0
    text = result.stdout
    for python_ish in ("<bool>", "<int>", "<str>", "<path>", "list[", "{"):
        assert python_ish not in text.split("Example:")[0], f"{name} --help shows {python_ish}"
    assert text.rstrip().splitlines()[-1].strip() == f"Example: {EXAMPLES[name]}"


@pytest.mark.parametrize(
    ("name", "choices"),
    [
        ("generate", "easy|medium|hard|expert"),
        ("generate", "random|constructive"),
        ("assemble", "ramp|"),
        ("nightly", "ramp|"),
        ("validate", "text|json|github"),
    ],
)
def test_help_lists_the_choices(name: str, choices: str) -> None:
    result = run(*[name, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert choices in result.stdout


def test_dash_capital_v_is_the_version_and_the_shells_complete_commands_and_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--show-completion` is for the shell typer detects from the process tree (under make that
    is make's /bin/sh), so the test names the shell it detects."""
    import os
    import subprocess

    from tests.helpers import numbermatch_argv

    assert run("-V").stdout == run("--version").stdout != ""
    helped = run("--help").stdout
    assert "-V, --version" in helped and "--install-completion" in helped
    monkeypatch.setattr("typer.completion._get_shell_name", lambda: "bash")
    script = run("--show-completion")
    assert script.exit_code == 0 and "_NUMBERMATCH_COMPLETE" in script.stdout, script.output

    def complete(*words: str) -> list[str]:
        env = dict(os.environ)
        env.update(
            _NUMBERMATCH_COMPLETE="complete_bash",
            COMP_WORDS=" ".join(("numbermatch", *words)),
            COMP_CWORD=str(len(words)),
        )
        done = subprocess.run(numbermatch_argv(), env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("so") == ["solve"]
    assert "--adds" in complete("solve", "--ad")
