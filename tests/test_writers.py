"""The guarded write every writer of a level file uses (pipeline.atomic.write_guarded): links,
lock and hash re-check, modes, kinds; and writers racing on one bundle."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from tests.helpers import run
from pipeline.atomic import WriteRefused, file_kind, snapshot, write_guarded

PUZZLE = b"schema_version: 1\nkind: puzzle\nid: nm1-x\n"
BUNDLE = b"schema_version: 1\nkind: bundle\nid: b\nlevels: []\n"


def test_an_edit_lands_when_nobody_changed_the_file(tmp_path: Path) -> None:
    f = tmp_path / "b.yaml"
    f.write_bytes(BUNDLE)
    snap = snapshot(f)
    assert write_guarded(f, "new\n", base=snap) == f
    assert f.read_text() == "new\n"


def test_an_edit_is_refused_when_the_file_changed_since_it_was_read(tmp_path: Path) -> None:
    f = tmp_path / "b.yaml"
    f.write_bytes(BUNDLE)
    snap = snapshot(f)
    f.write_bytes(BUNDLE + b"# someone else's edit\n")
    with pytest.raises(WriteRefused, match=r"b.yaml changed on disk since it was read; nothing written"):
        write_guarded(f, "mine\n", base=snap)
    assert f.read_bytes().endswith(b"# someone else's edit\n")


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])
def test_the_mode_is_kept(tmp_path: Path, mode: int) -> None:
    f = tmp_path / "b.yaml"
    f.write_bytes(BUNDLE)
    os.chmod(f, mode)
    write_guarded(f, "new\n", base=snapshot(f))
    assert stat.S_IMODE(f.stat().st_mode) == mode


def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "b.yaml"
    f.write_bytes(BUNDLE)
    os.chmod(f, 0o444)
    with pytest.raises(WriteRefused, match=r"b.yaml: is read-only \(mode 0444\); nothing written"):
        write_guarded(f, "new\n", base=snapshot(f))
    assert f.read_bytes() == BUNDLE and stat.S_IMODE(f.stat().st_mode) == 0o444


def test_a_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "shared" / "b.yaml"
    real.parent.mkdir()
    real.write_bytes(BUNDLE)
    link = tmp_path / "mine.yaml"
    link.symlink_to(real)
    assert write_guarded(link, "new\n", base=snapshot(link)) == real
    assert link.is_symlink() and real.read_text() == "new\n"


@pytest.mark.parametrize("make", ["dangling", "folder", "loop"])
def test_what_is_not_a_file_is_refused(tmp_path: Path, make: str) -> None:
    f = tmp_path / "b.yaml"
    if make == "dangling":
        f.symlink_to(tmp_path / "gone.yaml")
    elif make == "folder":
        f.mkdir()
    else:
        f.symlink_to(f)
    with pytest.raises(WriteRefused, match=r"b.yaml: .*nothing written"):
        write_guarded(f, "new\n")
    assert not (tmp_path / "gone.yaml").exists()


def test_an_output_never_replaces_a_file_of_another_kind_without_force(tmp_path: Path) -> None:
    bundle = tmp_path / "night.yaml"
    bundle.write_bytes(BUNDLE)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(WriteRefused, match=r"night.yaml: exists and is a bundle file; nothing written \(--force"):
        write_guarded(bundle, PUZZLE, kinds=("puzzle",))
    with pytest.raises(WriteRefused, match=r"notes.txt: exists and is a file of another kind"):
        write_guarded(notes, PUZZLE, kinds=("puzzle",))
    assert bundle.read_bytes() == BUNDLE and notes.read_text() == "my notes\n"
    old = tmp_path / "old.yaml"
    old.write_bytes(PUZZLE)
    write_guarded(old, PUZZLE + b"# new\n", kinds=("puzzle",))  # same kind: replaced
    write_guarded(bundle, PUZZLE, kinds=("puzzle",), force=True)
    assert bundle.read_bytes() == PUZZLE


def test_file_kind() -> None:
    assert file_kind(BUNDLE, "x") == "bundle"
    assert file_kind(b"# c\nkind: 'curves'\n", "x") == "curves"
    assert file_kind(b"<!DOCTYPE html><html>", "x") == "html"
    assert file_kind(b"<svg xmlns='http://www.w3.org/2000/svg'>", "x") == "svg"
    assert file_kind(b"hello", "x") == "other"
    assert file_kind(b"", "x") == "empty"


def test_a_new_file_created_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    f = tmp_path / "new.yaml"
    snap = snapshot(f)
    assert snap.data is None
    f.write_bytes(BUNDLE)
    with pytest.raises(WriteRefused, match="changed on disk since it was read"):
        write_guarded(f, PUZZLE, base=snap)
    assert f.read_bytes() == BUNDLE


def _edit(path: str, marker: str, start, results) -> None:  # type: ignore[no-untyped-def]
    """A read-modify-write of `path` appending `marker` (what swap and Save do, in miniature)."""
    snap = snapshot(path)
    start.wait()
    try:
        write_guarded(path, snap.text + marker + "\n", base=snap)
        results.put((marker, "ok"))
    except WriteRefused as exc:
        results.put((marker, str(exc)))


def test_racing_edits_never_lose_one_silently(tmp_path: Path) -> None:
    """Many trials of 4 processes editing one file at once: every edit reported as written is in
    the file; every other one was refused in one line."""
    ctx = multiprocessing.get_context("fork")
    trials = int(os.environ.get("NM_WRITER_TRIALS", "20"))
    for trial in range(trials):
        f = tmp_path / f"race{trial}.yaml"
        f.write_text("start\n")
        start = ctx.Barrier(4)
        results = ctx.Queue()
        procs = [ctx.Process(target=_edit, args=(str(f), f"w{k}", start, results)) for k in range(4)]
        for p in procs:
            p.start()
        outcomes = dict(results.get(timeout=30) for _ in procs)
        for p in procs:
            p.join(timeout=30)
        lines = f.read_text().splitlines()
        landed = [m for m, o in outcomes.items() if o == "ok"]
        assert landed, outcomes
        for marker, outcome in outcomes.items():
            if outcome == "ok":
                assert marker in lines, (trial, outcomes, lines)
            else:
                assert outcome.endswith("changed on disk since it was read; nothing written") and "\n" not in outcome
                assert marker not in lines
        assert lines == ["start", *[m for m in lines[1:] if m in landed]] and len(lines) == 1 + len(landed)


# --- every writer of a level file, through the CLI ----------------------------------------------



def one_line_error(result, text: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 1, result.output
    assert result.output.startswith("numbermatch: error: ") and result.output.count("\n") == 1, result.output
    assert text in result.output, result.output
    assert "Traceback" not in result.output


@pytest.fixture
def night(night_copy: Path) -> Path:
    """A private copy of the conftest night: `bundle.yaml` (1 Level of 4 Stages) and `pool/`."""
    return night_copy / "2026-01-02"


def stage_ids(bundle: Path) -> list[str]:
    import yaml

    doc = yaml.safe_load(bundle.read_text())
    return [s["puzzle"]["id"] for lv in doc["levels"] for s in lv["stages"]]


def test_two_swaps_from_one_reading_never_lose_one(night: Path) -> None:
    """Item 7: the second of two swaps made from the same reading of the bundle is refused in
    one line instead of writing over the first (it used to print success and lose it)."""
    from pipeline.jobs.inputs import load_puzzles
    from pipeline.jobs.swap import SwapError, commit_swap, swap_stage

    bundle = night / "bundle.yaml"
    pool = load_puzzles([night / "pool"])
    first = swap_stage(bundle, 1, 1, pool, write=False)
    second = swap_stage(bundle, 1, 3, pool, write=False)
    commit_swap(first, night / "pool")
    with pytest.raises(SwapError, match=r"bundle.yaml changed on disk since it was read; nothing written"):
        commit_swap(second, night / "pool")
    ids = stage_ids(bundle)
    assert ids[0] == first.new.id and ids[2] == second.old_id
    assert not (night / "pool" / f"{second.old_id}.yaml").exists()  # its pool copy was taken back
    assert (night / "pool" / f"{first.old_id}.yaml").exists()


@pytest.mark.parametrize("mode", [0o600, 0o640])
def test_swap_and_refresh_keep_the_mode(night: Path, mode: int) -> None:
    """Item 8: a private file stays private."""
    bundle = night / "bundle.yaml"
    os.chmod(bundle, mode)
    assert run("swap", str(bundle), "L1.S2").exit_code == 0
    assert stat.S_IMODE(bundle.stat().st_mode) == mode
    puzzle = sorted((night / "pool").glob("*.yaml"))[0]
    puzzle.write_text(puzzle.read_text().replace("score:", "score: 9.5\n  old_score:", 1).replace("  old_score:", "  #", 1))
    os.chmod(puzzle, mode)
    result = run("puzzle", "--refresh", str(puzzle))
    assert result.exit_code == 0 and "rewritten" in result.output, result.output
    assert stat.S_IMODE(puzzle.stat().st_mode) == mode


def test_a_read_only_bundle_or_puzzle_is_refused(night: Path) -> None:
    """Item 8: a 0444 file is not made writable by replacing it."""
    bundle = night / "bundle.yaml"
    before = bundle.read_bytes()
    pool_before = sorted(p.name for p in (night / "pool").iterdir())
    os.chmod(bundle, 0o444)
    one_line_error(run("swap", str(bundle), "L1.S2"), "bundle.yaml: is read-only (mode 0444); nothing written")
    assert bundle.read_bytes() == before and stat.S_IMODE(bundle.stat().st_mode) == 0o444
    assert sorted(p.name for p in (night / "pool").iterdir()) == pool_before  # no puzzle left behind in the pool
    puzzle = sorted((night / "pool").glob("*.yaml"))[0]
    puzzle.write_text(puzzle.read_text().replace("score:", "score: 9.5\n  #", 1))
    edited = puzzle.read_bytes()
    os.chmod(puzzle, 0o444)
    result = run("puzzle", "--refresh", str(puzzle))
    assert result.exit_code == 1 and "is read-only (mode 0444); nothing written" in result.output
    assert puzzle.read_bytes() == edited


def test_swap_and_refresh_write_through_a_link(night: Path, tmp_path: Path) -> None:
    """Item 9: the shared file changes; the link stays a link (it used to become a private copy)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (night / "bundle.yaml").rename(shared / "bundle.yaml")
    (night / "bundle.yaml").symlink_to(shared / "bundle.yaml")
    before = stage_ids(shared / "bundle.yaml")
    assert run("swap", str(night / "bundle.yaml"), "L1.S2").exit_code == 0
    assert (night / "bundle.yaml").is_symlink()
    after = stage_ids(shared / "bundle.yaml")
    assert after[1] != before[1] and (night / "pool" / f"{before[1]}.yaml").exists()
    puzzle = sorted((night / "pool").glob("*.yaml"))[0]
    puzzle.rename(shared / puzzle.name)
    puzzle.symlink_to(shared / puzzle.name)
    (shared / puzzle.name).write_text((shared / puzzle.name).read_text().replace("score:", "score: 9.5\n  #", 1))
    assert run("puzzle", "--refresh", str(puzzle)).exit_code == 0
    assert puzzle.is_symlink() and "score: 9.5" not in (shared / puzzle.name).read_text()


