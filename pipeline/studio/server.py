"""Serving the studio: a listening socket on 127.0.0.1 only, and uvicorn on it.

The socket is made here (not by uvicorn) so the CLI can print the real address for `--port 0`
and report a busy port in one line. TCP_NODELAY matters: uvicorn writes a response's headers
and body separately, and without it Nagle's algorithm holds the body until the browser's
delayed ACK on every page (bench_studio.py measures the difference).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"  # never another interface: the studio reads and writes your files


def listen(port: int) -> socket.socket:
    """A TCP socket bound to 127.0.0.1:port (0: any free port); raises OSError."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # accepted sockets inherit it
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    return sock


def address(sock: socket.socket) -> str:
    return f"http://{HOST}:{sock.getsockname()[1]}"


def uvicorn_server(root: str | Path) -> Any:
    import uvicorn

    from pipeline.studio.app import create_app

    return uvicorn.Server(uvicorn.Config(create_app(root), log_level="warning", lifespan="off"))


class Background:
    """The studio over `root` in a thread of this process, for tests and benchmarks:
    `with Background(root) as s: ... s.url ...`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.sock = listen(0)
        self.url = address(self.sock)
        self.server = uvicorn_server(root)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "Background":
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the studio did not start within 10 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
