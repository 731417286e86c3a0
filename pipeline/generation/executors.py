"""Where the generator's attempts run: in this process, on a local process pool, or on a Dask cluster.

An executor turns (params, attempt limit) into the outcomes of attempts 0, 1, 2, ... in attempt
order, each with the name of the worker that computed it. The generator judges them in that
order and closes the stream as soon as its target is met, so the puzzles are the same whoever
computes them; only the speed and the worker names (for `run.log`) change.

- `InlineExecutor`: this process (`--jobs 1`).
- `PoolExecutor`: the embedded default, a process pool that hands out one attempt at a time.
- `DaskExecutor`: a `dask.distributed` cluster (`--scheduler tcp://HOST:PORT`, or `local:N` for
  a LocalCluster of N worker processes started for the run). Attempts travel in batches sized
  from measured attempt times, so scheduling overhead stays small; a bounded window of batches
  is in flight, and when the stream closes the rest is cancelled and the running ones stop
  before their next attempt. A worker that dies has its
  batches recomputed elsewhere by the scheduler; a scheduler that cannot be reached or goes
  away raises `SchedulerError` (one line). Dask is the optional extra `numbermatch[dask]`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections import Counter, deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pipeline import __version__
from pipeline.engine.rulesets import SHIPPED
from pipeline.errors import NumberMatchError
from pipeline.generation import SCHEDULER_ENV
from pipeline.limits import MAX_STOPPED_RUNS, SCHEDULER_CONNECT_S, SCHEDULER_PROBE_S
from pipeline.procs import die_with_parent

if TYPE_CHECKING:
    import multiprocessing.context
    import socket

LOCAL_PREFIX = "local:"
MAX_LOCAL_WORKERS = 64
CONNECT_TIMEOUT = (
    SCHEDULER_CONNECT_S  # seconds to reach a scheduler (and hear its handshake) before giving up
)
WORKER_WAIT = 60.0  # seconds to wait for a first worker to join the scheduler
POLL = 0.5  # seconds between checks that the scheduler is still there while waiting
# aim for batches of about this much work per task: a batch's outcomes arrive when it ends, so
# the batches finished ahead of the one being judged are lost when the stream closes (the larger
# the batch, the more is lost; docs/nightly.md has the measurement), and a task costs Dask a few ms
BATCH_SECONDS = 0.1
MAX_BATCH = 256
# attempts handed to a process pool beyond one per worker: a worker done before the attempt being
# judged starts the next at once, yet when the run ends (a target met) at most this many more run for
# nothing (an unbounded queue would run many for nothing; docs/nightly.md has the measurement)
POOL_AHEAD = 1
INFLIGHT_PER_THREAD = 2  # batches in flight per worker thread: one running, one queued


class SchedulerError(NumberMatchError):
    """The Dask scheduler cannot be used: not installed, unreachable, gone away, or no workers."""


# An attempt function, `generator.run_attempt(params, k)`: executors are handed it rather than
# importing it, so the generator may use them without a cycle. It must be a module-level function
# (the pool and Dask pickle it by name).
Attempt = Callable[[Any, int], Any]
Tagged = tuple[Any, str]  # an outcome and the name of the worker that computed it


class Executor(Protocol):
    """Runs attempts 0..limit-1 and yields their outcomes in attempt order; closing stops the work."""

    description: str

    def outcomes(self, run: Attempt, params: Any, limit: int) -> Generator[Tagged, None, None]: ...


@dataclass(frozen=True)
class WorkReport:
    """Where a run's attempts were computed: the executor and attempts judged per worker."""

    where: str
    attempts: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, where: str, counts: Counter[str]) -> WorkReport:
        return cls(where, tuple(sorted(counts.items())))

    def __str__(self) -> str:
        per = ", ".join(f"{name} {n}" for name, n in self.attempts)
        return f"{self.where}; attempts per worker: {per or 'none'}"


def _run_named(run: Attempt, params: Any, attempt: int) -> Tagged:
    import multiprocessing  # start-up time (see `_pool_context`); loaded already in a pool worker

    return run(params, attempt), multiprocessing.current_process().name


class InlineExecutor:
    """Every attempt in this process, one after the other."""

    description = "this process"

    def outcomes(self, run: Attempt, params: Any, limit: int) -> Generator[Tagged, None, None]:
        for k in range(limit):
            yield run(params, k), "main"


def _pool_context() -> multiprocessing.context.BaseContext:
    import multiprocessing  # start-up time: `generate --jobs 1`, --attempt and --help run without a pool

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


