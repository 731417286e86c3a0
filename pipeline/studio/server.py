"""Serving the studio: a listening socket on 127.0.0.1 only, and uvicorn on it.

The socket is made here (not by uvicorn) so the CLI can print the real address for `--port 0`
and report a busy port in one line. TCP_NODELAY matters: uvicorn writes a response's headers
and body separately, and without it Nagle's algorithm holds the body until the browser's
delayed ACK on every page (bench_studio.py measures the difference).

Slow clients: uvicorn closes an idle kept-alive connection after `timeout_keep_alive`, but it
waits for a request's headers forever, so a few thousand connections that never finish them
would hold the studio's sockets. `SlowClientProtocol` closes a connection whose request (headers
and body) is not complete within HEADER_TIMEOUT_S of its first byte or of the connection.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from pipeline.limits import HEADER_TIMEOUT_S, KEEPALIVE_TIMEOUT_S
from pipeline.studio.app import create_app

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


def slow_client_protocol(header_timeout: float) -> type:
    """uvicorn's h11 protocol, closing a connection whose request takes over `header_timeout` s."""

    class SlowClientProtocol(H11Protocol):
        _request_timer: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):  # a request still coming in
                self._arm()
            else:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._request_timer is None:
                self._request_timer = self.loop.call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._request_timer is not None:
                self._request_timer.cancel()
                self._request_timer = None

        def _too_slow(self) -> None:
            self._request_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return SlowClientProtocol


def uvicorn_server(
    root: str | Path,
    *,
    header_timeout: float = HEADER_TIMEOUT_S,
    keep_alive: int = KEEPALIVE_TIMEOUT_S,
    observed: Any = None,
    profile: Any = None,
) -> Any:
    config = uvicorn.Config(
        create_app(root, observed=observed, profile=profile),
        log_level="warning",
        lifespan="off",
        http=slow_client_protocol(header_timeout),
        timeout_keep_alive=keep_alive,
    )
    return uvicorn.Server(config)


class Background:
    """The studio over `root` in a thread of this process, for tests and benchmarks:
    `with Background(root) as s: ... s.url ...`."""

    def __init__(
        self,
        root: str | Path,
        *,
        header_timeout: float = HEADER_TIMEOUT_S,
        keep_alive: int = KEEPALIVE_TIMEOUT_S,
    ) -> None:
        self.root = Path(root)
        self.sock = listen(0)
        self.url = address(self.sock)
        self.server = uvicorn_server(root, header_timeout=header_timeout, keep_alive=keep_alive)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Background:
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
