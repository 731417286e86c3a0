"""The typer `app` every command module registers on, and its root options.

It lives apart from `pipeline.cli` so a command module can be imported alone: `numbermatch
show` loads the engine's commands only, not the validator, generator or assembler.
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