def test_refresh_keeps_comments_and_refuses_to_drop_a_field(night: Path) -> None:
    """Item 10: only the values that changed are rewritten; a `notes:` field is refused with its
    line (it used to vanish under "rewritten: formatting only")."""
    puzzle = sorted((night / "pool").glob("*.yaml"))[0]
    text = puzzle.read_text()
    edited = "# Ann's favourite; do not ship before March\n" + text.replace("adds:", "adds:", 1)
    edited = edited.replace("\nboard: ", "\n# the board below was redrawn by hand\nboard: ", 1)
    edited = edited.replace("score:", "score: 9.5  # guessed\n  #", 1)
    puzzle.write_text(edited)
    result = run("puzzle", "--refresh", str(puzzle))
    assert result.exit_code == 0 and "rewritten: score 9.5 ->" in result.output, result.output
    after = puzzle.read_text()
    assert after.startswith("# Ann's favourite; do not ship before March\n")
    assert "# the board below was redrawn by hand\n" in after and "9.5" not in after
    assert after.replace("# Ann's favourite; do not ship before March\n", "").replace(
        "# the board below was redrawn by hand\n", "") == text
    puzzle.write_text(text + "notes: keep this one\n")
    result = run("puzzle", "--refresh", str(puzzle))
    assert result.exit_code == 1 and "'notes' (line" in result.output and "is not a puzzle field" in result.output
    assert puzzle.read_text() == text + "notes: keep this one\n"


