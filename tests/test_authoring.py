"""`numbermatch puzzle`: authoring a puzzle file from a hand-made board, and `--refresh` of a file
or of one bundle Stage (`BUNDLE:L1.S1`), which NM303 names as the fix."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from pipeline.engine.board import parse
from pipeline.engine.stage import replay
from pipeline.solver.search import SOLVED, solve
from pipeline.validator import validate_paths
from tests.helpers import run

REPO = Path(__file__).resolve().parent.parent

# A board a designer might draw: 18 cells, 1 add; solvable (checked in a test of authoring).
HAND = "123456789/987654321"


def test_puzzle_authors_a_valid_file_from_a_hand_made_board(tmp_path: Path) -> None:
    assert solve(parse(HAND), 1).status == SOLVED
    result = run(
        "puzzle", HAND, "--adds", "1", "--out", f"{tmp_path}/new/"
    )  # a folder still to be made
    assert result.exit_code == 0, result.output
    files = list((tmp_path / "new").glob("*.yaml"))
    assert len(files) == 1
    doc = yaml.safe_load(files[0].read_text())
    assert doc["board"] == HAND and doc["adds"] == 1 and doc["id"] == files[0].stem
    assert doc["provenance"]["strategy"] == "hand"
    assert replay(parse(HAND), doc["solution"], 1)[0] == b""
    assert validate_paths(files, deep=True).ok
    again = tmp_path / "again.yaml"
    assert run("puzzle", HAND, "--adds", "1", "--out", str(again)).exit_code == 0
    assert again.read_bytes() == files[0].read_bytes()  # deterministic


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["1.......9/5", "--adds", "0"], "is unsolvable: the solver proved"),
        (["12x", "--adds", "1"], "'x' at column 2"),
        (["", "--adds", "1"], "the board is empty"),
        ([HAND], "--adds N is required"),
        (
            ["123456789/987654321/123456789/987654321/1234", "--adds", "1", "--budget-nodes", "1"],
            "raise the budget (--budget-nodes N, 0 = no limit)",
        ),
    ],
)
def test_puzzle_refuses_in_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "p.yaml"
    result = run("puzzle", *args, "--out", str(out))
    assert result.exit_code == 1 and message in result.output, result.output
    assert result.output.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_puzzle_refuses_an_unwritable_folder_before_solving(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run("puzzle", HAND, "--adds", "1", "--out", str(blocker / "sub" / "p.yaml"))
    assert result.exit_code == 1 and "is not a folder" in result.output


def test_refresh_rederives_and_says_what_changed(tmp_path: Path) -> None:
    assert run("puzzle", HAND, "--adds", "1", "--out", str(tmp_path)).exit_code == 0
    path = next(tmp_path.glob("*.yaml"))
    original = path.read_text()
    result = run("puzzle", "--refresh", str(path))
    assert result.exit_code == 0 and "unchanged" in result.output
    # A designer edits the board (and nothing else): id, certificate and rating are stale.
    edited = original.replace(f"board: {HAND}", "board: 123456789/987654321/19")
    path.write_text(edited)
    result = run("puzzle", "--refresh", str(path))
    assert result.exit_code == 0, result.output
    assert "rewritten: id " in result.output and "certificate re-solved" in result.output
    assert validate_paths([path], deep=True).ok
    assert yaml.safe_load(path.read_text())["board"] == "123456789/987654321/19"


def test_refresh_leaves_a_file_that_cannot_be_fixed_untouched(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "schema_version: 1\nkind: puzzle\nid: x\nruleset: 1\nboard: 1.......9/5\nadds: 0\nsolution: []\ndifficulty: {}\n"
    )
    before = bad.read_bytes()
    result = run("puzzle", "--refresh", str(bad))
    assert result.exit_code == 1 and "unsolvable" in result.output
    assert bad.read_bytes() == before


def test_moves_are_numbered_from_1_by_apply_and_the_validator_alike(tmp_path: Path) -> None:
    assert run("puzzle", HAND, "--adds", "1", "--out", f"{tmp_path}/").exit_code == 0
    path = next(tmp_path.glob("*.yaml"))
    doc = yaml.safe_load(path.read_text())
    bad = [doc["solution"][0], "0,0-0,1"]  # the second move is illegal
    doc["solution"] = bad + doc["solution"][1:]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    problems = [p.message for p in validate_paths([path]).problems]
    assert any(m.startswith("move 2: illegal move 0,0-0,1") for m in problems), problems
    applied = run("apply", HAND, *bad, "--adds", "1")
    assert applied.exit_code == 1 and "move 2: illegal move 0,0-0,1" in applied.output


@pytest.fixture
def stale_night(tmp_path: Path) -> Path:
    """A copy of a committed night that starts at Level 1, its L1.S1 board edited by hand (its
    first digit)."""
    night = next(
        p.parent
        for p in sorted(REPO.glob("generated/*/bundle.yaml"))
        if not re.search(r"(?m)^first_level: (?!1$)", p.read_text(encoding="utf-8"))
    )
    copy = tmp_path / "night"
    shutil.copytree(night, copy)
    bundle = copy / "bundle.yaml"
    text = bundle.read_text(encoding="utf-8")
    at = text.index("board: ") + len("board: ")
    bundle.write_text(
        text[:at] + ("2" if text[at] == "1" else "1") + text[at + 1 :], encoding="utf-8"
    )
    return bundle


def test_nm303_names_the_refresh_that_fixes_it(stale_night: Path, tmp_path: Path) -> None:
    problems = [p for p in validate_paths([stale_night]).problems if p.code == "NM303"]
    assert len(problems) == 1
    assert (
        f"`numbermatch puzzle --refresh {stale_night}:L1.S1` re-derives id, certificate and rating"
        in problems[0].message
    )
    puzzle = Path(
        shutil.copy(sorted(REPO.glob("generated/**/nm*-*.yaml"))[0], tmp_path / "puzzle.yaml")
    )
    text = puzzle.read_text(encoding="utf-8")
    puzzle.write_text(
        re.sub(r"(?m)^adds: (\d+)$", lambda m: f"adds: {int(m[1]) + 1}", text, count=1),
        encoding="utf-8",
    )
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
    assert (
        after[after.index("  - stage: 2") :] == before[first_stage_end:]
    )  # every later byte as it was
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
