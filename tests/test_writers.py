"""Every command that writes a level file, through the CLI: swap, `puzzle --refresh`, the `--out`
of puzzle, assemble and report, the nightly's rerun and `--continue`. Modes and links are kept,
read-only files and files of another kind are refused in one line, two swaps from one reading
never lose one, the old puzzle reaches the pool first, the reports follow a swap. (The guarded
write itself: test_atomic.py; many trials of racing writers: test_fuzz_writers.py.)"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import one_line_refusal, run

# --- every writer of a level file, through the CLI ----------------------------------------------


def stage_ids(bundle: Path) -> list[str]:
    import yaml

    doc = yaml.safe_load(bundle.read_text())
    return [s["puzzle"]["id"] for lv in doc["levels"] for s in lv["stages"]]


def test_two_swaps_from_one_reading_never_lose_one(night_to_edit: Path) -> None:
    """The second of two swaps made from the same reading of the bundle is refused in
    one line instead of writing over the first (it used to print success and lose it)."""
    from pipeline.jobs.inputs import load_puzzles
    from pipeline.jobs.swap import SwapError, commit_swap, swap_stage

    bundle = night_to_edit / "bundle.yaml"
    pool = load_puzzles([night_to_edit / "pool"])
    first = swap_stage(bundle, 1, 1, pool, write=False)
    second = swap_stage(bundle, 1, 3, pool, write=False)
    commit_swap(first, night_to_edit / "pool")
    with pytest.raises(
        SwapError, match=r"bundle.yaml changed on disk since it was read; nothing written"
    ):
        commit_swap(second, night_to_edit / "pool")
    ids = stage_ids(bundle)
    assert ids[0] == first.new.id and ids[2] == second.old_id
    assert not (
        night_to_edit / "pool" / f"{second.old_id}.yaml"
    ).exists()  # its pool copy was taken back
    assert (night_to_edit / "pool" / f"{first.old_id}.yaml").exists()


@pytest.mark.parametrize("mode", [0o600, 0o640])
def test_swap_and_refresh_keep_the_mode(night_to_edit: Path, mode: int) -> None:
    """A private file stays private."""
    bundle = night_to_edit / "bundle.yaml"
    os.chmod(bundle, mode)
    assert run("swap", str(bundle), "L1.S2").exit_code == 0
    assert stat.S_IMODE(bundle.stat().st_mode) == mode
    puzzle = sorted((night_to_edit / "pool").glob("*.yaml"))[0]
    puzzle.write_text(
        puzzle.read_text()
        .replace("score:", "score: 9.5\n  old_score:", 1)
        .replace("  old_score:", "  #", 1)
    )
    os.chmod(puzzle, mode)
    result = run("puzzle", "--refresh", str(puzzle))
    assert result.exit_code == 0 and "rewritten" in result.output, result.output
    assert stat.S_IMODE(puzzle.stat().st_mode) == mode


def test_a_read_only_bundle_or_puzzle_is_refused(night_to_edit: Path) -> None:
    """A 0444 file is not made writable by replacing it."""
    bundle = night_to_edit / "bundle.yaml"
    before = bundle.read_bytes()
    pool_before = sorted(p.name for p in (night_to_edit / "pool").iterdir())
    os.chmod(bundle, 0o444)
    one_line_refusal(
        run("swap", str(bundle), "L1.S2"), "bundle.yaml: is read-only (mode 0444); nothing written"
    )
    assert bundle.read_bytes() == before and stat.S_IMODE(bundle.stat().st_mode) == 0o444
    assert (
        sorted(p.name for p in (night_to_edit / "pool").iterdir()) == pool_before
    )  # no puzzle left behind in the pool
    puzzle = sorted((night_to_edit / "pool").glob("*.yaml"))[0]
    puzzle.write_text(puzzle.read_text().replace("score:", "score: 9.5\n  #", 1))
    edited = puzzle.read_bytes()
    os.chmod(puzzle, 0o444)
    result = run("puzzle", "--refresh", str(puzzle))
    assert result.exit_code == 1 and "is read-only (mode 0444); nothing written" in result.output
    assert puzzle.read_bytes() == edited


def test_swap_and_refresh_write_through_a_link(night_to_edit: Path, tmp_path: Path) -> None:
    """The shared file changes; the link stays a link (it used to become a private copy)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (night_to_edit / "bundle.yaml").rename(shared / "bundle.yaml")
    (night_to_edit / "bundle.yaml").symlink_to(shared / "bundle.yaml")
    before = stage_ids(shared / "bundle.yaml")
    assert run("swap", str(night_to_edit / "bundle.yaml"), "L1.S2").exit_code == 0
    assert (night_to_edit / "bundle.yaml").is_symlink()
    after = stage_ids(shared / "bundle.yaml")
    assert after[1] != before[1] and (night_to_edit / "pool" / f"{before[1]}.yaml").exists()
    puzzle = sorted((night_to_edit / "pool").glob("*.yaml"))[0]
    puzzle.rename(shared / puzzle.name)
    puzzle.symlink_to(shared / puzzle.name)
    (shared / puzzle.name).write_text(
        (shared / puzzle.name).read_text().replace("score:", "score: 9.5\n  #", 1)
    )
    assert run("puzzle", "--refresh", str(puzzle)).exit_code == 0
    assert puzzle.is_symlink() and "score: 9.5" not in (shared / puzzle.name).read_text()


