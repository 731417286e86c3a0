"""`studio`: serve a folder of level files to the browser on 127.0.0.1 (see pipeline.studio)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import typer

from pipeline.cli import app
from pipeline.cli.common import fail

DEFAULT_PORT = 8765
HOST = "127.0.0.1"  # never another interface: the studio reads and writes your files


@app.command("studio")
def studio(
    path: Path = typer.Argument(Path("generated"), help="Folder of nights, bundles and puzzle files to serve.", metavar="PATH"),
    port: int = typer.Option(DEFAULT_PORT, "--port", "-p", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port)."),
) -> None:
    """Review, play and curate the Levels under PATH in the browser; Ctrl-C stops it.

    Example: numbermatch studio generated/ --port 8765
    """
    try:
        import uvicorn

        from pipeline.studio.app import create_app
    except ImportError as exc:
        fail(f"the studio needs its web packages ({exc.name} is missing): pip install 'numbermatch[studio]'")
    if not path.is_dir():
        fail(f"{path}: no such folder")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        fail(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}; pick another with --port")
    address = f"http://{HOST}:{sock.getsockname()[1]}/"
    typer.echo(f"numbermatch studio: serving {path} at {address} (Ctrl-C stops)")
    sys.stdout.flush()
    server = uvicorn.Server(uvicorn.Config(create_app(path), log_level="warning", lifespan="off"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    typer.echo("numbermatch studio: stopped")
