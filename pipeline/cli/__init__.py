"""The `numbermatch` command line: thin typer commands over the library.

Each group of commands lives in its own module and registers itself on `app`
(`pipeline.cli.base`). Start-up time matters for the engine commands people and scripts run
one at a time, so `main()` imports only the module of the command asked for (`COMMANDS`);
`--help`, an unknown name and `pipeline.cli.app` (what tests use) load every module. The
commands scripts run most (`moves`, `apply`, `show`, `solve`, `rate`, `validate`, `render`, `play`) with plain
arguments, and `--help` / `COMMAND --help` on a terminal of 80 columns or more or none, skip typer
altogether (`pipeline.cli.fast`).
"""

from __future__ import annotations

import importlib
import os
import sys

from pipeline.cli.startup import TYPE_CHECKING
from pipeline.errors import Terminated, os_error_line

if TYPE_CHECKING:
    from typing import Any, NoReturn

# command name -> the module under pipeline.cli that defines it (a test checks it is complete)
COMMANDS: dict[str, str] = {
    "moves": "engine_cmds",
    "apply": "engine_cmds",
    "show": "engine_cmds",
    "solve": "solve_cmds",
    "rate": "rate_cmds",
    "generate": "generate_cmds",
    "validate": "validate_cmds",
    "assemble": "assemble_cmds",
    "nightly": "nightly_cmds",
    "play": "play_cmds",
    "puzzle": "designer_cmds",
    "swap": "designer_cmds",
    "render": "designer_cmds",
    "report": "designer_cmds",
    "studio": "studio_cmds",
    "telemetry": "telemetry_cmds",
    "observed": "telemetry_cmds",
    "calibrate": "telemetry_cmds",
    "rescore": "telemetry_cmds",
    "stock": "stock_cmds",
    "conformance": "conformance_cmds",
}
MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))
# run by `pipeline.cli.fast` without typer when they can be (and `--help` / `COMMAND --help`)
_FAST = frozenset(
    {"moves", "apply", "show", "solve", "rate", "validate", "render", "play", "generate"}
)


def load_commands(modules: tuple[str, ...] = MODULES) -> Any:
    """Import command modules (each registers its commands once) and return the typer app."""
    # start-up time: typer loads for a typer command, not on the fast path
    from pipeline.cli import help_text
    from pipeline.cli.base import app

    for name in modules:
        importlib.import_module(f"pipeline.cli.{name}")
    help_text.polish()
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return load_commands()
    raise AttributeError(f"module 'pipeline.cli' has no attribute {name!r}")


def main(fast: bool = True) -> None:
    """Console-script entry point (see `_main`). A reader that goes away (`numbermatch show B |
    head -1`) ends the command quietly with 141, as a shell reports a command killed by SIGPIPE.
    `fast=False` always goes through typer (what the fast path is checked against)."""
    try:
        try:
            _main(fast)
        finally:
            sys.stdout.flush()  # inside the try: a closed pipe shows up here at the latest
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        raise SystemExit(141) from None
    except OSError as exc:  # the fast path's files (typer's commands have their own line in base)
        from pipeline.cli.runs import echo  # start-up time: only on an error; as typer.echo writes

        echo(f"numbermatch: error: {os_error_line(exc)}", err=True)
        raise SystemExit(1) from None


def _main(fast: bool = True) -> None:
    """Load just the asked command's module when it is known."""
    args = sys.argv[1:]
    first = args[0] if args else None
    if fast and first is not None and (first in _FAST or args[-1] == "--help"):
        from pipeline.cli import fast as plain  # start-up time: the path without typer

        try:
            code = plain.try_run(args)
        except (KeyboardInterrupt, Terminated):
            _interrupted()
        if code is not None:
            sys.stdout.flush()
            raise SystemExit(code)
    module = COMMANDS.get(first) if first is not None else None
    if module is not None:
        app = load_commands((module,))
    elif first in ("--version", "-V"):
        app = load_commands(())
    else:
        app = load_commands()
    try:
        app()
    except (KeyboardInterrupt, Terminated):
        _interrupted()


def _interrupted() -> NoReturn:
    """An interrupt no command handled: one line and 130, never a traceback."""
    sys.stderr.write("numbermatch: interrupted\n")
    raise SystemExit(130) from None