class PoolExecutor:
    """Worker processes per run, one pipe each: attempts handed out in attempt order, at most
    POOL_AHEAD beyond one per worker, results in attempt order; closing kills the workers.

    Not `multiprocessing.Pool`: its `imap` queues every attempt, so a worker runs far ahead of the
    attempt being judged and a run's end throws that work away, and its `terminate` can hang for
    good when a worker is waiting for work on the shared queue (which a bounded queue makes
    common). With a pipe per worker nothing is shared: a run's end kills the workers mid-attempt."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.description = f"process pool, {workers} workers"

    def outcomes(self, run: Attempt, params: Any, limit: int) -> Generator[Tagged, None, None]:
        from multiprocessing.connection import wait  # start-up time (see `_pool_context`)

        context: Any = _pool_context()
        procs: list[Any] = []
        idle: list[Any] = []  # the pipes of workers waiting for an attempt
        busy: dict[Any, int] = {}  # pipe -> the attempt its worker is on
        try:
            for n in range(min(self.workers, limit)):
                mine, theirs = context.Pipe()
                proc = context.Process(
                    target=_serve,
                    args=(theirs, run, params, os.getpid()),
                    name=f"worker-{n + 1}",
                    daemon=True,
                )
                proc.start()
                theirs.close()
                procs.append(proc)
                idle.append(mine)
            done: dict[int, Tagged] = {}
            handed = judged = 0
            while judged < limit:
                while idle and handed < min(limit, judged + len(procs) + POOL_AHEAD):
                    pipe = idle.pop()
                    pipe.send(handed)
                    busy[pipe] = handed
                    handed += 1
                if judged in done:
                    yield done.pop(judged)
                    judged += 1
                    continue
                ready: list[Any] = wait(list(busy))
                for pipe in ready:
                    k = busy.pop(pipe)
                    try:
                        failed, outcome = pipe.recv()
                    except EOFError:
                        raise RuntimeError(f"a generator worker died on attempt {k}") from None
                    if failed:
                        raise outcome
                    done[k] = outcome
                    idle.append(pipe)
        finally:
            for proc in procs:
                if proc.is_alive():
                    proc.kill()
            for proc in procs:
                proc.join()
            for pipe in idle + list(busy):
                pipe.close()


def _serve(pipe: Any, run: Attempt, params: Any, parent: int) -> None:
    """A pool worker: run the attempts it is handed until its pipe closes; (failed, tagged outcome or error) back."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the nightly's handler: a worker just dies
    die_with_parent(parent)
    while True:
        try:
            k = pipe.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[bool, Any] = (False, _run_named(run, params, k))
        except Exception as exc:  # the main process raises it, as the pool did
            reply = (True, exc)
        pipe.send(reply)


# --- Dask ------------------------------------------------------------------------------------

# On a worker: the runs whose stream has closed (`_stop_run`), newest last, at most MAX_STOPPED_RUNS.
# Dask cannot interrupt a running task and a cancel reaches only the batches not yet started, so
# a batch checks this before each attempt: without it the batches running when the generator
# had its puzzles ran to the end, doubling the CPU of a night of cheap attempts (bench dask).
_STOPPED: dict[str, None] = {}


def _run_batch(
    run: Attempt, params: Any, tag: str, start: int, stop: int
) -> tuple[str, float, list[Any]]:
    """Attempts start..stop-1 on a Dask worker: (worker address, seconds, outcomes); fewer
    outcomes when run `tag` stops meanwhile (no one reads them then)."""
    # start-up time: Dask loads only for --scheduler (on a worker it is loaded)
    from distributed import get_worker

    began = time.perf_counter()
    outcomes = []
    for k in range(start, stop):
        if tag in _STOPPED:
            break
        outcomes.append(run(params, k))
    return get_worker().address, time.perf_counter() - began, outcomes


async def _stop_run(tag: str) -> None:
    """On a worker, from its event loop (not the busy compute thread): run `tag`'s batches stop
    before their next attempt. A coroutine, so `client.run` need not wait for the answers."""
    _STOPPED[tag] = None
    while len(_STOPPED) > MAX_STOPPED_RUNS:
        del _STOPPED[next(iter(_STOPPED))]


def _identity() -> tuple[str, str]:
    """(numbermatch version, shipped rulesets): what must match between here and the workers."""
    return __version__, ",".join(map(str, sorted(SHIPPED)))


def next_batch_size(batch: int, seconds: float, attempts: int) -> int:
    """The next batch size: about BATCH_SECONDS of work at the measured pace, at most doubling
    (the output does not depend on it, only the scheduling overhead and the tail do)."""
    per = seconds / max(1, attempts)
    want = MAX_BATCH if per <= 0 else int(BATCH_SECONDS / per)
    return max(1, min(MAX_BATCH, want, 2 * batch))


