"""The guarded write every writer of a level file uses (`pipeline.atomic.write_guarded`): links,
lock and hash re-check, modes, kinds; processes racing on one file never lose an edit silently.
(The commands that write through it: test_writers.py.)"""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest

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
    with pytest.raises(
        WriteRefused, match=r"b.yaml changed on disk since it was read; nothing written"
    ):
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
    with pytest.raises(
        WriteRefused, match=r"night.yaml: exists and is a bundle file; nothing written \(--force"
    ):
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


def test_an_output_rewritten_with_the_same_bytes_needs_no_force(tmp_path: Path) -> None:
    """A rerun that writes the same bundle again (deterministic output) is no clobbering."""
    f = tmp_path / "b.yaml"
    f.write_bytes(BUNDLE)
    write_guarded(f, BUNDLE)
    with pytest.raises(WriteRefused, match="exists and is a bundle file"):
        write_guarded(f, BUNDLE + b"# other\n")


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
        procs = [
            ctx.Process(target=_edit, args=(str(f), f"w{k}", start, results)) for k in range(4)
        ]
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
                assert (
                    outcome.endswith("changed on disk since it was read; nothing written")
                    and "\n" not in outcome
                )
                assert marker not in lines
        assert lines == ["start", *[m for m in lines[1:] if m in landed]] and len(lines) == 1 + len(
            landed
        )
