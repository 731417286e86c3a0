"""`studio`: serve a folder of level files to the browser on 127.0.0.1 (see pipeline.studio)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from pipeline.cli.base import app
from pipeline.cli.common import fail, read_profile_option
from pipeline.errors import NumberMatchError, printable

DEFAULT_PORT = 8765


@app.command("studio")
def studio(
    path: Path = typer.Argument(
        Path("generated"),
        help="Folder of nights, bundles and puzzle files to serve.",
        metavar="PATH",
    ),
    port: int = typer.Option(
        DEFAULT_PORT, "--port", "-p", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port)."
    ),
    telemetry: list[Path] | None = typer.Option(
        None,
        "--telemetry",
        metavar="FILE",
        help="Play telemetry (.jsonl, .csv, .parquet; repeatable): stage cards show what the players did.",
    ),
    profile_file: Path | None = typer.Option(
        None,
        "--profile",
        metavar="FILE",
        help="A rating profile: cards also show the score and tier for that audience.",
    ),
) -> None:
    """Review, play and curate the Levels under PATH in the browser; Ctrl-C stops it."""
    try:
        from pipeline.studio.server import (  # start-up time: an optional extra; not for --help
            HOST,
            address,
            listen,
            uvicorn_server,
        )
    except ImportError as exc:  # pragma: no cover - the studio extra is part of the test extra
        fail(
            f"the studio needs its web packages ({exc.name} is missing): pip install 'numbermatch[studio]'"
        )
    if not path.is_dir():
        if path == Path("generated"):  # the default: `numbermatch studio` outside a checkout
            fail(
                "generated: no such folder here (it is the default PATH, the nights' folder of a"
                " checkout); run `numbermatch studio PATH` with a folder of level files"
            )
        fail(f"{path}: no such folder")
    profile = read_profile_option(profile_file)
    observed = _observed(path, telemetry, profile) if telemetry else None
    try:
        server = uvicorn_server(path, observed=observed, profile=profile)
    except ImportError as exc:
        fail(
            f"the studio needs its web packages ({exc.name} is missing): pip install 'numbermatch[studio]'"
        )
    try:
        sock = listen(port)
    except OSError as exc:
        fail(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}; pick another with --port")
    typer.echo(f"numbermatch studio: serving {path} at {address(sock)}/ (Ctrl-C stops)")
    sys.stdout.flush()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    typer.echo("numbermatch studio: stopped")


def _observed(path: Path, files: list[Path], profile: Any) -> Any:
    """Per puzzle id under PATH, the telemetry's figures (`pipeline.telemetry.observed.stage_figures`)."""
    # start-up time: DuckDB loads only with --telemetry
    from pipeline.telemetry.catalogue import load_catalogue
    from pipeline.telemetry.observed import observe, stage_figures
    from pipeline.telemetry.records import read_telemetry

    try:
        catalogue = load_catalogue([path])
        data = read_telemetry(files, catalogue)
        for bad in data.bad:
            typer.echo(f"numbermatch: skipped {printable(str(bad))}", err=True)
        return stage_figures(observe(catalogue, data, profile))
    except NumberMatchError as exc:
        fail(f"--telemetry: {exc}")
