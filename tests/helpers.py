"""Helpers several test modules share (fixtures live in conftest.py)."""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Collection, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT, Ruleset

_RUNNER = CliRunner()


def run(
    *args: str | os.PathLike[str],
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    **extra: Any,
) -> Result:
    """`numbermatch ARGS...` in-process: the one way the tests run a command (the `cli` fixture
    is this function). A command never ends in a traceback: an exception other than the exit
    fails the test here, naming it."""
    from pipeline.cli import app  # the command line loads when a test first runs a command

    result = _RUNNER.invoke(app, [os.fspath(a) for a in args], input=input, env=env, **extra)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    return result


@cache
def unpruned_win(cells: bytes, adds: int, ruleset: Ruleset = DEFAULT) -> bool:
    """Unpruned exhaustive search through the ruleset's public functions: every pair, and an
    add at any time. The yardstick every pruned search is checked against."""
    if not cells:
        return True
    if any(
        unpruned_win(ruleset.remove_pair(cells, i, j), adds, ruleset)
        for i, j in ruleset.legal_pairs(cells)
    ):
        return True
    return adds > 0 and unpruned_win(ruleset.add_numbers(cells), adds - 1, ruleset)


def click_cell(page: Any, i: int) -> None:
    """Click a cell of the studio's stage page (a Playwright page) and wait for the next page."""
    with page.expect_navigation():
        page.locator(f'button.cell[data-i="{i}"]').click()


def play(page: Any, move: Move) -> None:
    """Play one move on the studio's stage page: two cell clicks, or Add numbers."""
    if move.is_add:
        with page.expect_navigation():
            page.locator("#add").click()
    else:
        assert move.first is not None and move.second is not None
        click_cell(page, move.first)
        click_cell(page, move.second)


def codes(text: str, name: str = "x.yaml") -> list[str]:
    """The problem codes the validator gives a document's text."""
    from pipeline.validator import validate_texts

    return [p.code for p in validate_texts([(name, text)]).problems]


def one_line_error(result: Result) -> str:
    """The one `numbermatch: error:` line of a command's output (fails unless there is exactly one)."""
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("numbermatch: error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def one_line_refusal(result: Result, text: str) -> None:
    """The command failed (exit 1) and its whole output is one `numbermatch: error:` line holding
    `text`: what every refused write or hostile name must look like."""
    assert result.exit_code == 1, result.output
    assert result.output.startswith("numbermatch: error: ") and result.output.count("\n") == 1, (
        result.output
    )
    assert text in result.output, result.output
    assert "Traceback" not in result.output


def numbermatch_argv() -> list[str]:
    """The argv of `numbermatch` as a shell runs it (the installed script, else `python -m
    pipeline.cli`): for tests that need a real process (pipes, signals, terminals)."""
    exe = Path(sys.executable).with_name("numbermatch")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "pipeline.cli"]


def sigint_as_at_a_terminal() -> None:
    """A `preexec_fn` for a child a test interrupts with SIGINT: the default disposition, as
    at a terminal. A shell starts background jobs with SIGINT ignored (`make test &`, nohup), an
    exec'd child inherits that, and Python then never raises KeyboardInterrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def edited(text: str, old: str, new: str) -> str:
    """`text` with the first `old` replaced by `new` (which must be there): a mutant document."""
    assert old in text
    return text.replace(old, new, 1)


def key_reads(source: str, keys: Collection[str]) -> list[tuple[int, str]]:
    """(line, text) of every read of one of `keys` in Python `source`: `x["k"]`, `x.get("k")`
    (or pop/setdefault). Writing a key (`x["k"] = v`) is not reading it. The scans that keep
    one accessor per document part (test_difficulty, test_bundle) use it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        key = None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.slice, ast.Constant)
        ):
            key = node.slice.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            key = node.args[0].value
        if key in keys:
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)
