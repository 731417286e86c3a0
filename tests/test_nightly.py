"""The nightly job: a valid, replayable, reproducible bundle; failures and kills leave old output intact."""

from __future__ import annotations

import datetime as dt
import fcntl
import io
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
import yaml

import pipeline.jobs.nightly as nightly
from pipeline.formats.curves import builtin_curves
from pipeline.generation import requests
from pipeline.generation.requests import TierPlan
from pipeline.jobs.assembler import AssemblyError
from pipeline.jobs.nightly import NightlyError, NightlyOptions, run_nightly
from pipeline.jobs.nightly import build as nightly_build
from pipeline.jobs.nightly import run as nightly_run
from pipeline.jobs.publish import sweep
from pipeline.problems import Problem
from pipeline.validator import validate_paths
from tests import reference
from tests.helpers import one_line_error, run

pytestmark = pytest.mark.nightly  # most of these run the nightly job

DATE = dt.date(2026, 1, 2)
REPO = Path(__file__).resolve().parent.parent
# Tiny nights: one Level of two medium Stages (3 medium puzzles generated).
TINY = dict(levels=1, stages=2, curve="flat")


def night(out: Path, jobs: int = 1, **kw: object) -> NightlyOptions:
    args = {**TINY, **kw}
    return NightlyOptions(date=DATE, seed=nightly.default_seed(DATE), out=out, jobs=jobs, **args)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nightly")
    run_nightly(night(out))
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def hidden(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name.startswith(".") and p.is_dir())


def replay_independently(board: str, adds: int, solution: list[str]) -> bool:
    """Play the certificate with the naive reference rules; True when it wins the Stage."""
    grid = reference.from_text(board)
    for move in solution:
        if move == "+":
            if adds == 0 or not grid:
                return False
            adds -= 1
            grid = reference.add_numbers(grid)
            continue
        a, b = (tuple(int(x) for x in cell.split(",")) for cell in move.split("-"))
        if (a, b) not in reference.legal_pairs(grid):
            return False
        grid = reference.remove(grid, a, b)
    return grid == []


# --- a good night -------------------------------------------------------------------------


def test_a_night_publishes_a_bundle_and_a_report(published: Path) -> None:
    folder = published / DATE.isoformat()
    assert sorted(p.name for p in folder.iterdir()) == [
        "bundle.yaml",
        "pool",
        "report.html",
        "report.md",
        "run.log",
    ]
    assert hidden(published) == []  # no temp folder left behind
    report = (folder / "report.md").read_text()
    for heading in ("## Puzzles per tier", "## Difficulty curve", "### Level 1", "acceptance"):
        assert heading in report
    log = (folder / "run.log").read_text()
    for phase in ("generate:", "validate:", "assemble:", "write:", "total:"):
        assert phase in log


def test_the_bundle_validates_and_every_certificate_replays_under_the_reference_rules(
    published: Path,
) -> None:
    bundle = published / DATE.isoformat() / "bundle.yaml"
    report = validate_paths([bundle])
    assert report.ok, report.problems
    doc = yaml.safe_load(bundle.read_text())
    assert doc["id"] == f"nightly-{DATE.isoformat()}" and doc["generator"]["seed"] == 20260102
    stages = [s for level in doc["levels"] for s in level["stages"]]
    assert len(stages) == 2 and len({s["puzzle"]["id"] for s in stages}) == 2
    for s in stages:
        p = s["puzzle"]
        assert replay_independently(p["board"], p["adds"], p["solution"]), p["id"]


def test_the_same_date_gives_byte_identical_files_whatever_the_worker_count(
    published: Path, tmp_path: Path
) -> None:
    run_nightly(night(tmp_path, jobs=2))
    first = snapshot(published / DATE.isoformat())
    second = snapshot(tmp_path / DATE.isoformat())
    assert first["bundle.yaml"] == second["bundle.yaml"]
    assert first["report.md"] == second["report.md"]


