"""`studio`: serve a folder of level files to the browser on 127.0.0.1 (see pipeline.studio)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from pipeline.cli.base import app
from pipeline.cli.common import fail

DEFAULT_PORT = 8765


@app.command("studio")
def studio(
    path: Path = typer.Argument(Path("generated"), help="Folder of nights, bundles and puzzle files to serve.", metavar="PATH"),
    port: int = typer.Option(DEFAULT_PORT, "--port", "-p", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port)."),
) -> None:
    """Review, play and curate the Levels under PATH in the browser; Ctrl-C stops it."""
    try:
        from pipeline.studio.server import HOST, address, listen, uvicorn_server
    except ImportError as exc:  # pragma: no cover - the studio extra is part of the test extra
        fail(f"the studio needs its web packages ({exc.name} is missing): pip install 'numbermatch[studio]'")
    if not path.is_dir():
        fail(f"{path}: no such folder")
    try:
        server = uvicorn_server(path)
    except ImportError as exc:
        fail(f"the studio needs its web packages ({exc.name} is missing): pip install 'numbermatch[studio]'")
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
