"""The docs are tested: every console example of README.md and docs/ prints what it shows, the
site builds with `mkdocs build --strict`, the collector itself fails on a wrong example, and the
test map (tests/README.md) names every test module, each saying its subject."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sybil.example import SybilFailure

import tests.docs_examples as docs_examples
from tests.docs_cli import PAGE, reference
from tests.docs_examples import (
    ROOT,
    committed_changes,
    console_regions,
    doc_files,
    examples,
    matches,
    merge,
    parse_block,
    refusal,
    rewrite,
    scratch_copy,
)
from tests.docs_images import SVGS, render_svg

pytestmark = pytest.mark.docs

REGENERATE = "the docs are out of date: run `make docs-examples` and review the diff"


def _with_examples() -> list[Path]:
    return [path for path in doc_files() if console_regions(path)]


def _failures(path: Path, cwd: Path) -> list[str]:
    """Run a file's examples in order in cwd; what each failing one reports."""
    failures = []
    for example in examples(path, cwd):
        try:
            example.evaluate()
        except SybilFailure as failure:
            failures.append(str(failure))
    return failures


@pytest.mark.parametrize("path", _with_examples(), ids=lambda p: str(p.relative_to(ROOT)))
def test_console_examples_print_what_they_show(path: Path, tmp_path: Path) -> None:
    failures = _failures(path, scratch_copy(tmp_path / "repo"))
    assert not failures, "\n\n".join([*failures, REGENERATE])


def test_the_tutorial_follows_the_readme_tour_in_the_same_folder(tmp_path: Path) -> None:
    """A reader who types the README's tour and then docs/tutorial.md in one folder sees what the
    tutorial shows: the tour puts back the Stage it swapped and keeps its files apart."""
    cwd = scratch_copy(tmp_path / "repo")
    assert not _failures(ROOT / "README.md", cwd)
    failures = _failures(ROOT / "docs" / "tutorial.md", cwd)
    assert not failures, "\n\n".join(["after the README's tour:", *failures])


def test_the_cli_reference_is_what_the_commands_print() -> None:
    assert PAGE.read_text(encoding="utf-8") == reference(), REGENERATE


@pytest.mark.parametrize("picture", sorted(SVGS))
def test_each_docs_svg_is_what_render_draws_now(picture: str, tmp_path: Path) -> None:
    fresh = render_svg(picture, tmp_path / "fresh.svg")
    assert (ROOT / picture).read_bytes() == fresh, (
        "docs pictures are out of date: run `make docs-images`"
    )