def test_refresh_keeps_comments_and_refuses_to_drop_a_field(night_to_edit: Path) -> None:
    """Only the values that changed are rewritten; a `notes:` field is refused with its
    line (it used to vanish under "rewritten: formatting only")."""
    puzzle = sorted((night_to_edit / "pool").glob("*.yaml"))[0]
    text = puzzle.read_text()
    edited = "# Ann's favourite; do not ship before March\n" + text.replace("adds:", "adds:", 1)
    edited = edited.replace("\nboard: ", "\n# the board below was redrawn by hand\nboard: ", 1)
    edited = edited.replace("score:", "score: 9.5  # guessed\n  #", 1)
    puzzle.write_text(edited)
    result = run("puzzle", "--refresh", str(puzzle))
    assert result.exit_code == 0 and "rewritten: score 9.5 ->" in result.output, result.output
    after = puzzle.read_text()
    assert after.startswith("# Ann's favourite; do not ship before March\n")
    assert "# the board below was redrawn by hand\n" in after and "score: 9.5" not in after
    assert (
        after.replace("# Ann's favourite; do not ship before March\n", "").replace(
            "# the board below was redrawn by hand\n", ""
        )
        == text
    )
    puzzle.write_text(text + "notes: keep this one\n")
    result = run("puzzle", "--refresh", str(puzzle))
    assert (
        result.exit_code == 1
        and "'notes' (line" in result.output
        and "is not a puzzle field" in result.output
    )
    assert puzzle.read_text() == text + "notes: keep this one\n"