def test_a_rerun_replaces_the_nights_files_in_place_with_force(
    published: Path, tmp_path: Path
) -> None:
    shutil.copytree(published / DATE.isoformat(), tmp_path / DATE.isoformat())
    (tmp_path / DATE.isoformat() / "bundle.yaml").write_text("# an older run's bundle\n")
    (tmp_path / DATE.isoformat() / "notes.txt").write_text("a designer's file")
    with pytest.raises(NightlyError, match="is already published; nothing written"):
        # not without --force
        run_nightly(night(tmp_path))
    run_nightly(night(tmp_path, force=True))
    assert (
        snapshot(tmp_path / DATE.isoformat())["bundle.yaml"]
        == snapshot(published / DATE.isoformat())["bundle.yaml"]
    )
    assert (
        tmp_path / DATE.isoformat() / "notes.txt"
    ).read_text() == "a designer's file"  # not the job's: kept
    assert hidden(tmp_path) == []


def test_already_published_is_checked_once_under_the_lock(
    published: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nightly asked "already published?" before taking the lock and again under
    it; the check under the lock is the one that holds (another run may publish meanwhile)."""
    calls: list[Path] = []
    real = nightly_run._refuse_rerun

    def counted(final: Path, options: NightlyOptions) -> None:
        calls.append(final)
        real(final, options)

    monkeypatch.setattr(nightly_run, "_refuse_rerun", counted)
    monkeypatch.setattr(
        nightly_run, "sweep", lambda out: calls.append(out)
    )  # runs under the lock, before the check
    with pytest.raises(NightlyError, match="is already published"):
        run_nightly(night(published))
    assert calls == [published, published / DATE.isoformat()]


# --- failures leave the previous night intact ----------------------------------------------


def test_a_failure_after_generation_leaves_the_previous_output_intact(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(published / DATE.isoformat(), tmp_path / DATE.isoformat())
    before = snapshot(tmp_path / DATE.isoformat())

    def broken(*args: object, **kwargs: object) -> None:
        raise AssemblyError("injected failure")

    monkeypatch.setattr(nightly_build, "assemble", broken)
    with pytest.raises(NightlyError, match="assemble: injected failure"):
        run_nightly(night(tmp_path, force=True))
    assert snapshot(tmp_path / DATE.isoformat()) == before
    assert hidden(tmp_path) == []


def test_an_invalid_bundle_is_never_published(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(published / DATE.isoformat(), tmp_path / DATE.isoformat())
    before = snapshot(tmp_path / DATE.isoformat())
    injected = Problem("bundle.yaml", 3, 1, "NM303", "injected problem", "$.id")
    monkeypatch.setattr(nightly_build, "_validate_files", lambda paths: [injected])
    with pytest.raises(NightlyError, match="write: the bundle fails validation"):
        run_nightly(night(tmp_path, force=True))
    assert snapshot(tmp_path / DATE.isoformat()) == before


def test_an_unreachable_generation_fails_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(requests.TIER_PLANS, "medium", TierPlan(cells=3, adds=0))
    with pytest.raises(NightlyError, match=r"generate: medium: .*can never be won"):
        run_nightly(night(tmp_path))
    assert not (tmp_path / DATE.isoformat()).exists() and hidden(tmp_path) == []


def _start(out: Path) -> subprocess.Popen[bytes]:
    # Big enough to still be generating when it is killed (it never gets to finish).
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
        "4",
        "--stages",
        "6",
        "--jobs",
        "1",
        "--force",
    ]
    return subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_staging(proc: subprocess.Popen[bytes], out: Path) -> None:
    # Generous and gentle: on a loaded machine start-up alone can take many seconds, and a tight
    # poll would only steal CPU from the run it waits for. The run is long enough to be caught.
    deadline = time.monotonic() + 300
    while not any(".tmp-" in name for name in hidden(out)):
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "the run never started staging"
        time.sleep(0.1)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_run_killed_halfway_leaves_no_partial_bundle(
    published: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    old = tmp_path / DATE.isoformat()
    shutil.copytree(published / DATE.isoformat(), old)
    (old / "bundle.yaml").write_text("# last night's good bundle\n")
    before = snapshot(old)
    proc = _start(tmp_path)
    _wait_for_staging(proc, tmp_path)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert snapshot(old) == before
    if sig == signal.SIGTERM:  # a polite kill cleans up after itself
        assert proc.returncode == 130 and b"previous output left intact" in err
        assert hidden(tmp_path) == []
    else:  # a hard kill cannot clean up: its hidden temp folder stays, holding no bundle
        leftovers = [tmp_path / name for name in hidden(tmp_path)]
        assert leftovers and not any((p / "bundle.yaml").exists() for p in leftovers)
    # the next run sweeps away whatever a killed run left
    run_nightly(night(tmp_path, force=True))
    assert hidden(tmp_path) == []
    assert snapshot(old)["bundle.yaml"] == snapshot(published / DATE.isoformat())["bundle.yaml"]


# SIGTERM landing inside code run by `exec` (dataclasses build their methods that way, so a lazy
# import mid-run is such code): a KeyboardInterrupt escaping it made CPython kill the process
# with SIGINT at exit (-2) although the command had handled it; 1 run in ~15 was caught there.
POLITE_KILL_IN_EXEC = """
import os, signal, sys
from pipeline.cli.nightly_cmds import on_sigterm
from pipeline.errors import Terminated
signal.signal(signal.SIGTERM, on_sigterm)
try:
    exec("import os, signal\\nos.kill(os.getpid(), signal.SIGTERM)\\nfor _ in range(100000): pass")
except (KeyboardInterrupt, Terminated):
    sys.exit(130)
sys.exit(3)
"""


def test_a_polite_kill_inside_exec_still_exits_130(tmp_path: Path) -> None:
    # Run as `python -m` (as `python -m pipeline.cli` runs): only that path checks the flag.
    (tmp_path / "polite_kill.py").write_text(POLITE_KILL_IN_EXEC)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-m", "polite_kill"], cwd=REPO, env=env, capture_output=True, timeout=60
    )
    assert proc.returncode == 130, proc.stderr.decode()


def test_two_runs_on_one_folder_do_not_race(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(NightlyError, match="another nightly run is writing"):
            run_nightly(night(tmp_path))
    finally:
        os.close(fd)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_left_aside_by_a_killed_swap_is_put_back(published: Path, tmp_path: Path) -> None:
    aside = tmp_path / f".{DATE.isoformat()}.old-12345"
    shutil.copytree(published / DATE.isoformat(), aside)
    (tmp_path / f"{aside.name}.numbermatch").write_text(
        "renamed aside by publish()\n"
    )  # publish's marker
    sweep(tmp_path)
    assert snapshot(tmp_path / DATE.isoformat()) == snapshot(published / DATE.isoformat())
    assert hidden(tmp_path) == []


# --- the commands -------------------------------------------------------------------------


def test_nightly_refuses_a_bad_date_in_one_line(tmp_path: Path) -> None:
    result = run(*["nightly", "--date", "2026-13-01", "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert "--date '2026-13-01' is not a date" in result.output
    assert "Traceback" not in result.output


def test_not_on_a_terminal_a_night_prints_a_line_per_phase_as_it_goes(tmp_path: Path) -> None:
    """Unattended (stderr is a pipe) the job is not silent until the end: each tier's generation
    and each later phase is one line when it is done, while the rest is still running."""
    argv = [
        sys.executable,
        "-m",
        "pipeline.cli",
        "nightly",
        "--date",
        "2026-01-02",
        "--levels",
        "1",
        "--stages",
        "3",
        "--curve",
        "ramp",
        "--jobs",
        "1",
        "--out",
        str(tmp_path),
        "--no-stock",
    ]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    assert proc.stderr is not None
    lines, running_after_first_tier = [], False
    for line in proc.stderr:
        lines.append(line.rstrip("\n"))
        if line.startswith("nightly: generate easy:"):
            running_after_first_tier = proc.poll() is None
    proc.wait(timeout=300)
    assert proc.returncode == 0, lines
    assert running_after_first_tier  # printed as it went, not all at the end
    phases = [line.split(":")[1].strip() for line in lines[1:-1]]
    # medium and hard share a board size (TIER_PLANS): one stream serves both
    assert phases == [
        "generate easy",
        "generate medium+hard",
        "generate",
        "validate",
        "assemble",
        "write",
    ]
    assert lines[0].startswith("nightly: 2026-01-02: seed") and lines[-1].startswith(
        "nightly: published"
    )
    assert all(
        "\r" not in line and "\x1b" not in line for line in lines
    )  # no terminal control codes


def screen(output: str) -> list[str]:
    """The lines a terminal shows after `output`: a carriage return goes back to the start of
    the line, ESC [K erases to its end (what the progress counter uses), a newline moves on."""
    lines, line, col = [], "", 0
    for part in re.split(r"(\r|\n|\x1b\[K)", output):
        if part == "\r":
            col = 0
        elif part == "\n":
            lines.append(line)
            line, col = "", 0
        elif part == "\x1b[K":
            line = line[:col]
        else:
            line = line[:col] + part + line[col + len(part) :]
            col += len(part)
    return [*lines, line] if line else lines


def test_on_a_terminal_each_streams_line_stays_after_the_counter(tmp_path: Path) -> None:
    """On a terminal the counter rewrites one line while a stream runs; the stream's line
    (`generate easy: 3 of 3 puzzles (... s)`, as in run.log and when piped) is printed after the
    counter is cleared, so it stays on the screen instead of being erased by the next counter."""
    import pty

    argv = [
        sys.executable,
        *("-m", "pipeline.cli", "nightly", "--date", "2026-01-02", "--levels", "1"),
        *("--stages", "3", "--curve", "ramp", "--jobs", "1", "--no-stock"),
        *("--out", str(tmp_path)),
    ]
    leader, follower = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=follower, cwd=REPO)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=300) == 0
    output = b"".join(chunks).decode()
    assert "\x1b[K" in output  # it was a terminal: the counter ran
    shown = screen(output)
    streams = [line for line in shown if re.match(r"nightly: generate [a-z+]+: ", line)]
    assert [line.split(":")[1].strip() for line in streams] == [
        "generate easy",
        "generate medium+hard",
    ], shown
    assert all(re.search(r": (\d+) of \1 puzzles \(\d+\.\d s\)$", line) for line in streams)
    assert not any(re.match(r"nightly: .*: \d+/\d+", line) for line in shown)  # no stale counter


def test_make_nightly_twice_says_the_night_exists_and_how_to_rebuild_it(published: Path) -> None:
    """`make nightly` passes --skip-existing: a second run the same day writes nothing, exits 0
    and says how to rebuild through make (`make nightly ARGS="--force"`, which the target passes
    on); without it the refusal is an error that says the same."""
    before = snapshot(published)
    args = ["nightly", "--date", DATE.isoformat(), "--out", str(published), "--levels", "1"]
    args += ["--stages", "2", "--curve", "flat", "--jobs", "1"]
    via_make = {"NUMBERMATCH_MAKE": "make nightly"}
    again = run(*args, "--skip-existing", env=via_make)
    assert again.exit_code == 0, again.output
    assert "is already published; nothing written" in again.output
    assert 'make nightly ARGS="--force" rebuilds it' in again.output
    refused = run(*args, env=via_make)
    assert refused.exit_code == 1 and 'make nightly ARGS="--force" rebuilds it' in refused.output
    plain = run(*args)
    assert plain.exit_code == 1 and "(--force rebuilds it" in plain.output
    assert snapshot(published) == before
    dry = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "nightly", "ARGS=--force --date 2026-01-02"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (
        'NUMBERMATCH_MAKE="make nightly" .venv/bin/numbermatch nightly --skip-existing --force'
        " --date 2026-01-02" in dry
    )


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def test_a_night_in_a_git_checkout_says_which_committed_files_it_changed(tmp_path: Path) -> None:
    """A night draws from a committed stock: it says how many committed files it changed and
    where (`git status` shows them deleted); outside a checkout it says nothing of git."""
    repo = tmp_path / "game"
    stock = repo / "generated" / "stock"
    stock.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD", "generated/stock"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(repo, filter="data")
    job = repo / "job.yaml"
    job.write_text(
        "schema_version: 1\nkind: curves\n"
        "curves: [{name: mid, shape: {start: medium, finish: medium}}]\n"
        "job: {curve: mid, levels: 1, stages: 2, keep: {}}\n"  # no refill after the night
    )
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "stock")
    args = ["nightly", "--date", "2026-12-02", "--job", str(job), "--jobs", "1"]
    result = run(*args, "--out", str(repo / "generated"))
    assert result.exit_code == 0, result.output
    deleted = [
        line for line in _git(repo, "status", "--porcelain").splitlines() if line[:2] == " D"
    ]
    assert deleted, "the night drew nothing from the committed stock"
    n = len(deleted)
    assert f"nightly: {n} committed file{'s' if n != 1 else ''} changed" in result.output
    folders = {str(Path(line[3:]).parent) for line in deleted}
    for folder in folders:
        assert re.search(rf"nightly:   {re.escape(folder)}/: \d+ deleted", result.output)
    elsewhere = run(*args, "--out", str(tmp_path / "out"), "--no-stock")
    assert elsewhere.exit_code == 0, elsewhere.output
    assert "committed file" not in elsewhere.output


def test_without_git_a_night_says_nothing_of_committed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git is optional at run time: with no git on PATH the watch finds no checkout and says
    nothing, even over a folder that is one."""
    from pipeline.jobs.tracked import Watch, checkout, summary

    repo = tmp_path / "repo"
    (repo / "generated").mkdir(parents=True)
    (repo / "generated" / "a.yaml").write_text("a\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    watch = Watch(repo / "generated")
    (repo / "generated" / "a.yaml").unlink()
    assert watch.lines() == [
        "1 committed file changed in the git checkout (`git status` lists them):",
        "  generated/: 1 deleted",
    ]
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert checkout(repo / "generated") is None and Watch(repo / "generated").lines() == []
    many = [("D", f"f{i}/x.yaml") for i in range(20)]
    assert summary(many)[-1] == "and 13 more folders" and len(summary(many)) == 8


def test_assemble_writes_a_valid_bundle_from_validated_puzzles(
    published: Path, tmp_path: Path
) -> None:
    source = published / DATE.isoformat() / "bundle.yaml"
    out = tmp_path / "again.yaml"
    args = [
        "assemble",
        str(source),
        "--levels",
        "1",
        "--stages",
        "2",
        "--curve",
        "flat",
        "--out",
        str(out),
    ]
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert validate_paths([out]).ok
    first = out.read_bytes()
    assert run(*args).exit_code == 0 and out.read_bytes() == first


def test_assemble_refuses_too_few_puzzles_saying_what_is_missing(
    published: Path, tmp_path: Path
) -> None:
    source = published / DATE.isoformat() / "bundle.yaml"
    args = [
        "assemble",
        str(source),
        "--levels",
        "3",
        "--stages",
        "2",
        "--curve",
        "flat",
        "--out",
        str(tmp_path / "x.yaml"),
    ]
    result = run(*args)
    assert result.exit_code == 1
    assert "curve flat needs 6 medium puzzles for 3 levels x 2 stages; have 2" in result.output
    assert not (tmp_path / "x.yaml").exists()


def test_assemble_refuses_an_invalid_puzzle_file_with_its_problems(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "schema_version: 1\nkind: puzzle\nid: nm1-000000000000\nruleset: 1\nboard: 12x\nadds: 1\n"
    )
    result = run(
        *["assemble", str(bad), "--levels", "1", "--stages", "1", "--out", str(tmp_path / "x.yaml")]
    )
    assert result.exit_code == 1
    assert "validation problem" in result.output and "bad.yaml" in result.output


# --- progression across nights ------------------------------------------------------------

CLIMB = """\
schema_version: 1
kind: curves
curves:
- name: climb
  description: Two easy Stages per Level, rising; from Level 3 on the last Stage is an expert boss.
  shape:
    start: {tier: easy, at: 0.3}
    finish: {tier: easy, at: 0.6}
    rise: {start: {tier: easy, at: 0.5}, finish: {tier: easy, at: 0.9}, step: 0.5}
    boss: {stage: -1, tier: expert, at: 0.2, from_level: 3}
job: {curve: climb, levels: 1, stages: 2}
"""


def test_three_nights_continue_the_numbering_and_the_curve_and_ship_expert_stages(
    tmp_path: Path,
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(CLIMB)
    out = tmp_path / "nights"
    days = [DATE + dt.timedelta(days=n) for n in range(3)]
    first = run(
        *["nightly", "--job", str(job), "--out", str(out), "--date", days[0].isoformat(), "-j", "1"]
    )
    assert first.exit_code == 0, first.output
    job.unlink()  # later nights continue the curve recorded in the bundle, not the file
    for day in days[1:]:
        result = run(*["nightly", "--continue", str(out), "--date", day.isoformat(), "-j", "1"])
        assert result.exit_code == 0, result.output
    docs = [yaml.safe_load((out / d.isoformat() / "bundle.yaml").read_text()) for d in days]
    numbers = [lv["level"] for doc in docs for lv in doc["levels"]]
    assert numbers == list(range(1, len(numbers) + 1)) == [1, 2, 3]
    assert [doc.get("first_level", 1) for doc in docs] == [1, 2, 3]
    for before, after in itertools.pairwise(docs):
        last = [s["target_score"] for s in before["levels"][-1]["stages"]]
        nxt = [s["target_score"] for s in after["levels"][0]["stages"]]
        assert all(a <= b for a, b in zip(last, nxt)), (last, nxt)
    tiers = [
        [s["puzzle"]["difficulty"]["tier"] for s in lv["stages"]]
        for doc in docs
        for lv in doc["levels"]
    ]
    assert tiers == [["easy", "easy"], ["easy", "easy"], ["easy", "expert"]]
    assert validate_paths([out]).ok
    report = (out / days[2].isoformat() / "report.md").read_text()
    assert (
        "## Targets and placed scores" in report and "| 3 |" in report and "### Level 3" in report
    )
    # the designers' commands name Levels as the bundle numbers them (from first_level)
    from pipeline.formats.source import SourceError, bundle_stage
    from pipeline.jobs.swap import SwapError, swap_stage

    third = out / days[2].isoformat() / "bundle.yaml"
    boss = bundle_stage(third, 3, 2)
    assert boss.puzzle is not None and boss.puzzle["difficulty"]["tier"] == "expert"
    with pytest.raises(SourceError, match="has Levels 3-3"):
        bundle_stage(third, 1, 2)
    with pytest.raises(SwapError, match="has Levels 3-3"):
        swap_stage(third, 1, 2, [], write=False)
    # a rerun of the middle night continues from the first night: the same Levels and targets
    # again. Its puzzles come from the stock as it is now (so not the same puzzles: without the
    # stock a rerun is byte-identical, test_a_rerun_replaces_the_night_in_place), none repeating
    # another night's.
    again = run(
        *["nightly", "--continue", str(out), "--date", days[1].isoformat(), "-j", "1", "--force"]
    )
    assert again.exit_code == 0, again.output
    redo = yaml.safe_load((out / days[1].isoformat() / "bundle.yaml").read_text())
    assert redo["first_level"] == docs[1]["first_level"]
    assert [[s["target_score"] for s in lv["stages"]] for lv in redo["levels"]] == [
        [s["target_score"] for s in lv["stages"]] for lv in docs[1]["levels"]
    ]
    assert validate_paths([out]).ok


def test_nightly_refuses_a_curve_it_cannot_read_before_any_work(tmp_path: Path) -> None:
    bad = tmp_path / "job.yaml"
    bad.write_text(CLIMB.replace("step: 0.5", "step: 5"))
    result = run(
        *["nightly", "--job", str(bad), "--out", str(tmp_path / "o"), "--date", "2026-01-02"]
    )
    assert (
        result.exit_code == 1
        and f"{bad}:9:79:" in result.output
        and "Traceback" not in result.output
    )
    result = run(
        *["nightly", "--curve", "zigzag", "--out", str(tmp_path / "o"), "--date", "2026-01-02"]
    )
    assert result.exit_code == 1 and "unknown curve 'zigzag'" in result.output
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_a_curve_file_is_read_once_per_night(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The curve is resolved once, before any work: editing the file during the run cannot shift
    the targets, and the file is validated once (not at every phase)."""
    import pipeline.jobs.curve_specs as curve_specs

    curves = tmp_path / "curves.yaml"
    curves.write_text(
        "schema_version: 1\nkind: curves\ncurves:\n  - name: level\n"
        "    levels:\n      - stages: [medium, medium]\n",
        encoding="utf-8",
    )
    reads: list[Path] = []
    real = curve_specs.read_curve_file

    def counted(path: str | Path) -> dict[str, object]:
        reads.append(Path(path))
        return real(path)

    monkeypatch.setattr(curve_specs, "read_curve_file", counted)
    run_nightly(night(tmp_path / "out", curve=f"{curves}:level"))
    assert reads == [curves]


def test_the_night_asks_for_each_stage_near_its_target() -> None:
    """The generator is asked for bands of Stage targets (each target within BAND of
    its band's middle, in the target's tier), then the tier's spare anywhere in the tier."""
    from pipeline.jobs.curve_specs import targets, tier_needs

    bands = requests.generation_bands(builtin_curves()["campaign"], 10, 6)
    slots = [t for row in targets("campaign", 10, 6) for t in row]
    aimed = [b for b in bands if b.score is not None]
    assert sum(b.count for b in aimed) == len(slots)
    for t in slots:
        assert any(
            b.tier == t.tier and abs(t.score - b.score) <= requests.BAND
            for b in aimed
            if b.score is not None
        ), t
    spare = {b.tier: b.count for b in bands if b.score is None}
    needs = tier_needs("campaign", 10, 6)
    assert set(spare) == set(needs) and all(spare[t] >= 1 for t in needs)
    assert requests.generation_counts(builtin_curves()["campaign"], 10, 6) == {
        t: needs[t] + spare[t] for t in needs
    }


def test_a_nights_puzzles_rebuild_from_their_provenance(published: Path, tmp_path: Path) -> None:
    """A night's generator stream asks for several targets at once (its bands, then the rest of the
    tier): `generate --target ... --seed ... --attempt K` with what a puzzle's provenance records
    rebuilds it byte for byte. (Medium and hard share 30 cells/2 adds, so one stream serves both:
    see the phase lines in `test_not_on_a_terminal_a_night_prints_a_line_per_phase_as_it_goes`.)"""
    from pipeline.formats.puzzle import Puzzle, dump_yaml

    assert requests.TIER_PLANS["medium"] == requests.TIER_PLANS["hard"]
    pool = sorted(
        (published / DATE.isoformat() / "pool").glob("*.yaml")
    )  # the unused, with their provenance
    assert pool
    for p in [Puzzle.from_dict(yaml.safe_load(path.read_text())) for path in pool]:
        params = p.provenance["params"]
        args = [
            "generate",
            "--cells",
            str(params["cells"]),
            "--adds",
            str(params["adds"]),
            "--within",
            str(params["within"]),
            "--seed",
            str(p.provenance["seed"]),
            "--attempt",
            str(p.provenance["attempt"]),
            "--out",
            str(tmp_path / p.id),
        ]
        for tier, score in params["targets"]:
            args += ["--target", tier if score is None else f"{tier}:{score}"]
        result = run(*args)
        assert result.exit_code == 0, result.output
        assert (tmp_path / p.id / f"{p.id}.yaml").read_text() == dump_yaml(p.to_document())


def test_one_rule_says_which_folders_are_nights(published: Path, tmp_path: Path) -> None:
    """A folder is a night when its name is a real day written YYYY-MM-DD: `20261128/` or
    `2026-W48-6/` holding a bundle (which `date.fromisoformat` reads as dates) is no night to
    continue from, to date the stock by, or to find a bundle's nights in."""
    from pipeline.formats.night import BUNDLE_FILE, night_date
    from pipeline.stock.store import nights_folder, stock_day

    bundle = (published / DATE.isoformat() / BUNDLE_FILE).read_bytes()
    for name in ("20261128", "2026-W48-6", "2026-02-30", "２０２６-１１-２８"):
        assert night_date(name) is None, name
        (tmp_path / name).mkdir()
        (tmp_path / name / BUNDLE_FILE).write_bytes(bundle)
        assert nights_folder(tmp_path / name / BUNDLE_FILE) == tmp_path / name
    assert nightly.previous_night(tmp_path, dt.date(2027, 1, 1)) is None
    assert stock_day(tmp_path, DATE) == DATE
    (tmp_path / "2026-01-01").mkdir()
    (tmp_path / "2026-01-01" / BUNDLE_FILE).write_bytes(bundle)
    found = nightly.previous_night(tmp_path, dt.date(2027, 1, 1))
    assert found is not None and found.date == dt.date(2026, 1, 1)
    assert stock_day(tmp_path, DATE) == dt.date(2026, 1, 1)
    assert nights_folder(tmp_path / "2026-01-01" / BUNDLE_FILE) == tmp_path
    assert one_line_error(run("nightly", "--date", "20261128", "--out", str(tmp_path))) == (
        "numbermatch: error: --date '20261128' is not a date: expected YYYY-MM-DD"
    )


def test_nightly_json_is_one_summary_object(tmp_path: Path) -> None:
    import json

    from tests.helpers import run

    result = run(
        "nightly",
        "--date",
        "2026-01-15",
        "--levels",
        "1",
        "--stages",
        "2",
        "--curve",
        "flat",
        "--no-stock",
        "--out",
        str(tmp_path),
        "--jobs",
        "1",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["bundle"] == str(tmp_path / "2026-01-15" / "bundle.yaml")
    assert (data["date"], data["levels"], data["stages"], data["curve"]) == (
        "2026-01-15",
        1,
        2,
        "flat",
    )
    assert sum(t["wanted"] for t in data["tiers"].values()) >= 2 and data["changed"] == []
    assert set(data["seconds"]) >= {"generate", "assemble"}


def test_a_tier_not_reached_is_recorded_short_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A night whose expert Stage the generator cannot reach within its budget (as at the public
    games' 35 cells/5 adds) is built all the same: that Stage keeps its target and gets the
    nearest reached tier's puzzle nearest it, and the bundle and the report say so, with the
    generator's reason (it was a failed night)."""
    # at 10 cells/5 adds no random board comes near expert: the pilot gives up on it
    monkeypatch.setitem(
        requests.TIER_PLANS, "expert", TierPlan(cells=10, adds=5, strategy="random")
    )
    options = night(tmp_path, curve="campaign", levels=1, stages=3, first_level=3, stock=False)
    result = run_nightly(options)
    folder = tmp_path / DATE.isoformat()
    assert not validate_paths([folder / "bundle.yaml"]).problems
    doc = yaml.safe_load((folder / "bundle.yaml").read_text())
    (level,) = doc["levels"]
    boss = level["stages"][-1]
    assert boss["target_score"] >= 84 and boss["puzzle"]["difficulty"]["tier"] != "expert"
    expert = doc["generator"]["params"]["tiers"]["expert"]
    assert expert["short"] == 1 and expert["stand_in_tier"] == boss["puzzle"]["difficulty"]["tier"]
    assert "of 2 puzzles" in expert["unreached"] and "10 cells/5 adds" in expert["unreached"]
    report = (folder / "report.md").read_text()
    assert "## Stages short of their tier" in report
    assert "- expert: 1 of 1 Stages have another tier's puzzle: Level 3 stage 3" in report
    assert result.tiers["expert"].stand_ins == 1
