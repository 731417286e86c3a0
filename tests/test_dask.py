"""Generation on a Dask cluster (real LocalCluster, worker processes): same output as the pool,
survives a killed worker, fails in one line when the scheduler is unreachable, goes away, or is no Dask scheduler."""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import distributed
import pytest

from pipeline.generation.executors import (
    BATCH_SECONDS,
    MAX_BATCH,
    SCHEDULER_ENV,
    SchedulerError,
    connect,
    next_batch_size,
    parse_scheduler,
)
from pipeline.generation.generator import GenerateParams, generate
from pipeline.jobs.nightly import (
    NightlyError,
    NightlyOptions,
    default_seed,
    run_nightly,
)
from tests.helpers import one_line_refusal, run

pytestmark = pytest.mark.dask

DATE = dt.date(2026, 1, 2)
TINY = {"levels": 1, "stages": 2, "curve": "flat"}
# random boards: some rejected as unsolvable, trivial or too easy, so the judge's order matters
PARAMS = GenerateParams(
    cells=18, adds=1, strategy="random", seed=3, playouts=8, digits="1:1,2:1,5:1,8:1,9:1"
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    """Two single-threaded worker processes behind a scheduler on this machine."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        silence_logs=logging.CRITICAL,
        dashboard_address=":0",
    ) as local:
        yield local


@pytest.fixture(scope="module")
def pool_run() -> list[dict[str, object]]:
    result = generate(4, PARAMS, jobs=2)
    return [p.to_document() for p in result.puzzles] + [
        {"attempts": result.attempts, "rejected": result.rejected}
    ]


def documents(result: object) -> list[dict[str, object]]:
    return [p.to_document() for p in result.puzzles] + [
        {"attempts": result.attempts, "rejected": result.rejected}
    ]  # type: ignore[attr-defined]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def read_folder(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` by relative path (a night also holds folders)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --- same output --------------------------------------------------------------------------


def test_puzzles_are_byte_identical_to_the_process_pool(cluster, pool_run) -> None:
    executor = connect(cluster.scheduler_address)
    try:
        result = generate(4, PARAMS, executor=executor)
    finally:
        executor.close()
    assert documents(result) == pool_run
    assert result.work is not None and result.work.where == f"dask {cluster.scheduler_address}"
    assert sum(n for _, n in result.work.attempts) == result.attempts
    assert all(name.startswith("tcp://127.0.0.1:") for name, _ in result.work.attempts)


def test_search_puzzles_are_byte_identical_to_the_process_pool(cluster) -> None:
    """The search strategy: attempt k is still a pure function of the params and k."""
    params = GenerateParams(cells=18, adds=1, tier="hard", seed=3, playouts=8)
    executor = connect(cluster.scheduler_address)
    try:
        result = generate(2, params, executor=executor)
    finally:
        executor.close()
    assert documents(result) == documents(generate(2, params, jobs=2))
    assert all(p.provenance["strategy"] == "search" for p in result.puzzles)


def test_climb_puzzles_are_byte_identical_to_the_process_pool(cluster) -> None:
    """The climb strategy (its path of changes too): attempt k is a pure function of the params
    and k on a Dask worker as in a pool."""
    params = GenerateParams(cells=27, adds=4, tier="hard", strategy="climb", seed=3)
    executor = connect(cluster.scheduler_address)
    try:
        result = generate(1, params, executor=executor)
    finally:
        executor.close()
    assert documents(result) == documents(generate(1, params, jobs=2))
    assert all(p.provenance["strategy"] == "climb" and p.provenance["path"] for p in result.puzzles)


def test_nightly_bundle_and_report_are_byte_identical(cluster, tmp_path) -> None:
    pool, dask = tmp_path / "pool", tmp_path / "dask"
    run_nightly(NightlyOptions(date=DATE, seed=default_seed(DATE), out=pool, jobs=2, **TINY))  # type: ignore[arg-type]
    run_nightly(
        NightlyOptions(
            date=DATE,
            seed=default_seed(DATE),
            out=dask,
            scheduler=cluster.scheduler_address,
            **TINY,
        )
    )  # type: ignore[arg-type]
    a, b = read_folder(pool / DATE.isoformat()), read_folder(dask / DATE.isoformat())
    assert a["bundle.yaml"] == b["bundle.yaml"] and a["report.md"] == b["report.md"]
    assert {k: v for k, v in a.items() if k != "run.log"} == {
        k: v for k, v in b.items() if k != "run.log"
    }
    log = b["run.log"].decode()
    assert re.search(
        rf"generate medium: [0-9.]+ s on dask {cluster.scheduler_address}; attempts per worker: tcp://127\.0\.0\.1:",
        log,
    )
    assert "process pool, 2 workers" in a["run.log"].decode()
    assert b"tcp://" not in b["report.md"]


def test_generate_command_with_local_cluster_from_the_environment(tmp_path) -> None:
    """`NUMBERMATCH_SCHEDULER=local:2` starts two worker processes for the run; same files as --jobs 1."""
    args = [
        "generate",
        "--count",
        "3",
        "--cells",
        "12",
        "--adds",
        "0",
        "--strategy",
        "constructive",
        "--seed",
        "9",
    ]
    one = run(*args + ["--out", str(tmp_path / "one"), "--jobs", "1"], env={SCHEDULER_ENV: ""})
    two = run(*args + ["--out", str(tmp_path / "two")], env={SCHEDULER_ENV: "local:2"})
    assert one.exit_code == 0 and two.exit_code == 0, one.output + two.output
    assert "ran on dask local:2; attempts per worker:" in two.stderr
    assert len(read_folder(tmp_path / "one")) == 3
    assert read_folder(tmp_path / "one") == read_folder(tmp_path / "two")


# --- faults -------------------------------------------------------------------------------


def test_a_worker_killed_halfway_changes_nothing(cluster, pool_run) -> None:
    executor = connect(cluster.scheduler_address)
    pids = executor.client.run(os.getpid)
    victim = min(pids.values())
    killed: list[int] = []

    def progress(accepted: int, total: int) -> None:
        if accepted == total // 2 and not killed:
            os.kill(victim, signal.SIGKILL)  # not closed politely: the process just dies
            killed.append(accepted)

    try:
        result = generate(4, PARAMS, executor=executor, progress=progress)
        after = executor.client.run(os.getpid)
    finally:
        executor.close()
    assert killed == [2]
    assert documents(result) == pool_run
    assert victim not in after.values()  # the nanny started a new worker process


def test_an_unreachable_scheduler_fails_fast_in_one_line(tmp_path) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"
    out = tmp_path / "out"
    gen = run(
        *[
            "generate",
            "--count",
            "2",
            "--cells",
            "12",
            "--adds",
            "0",
            "--out",
            str(out),
            "--scheduler",
            address,
        ]
    )
    assert gen.exit_code == 1 and "Traceback" not in gen.output
    assert gen.stderr.strip().splitlines() == [
        f"numbermatch: error: cannot reach the Dask scheduler at {address}: Connection refused"
    ]
    assert not out.exists()  # nothing written


def test_an_unreachable_scheduler_leaves_the_previous_night_intact(tmp_path) -> None:
    out = tmp_path / "night"
    run_nightly(NightlyOptions(date=DATE, seed=default_seed(DATE), out=out, jobs=1, **TINY))  # type: ignore[arg-type]
    before = read_folder(out / DATE.isoformat())
    address = f"tcp://127.0.0.1:{free_port()}"
    result = run(
        *[
            "nightly",
            "--date",
            DATE.isoformat(),
            "--levels",
            "1",
            "--stages",
            "2",
            "--curve",
            "flat",
            "--out",
            str(out),
            "--seed",
            "5",
            "--force",
        ],
        env={SCHEDULER_ENV: address},
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("numbermatch: error:")]
    assert errors == [
        (
            f"numbermatch: error: nightly failed in generate: cannot reach the Dask scheduler at {address}: "
            "Connection refused; previous output left intact"
        )
    ]
    assert sorted(p.name for p in out.iterdir()) == [DATE.isoformat()]  # no temp folder left
    assert read_folder(out / DATE.isoformat()) == before


def test_a_scheduler_that_goes_away_ends_the_run_with_one_error(tmp_path) -> None:
    local = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        silence_logs=logging.CRITICAL,
        dashboard_address=":0",
    )
    executor = connect(local.scheduler_address)

    def progress(accepted: int, total: int) -> None:
        if accepted == 1:
            local.close()  # scheduler and worker gone mid-run

    try:
        with pytest.raises(
            SchedulerError, match=f"the Dask scheduler at {local.scheduler_address} went away"
        ):
            generate(50, PARAMS, executor=executor, progress=progress)
    finally:
        executor.close()
        local.close()


@pytest.mark.parametrize(
    "text, message",
    [
        ("local:0", "local:N needs N from 1 to 64"),
        ("local:x", "local:N needs N from 1 to 64"),
        ("tcp://host", "is not a scheduler address"),
        ("ftp://host:1", "is not a scheduler address"),
        ("", "is not a scheduler address"),
    ],
)
def test_bad_scheduler_text_is_named(text: str, message: str) -> None:
    with pytest.raises(SchedulerError, match=message):
        parse_scheduler(text)


def test_scheduler_address_forms() -> None:
    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler("10.0.0.5:8786") == ("tcp://10.0.0.5:8786", None)
    assert parse_scheduler("tls://sched.example:8786") == ("tls://sched.example:8786", None)


def test_nightly_error_names_the_phase_for_a_bad_scheduler(tmp_path) -> None:
    with pytest.raises(
        NightlyError, match="generate: --scheduler 'nowhere' is not a scheduler address"
    ):
        run_nightly(NightlyOptions(date=DATE, seed=1, out=tmp_path, scheduler="nowhere", **TINY))  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_workers_with_another_version_are_refused(cluster, monkeypatch) -> None:
    from pipeline.generation import executors

    monkeypatch.setattr(executors, "__version__", "0.0.0-other")
    with pytest.raises(
        SchedulerError,
        match=r"Dask workers at .* run numbermatch .*, not numbermatch 0\.0\.0-other",
    ):
        connect(cluster.scheduler_address)


def test_a_killed_nightly_takes_its_local_cluster_with_it(tmp_path) -> None:
    """SIGKILL of `nightly --scheduler local:2`: its worker processes exit, no lock is left, and the
    next night into the same folder runs (it sweeps the hidden temp folder)."""
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "pipeline.cli",
        "nightly",
        "--date",
        DATE.isoformat(),
        "--out",
        str(out),
        "--levels",
        "2",
        "--stages",
        "6",
        "--scheduler",
        "local:2",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while len(workers) < 2:  # the two spawned worker processes (grandchildren are not used)
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.2)
        children = subprocess.run(
            ["pgrep", "-P", str(proc.pid), "-f", "spawn_main"],
            capture_output=True,
            text=True,
            check=False,
        )
        workers = [int(pid) for pid in children.stdout.split()]
    time.sleep(1.0)
    assert proc.poll() is None
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(_is_worker(pid) for pid in workers):
        assert time.monotonic() < deadline, "a Dask worker outlived the killed nightly"
        time.sleep(0.2)
    assert not (out / DATE.isoformat()).exists()
    run_nightly(NightlyOptions(date=DATE, seed=default_seed(DATE), out=out, jobs=1, **TINY))  # type: ignore[arg-type]
    assert sorted(p.name for p in out.iterdir()) == [
        DATE.isoformat()
    ]  # the killed run's temp folder swept


def _is_worker(pid: int) -> bool:
    """Whether `pid` is still a live spawned (Dask worker) process."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return b"spawn_main" in cmdline and state != "Z"


def _logged_attempt(params: tuple[str, float], attempt: int) -> int:
    """An attempt that notes that it started (one line in a file) and takes `seconds`."""
    log, seconds = params
    with open(log, "a") as out:
        out.write(f"{attempt}\n")
    time.sleep(seconds)
    return attempt


def test_closing_the_stream_stops_the_batches_already_running(
    cluster, tmp_path, monkeypatch
) -> None:
    """Dask cannot interrupt a task: a running batch stops before its next attempt once the
    generator has what it needs (the batches used to run to their end, doubling a night's CPU)."""
    from pipeline.generation import executors

    monkeypatch.setattr(executors, "BATCH_SECONDS", 0.5)  # sized here, in the client: batches of 10
    log = tmp_path / "started.txt"
    executor = connect(cluster.scheduler_address)
    try:
        stream = executor.outcomes(_logged_attempt, (str(log), 0.05), 10_000)  # type: ignore[arg-type]
        taken = [
            next(stream)[0] for _ in range(40)
        ]  # batches of up to 10 attempts are running by now
        at_close = len(log.read_text().split())
        stream.close()
        time.sleep(2.0)  # a batch of 10 would be done
        after = len(log.read_text().split())
    finally:
        executor.close()
    assert taken == list(range(40))
    assert after - at_close <= 4, (
        at_close,
        after,
    )  # 2 workers: an attempt each may start while the stop travels


def test_batches_grow_for_cheap_attempts_and_stay_small_for_dear_ones() -> None:
    sizes = [1]
    for _ in range(12):  # 0.1 ms attempts: doubling up to the cap
        sizes.append(next_batch_size(sizes[-1], 0.0001 * sizes[-1], sizes[-1]))
    assert sizes[:4] == [1, 2, 4, 8] and sizes[-1] == MAX_BATCH
    assert next_batch_size(64, 64 * 0.01, 64) == int(
        BATCH_SECONDS / 0.01
    )  # dearer than measured: shrinks at once
    assert next_batch_size(1, 2.0, 1) == 1  # a 2 s attempt travels alone


def test_without_dask_the_scheduler_option_says_what_to_install(monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the extra were not installed
    result = run(
        *[
            "generate",
            "--cells",
            "12",
            "--adds",
            "0",
            "--out",
            str(tmp_path / "o"),
            "--scheduler",
            "local:2",
        ]
    )
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "numbermatch: error: --scheduler needs Dask: pip install 'numbermatch[dask]'"
    ]


class _Server:
    """A TCP server on 127.0.0.1 that answers every connection with `behaviour`."""

    def __init__(self, behaviour: str) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.behaviour = behaviour
        self.open: list = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.open.append(conn)
            try:
                if self.behaviour == "junk":  # claims an 8 EB frame, as a random first 8 bytes may
                    conn.sendall(b"\xff" * 8 + os.urandom(64))
                elif self.behaviour == "http":  # answers only after a request, like the dashboard
                    conn.settimeout(30)
                    if conn.recv(65536):
                        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                # "silent": accepts and never says a thing
            except OSError:
                pass

    def close(self) -> None:
        self.sock.close()
        for conn in self.open:
            conn.close()


@pytest.mark.parametrize("behaviour", ["http", "silent", "junk"])
def test_a_scheduler_address_that_is_no_scheduler_fails_within_10_s(
    behaviour: str, tmp_path: Path
) -> None:
    import time

    pytest.importorskip("distributed")
    from pipeline.generation.executors import SchedulerError, connect

    server = _Server(behaviour)
    address = f"tcp://127.0.0.1:{server.port}"
    try:
        started = time.monotonic()
        with pytest.raises(SchedulerError, match=rf"^{address} is not a Dask scheduler: "):
            connect(address)
        assert time.monotonic() - started < 8
        result = run(
            "generate",
            "--cells",
            "18",
            "--adds",
            "1",
            "--scheduler",
            address,
            "--out",
            str(tmp_path / "p"),
        )
        one_line_refusal(result, f"{address} is not a Dask scheduler")
    finally:
        server.close()
