"""Messages that advise a fix name one that works (issue 23.4): NM303 names `puzzle --refresh`
for the file or the bundle stage, and `puzzle --refresh BUNDLE:L1.S1` refreshes that Stage."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.helpers import run
from pipeline.validator import validate_paths

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def stale_night(tmp_path: Path) -> Path:
    """A copy of a committed night that starts at Level 1, its L1.S1 board edited by hand (its
    first digit)."""
    night = next(p.parent for p in sorted(REPO.glob("generated/*/bundle.yaml"))
                 if not re.search(r"(?m)^first_level: (?!1$)", p.read_text(encoding="utf-8")))
    copy = tmp_path / "night"
    shutil.copytree(night, copy)
    bundle = copy / "bundle.yaml"
    text = bundle.read_text(encoding="utf-8")
    at = text.index("board: ") + len("board: ")
    bundle.write_text(text[:at] + ("2" if text[at] == "1" else "1") + text[at + 1:], encoding="utf-8")
    return bundle


def test_nm303_names_the_refresh_that_fixes_it(stale_night: Path, tmp_path: Path) -> None:
    problems = [p for p in validate_paths([stale_night]).problems if p.code == "NM303"]
    assert len(problems) == 1
    assert f"`numbermatch puzzle --refresh {stale_night}:L1.S1` re-derives id, certificate and rating" in problems[0].message
    puzzle = Path(shutil.copy(sorted(REPO.glob("generated/**/nm*-*.yaml"))[0], tmp_path / "puzzle.yaml"))
    text = puzzle.read_text(encoding="utf-8")
    puzzle.write_text(re.sub(r"(?m)^adds: (\d+)$", lambda m: f"adds: {int(m[1]) + 1}", text, count=1), encoding="utf-8")
    problems = [p for p in validate_paths([puzzle]).problems if p.code == "NM303"]
    assert len(problems) == 1 and f"`numbermatch puzzle --refresh {puzzle}`" in problems[0].message


def test_refresh_of_a_bundle_stage_rewrites_that_stage_only(stale_night: Path) -> None:
    before = stale_night.read_text(encoding="utf-8")
    result = run(*["puzzle", "--refresh", f"{stale_night}:L1.S1"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{stale_night}:L1.S1: rewritten: id nm1-")
    after = stale_night.read_text(encoding="utf-8")
    assert validate_paths([stale_night]).ok
    first_stage_end = before.index("  - stage: 2")
    assert after[after.index("  - stage: 2"):] == before[first_stage_end:]  # every later byte as it was
    again = run(*["puzzle", "--refresh", f"{stale_night}:L1.S1"])
    assert again.exit_code == 0 and "unchanged" in again.stdout
    assert stale_night.read_text(encoding="utf-8") == after


def test_refresh_of_a_whole_bundle_advises_a_stage_that_works(stale_night: Path) -> None:
    result = run(*["puzzle", "--refresh", str(stale_night)])
    assert result.exit_code == 1
    assert f"name one stage as {stale_night}:L1.S1" in result.stderr
    assert run(*["puzzle", "--refresh", f"{stale_night}:L1.S1"]).exit_code == 0


def test_refresh_of_a_missing_stage_is_one_line(stale_night: Path) -> None:
    result = run(*["puzzle", "--refresh", f"{stale_night}:L99.S1"])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "there is no L99" in result.stderr
