"""Hostile input on the command line: one line naming the input, a non-zero exit, never a
traceback; ASCII digits only; dates as YYYY-MM-DD; the docs list every limit (issue 10)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.helpers import codes, edited, one_line_error, run
from pipeline import limits, schemas
from pipeline.rating.tiers import TIERS
from pipeline.validator import validate_texts

REPO = Path(__file__).resolve().parent.parent
VALID = Path(__file__).parent / "fixtures" / "validator" / "valid"
PUZZLE = (VALID / "puzzle.yaml").read_text(encoding="utf-8")
BUNDLE = (VALID / "bundle.yaml").read_text(encoding="utf-8")


def test_huge_integers_are_one_problem_each() -> None:
    assert "NM112" in codes(edited(PUZZLE, "seed: 7", "seed: " + "9" * 5000))
    assert "NM112" in codes(edited(PUZZLE, "seed: 7", "seed: 0x" + "f" * 5000))
    assert "NM305" in codes(edited(PUZZLE, "- 0,4-1,4", "- " + "1" * 5000 + ",4-1,4"))


@pytest.mark.parametrize("args,code", [
    (["solve", "12", "--adds", "256"], 2),
    (["rate", "12", "--adds", "256"], 2),
    (["generate", "--cells", "20", "--adds", "1", "--digits", "1:1e308,2:1e308"], 1),
])
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
        result = run("generate", "--cells", "36", "--adds", "0", "--count", "50", "--out", str(locked))
        assert result.exit_code == 1 and "not writable" in one_line_error(result)  # checked by os.access


def test_a_crash_on_one_file_is_a_problem_record_and_the_run_goes_on(tmp_path: Path, monkeypatch) -> None:
    from pipeline.validator import semantics

    real = semantics.Semantics.check

    def crash_on_b(self, doc, kind, name, bad):
        if name.endswith("b.yaml"):
            raise RuntimeError("boom")
        return real(self, doc, kind, name, bad)

    monkeypatch.setattr(semantics.Semantics, "check", crash_on_b)
    for name, source in (("a", "puzzle.yaml"), ("b", "other_puzzle.yml"), ("c", "bundle.yaml")):
        (tmp_path / f"{name}.yaml").write_text((VALID / source).read_text())
    result = run("validate", str(tmp_path), "--format", "json")
    report = json.loads(result.output)
    assert result.exit_code == 1 and report["files"] == 3
    crashed = [p for p in report["problems"] if p["code"] == "NM100"]
    assert [Path(p["file"]).name for p in crashed] == ["b.yaml"] and "boom" in crashed[0]["message"]
    github = run("validate", str(tmp_path), "--format", "github")
    assert "b.yaml" in github.output and github.exit_code == 1




@pytest.mark.parametrize("args", [
    ["solve", "12", "--adds", "x"], ["solve"], ["no-such-command"], ["apply", "12", "--bogus"],
    ["validate"], ["nightly", "--levels", "0"],
])
def test_usage_errors_are_one_line(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    one_line_error(result)


def test_the_pattern_hint_is_the_whole_description() -> None:
    problems = validate_texts([("b.yaml", edited(BUNDLE, "id: fixture-bundle-1", "id: '-bad'"))]).problems
    assert any(p.code == "NM207" and "e.g. `nightly-2026-11-29`" in p.message for p in problems)


def test_the_schema_describes_the_tier_table() -> None:
    described = schemas.load_schema("puzzle")["$defs"]["tier"]["description"]
    assert described == schemas.tier_description(), "run `make schemas`"
    for name, low, high in TIERS:
        assert f"{name} below {high:g}" in described or f"{name} from {low:g}" in described
    assert schemas.synced_puzzle_schema() == schemas.schema_path("puzzle").read_text(encoding="utf-8")


@pytest.mark.parametrize("args", [["apply", "19", "٠,٠-٠,١"], ["apply", "19", "0,0-0,1", "--adds", "١"]])
def test_only_ascii_digits(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code in (1, 2)
    one_line_error(result)


@pytest.mark.parametrize("date", ["", "2026-W09-1", "20260302", "2026-3-2", "٢٠٢٦-٠٣-٠٢", "2026-03-02T00:00"])
def test_nightly_takes_yyyy_mm_dd_only(date: str, tmp_path: Path) -> None:
    result = run("nightly", "--date", date, "--out", str(tmp_path))
    assert result.exit_code in (1, 2)
    assert "YYYY-MM-DD" in one_line_error(result)
    assert list(tmp_path.iterdir()) == []


def test_the_docs_list_every_limit() -> None:
    """docs/limits.md (linked from the README) holds the table `python -m pipeline.limits` prints,
    which names every constant in pipeline/limits.py."""
    import pipeline.atomic

    section = (REPO / "docs" / "limits.md").read_text(encoding="utf-8")
    begin, end = "(generated: `python -m pipeline.limits`; a test checks it) -->\n", "<!-- limits:end -->"
    assert section.split(begin, 1)[1].split(end, 1)[0] == limits.limits_table(), "run: python -m pipeline.limits"
    constants = {name for name, value in vars(limits).items()
                 if name.isupper() and isinstance(value, (int, float, str)) and not isinstance(value, bool)}
    named = {name for row in limits.LIMITS for name in row.names}
    assert constants - named == set(), "add a row to limits.LIMITS for each new limit"
    assert f"{pipeline.atomic.LOCK_WAIT_SECONDS:g} s" in section
    for name in ("MAX_CELLS", "MAX_SOLVE_CELLS", "MAX_RATE_CELLS", "MAX_ADDS", "MAX_LEVELS", "MAX_STAGES",
                 "MAX_JOBS", "MAX_FILE_BYTES", "MAX_PLAYOUTS", "MAX_COUNT", "MAX_CURVES", "MAX_PLAY_LINE"):
        value = getattr(limits, name)
        shown = f"{value:,}" if name != "MAX_FILE_BYTES" else f"{value // (1024 * 1024)} MiB"
        assert shown in section, (name, shown)
