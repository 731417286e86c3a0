"""Hostile command lines: out-of-range numbers, unknown options, non-ASCII digits, malformed dates
and unusable output folders get one line naming the input, a non-zero exit, never a traceback,
before any work; a name over 255 bytes is one line everywhere. (Hostile files are the validator's tests; sizes and counts, test_limits.py.)"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.helpers import numbermatch_argv, one_line_error, one_line_refusal, run


@pytest.mark.parametrize(
    "args,code",
    [
        (["solve", "12", "--adds", "256"], 2),
        (["rate", "12", "--adds", "256"], 2),
        (["generate", "--cells", "20", "--adds", "1", "--digits", "1:1e308,2:1e308"], 1),
    ],
)
def test_out_of_range_numbers_are_one_line(args: list[str], code: int, tmp_path: Path) -> None:
    result = run(*args, *(["--out", str(tmp_path)] if args[0] == "generate" else []))
    assert result.exit_code == code
    one_line_error(result)


def test_stdin_adds_out_of_range_is_a_json_error_line() -> None:
    result = run("solve", "-", input="12 256\n12 ٣\n19 0\n")
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert "error" in lines[0] and "error" in lines[1] and lines[2]["status"] == "solved"


def test_generate_checks_the_output_folder_before_any_work(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker / "sub", blocker):
        start = time.perf_counter()
        result = run("generate", "--cells", "36", "--adds", "0", "--count", "50", "--out", str(out))
        assert time.perf_counter() - start < 5
        assert result.exit_code == 1 and str(out) in one_line_error(result)
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "ro"
        locked.mkdir(mode=0o500)
        result = run(
            "generate", "--cells", "36", "--adds", "0", "--count", "50", "--out", str(locked)
        )
        assert result.exit_code == 1 and "not writable" in one_line_error(
            result
        )  # checked by os.access


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "12", "--adds", "x"],
        ["solve"],
        ["no-such-command"],
        ["apply", "12", "--bogus"],
        ["validate"],
        ["nightly", "--levels", "0"],
    ],
)
def test_usage_errors_are_one_line(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    one_line_error(result)


@pytest.mark.parametrize(
    "args", [["apply", "19", "٠,٠-٠,١"], ["apply", "19", "0,0-0,1", "--adds", "١"]]
)
def test_only_ascii_digits(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code in (1, 2)
    one_line_error(result)


@pytest.mark.parametrize(
    "date", ["", "2026-W09-1", "20260302", "2026-3-2", "٢٠٢٦-٠٣-٠٢", "2026-03-02T00:00"]
)
def test_nightly_takes_yyyy_mm_dd_only(date: str, tmp_path: Path) -> None:
    result = run("nightly", "--date", date, "--out", str(tmp_path))
    assert result.exit_code in (1, 2)
    assert "YYYY-MM-DD" in one_line_error(result)
    assert list(tmp_path.iterdir()) == []


LONG = "a" * 300


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "{L}.yaml"],
        ["show", "{L}.yaml"],
        ["solve", "{L}.yaml"],
        ["swap", "{L}.yaml", "L1.S1"],
        ["assemble", "{L}.yaml", "--levels", "1", "--stages", "1", "--out", "x.yaml"],
        ["puzzle", "--refresh", "{L}.yaml"],
        ["render", "{L}.yaml", "--out", "x.svg"],
        ["report", "{L}.yaml", "--out", "x.html"],
        ["nightly", "--continue", "{L}", "--date", "2026-01-01"],
        ["play", "{L}.yaml"],
        ["rate", "{L}.yaml"],
        ["puzzle", "19", "--adds", "0", "--out", "{L}.yaml"],
        ["render", "19", "--out", "{L}.svg"],
        ["assemble", "{T}/bundle.yaml", "--levels", "1", "--stages", "1", "--out", "{L}.yaml"],
    ],
)
def test_a_name_over_255_bytes_is_one_line_everywhere(
    args: list[str], tmp_path: Path, night_to_edit: Path
) -> None:
    filled = [
        a.replace("{L}", str(tmp_path / LONG)).replace("{T}", str(night_to_edit)) for a in args
    ]
    result = run(*filled)
    one_line_refusal(result, "a name in the path is longer than the file system allows (255 bytes)")
    assert len(result.output) < 400


def test_a_name_over_255_bytes_on_the_fast_path_is_one_line(tmp_path: Path) -> None:
    import subprocess

    for command in ("show", "moves"):
        proc = subprocess.run(
            numbermatch_argv() + [command, str(tmp_path / f"{LONG}.yaml")],
            capture_output=True,
            timeout=60,
        )
        err = proc.stderr.decode()
        assert (
            proc.returncode == 1
            and err.count("\n") == 1
            and "longer than the file system allows" in err
        ), err


def test_a_stage_given_as_its_own_argument_is_shown_written_with_a_colon(tmp_path: Path) -> None:
    bundle = tmp_path / "night.yaml"
    bundle.write_text("kind: bundle\n")
    result = run("rate", str(bundle), "L3.S2")
    assert result.exit_code == 2
    assert f"a bundle's Stage is one argument, written after a colon: {bundle}:L3.S2" in (
        one_line_error(result)
    )
    assert "colon" not in one_line_error(run("rate", "19", "19"))  # not a level file: no hint


def test_validate_names_a_file_that_is_not_yaml_as_not_a_level_file(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\nSome text: with a colon\nand: more: colons\n")
    result = run("validate", str(readme))
    assert result.exit_code == 1
    assert "NM105: not a YAML level file (level files are .yaml or .yml)" in result.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: b: c\n")
    assert "not a YAML level file" not in run("validate", str(broken)).output
