"""SOURCE everywhere: a board, a puzzle file, a bundle stage (`bundle.yaml:L1.S2`) or a puzzle
id, resolved one way by every command, and refused in one line; a puzzle id is looked up in
generated/ without --in."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from pipeline.engine.board import parse
from pipeline.formats.source import SourceError, resolve
from tests.helpers import run

REPO = Path(__file__).resolve().parent.parent

# A board a designer might draw: 18 cells, 1 add; solvable (checked in a test of authoring).
HAND = "123456789/987654321"


def test_source_resolves_notation_files_stages_and_ids(night: Path) -> None:
    bundle = night / "bundle.yaml"
    doc = yaml.safe_load(bundle.read_text())
    first = doc["levels"][0]["stages"][0]["puzzle"]
    stage = resolve(f"{bundle}:L1.S1")
    assert stage.cells == parse(first["board"]) and stage.adds == first["adds"]
    assert resolve(f"{bundle}:l1.s1").cells == stage.cells  # case does not matter
    by_id = resolve(first["id"], [night])
    assert (
        by_id.cells == stage.cells
        and by_id.puzzle is not None
        and by_id.puzzle["id"] == first["id"]
    )
    pool_file = sorted((night / "pool").glob("*.yaml"))[0]
    from_file = resolve(str(pool_file))
    assert from_file.label == pool_file.stem and from_file.adds is not None
    bare = resolve("1.......9/3.5")
    assert bare.adds is None and bare.adds_or(None) == 0 and bare.adds_or(2) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("12x", "invalid board '12x': row 0 has 'x' at column 2"),
        ("missing.yaml", "missing.yaml: no such file"),
        ("{bundle}", "is a bundle; name one stage"),
        ("{bundle}:L9.S1", "there is no L9"),
        ("{bundle}:L1.S9", "there is no S9"),
        ("{bundle}:stage2", "not of the form L<level>.S<stage>"),
        ("nm1-000000000000", "--in PATH"),
        ("12/3", "row 0 has 2 cells"),
    ],
)
def test_a_bad_source_is_one_line_naming_it(night: Path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        resolve(text.format(bundle=night / "bundle.yaml"))
    result = run("show", text.format(bundle=night / "bundle.yaml"))
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith("numbermatch: error:")


def test_an_id_in_none_of_the_files_says_so(night: Path) -> None:
    with pytest.raises(SourceError, match="in none of the"):
        resolve("nm1-000000000000", [night])


def test_a_malformed_puzzle_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: puzzle\nboard: [1, 2\n")
    result = run("show", str(bad))
    assert (
        result.exit_code == 1
        and f"{bad}:" in result.output
        and "YAML syntax error" in result.output
    )
    bad.write_text("kind: puzzle\nboard: 12x\nadds: 1\n")
    result = run("show", str(bad))
    assert result.exit_code == 1 and "$.board" in result.output and "'x'" in result.output


def test_engine_commands_take_a_stage_and_use_its_adds(night: Path) -> None:
    bundle = night / "bundle.yaml"
    first = yaml.safe_load(bundle.read_text())["levels"][0]["stages"][0]["puzzle"]
    src = f"{bundle}:L1.S1"
    shown = run("show", src)
    assert shown.exit_code == 0 and f"{src}: {first['adds']} add" in shown.output
    moves = run("moves", src, "--json")
    assert moves.exit_code == 0 and '"pairs"' in moves.output
    applied = run("apply", src, *first["solution"], "--json")
    assert (
        applied.exit_code == 0 and '"status": "won"' in applied.output
    )  # the puzzle's adds were used
    too_few = run("apply", src, *first["solution"], "--adds", "0")
    if "+" in first["solution"]:
        assert too_few.exit_code == 1 and "no adds left" in too_few.output
    solved = run("solve", first["id"], "--in", str(night), "--json")
    assert solved.exit_code == 0 and '"status": "solved"' in solved.output
    rated = run("rate", src, "--json")
    assert rated.exit_code == 0
    assert (
        f'"score": {first["difficulty"]["score"]}' in rated.output
    )  # reproduces the stored rating


@pytest.fixture
def nights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A folder like a game repository: generated/<night>/pool/ with one committed puzzle file
    (from anywhere under generated/); the current folder. Returns the puzzle's id."""
    committed = sorted(REPO.glob("generated/**/nm*-*.yaml"))[0]
    pool = tmp_path / "generated" / "2026-01-01" / "pool"
    pool.mkdir(parents=True)
    shutil.copy(committed, pool)
    monkeypatch.chdir(tmp_path)
    return committed.stem


