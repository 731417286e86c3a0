"""Engines the checker talks to: a command under test (a child process) or the reference in-process.

A command is hostile until proved otherwise: each answer must arrive within `timeout` seconds
and `max_bytes` bytes, be one line of JSON holding an object; the process runs in its own
session (a hang kills its whole group) under an address-space limit; what it writes to stderr is
drained by a thread and its last line quoted in the error. Anything else ends the check with one
EngineError line naming the request, never a traceback.
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from typing import Any, Protocol

from pipeline.conformance.protocol import Answer, Request, answer, dumps
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.errors import NumberMatchError, clip
from pipeline.limits import ENGINE_MEMORY_MB, ENGINE_TIMEOUT_S, MAX_ENGINE_ANSWER_BYTES

_STDERR_KEEP = 4096


class EngineError(NumberMatchError):
    """The engine under test broke the protocol (crashed, hung, answered garbage)."""


class Engine(Protocol):
    name: str
    requests: int

    def ask(self, request: Request) -> Answer: ...

    def close(self) -> None: ...


class ReferenceEngine:
    """The package's engine in-process (through a Ruleset, so tests can give it a wrong one)."""

    def __init__(self, ruleset: Ruleset = DEFAULT, name: str = "reference") -> None:
        self.ruleset = ruleset
        self.name = name
        self.requests = 0

    def ask(self, request: Request) -> Answer:
        self.requests += 1
        return answer(json.loads(dumps(request)), self.ruleset)

    def close(self) -> None:
        pass


def _limit_memory(megabytes: int) -> None:
    if megabytes > 0:
        size = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))


class CommandEngine:
    """An engine command (`node engine.mjs`), started once and asked one request a line."""

    def __init__(
        self,
        command: str,
        *,
        timeout: float = ENGINE_TIMEOUT_S,
        max_bytes: int = MAX_ENGINE_ANSWER_BYTES,
        memory_mb: int = ENGINE_MEMORY_MB,
        cwd: str | None = None,
    ) -> None:
        self.name = command
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.requests = 0
        self._stderr: deque[bytes] = deque(maxlen=64)
        self._buffer = b""
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise EngineError(f"--engine {clip(command)!r}: {exc}") from exc
        if not argv:
            raise EngineError("--engine is empty: give the command that runs the engine")
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                cwd=cwd,
                preexec_fn=lambda: _limit_memory(memory_mb),
            )
        except OSError as exc:
            raise EngineError(
                f"engine {clip(command)!r} could not start: {exc.strerror or exc}"
            ) from exc
        assert self._proc.stdout is not None and self._proc.stderr is not None
        os.set_blocking(self._proc.stdout.fileno(), False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._proc.stdout, selectors.EVENT_READ)
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        stream = self._proc.stderr
        assert stream is not None
        kept = 0
        try:
            for chunk in iter(lambda: os.read(stream.fileno(), 4096), b""):
                self._stderr.append(chunk)
                kept += len(chunk)
                while kept > _STDERR_KEEP and len(self._stderr) > 1:
                    kept -= len(self._stderr.popleft())
        except (OSError, ValueError):  # the stream closed under the thread at the end
            pass

    def _last_stderr(self) -> str:
        self._drain.join(timeout=0.5)
        lines = b"".join(self._stderr).decode("utf-8", "replace").strip().splitlines()
        return f"; its last line on stderr: {clip(lines[-1].strip())}" if lines else ""

    def _fail(self, what: str, request: Request) -> EngineError:
        self._kill()
        op = request.get("op")
        return EngineError(
            f"engine {clip(self.name)!r}: {what} (request {self.requests}, {op}: {clip(dumps(request), 120)})"
            + self._last_stderr()
        )

    def _exit_text(self) -> str:
        try:
            code = self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "closed its output"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def ask(self, request: Request) -> Answer:
        self.requests += 1
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(dumps(request).encode("ascii") + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._fail(f"{self._exit_text()} before reading the request", request) from None
        line = self._read_line(request)
        try:
            got: Any = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past any real answer
            shown = line.decode("utf-8", "replace")
            raise self._fail(
                f"answered with a line that is not JSON: {clip(shown)!r}", request
            ) from None
        if not isinstance(got, dict):
            raise self._fail(
                f"answered {clip(line.decode('utf-8', 'replace'))}, not a JSON object", request
            )
        return got

    def _read_line(self, request: Request) -> bytes:
        deadline = time.monotonic() + self.timeout
        stdout = self._proc.stdout
        assert stdout is not None
        while b"\n" not in self._buffer:
            if len(self._buffer) > self.max_bytes:
                raise self._fail(
                    f"answered more than {self.max_bytes:,} bytes on one line", request
                )
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise self._fail(f"gave no answer within {self.timeout:g} s", request)
            try:
                chunk = os.read(stdout.fileno(), 65536)
            except BlockingIOError:
                continue
            if not chunk:
                raise self._fail(f"{self._exit_text()} without answering", request)
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        if len(line) > self.max_bytes:
            raise self._fail(f"answered more than {self.max_bytes:,} bytes on one line", request)
        return line

    def _kill(self) -> None:
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self._proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        """End the engine: close its input, give it a moment, then kill its group."""
        if self._proc.poll() is None and self._proc.stdin is not None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        self._kill()
        self._selector.close()
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def __enter__(self) -> CommandEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
