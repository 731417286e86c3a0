"""The validator: valid files pass; each kind of broken file is named, located and coded."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.formats import loader
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.validator import CODES, PathError, collect_files, validate_paths, validate_texts
from pipeline.validator.reporters import github_line, text_line
from tests.helpers import run

FIXTURES = Path(__file__).parent / "fixtures" / "validator"
VALID = FIXTURES / "valid"
BROKEN = FIXTURES / "broken"

# file -> (code, line, column) of the problem the defect must produce (other problems may follow)
EXPECTED = {
    # parse
    "bad_yaml.yaml": ("NM105", 8, 9),
    "duplicate_key.yaml": ("NM106", 8, 1),
    "empty.yaml": ("NM103", 1, 1),
    "not_utf8.yaml": ("NM102", 3, 12),
    "multi_document.yaml": ("NM108", 60, 1),
    "python_tag.yaml": ("NM109", 7, 7),
    "too_deep.yaml": ("NM107", 2, 72),
    "alias_bomb.yaml": ("NM107", None, None),
    # schema
    "not_a_mapping.yaml": ("NM201", 1, 1),
    "unknown_kind.yaml": ("NM201", 3, 7),
    "future_version.yaml": ("NM202", 2, 17),
    "missing_field.yaml": ("NM203", 2, 1),
    "unexpected_field.yaml": ("NM204", 8, 1),
    "wrong_type.yaml": ("NM205", 7, 7),
    # semantics
    "bad_notation.yaml": ("NM301", 6, 8),
    "unknown_ruleset.yaml": ("NM302", 5, 10),
    "tampered_board.yaml": ("NM303", 4, 5),
    "illegal_move.yaml": ("NM306", 9, 3),
    "too_many_adds.yaml": ("NM307", 10, 3),
    "incomplete_certificate.yaml": ("NM308", 9, 1),
    "wrong_tier.yaml": ("NM309", 24, 9),
    "wrong_score.yaml": ("NM310", 25, 10),
    "min_adds_over.yaml": ("NM311", 26, 13),
    "bundle_numbering.yaml": ("NM312", 60, 12),
    "bundle_duplicate_puzzle.yaml": ("NM304", 152, 11),
    "bundle_bad_puzzle.yaml": ("NM303", 63, 11),
}


def test_every_broken_fixture_has_an_expectation() -> None:
    assert sorted(p.name for p in BROKEN.iterdir()) == sorted(EXPECTED)


def test_valid_files_pass() -> None:
    report = validate_paths([VALID])
    assert report.problems == []
    assert report.ok and report.files == 3 and report.documents == 3


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_file_is_reported_at_its_defect(name: str) -> None:
    code, line, column = EXPECTED[name]
    report = validate_paths([BROKEN / name])
    assert not report.ok
    first = next(p for p in report.problems if p.code == code)
    assert first.file == str(BROKEN / name)
    if line is not None:
        assert (first.line, first.column) == (line, column), text_line(first)
    assert all(p.code in CODES for p in report.problems)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cli_exits_1_naming_the_file_without_traceback(name: str) -> None:
    result = run(*["validate", str(BROKEN / name)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"{BROKEN / name}:" in result.stdout
    assert "Traceback" not in result.output


def test_certificate_problems_name_the_move() -> None:
    (illegal,) = validate_paths([BROKEN / "illegal_move.yaml"]).problems
    assert (
        illegal.path == "$.solution[0]"
        and "0,0-0,2" in illegal.message
        and "neither equal nor sum to 10" in illegal.message
    )
    (adds,) = validate_paths([BROKEN / "too_many_adds.yaml"]).problems
    assert adds.path == "$.solution[1]" and "allows 1 add" in adds.message


def test_ids_are_unique_across_files() -> None:
    report = validate_paths([FIXTURES / "duplicate_ids"])
    (dup,) = report.problems
    assert dup.code == "NM304" and dup.file.endswith("b.yaml") and "a.yaml:4" in dup.message
    assert validate_paths([FIXTURES / "duplicate_ids" / "a.yaml"]).ok


def test_every_problem_of_every_file_is_reported() -> None:
    text = (VALID / "puzzle.yaml").read_text()
    text = text.replace("adds: 1\n", "adds: -1\nextra: 1\n", 1).replace(
        "ruleset: 1\n", "ruleset: one\n", 1
    )
    report = validate_texts([("a.yaml", text), ("b.yaml", "kind: bundle\nlevels: []\n")])
    codes = sorted((p.file, p.code) for p in report.problems)
    assert codes == [
        ("a.yaml", "NM204"),
        ("a.yaml", "NM205"),
        ("a.yaml", "NM208"),
        ("b.yaml", "NM203"),
        ("b.yaml", "NM203"),
        ("b.yaml", "NM203"),
        ("b.yaml", "NM208"),
    ]


def test_too_large_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "MAX_BYTES", 100)
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * 200 + "\n")
    (problem,) = validate_paths([big]).problems
    assert problem.code == "NM104" and "limited to 100 bytes" in problem.message


def test_shape_decides_when_kind_is_missing() -> None:
    (problem,) = validate_texts([("x.yaml", "hello: world\n")]).problems
    assert problem.code == "NM201" and "no `kind`" in problem.message
    report = validate_texts(
        [("y.yaml", (VALID / "puzzle.yaml").read_text().replace("kind: puzzle\n", ""))]
    )
    assert [(p.code, p.path) for p in report.problems] == [("NM203", "$.kind")]


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = run(*["validate", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "no such file or folder" in missing.output
    empty = run(*["validate", str(tmp_path)])
    assert empty.exit_code == 2 and "no YAML files" in empty.output
    with pytest.raises(PathError):
        collect_files([tmp_path])


def test_folders_are_searched_recursively_skipping_hidden(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    for rel in ("a/b/x.yml", "a/y.yaml", ".git/z.yaml", "a/readme.txt"):
        (tmp_path / rel).write_text("x: 1\n")
    assert [p.relative_to(tmp_path).as_posix() for p in collect_files([tmp_path])] == [
        "a/b/x.yml",
        "a/y.yaml",
    ]


def test_a_wrong_tier_names_the_rating_version_whose_table_it_checks_against() -> None:
    """A stored block is checked against its own rating version's tier table (an old file's
    table is not today's): NM309 says which version's table it shows."""
    from pipeline.rating.tiers import RATING_VERSION, TIERS_BY_VERSION

    broken = run("validate", str(BROKEN / "wrong_tier.yaml"))  # a block without `version`: 1
    v1 = ", ".join(f"{n} {lo:g}-{hi:g}" for n, lo, hi in TIERS_BY_VERSION[1])
    assert f"which is 'medium' by rating version 1's tiers ({v1})" in broken.output
    block = yaml.safe_load((BROKEN / "wrong_tier.yaml").read_text(encoding="utf-8"))["difficulty"]
    assert "version" not in block  # so the table shown is not today's
    assert TIERS_BY_VERSION[RATING_VERSION] != TIERS_BY_VERSION[1]


def test_cli_text_json_and_github_formats() -> None:
    ok = run(*["validate", str(VALID)])
    assert ok.exit_code == 0 and ok.stdout == "" and "3 files checked: all valid" in ok.output
    broken = str(BROKEN / "wrong_tier.yaml")
    text = run(*["validate", broken])
    assert text.stdout.startswith(f"{broken}:24:9: NM309: tier 'expert' does not match score")
    as_json = run(*["validate", broken, "--format", "json"])
    data = json.loads(as_json.stdout)
    assert (
        as_json.exit_code == 1
        and data["ok"] is False
        and data["problems"][0]["path"] == "$.difficulty.tier"
    )
    github = run(
        *["validate", broken, "--format", "github"], env={"GITHUB_WORKSPACE": str(BROKEN.parent)}
    )
    assert github.stdout.startswith(
        "::error file=broken/wrong_tier.yaml,line=24,col=9,title=NM309::NM309: tier"
    )


def test_github_annotations_name_files_relative_to_the_workspace_else_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub attaches an annotation only to a path relative to the repository root."""
    levels = tmp_path / "repo" / "levels"
    levels.mkdir(parents=True)
    shutil.copy(BROKEN / "wrong_tier.yaml", levels / "x.yaml")
    outside = tmp_path / "elsewhere.yaml"
    shutil.copy(BROKEN / "wrong_tier.yaml", outside)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "repo"))
    monkeypatch.chdir(levels)
    result = run(*["validate", str(levels), str(outside), "--format", "github"])
    files = sorted({line.split(",")[0] for line in result.stdout.splitlines()})
    assert files == [
        f"::error file={outside}",
        "::error file=levels/x.yaml",
    ]  # outside the workspace: as given
    monkeypatch.delenv("GITHUB_WORKSPACE")
    result = run(*["validate", str(levels / "x.yaml"), "--format", "github"])
    assert result.stdout.startswith("::error file=x.yaml,line=24")
    monkeypatch.chdir(tmp_path)
    result = run(*["validate", "repo/levels", "--format", "github"])
    assert result.stdout.startswith("::error file=repo/levels/x.yaml,line=24")


