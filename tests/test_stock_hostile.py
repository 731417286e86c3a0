"""The stock and the checks against it under hostile conditions: `validate --against` given what
is not a readable folder, and a file too large to read inside one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pipeline.limits import MAX_FILE_BYTES
from tests.helpers import one_line_error, run

FIXTURES = Path(__file__).parent / "fixtures" / "validator" / "valid"
BUNDLE = FIXTURES / "bundle.yaml"


# --- validate --against -------------------------------------------------------------------


def _targets(tmp: Path) -> dict[str, tuple[Path, str]]:
    """Targets that are no folder to check against, with what the one line must say."""
    (tmp / "a-file.yaml").write_text("x: 1\n")
    (tmp / "loop1").symlink_to(tmp / "loop2")
    (tmp / "loop2").symlink_to(tmp / "loop1")
    (tmp / "dangling").symlink_to(tmp / "nowhere")
    os.mkfifo(tmp / "fifo")
    (tmp / "to-file").symlink_to(tmp / "a-file.yaml")
    return {
        "missing": (tmp / "missing", "no such folder to check against"),
        "file": (tmp / "a-file.yaml", "is a file, not a folder to check against"),
        "link to a file": (tmp / "to-file", "is a file, not a folder to check against"),
        "loop": (tmp / "loop1", "is a loop of symbolic links"),
        "dangling": (tmp / "dangling", "is a link to a missing folder"),
        "fifo": (tmp / "fifo", "is a named pipe (FIFO), not a folder"),
    }


def test_validate_against_what_is_no_folder_says_what_it_is_in_one_line(tmp_path: Path) -> None:
    for name, (target, said) in _targets(tmp_path).items():
        started = time.monotonic()
        result = run("validate", str(BUNDLE), "--against", str(target))
        assert time.monotonic() - started < 10, f"{name}: took too long"
        line = one_line_error(result)
        assert result.exit_code == 2, (name, result.output)
        assert str(target) in line and said in line, (name, line)


def test_validate_against_an_empty_or_linked_folder_checks_what_it_holds(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("validate", str(BUNDLE), "--against", str(empty)).exit_code == 0
    # a linked folder holding a copy of the bundle under another name: the copy is a repeat
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "other.yaml").write_bytes(BUNDLE.read_bytes().replace(b"id: ", b"id: x", 1))
    (shared / "loop").symlink_to(shared)  # a loop inside is not followed
    (shared / "self").symlink_to(tmp_path / "linked")
    (tmp_path / "linked").symlink_to(shared, target_is_directory=True)
    result = run("validate", str(BUNDLE), "--against", str(tmp_path / "linked"))
    assert result.exit_code == 1 and "NM321" in result.output, result.output
    assert "other.yaml" in result.output


def test_validate_against_a_folder_holding_a_file_too_large_to_read_names_it(
    tmp_path: Path,
) -> None:
    """A file over the size limit adds nothing to the index: it used to pass as checked; now it
    is one NM104 line naming it, exit 1, without reading it (sparse: no disk, no memory)."""
    folder = tmp_path / "against"
    folder.mkdir()
    huge = folder / "huge.yaml"
    with huge.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES * 64)  # a 1 GiB sparse file
    (folder / "fine.yaml").write_text("x: 1\n")
    started = time.monotonic()
    result = run("validate", str(BUNDLE), "--against", str(folder))
    assert time.monotonic() - started < 10
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if "NM104" in line]
    assert len(lines) == 1 and str(huge) in lines[0] and f"{MAX_FILE_BYTES:,}" in lines[0]
    huge.unlink()
    assert run("validate", str(BUNDLE), "--against", str(folder)).exit_code == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_validate_against_an_unreadable_folder_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "closed"
    folder.mkdir()
    folder.chmod(0)
    try:
        result = run("validate", str(BUNDLE), "--against", str(folder))
    finally:
        folder.chmod(0o755)
    assert result.exit_code == 2 and "cannot be read" in one_line_error(result)