def test_swap_puts_the_old_puzzle_into_the_pool_before_the_bundle(
    night_to_edit: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pool first, so a kill between the writes never loses the old puzzle."""
    import pipeline.atomic

    bundle = night_to_edit / "bundle.yaml"
    old = stage_ids(bundle)[1]
    order: list[str] = []
    real = pipeline.atomic.write_guarded

    def spy(path, data, **kw):  # type: ignore[no-untyped-def]
        order.append(Path(path).name)
        return real(path, data, **kw)

    monkeypatch.setattr("pipeline.jobs.swap.write_guarded", spy)  # swap's own binding of it
    assert run("swap", str(bundle), "L1.S2").exit_code == 0
    assert order[:2] == [f"{old}.yaml", "bundle.yaml"]  # then the reports


def test_swap_with_an_unwritable_pool_is_one_line_and_writes_nothing(night_to_edit: Path) -> None:
    """No PermissionError traceback, the bundle untouched."""
    bundle = night_to_edit / "bundle.yaml"
    before = bundle.read_bytes()
    os.chmod(night_to_edit / "pool", 0o555)
    try:
        one_line_refusal(run("swap", str(bundle), "L1.S2"), "pool: it is not a writable folder")
    finally:
        os.chmod(night_to_edit / "pool", 0o755)
    assert bundle.read_bytes() == before


def test_outputs_never_clobber_a_bundle_or_another_kind_without_force(
    night_to_edit: Path, tmp_path: Path
) -> None:
    """`puzzle --out` and `assemble --out` onto a bundle or notes used to overwrite them."""
    bundle = night_to_edit / "bundle.yaml"
    before = bundle.read_bytes()
    notes = night_to_edit / "notes.txt"
    notes.write_text("my notes\n")
    one_line_refusal(
        run("puzzle", "123456789/987654321", "--adds", "1", "--out", str(bundle)),
        "bundle.yaml: exists and is a bundle file; nothing written (--force replaces it)",
    )
    one_line_refusal(
        run("puzzle", "123456789/987654321", "--adds", "1", "--out", str(notes)),
        "notes.txt: exists and is a file of another kind; nothing written",
    )
    assemble = [
        "assemble",
        str(bundle),
        str(night_to_edit / "pool"),
        "--levels",
        "1",
        "--stages",
        "4",
        "--curve",
        "ramp",
    ]
    one_line_refusal(
        run(*assemble, "--out", str(bundle)),
        "bundle.yaml: exists and is a bundle file; nothing written",
    )
    assert bundle.read_bytes() == before and notes.read_text() == "my notes\n"
    assert run(*assemble, "--out", str(bundle), "--force").exit_code == 0
    assert bundle.read_bytes() != before
    (night_to_edit / "mine.html").write_text("my page\n")
    one_line_refusal(
        run("report", str(bundle), "--out", str(night_to_edit / "mine.html")),
        "mine.html: exists and is a file of another kind",
    )
    assert (
        run("report", str(bundle), "--out", str(night_to_edit / "report.html")).exit_code == 0
    )  # its own kind: replaced
    made = run("puzzle", "123456789/987654321", "--adds", "1", "--out", str(tmp_path / "p.yaml"))
    again = run("puzzle", "123456789/987654321", "--adds", "1", "--out", str(tmp_path / "p.yaml"))
    assert made.exit_code == 0 and again.exit_code == 0  # a puzzle file may replace a puzzle file


def test_swap_re_renders_report_html_and_marks_report_md_stale(night_to_edit: Path) -> None:
    """After `swap` the night's reports no longer describe the old bundle."""
    bundle = night_to_edit / "bundle.yaml"
    os.chmod(night_to_edit / "report.md", 0o600)
    result = run("swap", str(bundle), "L1.S2")
    assert result.exit_code == 0, result.output
    new = stage_ids(bundle)[1]
    assert new in (night_to_edit / "report.html").read_text()
    assert f"{night_to_edit / 'report.html'} re-rendered" in result.output
    assert f"{night_to_edit / 'report.md'} marked stale" in result.output
    md = (night_to_edit / "report.md").read_text()
    assert "> **Stale:** bundle.yaml was edited after this report was written (L1.S2 swapped)" in md
    assert stat.S_IMODE((night_to_edit / "report.md").stat().st_mode) == 0o600


# --- the nightly job as a writer ------------------------------------------------------------------


def test_a_rerun_of_a_night_is_refused_without_force_and_keeps_a_designers_files(
    night_copy: Path,
) -> None:
    """`nightly --date D` when D/ exists used to replace the whole folder, exit 0."""
    folder = night_copy / "2026-01-02"
    (folder / "notes.md").write_text("# my notes\n")
    (folder / "playtests").mkdir()
    (folder / "playtests" / "ann.txt").write_text("too hard\n")
    assert run("swap", str(folder / "bundle.yaml"), "L1.S2").exit_code == 0
    swapped = (folder / "bundle.yaml").read_bytes()
    returned = sorted(p.name for p in (folder / "pool").iterdir())
    args = [
        "nightly",
        "--date",
        "2026-01-02",
        "--out",
        str(night_copy),
        "--levels",
        "1",
        "--stages",
        "4",
        "--curve",
        "ramp",
        "-j",
        "1",
    ]
    refused = run(*args)
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert (
        f"{folder} exists: the night of 2026-01-02 is already published; nothing written (--force"
        in refused.output
    )
    assert (folder / "bundle.yaml").read_bytes() == swapped
    forced = run(*args, "--force")
    assert forced.exit_code == 0, forced.output
    assert "publish: replaced" in forced.output and "bundle.yaml" in forced.output
    assert "kept 3 not made by this run: notes.md, playtests/, pool/" in forced.output
    assert (folder / "notes.md").read_text() == "# my notes\n"
    assert (folder / "playtests" / "ann.txt").read_text() == "too hard\n"
    assert (
        sorted(p.name for p in (folder / "pool").iterdir()) == returned
    )  # the swapped-out puzzle stays too
    assert (folder / "bundle.yaml").read_bytes() != swapped  # the job's bundle again, as asked
    assert not [p.name for p in night_copy.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("make", ["dangling", "folder", "fifo", "puzzle"])
def test_continue_from_a_broken_newest_night_fails_in_one_line(night_copy: Path, make: str) -> None:
    """It used to continue from the night before (Levels shipped twice) or crash."""
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
    what = {
        "dangling": "a link to a missing file",
        "folder": "a folder",
        "fifo": "not a regular file",
        "puzzle": "a puzzle file",
    }[make]
    one_line_refusal(result, f"{bundle} is {what}, not a bundle; cannot continue from it")
    assert not (night_copy / "2026-01-03").exists()


# --- every write in the package goes through the guarded write ----------------------------------

PACKAGE = Path(__file__).resolve().parent.parent / "pipeline"
# Writes that are not a file's contents, or that only ever touch what the same code just made,
# by (module, function, call): each says why it is not the guarded write's business. A write not
# listed here, outside pipeline/atomic.py, fails the test below.
NOT_GUARDED = {
    ("jobs/publish.py", "sweep", "os.rename"): "moves a staging folder of ours back in place",
    ("jobs/publish.py", "publish", "os.rename"): "swaps a whole night folder in (a folder)",
    ("jobs/publish.py", "make_staging", "write_text"): "marks the folder mkdtemp just made",
    ("stock/night.py", "stage_aside", "os.replace"): "moves our staged stock move between folders",
    ("stock/night.py", "_move", "os.replace"): "moves a file we staged where no file is",
    ("stock/store.py", "set_aside", "os.replace"): "moves a stock file aside, where no file is",
    ("formats/index.py", "_open", "sqlite3.connect"): "the stock index: a cache of ours",
    ("formats/index.py", "_memory", "sqlite3.connect"): "an in-memory database",
    ("cli/__init__.py", "main", "os.open"): "opens /dev/null to silence a closed stdout",
    (
        "telemetry/simulate.py",
        "records_parquet",
        "COPY ... TO",
    ): "DuckDB writes Parquet into a temp folder made there; its bytes then go through the guard",
}
# pipeline/bench/ writes its fixtures into temporary folders it makes (and removes).
UNGUARDED_FOLDERS = ("bench",)
_WRITE_CALLS = {
    "os.replace",
    "os.rename",
    "os.renames",
    "os.link",
    "os.symlink",
    "os.write",
    "os.truncate",
    "shutil.move",
    "shutil.copy",
    "shutil.copy2",
    "shutil.copyfile",
    "shutil.copytree",
    "tempfile.mkstemp",
    "tempfile.NamedTemporaryFile",
    "tempfile.TemporaryFile",
    "sqlite3.connect",
}
_WRITE_METHODS = {"write_text", "write_bytes", "write_atomic", "symlink_to", "hardlink_to"}
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _dotted(node: Any) -> str:
    import ast

    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _writes(source: str) -> list[tuple[str, str, int]]:
    """(function, call, line) of every call in `source` that writes a file."""
    import ast

    tree = ast.parse(source)
    found: list[tuple[str, str, int]] = []

    def mode_of(call: ast.Call, position: int) -> str:
        args = list(call.args)
        node = args[position] if len(args) > position else None
        for kw in call.keywords:
            if kw.arg == "mode":
                node = kw.value
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = child.name
            if isinstance(child, ast.Call):
                called = _dotted(child.func)
                last = called.rsplit(".", 1)[-1]
                what = ""
                if called in _WRITE_CALLS or last in _WRITE_METHODS:
                    what = called if called in _WRITE_CALLS else last
                elif called == "os.open":
                    flags = {n.attr for n in ast.walk(child) if isinstance(n, ast.Attribute)}
                    what = "os.open" if flags & _WRITE_FLAGS else ""
                elif last in ("open", "fdopen") and called != "os.open":
                    position = 0 if "." in called and called not in ("os.fdopen",) else 1
                    if set(mode_of(child, position)) & set("wax+"):
                        what = f"{called}(mode)"
                if what:
                    found.append((function, what, child.lineno))
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                text = " ".join(child.value.split()).upper()
                if text.startswith("COPY") or (" TO " in text and "COPY (" in text):
                    found.append((function, "COPY ... TO", child.lineno))
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_every_write_in_the_package_goes_through_the_guarded_write() -> None:
    """`observed`, `calibrate` and `telemetry simulate --out` used to write with a bare atomic
    rename (overwriting a bundle, a 0600 notes file, an unrelated CSV; a link became a file):
    every call that writes a file, anywhere in pipeline/, is `write_guarded` or listed above."""
    bypasses = []
    seen = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "atomic.py" or rel.split("/")[0] in UNGUARDED_FOLDERS:
            continue
        for function, what, line in _writes(path.read_text(encoding="utf-8")):
            key = (rel, function, what)
            if key in NOT_GUARDED:
                seen.add(key)
            else:
                bypasses.append(f"pipeline/{rel}:{line}: {what} in {function}()")
    assert not bypasses, "writes that bypass pipeline.atomic.write_guarded:\n" + "\n".join(bypasses)
    assert seen == set(NOT_GUARDED), f"listed but no longer there: {set(NOT_GUARDED) - seen}"


@pytest.mark.parametrize(
    "source, caught",
    [
        ("def f(p):\n    p.write_text('x')\n", "write_text"),
        ("def f(p):\n    open(p, 'w').write('x')\n", "open(mode)"),
        ("def f(p):\n    open(p, mode='ab')\n", "open(mode)"),
        ("def f(p):\n    p.open('w')\n", "p.open(mode)"),
        ("import os\ndef f(p):\n    os.open(p, os.O_WRONLY | os.O_CREAT)\n", "os.open"),
        ("import os\ndef f(a, b):\n    os.replace(a, b)\n", "os.replace"),
        ("def f(p):\n    write_atomic(p, 'x')\n", "write_atomic"),
        ("def f(con):\n    con.execute(\"COPY (SELECT 1) TO 'x.csv'\")\n", "COPY ... TO"),
    ],
)
def test_the_scan_finds_each_kind_of_write(source: str, caught: str) -> None:
    assert [what for _, what, _ in _writes(source)] == [caught]
    assert _writes("def f(p):\n    open(p, 'rb').read()\n    p.read_text()\n") == []