def test_swap_puts_the_old_puzzle_into_the_pool_before_the_bundle(night: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 11: pool first, so a kill between the writes never loses the old puzzle."""
    import pipeline.atomic

    bundle = night / "bundle.yaml"
    old = stage_ids(bundle)[1]
    order: list[str] = []
    real = pipeline.atomic.write_guarded

    def spy(path, data, **kw):  # type: ignore[no-untyped-def]
        order.append(Path(path).name)
        return real(path, data, **kw)

    monkeypatch.setattr("pipeline.jobs.swap.write_guarded", spy)  # swap's own binding of it
    assert run("swap", str(bundle), "L1.S2").exit_code == 0
    assert order[:2] == [f"{old}.yaml", "bundle.yaml"]  # then the reports (item 14)


def test_swap_with_an_unwritable_pool_is_one_line_and_writes_nothing(night: Path) -> None:
    """Item 11: no PermissionError traceback, the bundle untouched."""
    bundle = night / "bundle.yaml"
    before = bundle.read_bytes()
    os.chmod(night / "pool", 0o555)
    try:
        one_line_error(run("swap", str(bundle), "L1.S2"), "pool: it is not a writable folder")
    finally:
        os.chmod(night / "pool", 0o755)
    assert bundle.read_bytes() == before


def test_outputs_never_clobber_a_bundle_or_another_kind_without_force(night: Path, tmp_path: Path) -> None:
    """Item 12: `puzzle --out` and `assemble --out` onto a bundle or notes used to overwrite them."""
    bundle = night / "bundle.yaml"
    before = bundle.read_bytes()
    notes = night / "notes.txt"
    notes.write_text("my notes\n")
    one_line_error(run("puzzle", "123456789/987654321", "--adds", "1", "--out", str(bundle)),
                   "bundle.yaml: exists and is a bundle file; nothing written (--force replaces it)")
    one_line_error(run("puzzle", "123456789/987654321", "--adds", "1", "--out", str(notes)),
                   "notes.txt: exists and is a file of another kind; nothing written")
    assemble = ["assemble", str(bundle), str(night / "pool"), "--levels", "1", "--stages", "4", "--curve", "ramp"]
    one_line_error(run(*assemble, "--out", str(bundle)), "bundle.yaml: exists and is a bundle file; nothing written")
    assert bundle.read_bytes() == before and notes.read_text() == "my notes\n"
    assert run(*assemble, "--out", str(bundle), "--force").exit_code == 0
    assert bundle.read_bytes() != before
    (night / "mine.html").write_text("my page\n")
    one_line_error(run("report", str(bundle), "--out", str(night / "mine.html")), "mine.html: exists and is a file of another kind")
    assert run("report", str(bundle), "--out", str(night / "report.html")).exit_code == 0  # its own kind: replaced
    made = run("puzzle", "123456789/987654321", "--adds", "1", "--out", str(tmp_path / "p.yaml"))
    again = run("puzzle", "123456789/987654321", "--adds", "1", "--out", str(tmp_path / "p.yaml"))
    assert made.exit_code == 0 and again.exit_code == 0  # a puzzle file may replace a puzzle file


def test_an_output_rewritten_with_the_same_bytes_needs_no_force(tmp_path: Path) -> None:
    """A rerun that writes the same bundle again (deterministic output) is no clobbering."""
    f = tmp_path / "b.yaml"
    f.write_bytes(BUNDLE)
    write_guarded(f, BUNDLE)
    with pytest.raises(WriteRefused, match="exists and is a bundle file"):
        write_guarded(f, BUNDLE + b"# other\n")


def test_swap_re_renders_report_html_and_marks_report_md_stale(night: Path) -> None:
    """Item 14 (CLI side): after `swap` the night's reports no longer describe the old bundle."""
    bundle = night / "bundle.yaml"
    os.chmod(night / "report.md", 0o600)
    result = run("swap", str(bundle), "L1.S2")
    assert result.exit_code == 0, result.output
    new = stage_ids(bundle)[1]
    assert new in (night / "report.html").read_text()
    assert f"{night / 'report.html'} re-rendered" in result.output
    assert f"{night / 'report.md'} marked stale" in result.output
    md = (night / "report.md").read_text()
    assert "> **Stale:** bundle.yaml was edited after this report was written (L1.S2 swapped)" in md
    assert stat.S_IMODE((night / "report.md").stat().st_mode) == 0o600


# --- the nightly job as a writer ------------------------------------------------------------------

def test_a_rerun_of_a_night_is_refused_without_force_and_keeps_a_designers_files(night_copy: Path) -> None:
    """Item 6: `nightly --date D` when D/ exists used to replace the whole folder, exit 0."""
    folder = night_copy / "2026-01-02"
    (folder / "notes.md").write_text("# my notes\n")
    (folder / "playtests").mkdir()
    (folder / "playtests" / "ann.txt").write_text("too hard\n")
    assert run("swap", str(folder / "bundle.yaml"), "L1.S2").exit_code == 0
    swapped = (folder / "bundle.yaml").read_bytes()
    returned = sorted(p.name for p in (folder / "pool").iterdir())
    args = ["nightly", "--date", "2026-01-02", "--out", str(night_copy), "--levels", "1", "--stages", "4",
            "--curve", "ramp", "-j", "1"]
    refused = run(*args)
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert f"{folder} exists: the night of 2026-01-02 is already published; nothing written (--force" in refused.output
    assert (folder / "bundle.yaml").read_bytes() == swapped
    forced = run(*args, "--force")
    assert forced.exit_code == 0, forced.output
    assert "publish: replaced" in forced.output and "bundle.yaml" in forced.output
    assert "kept 3 not made by this run: notes.md, playtests/, pool/" in forced.output
    assert (folder / "notes.md").read_text() == "# my notes\n"
    assert (folder / "playtests" / "ann.txt").read_text() == "too hard\n"
    assert sorted(p.name for p in (folder / "pool").iterdir()) == returned  # the swapped-out puzzle stays too
    assert (folder / "bundle.yaml").read_bytes() != swapped  # the job's bundle again, as asked
    assert not [p.name for p in night_copy.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("make", ["dangling", "folder", "fifo", "puzzle"])
def test_continue_from_a_broken_newest_night_fails_in_one_line(night_copy: Path, make: str) -> None:
    """Item 16: it used to continue from the night before (Levels shipped twice) or crash."""
    import shutil

    older = night_copy / "2026-01-01"
    shutil.copytree(night_copy / "2026-01-02", older)
    bundle = night_copy / "2026-01-02" / "bundle.yaml"
    puzzle = sorted((night_copy / "2026-01-02" / "pool").glob("*.yaml"))[0]
    bundle.unlink()
    if make == "dangling":
        bundle.symlink_to(night_copy / "gone.yaml")
    elif make == "folder":
        bundle.mkdir()
    elif make == "fifo":
        os.mkfifo(bundle)
    else:
        bundle.write_bytes(puzzle.read_bytes())
    result = run("nightly", "--continue", str(night_copy), "--date", "2026-01-03", "-j", "1")
    what = {"dangling": "a link to a missing file", "folder": "a folder", "fifo": "not a regular file",
            "puzzle": "a puzzle file"}[make]
    one_line_error(result, f"{bundle} is {what}, not a bundle; cannot continue from it")
    assert not (night_copy / "2026-01-03").exists()


# --- the command line's own edges -----------------------------------------------------------------

def _cli() -> list[str]:
    import sys

    exe = Path(sys.executable).with_name("numbermatch")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "pipeline.cli"]


def test_show_into_a_closed_pipe_exits_quietly() -> None:
    """Item 22: `numbermatch show BOARD | head -1` printed a BrokenPipeError traceback."""
    import subprocess

    board = "/".join(["123456789"] * 40)
    for _ in range(3):
        proc = subprocess.Popen(_cli() + ["show", board], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.readline()
        proc.stdout.close()  # what `head -1` does after its line
        _, err = proc.communicate(timeout=60)
        assert err == b"" and proc.returncode in (0, 141), (proc.returncode, err)


def test_ctrl_c_in_play_exits_130() -> None:
    """Item 22: Ctrl-C in `play` exited 0."""
    import signal
    import subprocess
    import time

    proc = subprocess.Popen(_cli() + ["play", "1.......9/3...7"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    while b"status: in play" not in proc.stdout.readline():
        pass
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert b"final: in play" in out and err.decode().strip() == "numbermatch: error: interrupted"


def test_play_bounds_a_huge_line_and_cuts_its_echo() -> None:
    """Item 18: one 10 MB line used ~40x its size in memory and was echoed twice in full."""
    import subprocess

    line = b"1" * 10_000_000 + b"\n0,0-0,8\nq\n"
    proc = subprocess.run(_cli() + ["play", "1.......9/3...7"], input=line, capture_output=True, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0 and len(out) < 2_000, out[:300]
    assert "(10,000,000 characters)" in out and "a line of 10,000,000 characters is no command (at most 200" in out
    assert "move 1: 0,0-0,8" in out  # the next line is read as usual


def test_play_messages_cut_a_long_command() -> None:
    from pipeline.cli.play_cmds import Game
    from pipeline.engine.board import parse

    reply = Game(parse("1.......9/3...7"), 0).command("x" * 190)
    assert len(reply) < 200 and "(190 characters)" in reply


# --- --scheduler at something that is not a Dask scheduler (item 17) ------------------------------

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
def test_a_scheduler_address_that_is_no_scheduler_fails_within_10_s(behaviour: str, tmp_path: Path) -> None:
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
        result = run("generate", "--cells", "18", "--adds", "1", "--scheduler", address, "--out", str(tmp_path / "p"))
        one_line_error(result, f"{address} is not a Dask scheduler")
    finally:
        server.close()


# --- a path component over 255 bytes (item 21) --------------------------------------------------

LONG = "a" * 300


@pytest.mark.parametrize("args", [
    ["validate", "{L}.yaml"], ["show", "{L}.yaml"], ["solve", "{L}.yaml"], ["swap", "{L}.yaml", "L1.S1"],
    ["assemble", "{L}.yaml", "--levels", "1", "--stages", "1", "--out", "x.yaml"], ["puzzle", "--refresh", "{L}.yaml"],
    ["render", "{L}.yaml", "--out", "x.svg"], ["report", "{L}.yaml", "--out", "x.html"],
    ["nightly", "--continue", "{L}", "--date", "2026-01-01"], ["play", "{L}.yaml"], ["rate", "{L}.yaml"],
    ["puzzle", "19", "--adds", "0", "--out", "{L}.yaml"], ["render", "19", "--out", "{L}.svg"],
    ["assemble", "{T}/bundle.yaml", "--levels", "1", "--stages", "1", "--out", "{L}.yaml"],
])
def test_a_name_over_255_bytes_is_one_line_everywhere(args: list[str], tmp_path: Path, night: Path) -> None:
    filled = [a.replace("{L}", str(tmp_path / LONG)).replace("{T}", str(night)) for a in args]
    result = run(*filled)
    one_line_error(result, "a name in the path is longer than the file system allows (255 bytes)")
    assert len(result.output) < 400


def test_a_name_over_255_bytes_on_the_fast_path_is_one_line(tmp_path: Path) -> None:
    import subprocess

    for command in ("show", "moves"):
        proc = subprocess.run(_cli() + [command, str(tmp_path / f"{LONG}.yaml")], capture_output=True, timeout=60)
        err = proc.stderr.decode()
        assert proc.returncode == 1 and err.count("\n") == 1 and "longer than the file system allows" in err, err


CURVES = """\
schema_version: 1
kind: curves
curves:
- name: gentle
  description: Easy all the way.
  shape:
    start: {tier: easy, at: 0.3}
    finish: {tier: easy, at: 0.6}
"""


def test_a_curves_file_in_a_puzzle_folder_is_skipped_and_refused_when_named(night: Path) -> None:
    """Item 20: `KeyError: 'board'` from assemble and swap while validate said all valid."""
    (night / "pool" / "gentle.yaml").write_text(CURVES)
    assert run("validate", str(night / "pool" / "gentle.yaml")).exit_code == 0
    result = run("assemble", str(night), "--levels", "1", "--stages", "4", "--curve", "ramp",
                 "--out", str(night / "again.yaml"))
    assert result.exit_code == 0, result.output
    assert run("swap", str(night / "bundle.yaml"), "L1.S2").exit_code == 0
    one_line_error(run("assemble", str(night / "pool" / "gentle.yaml"), "--levels", "1", "--stages", "1",
                       "--out", str(night / "x.yaml")), "gentle.yaml: is a curves file, not puzzles")


# --- caps on curves files (item 19) and messages that named the wrong cause (item 23) -------------

def _curves(n: int) -> str:
    return "schema_version: 1\nkind: curves\ncurves:\n" + "".join(
        f"- name: c{i}\n  description: d\n  shape:\n    start: {{tier: easy, at: 0.3}}\n    finish: {{tier: easy, at: 0.6}}\n"
        for i in range(n)
    )


def test_a_curves_file_is_capped_by_curves_and_by_size(tmp_path: Path, night: Path) -> None:
    """Item 19: 100,000 schema-valid curves took validate 13-26 s and 440 MB."""
    import time

    from pipeline import limits
    from pipeline.validator import validate_paths

    ok = tmp_path / "ok.yaml"
    ok.write_text(_curves(limits.MAX_CURVES))
    assert validate_paths([ok]).ok
    many = tmp_path / "many.yaml"
    many.write_text(_curves(limits.MAX_CURVES + 1))
    [problem] = validate_paths([many]).problems
    assert problem.code == "NM104" and f"holds {limits.MAX_CURVES + 1} curves; a curves file holds at most" in problem.message
    huge = tmp_path / "huge.yaml"
    huge.write_text(_curves(20_000))  # ~2 MB, 200,000 values: refused before it is parsed
    started = time.monotonic()
    [problem] = validate_paths([huge]).problems
    assert problem.code == "NM104" and "curves files are limited to 262,144 bytes" in problem.message
    result = run("assemble", str(night), "--levels", "1", "--stages", "1", "--curve", f"{huge}:c1", "--out", str(tmp_path / "x.yaml"))
    one_line_error(result, "curves files are limited to 262,144 bytes")
    assert time.monotonic() - started < 5


def test_a_curves_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 19: `assemble --curve` validated the file, then read it again."""
    import pipeline.formats.loader as loader
    from pipeline.jobs.curve_specs import load_curve

    f = tmp_path / "c.yaml"
    f.write_text(_curves(3))
    reads: list[str] = []
    real = loader.load_file
    monkeypatch.setattr("pipeline.jobs.curve_specs.load_file", lambda path, name=None: reads.append(str(path)) or real(path, name))
    assert load_curve(f"{f}:c1").name == "c1"
    assert reads == [str(f)]


def test_a_big_file_without_aliases_is_not_blamed_on_aliases() -> None:
    from pipeline.formats.loader import load_text

    text = "x: [" + ",".join(["1"] * 1_000_001) + "]\n"
    [problem] = load_text(text, "big.yaml").problems
    assert problem.code == "NM107" and "aliases" not in problem.message and "more than 1,000,000 values" in problem.message
    bomb = "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" \
           "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    [problem] = load_text(bomb, "bomb.yaml").problems
    assert "once aliases are expanded" in problem.message


def test_curve_files_naming_each_other_are_a_cycle_not_a_crash(tmp_path: Path, night: Path) -> None:
    (tmp_path / "a:x").write_text(_curves(1).replace("c0", "a") + 'job: {curve: "b:y", levels: 1, stages: 1}\n')
    (tmp_path / "b:y").write_text(_curves(1).replace("c0", "b") + 'job: {curve: "a:x", levels: 1, stages: 1}\n')
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = run("assemble", str(night), "--levels", "1", "--stages", "1", "--curve", "a:x", "--out", "x.yaml")
    finally:
        os.chdir(cwd)
    one_line_error(result, "curve files name each other in a cycle: 'a:x' -> 'b:y' -> 'a:x'")


def test_refresh_on_a_curves_file_says_it_is_a_curves_file(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(_curves(1))
    result = run("puzzle", "--refresh", str(f))
    assert result.exit_code == 1 and f"{f}: is a curves file, not a puzzle file" in result.output
    assert "board" not in result.output


def test_a_long_exclude_is_not_echoed_in_full(night: Path) -> None:
    result = run("assemble", str(night), "--levels", "1", "--stages", "1", "--exclude", "x" * 100_000,
                 "--out", str(night / "x.yaml"))
    one_line_error(result, "no such puzzle among the")
    assert len(result.output) < 300