class DaskExecutor:
    """Attempts in batches on a Dask cluster, through `client` (closed by `close`)."""

    def __init__(self, client: Any, address: str, cluster: Any = None) -> None:
        self.client = client
        self.address = address
        self.cluster = cluster
        self.description = f"dask {address}"

    def _threads(self) -> int:
        try:
            workers = self.client.scheduler_info()["workers"].values()
        except Exception as exc:
            raise self._gone(exc) from exc
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers))

    def _gone(self, exc: BaseException) -> SchedulerError:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return SchedulerError(f"the Dask scheduler at {self.address} went away: {reason}")

    def outcomes(self, run: Attempt, params: Any, limit: int) -> Generator[Tagged, None, None]:
        import threading  # start-up time: only a Dask run waits on futures this way
        import uuid  # start-up time: only a Dask run tags its tasks

        from distributed import KilledWorker
        from distributed import TimeoutError as DaskTimeout

        window = INFLIGHT_PER_THREAD * self._threads()
        batch = 1  # per run (attempt costs differ between targets); grows once times are measured
        tag = uuid.uuid4().hex[:12]
        inflight: deque[tuple[int, int, Any]] = deque()
        next_k = 0
        try:
            while True:
                while len(inflight) < window and next_k < limit:
                    stop = min(limit, next_k + batch)
                    key = f"numbermatch-attempts-{tag}-{next_k}"
                    try:
                        future = self.client.submit(
                            _run_batch, run, params, tag, next_k, stop, key=key, pure=False
                        )
                    except Exception as exc:
                        raise self._gone(exc) from exc
                    inflight.append((next_k, stop, future))
                    next_k = stop
                if not inflight:
                    return
                start, stop, future = inflight.popleft()
                # Wait for the future ourselves and only then ask for its result without a timeout:
                # distributed's `result(timeout=...)` can lose the race between its two timers and
                # raise UnboundLocalError ('result') instead of TimeoutError on a loaded machine.
                done = threading.Event()
                future.add_done_callback(lambda _f, done=done: done.set())
                while True:
                    if self.client.status in ("closing", "closed"):
                        raise SchedulerError(f"the Dask scheduler at {self.address} went away")
                    if not done.wait(POLL):
                        continue
                    try:
                        worker, seconds, outcomes = future.result()
                        break
                    except (DaskTimeout, TimeoutError):
                        continue
                    except KilledWorker:
                        raise SchedulerError(
                            f"attempts {start}-{stop - 1} took down every Dask worker allowed to retry them"
                        ) from None
                    except Exception as exc:
                        if future.status == "error":
                            raise  # the attempt itself failed, as it would in this process
                        raise self._gone(exc) from exc
                batch = next_batch_size(batch, seconds, len(outcomes))
                for outcome in outcomes:
                    yield outcome, worker
        finally:
            pending = [f for _, _, f in inflight]
            if pending and self.client.status == "running":
                with contextlib.suppress(Exception):
                    self.client.run(_stop_run, tag, wait=False)  # the running batches
                    self.client.cancel(pending)  # and those not started

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()


def _import_distributed() -> Any:
    try:
        import distributed  # start-up time: Dask is optional and loads only for --scheduler
    except ImportError:
        raise SchedulerError("--scheduler needs Dask: pip install 'numbermatch[dask]'") from None
    return distributed


# Dask's per-worker statistical profiler samples the running task's stack every 10 ms (holding the
# GIL) and its event loops tick every 20 ms: CPU a long pure-Python attempt would rather have.
# Set for the clusters we start (their workers get this process's config); on a real cluster set
# the same keys in the workers' Dask config (docs/nightly.md).
QUIET_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.tick.interval": "500ms",
}


def _quiet() -> None:
    """Dask's own log lines (worker restarts, reconnect attempts) stay out of our one-line errors."""
    import logging  # start-up time: only a Dask run needs it

    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def parse_scheduler(text: str) -> tuple[str, int | None]:
    """('local', N) for `local:N`, else (address, None); raises SchedulerError naming the text."""
    spec = text.strip()
    if spec.startswith(LOCAL_PREFIX):
        count = spec[len(LOCAL_PREFIX) :]
        if not count.isdigit() or not 1 <= int(count) <= MAX_LOCAL_WORKERS:
            raise SchedulerError(
                f"--scheduler {text!r}: local:N needs N from 1 to {MAX_LOCAL_WORKERS}"
            )
        return "local", int(count)
    address = spec if "://" in spec else f"tcp://{spec}"
    scheme, _, rest = address.partition("://")
    host, _, port = rest.rpartition(":")
    if (
        not host
        or not port.isdigit()
        or not 0 < int(port) < 65536
        or scheme not in ("tcp", "tls", "ws", "wss")
    ):
        raise SchedulerError(
            f"--scheduler {text!r} is not a scheduler address: expected tcp://HOST:PORT or local:N"
        )
    return address, None


