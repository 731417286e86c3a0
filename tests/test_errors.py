"""Errors as the library raises them: they keep their cause, name no command-line flag (the CLI
adds its own), and a failed validation is stated one way."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.errors import NumberMatchError
from pipeline.problems import Problem, ValidationReport, first_problem

ROOT = Path(__file__).resolve().parent.parent
# The layers below the front ends; their messages are read by the CLI, the studio and scripts.
LIBRARY = ("jobs", "formats", "validator", "rating", "solver", "engine")
# Known exceptions, each with its reason.
ALLOWED = {
    # a puzzle id looked up without --in: the message says how (tests/test_source.py pins it)
    ("pipeline/formats/source.py", "--in"),
}
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def _raised_texts(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the string constants inside each `raise` statement."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for part in ast.walk(node.exc):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    out.append((node.lineno, part.value))
    return out


def test_library_messages_name_no_command_line_flag() -> None:
    found = []
    for layer in LIBRARY:
        for path in sorted((ROOT / "pipeline" / layer).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            found += [
                f"{rel}:{line}: {text!r}"
                for line, text in _raised_texts(path)
                if (m := FLAG.search(text)) and (rel, m.group()) not in ALLOWED
            ]
    assert found == [], (
        "say what to change and set `remedy`; the CLI names its flag:\n  " + "\n  ".join(found)
    )


def test_an_error_carries_a_remedy_the_cli_phrases() -> None:
    from pipeline.cli.common import error_text

    exc = NumberMatchError("the pool has no unused hard puzzle for L1.S2", remedy="with")
    assert exc.remedy == "with" and str(exc) == "the pool has no unused hard puzzle for L1.S2"
    assert error_text(exc) == "the pool has no unused hard puzzle for L1.S2 (--with ID)"
    assert error_text(NumberMatchError("plain")) == "plain"


def test_swap_says_how_to_take_another_puzzle_in_the_cli_only(
    night_copy: Path, cli: Callable[..., Any]
) -> None:

    from pipeline.formats.puzzle import Puzzle
    from pipeline.formats.source import read_document
    from pipeline.jobs.swap import SwapError, swap_stage

    bundle = night_copy / "2026-01-02" / "bundle.yaml"
    first = read_document(bundle)["levels"][0]["stages"][0]["puzzle"]
    others = [
        f
        for f in sorted((bundle.parent / "pool").glob("*.yaml"))
        if Puzzle.from_dict(read_document(f)).tier != Puzzle.from_dict(first).tier
    ]
    assert others, "the night's pool has puzzles of other tiers than its first Stage's"
    pool = [Puzzle.from_dict(read_document(f)) for f in others]
    with pytest.raises(SwapError) as caught:  # no puzzle of the Stage's tier to take
        swap_stage(bundle, 1, 1, pool=pool, write=False)
    assert "--with" not in str(caught.value) and caught.value.remedy == "with"
    result = cli("swap", bundle, "L1.S1", *(a for f in others for a in ("--pool", str(f))))
    assert result.exit_code == 1 and result.output.rstrip().endswith("(--with ID)")


def test_the_first_problem_of_a_validation_is_stated_one_way() -> None:
    one = Problem("b.yaml", 12, 3, "NM301", "bad board", "$.levels[0].stages[1].puzzle.board")
    two = Problem("b.yaml", 14, 3, "NM303", "bad id", "$.levels[0].stages[1].puzzle.id")
    assert (
        first_problem([one]) == "b.yaml:12:3: NM301: bad board [$.levels[0].stages[1].puzzle.board]"
    )
    assert first_problem([one, two]) == first_problem([one]) + " (and 1 more)"
    assert ValidationReport([one, two]).first_problem() == first_problem([one, two])
    assert (
        first_problem([Problem("c.yaml", None, None, "NM101", "not YAML", "$")])
        == "c.yaml: NM101: not YAML"
    )
    from pipeline.validator.reporters import text_line

    assert text_line(one) == str(one)  # `validate`'s own text lines


def test_by_hand_formatting_of_a_first_problem_is_gone() -> None:
    """Nobody formats `problems[0]` by hand: they call first_problem."""
    offenders = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if (
                re.search(r"problems\[0\]", line)
                and path.name != "problems.py"
                and "bench" not in path.parts
                # the stock's prune listing names the code first (tests/test_stock.py pins it)
                and path.relative_to(ROOT).as_posix() != "pipeline/stock/store.py"
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == [], "\n".join(offenders)


def test_errors_keep_their_cause() -> None:
    """`raise X(f"...{exc}") from None` drops the traceback a maintainer needs: `from exc`."""
    offenders = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Raise)
                and isinstance(node.cause, ast.Constant)
                and node.cause.value is None
            ):
                names = (
                    {n.id for n in ast.walk(node.exc) if isinstance(n, ast.Name)}
                    if node.exc
                    else set()
                )
                if "exc" in names:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [], "re-raised without the cause: " + ", ".join(offenders)
