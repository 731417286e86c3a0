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



def _version(value: bool) -> None:
    if value:
        from pipeline import __version__
        from pipeline.engine.rulesets import SHIPPED

        typer.echo(f"numbermatch {__version__} (rulesets: {', '.join(map(str, sorted(SHIPPED)))})")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Number Match content pipeline: rules engine, solver, rating, generator, validator, assembler."""


from pipeline.cli import engine_cmds, solve_cmds, rate_cmds, generate_cmds, validate_cmds, assemble_cmds, nightly_cmds  # noqa: E402,F401
from pipeline.cli import play_cmds, designer_cmds  # noqa: E402,F401


def main() -> None:
    """Console-script entry point."""
    app()