def test_show_id_without_in_looks_in_generated(nights: str) -> None:
    result = run(*["show", nights])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{nights}: ")
    same = run(*["show", nights, "--in", "generated"])
    assert same.stdout == result.stdout


def test_an_id_not_in_generated_says_where_it_looked(nights: str) -> None:
    result = run(*["solve", "nm1-000000000000"])
    assert result.exit_code == 1
    assert (
        "under generated (looked in the default folder; --in PATH looks elsewhere)" in result.stderr
    )


def test_without_generated_an_id_asks_for_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(*["show", "nm1-000000000000"])
    assert result.exit_code == 1
    assert (
        "there is no generated/ folder here to look in; say where to look with --in PATH"
        in result.stderr
    )


def test_a_board_pasted_over_several_lines_reads_its_lines_as_rows() -> None:
    from pipeline.formats.source import resolve as resolved
    from tests.helpers import run

    for pasted in ("123456789\n987654321\n1\n", "123456789/\r\n  987654321\r\n1", "\n1234\n"):
        src = resolved(pasted)
        assert src.label == "/".join(r.strip().strip("/") for r in pasted.split() if r.strip())
    assert resolved("123456789\n987654321\n1").cells == resolved("123456789/987654321/1").cells
    shown = run("show", "123456789\n987654321\n1")
    assert shown.exit_code == 0 and shown.stdout == run("show", "123456789/987654321/1").stdout
    bad = run("show", "12x\n3")
    assert bad.exit_code == 1 and "'x' at column 2" in bad.output


def test_rate_reproduces_a_stored_rating_by_its_seed() -> None:
    """`rate` on a stored puzzle plays with the seed its stored rating was played with (a stock
    file's `provenance.rating_seed`); a pasted board, with nothing stored, plays seed 0; --seed wins."""
    from pipeline.rating import CONFIRM_SEED, DEFAULT_SEED
    from pipeline.rating.versions import stored_rating_seed

    stored = next(
        p
        for p in sorted(REPO.glob("generated/stock/**/nm*-*.yaml"))
        if yaml.safe_load(p.read_text())["difficulty"]["version"] == 4
    )
    puzzle = yaml.safe_load(stored.read_text())
    assert puzzle["provenance"]["rating_seed"] == CONFIRM_SEED
    rated = run("rate", str(stored), "--json")
    assert rated.exit_code == 0 and f'"score": {puzzle["difficulty"]["score"]},' in rated.output
    board = run("rate", puzzle["board"], "--adds", str(puzzle["adds"]), "--json")
    seed0 = run("rate", puzzle["board"], "--adds", str(puzzle["adds"]), "--seed", "0", "--json")
    assert board.output == seed0.output != rated.output
    # the stored certificate spares the solver its nodes, so only the score is the same
    explicit = run("rate", str(stored), "--seed", "0", "--json")
    assert json.loads(explicit.output)["score"] == json.loads(seed0.output)["score"]
    # a Stage without provenance: version 4 confirms; older versions rated with the default
    assert stored_rating_seed({"difficulty": {"version": 4}}, 4) == CONFIRM_SEED
    assert stored_rating_seed({"difficulty": {"version": 3}}, 4) == DEFAULT_SEED
    assert stored_rating_seed({"provenance": {"rating_seed": 7}}, 4) == 7
    assert stored_rating_seed({"provenance": {"rating_seed": True}}, 4) == DEFAULT_SEED
    assert stored_rating_seed(None, 4) == DEFAULT_SEED