def test_mkdocs_builds_strict(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "--site-dir",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_the_readme_is_a_front_door() -> None:
    """At most about 200 lines; the set-up Debian needs; a link to the night's cost as `make
    bench` measured it, not a guess; and no pointer to a rules file the repository does not have."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "python3-venv" in text
    assert "make bench" in text and "(docs/nightly.md#what-a-night-costs)" in text
    assert "RULES.md" not in text and (ROOT / "docs" / "rules.md").is_file()
    links = set(re.findall(r"\]\((docs/[^)#]+)", text))
    for link in links:
        assert (ROOT / link).is_file(), link
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} - {"docs/index.md"}
    assert not pages - links, (
        f"add these pages to the README's Documentation table: {sorted(pages - links)}"
    )


def test_what_a_night_costs_is_said_in_one_place() -> None:
    """The night's cost is one measurement of `make bench`, with the machine and its load, in
    docs/nightly.md; the README and docs/stock.md link to it and state no timings of their own
    (they had three that contradicted each other)."""
    nightly = (ROOT / "docs" / "nightly.md").read_text(encoding="utf-8")
    section = nightly.split("\n## What a night costs\n", 1)[1].split("\n## ", 1)[0]
    assert "make bench" in section and "load average" in section and "cores" in section
    assert re.search(r"\| in all \| [\d.]+ s \| [\d.]+ s \|", section)
    timing = re.compile(r"\b\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)? s\b(?! *\))")
    for name, link in (
        ("README.md", "docs/nightly.md#what-a-night-costs"),
        ("docs/stock.md", "nightly.md#what-a-night-costs"),
    ):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert f"]({link})" in text, name
        prose = re.sub(r"(?s)```.*?```", "", text)  # console output elides its seconds anyway
        part = prose.split("## What a night costs", 1)[-1] if name != "README.md" else prose
        assert not timing.findall(part.split("\n## ", 1)[0]), (name, timing.findall(part))


def test_the_test_map_names_every_test_module() -> None:
    """tests/README.md (where a test goes; docs/architecture.md points to it) names every test
    module, and no module that is gone."""
    text = (ROOT / "tests" / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_\w+\.py)`", text))
    present = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    assert not present - named, f"add a row to tests/README.md for {sorted(present - named)}"
    assert not named - present, (
        f"tests/README.md names modules that are gone: {sorted(named - present)}"
    )


def test_test_modules_say_their_subject_not_an_issue() -> None:
    """Every test module opens with a docstring; no docstring cites an issue or an item number
    (the subject outlives the issue that asked for the test, and the map above files by subject)."""
    cites = re.compile(r"(?i)\b(issues?|items?) \d|^\d\d\.\d+:|\(\d\d\.\d+\)")
    found = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not ast.get_docstring(tree):
            found.append(f"{path.name}: no docstring naming its subject")
        for node in [tree, *ast.walk(tree)]:
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                cited = cites.search(ast.get_docstring(node) or "")
                if cited:
                    found.append(
                        f"{path.name}: {getattr(node, 'name', 'module')} cites {cited.group(0)!r}"
                    )
    assert found == [], "say the subject instead:\n" + "\n".join(found)


# --- the collector itself -------------------------------------------------------------------


def test_a_block_is_commands_each_with_the_output_shown_after_it() -> None:
    steps = parse_block("$ echo a \\\n    b\na b\n$ true\n\n$ echo c\nc\n")
    assert [(s.command, s.shown, s.blank_after) for s in steps] == [
        ("echo a \\\n    b", "a b", 0),
        ("true", "", 1),
        ("echo c", "c", 0),
    ]
    with pytest.raises(ValueError, match="starts with output"):
        parse_block("output first\n$ echo\n")


def test_three_dots_match_any_text_but_a_board_gap_run_is_literal() -> None:
    assert matches("took ... s", "took 0.25 s")
    assert matches("a\n...\nz", "a\nb\nc\nz")
    assert matches(
        '{"moves": ["0,1-1,1", ...], "nodes": 16}', '{"moves": ["0,1-1,1", "0,2-1,2"], "nodes": 16}'
    )
    assert not matches("took ... s", "took 0.25 ms")
    assert matches("1.......9/3.5", "1.......9/3.5")
    assert not matches("1.......9/3.5", "1..xxxx..9/3.5")
    assert matches("trailing   \n\n", "trailing")


def test_a_wrong_example_fails_and_rewrite_fixes_it_keeping_its_dots(tmp_path: Path) -> None:
    doc = tmp_path / "page.md"
    doc.write_text(
        "Some text.\n\n```console\n$ echo one; echo took 3.2 s\nzero\ntook ... s\n$ echo fine\nfine\n```\n\n"
        "<!-- skip: next -->\n```console\n$ echo never run\nwrong on purpose\n```\n"
        "```sh\n$ echo not a console block\n```\n",
        encoding="utf-8",
    )
    failures = _failures(doc, tmp_path)
    assert (
        len(failures) == 1
        and "$ echo one; echo took 3.2 s" in failures[0]
        and "zero" in failures[0]
    )
    assert rewrite(doc, tmp_path) == (True, [])
    text = doc.read_text(encoding="utf-8")
    assert "$ echo one; echo took 3.2 s\none\ntook ... s\n$ echo fine\nfine\n```" in text
    assert "wrong on purpose" in text  # the skipped block is left alone
    assert rewrite(doc, tmp_path) == (False, [])  # now up to date


def test_merge_keeps_shown_dots_only_where_they_still_match() -> None:
    assert merge("a\n...\nz", "a\nb\nz") == "a\n...\nz"  # matches as a whole: kept as shown
    assert (
        merge("score 12.28\nnodes ... \nend", "score 14.68\nnodes 16\nend")
        == "score 14.68\nnodes ...\nend"
    )


def test_rewrite_names_a_command_that_now_fails(tmp_path: Path) -> None:
    doc = tmp_path / "page.md"
    doc.write_text(
        "```console\n$ sh -c 'echo numbermatch: error: gone; exit 3'\nit worked\n\n"
        "$ sh -c 'echo 1 problem; exit 1'\nno problem\n$ echo ok\nok\n```\n",
        encoding="utf-8",
    )
    changed, failed = rewrite(doc, tmp_path)  # a report with exit 1 is output like any other
    assert changed and len(failed) == 1 and "exit status 3" in failed[0] and "gone" in failed[0]
    assert doc.read_text(encoding="utf-8") == (
        "```console\n$ sh -c 'echo numbermatch: error: gone; exit 3'\nnumbermatch: error: gone\n\n"
        "$ sh -c 'echo 1 problem; exit 1'\n1 problem\n$ echo ok\nok\n```\n"
    )


# --- the examples run on the committed night and stock, whatever a night left ---------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def _repo_after_a_night(repo: Path) -> Path:
    """A checkout with a committed night and stock, then changed as `make nightly` changes one:
    a stock puzzle moved out (deleted), a new one written, a new night, and a page in progress."""
    for name, text in {
        "generated/stock/a.yaml": "committed a\n",
        "generated/stock/b.yaml": "committed b\n",
        "generated/2026-11-29/bundle.yaml": "committed night\n",
        "docs/page.md": "committed page\n",
    }.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "night")
    (repo / "generated/stock/a.yaml").unlink()
    (repo / "generated/stock/b.yaml").write_text("changed b\n")
    (repo / "generated/stock/new.yaml").write_text("a night's new puzzle\n")
    (repo / "generated/2026-12-02").mkdir()
    (repo / "generated/2026-12-02/bundle.yaml").write_text("tonight\n")
    (repo / "docs/page.md").write_text("the page being written\n")
    return repo


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(folder).parts
    }


def test_the_examples_read_the_committed_night_and_stock_not_what_a_night_left(
    tmp_path: Path,
) -> None:
    """`make nightly` moves puzzles out of the committed stock and writes a night; the examples
    then still see generated/ as committed (else `make nightly && make test` fails), and the
    rest of the checkout as the working tree has it (the change being made)."""
    repo = _repo_after_a_night(tmp_path / "repo")
    copy = scratch_copy(tmp_path / "copy", root=repo)
    assert _files(copy) == {
        "docs/page.md": "the page being written\n",
        "generated/2026-11-29/bundle.yaml": "committed night\n",
        "generated/stock/a.yaml": "committed a\n",
        "generated/stock/b.yaml": "committed b\n",
    }


def test_rewriting_the_docs_refuses_while_committed_files_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make docs-examples` after a night would write output that the committed files do not
    give: it refuses in one line saying what to do, and writes nothing."""
    repo = _repo_after_a_night(tmp_path / "repo")
    changes = committed_changes(repo)
    assert sorted(changes) == ["D\tgenerated/stock/a.yaml", "M\tgenerated/stock/b.yaml"]
    line = refusal(changes)
    assert "\n" not in line and "2 committed file(s) under generated/" in line
    assert "commit the change first" in line and "git checkout HEAD -- generated/" in line
    page = tmp_path / "page.md"
    page.write_text("```console\n$ echo now\nbefore\n```\n")
    monkeypatch.setattr(docs_examples, "committed_changes", lambda: changes)
    assert docs_examples.main(["--rewrite", str(page)]) == 1
    assert page.read_text() == "```console\n$ echo now\nbefore\n```\n"
    assert capsys.readouterr().err.strip() == line
    # a checkout as committed (new files do not count) is rewritten as before
    _git(repo, "checkout", "HEAD", "--", "generated/")
    assert committed_changes(repo) == []
