"""The typer `app` every command module registers on, and its root options.

It lives apart from `pipeline.cli` so a command module can be imported alone: `numbermatch
show` loads the engine's commands only, not the validator, generator or assembler.
"""

from __future__ import annotations

import itertools
import re
import sys
from typing import Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x carries its own copy of click; older ones use click itself
    from typer import _click as click
except ImportError:  # pragma: no cover - depends on the typer version
    import click  # type: ignore[no-redef]

from pipeline import __version__
from pipeline.cli import coercion
from pipeline.cli.runs import one_line
from pipeline.engine import backend
from pipeline.engine.rulesets import SHIPPED
from pipeline.errors import NumberMatchError, os_error_line, shorten

coercion.install()

# A signed whole number written with digits other than ASCII 0-9 (int() and click read ٣ as 3).
_FOREIGN_NUMBER = re.compile(r"(?:--[\w-]+=)?[+-]?\d+(?:\.\d*)?")


_STAGE = re.compile(r"[Ll]?[0-9]+\.[Ss]?[0-9]+", re.ASCII)


def _stage_hint(argv: list[str], message: str) -> str:
    """`rate BUNDLE L3.S2`: a Stage given as its own argument after a level file is one SOURCE
    written with a colon; say so (typer only says the argument is extra)."""
    if "unexpected extra argument" not in message:
        return ""
    for before, arg in itertools.pairwise(argv):
        if (
            _STAGE.fullmatch(arg)
            and before.lower().endswith((".yaml", ".yml"))
            and before.isprintable()
            and len(before) <= 200
        ):
            return f"; a bundle's Stage is one argument, written after a colon: {before}:{arg}"
    return ""


class _OneLineErrors(TyperGroup):
    """Usage errors as one line (`numbermatch: error: solve: ...`), like every other error, and
    numbers in options and arguments in ASCII digits only."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        prog_name = prog_name or "numbermatch"
        try:
            for arg in argv:
                if not arg.isascii() and _FOREIGN_NUMBER.fullmatch(arg):
                    raise click.exceptions.UsageError(
                        f"{shorten(arg)}: write numbers with the ASCII digits 0-9"
                    )
            rv = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":
                # `numbermatch` alone: the help, as before
                typer.echo(exc.format_message(), err=True)
                sys.exit(exc.exit_code)
            ctx = getattr(exc, "ctx", None)
            where = ctx.command_path if ctx is not None else "numbermatch"
            message = exc.format_message().replace("\n", " ")
            message = message if len(message) <= 300 else message[:280] + "... (cut)"
            message += _stage_hint(argv, message)
            typer.echo(f"numbermatch: error: {message} (see `{where} --help`)", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("numbermatch: error: aborted", err=True)
            sys.exit(1)
        except OSError as exc:
            # a file the command could not open or write (a name over 255 bytes, a mode)
            typer.echo(f"numbermatch: error: {os_error_line(exc)}", err=True)
            sys.exit(1)
        except NumberMatchError as exc:
            # a refusal no command turned into its own line: still one line
            typer.echo(one_line(exc), err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    cls=_OneLineErrors,
    name="numbermatch",
    help="Number Match content pipeline: rules engine, solver, rating, generator, validator, assembler.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion/--show-completion: typer loads its completion module anyway
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: loading rich (and markdown-it) for it tripled `--help`'s start-up
)


def _version(value: bool) -> None:
    if value:
        typer.echo(
            f"numbermatch {__version__} (rulesets: {', '.join(map(str, sorted(SHIPPED)))};"
            f" {backend.describe()})"
        )
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        callback=_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Number Match content pipeline: rules engine, solver, rating, generator, validator, assembler."""
