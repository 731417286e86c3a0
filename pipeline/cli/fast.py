"""The start-up fast path: `moves`, `apply` and `show` run without importing typer.

Typer (which now coerces every parameter through pydantic) costs several times Python's own
start-up, and these are the commands scripts call once per board. When the arguments are plain
(positionals, `--json`, `--adds N`, `--in PATH`), `try_run` runs the same code the typer
commands run (`engine_run`); anything else (`--help`, an unknown or repeated option, a bad
number) returns None and typer handles it, with its usage messages.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.cli import engine_run
from pipeline.errors import NumberMatchError

# command -> (flags, options taking a value, min positionals, max positionals or None)
_SHAPES: dict[str, tuple[frozenset[str], frozenset[str], int, int | None]] = {
    "moves": (frozenset({"--json"}), frozenset({"--in"}), 1, 1),
    "apply": (frozenset({"--json"}), frozenset({"--adds", "--in"}), 1, None),
    "show": (frozenset(), frozenset({"--in"}), 1, 1),
}
COMMANDS = frozenset(_SHAPES)


def _parse(
    command: str, args: Sequence[str]
) -> tuple[list[str], set[str], dict[str, list[str]]] | None:
    flags, valued, low, high = _SHAPES[command]
    positional: list[str] = []
    seen: set[str] = set()
    values: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in flags and not eq and name not in seen:
                seen.add(name)
            elif name in valued:
                if not eq:
                    i += 1
                    if i >= len(args):
                        return None
                    value = args[i]
                if name != "--in" and name in values:
                    return None  # a repeated single option: leave it to typer
                values.setdefault(name, []).append(value)
            else:
                return None
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            positional.append(arg)
        i += 1
    if len(positional) < low or (high is not None and len(positional) > high):
        return None
    return positional, seen, values


def try_run(argv: Sequence[str]) -> int | None:
    """Run `numbermatch COMMAND ...` for a fast-path command with plain arguments and return
    its exit code; None when typer should handle the command line instead."""
    if not argv or argv[0] not in _SHAPES:
        return None
    command = argv[0]
    parsed = _parse(command, argv[1:])
    if parsed is None:
        return None
    positional, flags, values = parsed
    adds: int | None = None
    if "--adds" in values:
        text = values["--adds"][0]
        if not (text.isascii() and text.isdigit()) or len(text) > 6:
            return None  # typer says what is wrong with it (int() would read '٣' as 3)
        adds = int(text)
    search = [Path(p) for p in values.get("--in", [])] or None

    try:
        if command == "moves":
            return engine_run.moves(positional[0], "--json" in flags, search)
        if command == "apply":
            return engine_run.apply(positional[0], positional[1:], adds, "--json" in flags, search)
        return engine_run.show(positional[0], search)
    except NumberMatchError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"numbermatch: error: {exc}\n")
        return 1