HANDSHAKE_MAX = 64 * 1024  # a Dask handshake is ~100 bytes; more is not one


def _reachable(address: str) -> None:
    """Fail in one line, within SCHEDULER_PROBE_S, unless a Dask scheduler answers at the address.

    Dask itself would retry a closed port until its timeout, wait for ever on a server that
    never speaks (an HTTP server such as the dashboard waits for a request) and allocate
    whatever length a junk sender's first 8 bytes claim (MemoryError). A Dask scheduler speaks
    first: its handshake is a little-endian 8-byte length and a short msgpack mapping naming
    `pickle-protocol`. That is what is checked here, before distributed is handed the address."""
    import socket  # start-up time: only a Dask scheduler address is dialled

    _, _, rest = address.partition("://")
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    deadline = time.monotonic() + SCHEDULER_PROBE_S
    not_dask = f"{address} is not a Dask scheduler"
    try:
        with socket.create_connection((host, int(port)), timeout=SCHEDULER_PROBE_S) as sock:
            head = _recv_exactly(sock, 8, deadline)
            if head is None:
                raise SchedulerError(
                    f"{not_dask}: it sent no Dask handshake within {SCHEDULER_PROBE_S:g} s"
                    " (is it a web server, such as the Dask dashboard?)"
                )
            size = int.from_bytes(head, "little")
            body = _recv_exactly(sock, size, deadline) if 0 < size <= HANDSHAKE_MAX else None
            if body is None or b"pickle-protocol" not in body:
                raise SchedulerError(f"{not_dask}: what it sent is not a Dask handshake")
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise SchedulerError(f"cannot reach the Dask scheduler at {address}: {reason}") from None


def _recv_exactly(sock: socket.socket, size: int, deadline: float) -> bytes | None:
    """`size` bytes from the socket before the deadline, or None (timed out or closed)."""

    data = b""
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        try:
            chunk = sock.recv(size - len(data))
        except TimeoutError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def connect(scheduler: str) -> DaskExecutor:
    """A DaskExecutor for `local:N` or a scheduler address, with at least one worker joined."""
    kind, count = parse_scheduler(scheduler)
    if kind != "local":
        _reachable(kind)
    distributed = _import_distributed()
    _quiet()
    if kind == "local":
        assert count is not None
        import logging  # start-up time: only a Dask run needs it

        import dask

        dask.config.set(QUIET_CLUSTER)
        try:
            cluster = distributed.LocalCluster(
                n_workers=count,
                threads_per_worker=1,
                processes=True,
                silence_logs=logging.CRITICAL,
                dashboard_address=":0",
            )
            client = distributed.Client(cluster)
        except Exception as exc:
            raise SchedulerError(
                f"cannot start a local Dask cluster of {count} workers: {exc}"
            ) from exc
        return DaskExecutor(client, f"local:{count}", cluster)
    try:
        client = distributed.Client(kind, timeout=CONNECT_TIMEOUT)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SchedulerError(f"cannot reach the Dask scheduler at {kind}: {first}") from None
    executor = DaskExecutor(client, kind)
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT)
        identities = set(client.run(_identity).values())
    except Exception as exc:
        executor.close()
        if isinstance(exc, (TimeoutError, distributed.TimeoutError)):
            raise SchedulerError(
                f"no Dask worker joined the scheduler at {kind} within {WORKER_WAIT:g} s"
            ) from None
        raise executor._gone(exc) from exc
    mine = (__version__, ",".join(map(str, sorted(SHIPPED))))
    if identities - {mine}:
        executor.close()
        other = ", ".join(f"numbermatch {v} (rulesets {r})" for v, r in sorted(identities - {mine}))
        raise SchedulerError(
            f"Dask workers at {kind} run {other}, not numbermatch {mine[0]} (rulesets {mine[1]}): "
            "install the same version on every worker"
        )
    return executor


@contextlib.contextmanager
def open_executor(jobs: int | None = None, scheduler: str | None = None) -> Iterator[Executor]:
    """The executor for `--jobs`/`--scheduler` (the scheduler wins), closed on leaving."""
    if scheduler:
        executor = connect(scheduler)
        try:
            yield executor
        finally:
            executor.close()
        return
    workers = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    yield InlineExecutor() if workers == 1 else PoolExecutor(workers)


__all__ = [
    "SCHEDULER_ENV",
    "DaskExecutor",
    "Executor",
    "InlineExecutor",
    "PoolExecutor",
    "SchedulerError",
    "WorkReport",
    "connect",
    "next_batch_size",
    "open_executor",
    "parse_scheduler",
]