def test_github_annotations_escape_their_delimiters() -> None:
    from pipeline.validator import Problem

    line = github_line(Problem("a,b:c.yaml", 1, 2, "NM105", "50% bad\nnext", "$"))
    assert line == "::error file=a%2Cb%3Ac.yaml,line=1,col=2,title=NM105::NM105: 50%25 bad%0Anext"


def _puzzle_text(board: str, adds: int, solution: list[str]) -> str:
    """A puzzle file for another board, with the (self-consistent) rating of the valid fixture."""
    difficulty = yaml.safe_load((VALID / "puzzle.yaml").read_text())["difficulty"]
    return dump_yaml(Puzzle(board, adds, tuple(solution), difficulty).to_document())


def test_deep_reproduces_the_recorded_rating() -> None:
    assert validate_paths([VALID / "puzzle.yaml"], deep=True).ok


def test_deep_reports_a_solver_proof_of_unsolvability() -> None:
    text = _puzzle_text("12", 1, ["0,0-0,1"])
    shallow = validate_texts([("u.yaml", text)])
    deep = validate_texts([("u.yaml", text)], deep=True)
    assert [p.code for p in shallow.problems] == ["NM306"]
    assert sorted(p.code for p in deep.problems) == ["NM306", "NM401"]


def test_a_freshly_generated_puzzle_validates(tmp_path: Path) -> None:
    from pipeline.generation.generator import GenerateParams, generate

    (puzzle,) = generate(1, GenerateParams(cells=14, adds=1, seed=3, playouts=8), jobs=1).puzzles
    path = tmp_path / "fresh.yaml"
    path.write_text(dump_yaml(puzzle.to_document()))
    assert validate_paths([path]).problems == []


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_mangled_files_are_reported_never_raised(data: st.DataObject) -> None:
    text = (VALID / "puzzle.yaml").read_text()
    start = data.draw(st.integers(0, len(text) - 1))
    length = data.draw(st.integers(0, 12))
    insert = data.draw(st.text(alphabet=":-[]{}&*!|>'\"# \n\t0123456789.,+abc", max_size=6))
    mangled = text[:start] + insert + text[start + length :]
    report = validate_texts([("m.yaml", mangled)])
    assert all(p.file == "m.yaml" and p.code in CODES for p in report.problems)
    if mangled == text:
        assert report.ok


def test_validate_deep_shows_progress_on_a_terminal_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os
    import pty
    from pathlib import Path

    fixture = Path(__file__).parent / "fixtures" / "validator" / "valid" / "puzzle.yaml"
    piped = run(*["validate", "--deep", str(fixture)])
    assert "deep check" not in piped.output
    master, slave = pty.openpty()
    code = f"import sys; sys.argv=['numbermatch','validate','--deep',{str(fixture)!r}]; from pipeline.cli import main; main()"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert proc.wait(timeout=60) == piped.exit_code
    assert (
        b"deep check: file 1 of 1" in seen
        and b"deep check: 1 puzzle re-solved and re-rated" in seen
    )


def test_a_crash_on_one_file_is_a_problem_record_and_the_run_goes_on(
    tmp_path: Path, monkeypatch
) -> None:
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
