"""The `numbermatch` command line: thin typer commands over the library.

Each group of commands lives in its own module and registers itself on `app`.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="numbermatch",
    help="Number Match content pipeline: rules engine, solver, rating, generator, validator, assembler.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

from . import engine_cmds, solve_cmds, rate_cmds, generate_cmds, validate_cmds, assemble_cmds  # noqa: E402,F401


def main() -> None:
    """Console-script entry point."""
    app()
