"""Designers' commands as a designer uses them: SOURCE everywhere, play (piped and on a real
terminal), puzzle authoring and refresh, swap, assemble pins, render, and the night's pool."""

from __future__ import annotations

import datetime as dt
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.helpers import run
from pipeline.engine.board import parse
from pipeline.engine.stage import replay
from pipeline.jobs.assembler import AssemblyError, assemble
from pipeline.jobs.nightly import NightlyOptions, default_seed, run_nightly
from pipeline.jobs.picture import board_svg
from pipeline.formats.puzzle import Puzzle
from pipeline.formats.source import SourceError, resolve
from pipeline.rating.tiers import tier_for
from pipeline.solver.search import SOLVED, solve
from pipeline.validator import validate_paths

DATE = dt.date(2026, 2, 3)
# A board a designer might draw: 18 cells, 1 add; solvable (checked in a test below).
HAND = "123456789/987654321"




@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny published night: one Level of three medium Stages, and a pool of leftovers."""
    out = tmp_path_factory.mktemp("designers-night")
    run_nightly(NightlyOptions(date=DATE, seed=default_seed(DATE), out=out, jobs=1, levels=1, stages=3, curve="flat"))
    return out / DATE.isoformat()


def stage_texts(text: str) -> list[str]:
    """The text of each `- stage:` item of a bundle written by us."""
    parts = re.split(r"(?m)^(?=  - stage: )", text)
    return parts[1:]


# --- SOURCE ---------------------------------------------------------------------------------

def test_source_resolves_notation_files_stages_and_ids(night: Path) -> None:
    bundle = night / "bundle.yaml"
    doc = yaml.safe_load(bundle.read_text())
    first = doc["levels"][0]["stages"][0]["puzzle"]
    stage = resolve(f"{bundle}:L1.S1")
    assert stage.cells == parse(first["board"]) and stage.adds == first["adds"]
    assert resolve(f"{bundle}:l1.s1").cells == stage.cells  # case does not matter
    by_id = resolve(first["id"], [night])
    assert by_id.cells == stage.cells and by_id.puzzle is not None and by_id.puzzle["id"] == first["id"]
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
    assert result.exit_code == 1 and f"{bad}:" in result.output and "YAML syntax error" in result.output
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
    assert applied.exit_code == 0 and '"status": "won"' in applied.output  # the puzzle's adds were used
    too_few = run("apply", src, *first["solution"], "--adds", "0")
    if "+" in first["solution"]:
        assert too_few.exit_code == 1 and "no adds left" in too_few.output
    solved = run("solve", first["id"], "--in", str(night), "--json")
    assert solved.exit_code == 0 and '"status": "solved"' in solved.output
    rated = run("rate", src, "--json")
    assert rated.exit_code == 0
    assert f'"score": {first["difficulty"]["score"]}' in rated.output  # reproduces the stored rating


# --- play -----------------------------------------------------------------------------------

def test_play_piped_reaches_won_with_the_certificate(night: Path) -> None:
    first = yaml.safe_load((night / "bundle.yaml").read_text())["levels"][0]["stages"][0]["puzzle"]
    result = run("play", f"{night / 'bundle.yaml'}:L1.S1", input="\n".join(first["solution"]) + "\n")
    assert result.exit_code == 0
    assert f"won in {len(first['solution'])} moves!" in result.output
    assert result.output.rstrip().endswith(f"final: won, {len(first['solution'])} moves, adds left "
                                           f"{first['adds'] - first['solution'].count('+')}")


def test_play_shows_the_engines_reason_and_goes_on() -> None:
    result = run("play", "1.......9/3.5", input="0,0-2,2\n0,0 0,1\nzz\n0,8 0,0\nq\n")
    assert result.exit_code == 0
    assert "move 1: illegal move 0,0-2,2 on board '1.......9/3.5': cell 2,2 is off the board" in result.output
    assert "cell 0,1 is a gap" in result.output
    assert "cannot read 'zz'" in result.output
    assert "move 1: 0,0-0,8" in result.output  # two cells in either order
    assert "stuck: no pair and no add left" in result.output and "bye: stuck after 1 moves" in result.output


def test_play_undo_restart_add_and_winnable() -> None:
    result = run("play", "1.......9/5", "--adds", "1", input="w\n+\nu\n0,0-0,8\nr\nm\nq\n")
    out = result.output
    assert result.exit_code == 0
    assert "winnable with 1 of the 1 add left" in out  # 1,9 pair then 5 alone: the add is needed
    assert "move 1: +" in out and "undid +" in out and "restarted" in out
    assert "legal pairs (1): 0,0-0,8" in out


def test_hints_keep_the_stage_winnable(night: Path) -> None:
    src = f"{night / 'bundle.yaml'}:L1.S2"
    start = resolve(src)
    assert start.adds is not None
    cells, adds = start.cells, start.adds
    played: list[str] = []
    for _ in range(4):  # follow four hints; after each the solver still wins
        result = run("play", src, input="\n".join(played + ["?", "q"]) + "\n")
        m = re.search(r"hint: (\d+,\d+-\d+,\d+) keeps the Stage winnable", result.output)
        if m is None:
            assert "hint: +" in result.output
            break
        played.append(m.group(1))
        after, left = replay(cells, played, adds)
        assert solve(after, left, budget_nodes=200_000).status == SOLVED


def test_play_refuses_a_bad_source_in_one_line() -> None:
    result = run("play", "nope.yaml")
    assert result.exit_code == 1 and result.output.strip() == "numbermatch: error: nope.yaml: no such file"


def _read_until(fd: int, pattern: str, timeout: float = 30.0) -> str:
    seen = b""
    deadline = time.monotonic() + timeout
    while pattern.encode() not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {pattern!r} on the terminal; it showed:\n{seen.decode(errors='replace')}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


def test_play_on_a_real_terminal() -> None:
    """Through a pseudo-terminal: the prompt, an illegal move's reason, a hint, then a win."""
    master, slave = pty.openpty()
    exe = Path(sys.executable).with_name("numbermatch")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "pipeline.cli"]
    proc = subprocess.Popen(cmd + ["play", "1.......9/3...7"], stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    try:
        assert "status: in play" in _read_until(master, "> ")
        os.write(master, b"0,0-1,0\n")
        assert "values 1 and 3 are neither equal nor sum to 10" in _read_until(master, "> ")
        os.write(master, b"?\n")
        shown = _read_until(master, "> ")
        hinted = re.search(r"hint: (\S+) keeps the Stage winnable", shown)
        assert hinted is not None and "[" in shown  # the hinted cells are marked on the board
        os.write(master, hinted.group(1).encode() + b"\n")
        _read_until(master, "> ")
        rest = b"0,0-0,4" if hinted.group(1) == "0,0-0,8" else b"0,0-0,8"  # the row that is left
        os.write(master, rest + b"\n")
        assert "won in 2 moves!" in _read_until(master, "> ")
        os.write(master, b"q\n")
        assert "final: won" in _read_until(master, "final: won")
        assert proc.wait(timeout=30) == 0
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- puzzle ---------------------------------------------------------------------------------

def test_puzzle_authors_a_valid_file_from_a_hand_made_board(tmp_path: Path) -> None:
    assert solve(parse(HAND), 1).status == SOLVED
    result = run("puzzle", HAND, "--adds", "1", "--out", f"{tmp_path}/new/")  # a folder still to be made
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
        (["123456789/987654321/123456789/987654321/1234", "--adds", "1", "--budget-nodes", "1"], "raise the budget (--budget-nodes N, 0 = no limit)"),
    ],
)
def test_puzzle_refuses_in_one_line_and_writes_nothing(tmp_path: Path, args: list[str], message: str) -> None:
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
    bad.write_text("schema_version: 1\nkind: puzzle\nid: x\nruleset: 1\nboard: 1.......9/5\nadds: 0\nsolution: []\ndifficulty: {}\n")
    before = bad.read_bytes()
    result = run("puzzle", "--refresh", str(bad))
    assert result.exit_code == 1 and "unsolvable" in result.output
    assert bad.read_bytes() == before


# --- swap and pins --------------------------------------------------------------------------

def test_the_night_keeps_its_unused_valid_puzzles_in_a_pool(night: Path) -> None:
    pool = sorted((night / "pool").glob("*.yaml"))
    bundle = yaml.safe_load((night / "bundle.yaml").read_text())
    used = {s["puzzle"]["id"] for lv in bundle["levels"] for s in lv["stages"]}
    assert pool and not used & {p.stem for p in pool}
    assert validate_paths(pool).ok


def test_swap_replaces_one_stage_and_leaves_the_rest_byte_identical(night: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.yaml"
    bundle.write_bytes((night / "bundle.yaml").read_bytes())
    before = bundle.read_text()
    doc = yaml.safe_load(before)
    target = doc["levels"][0]["stages"][1]["target_score"]
    pool = [Puzzle.from_dict(yaml.safe_load(p.read_text())) for p in (night / "pool").glob("*.yaml")]
    want = min((p for p in pool if p.tier == tier_for(target)), key=lambda p: (abs(p.difficulty["score"] - target), p.id))
    result = run("swap", str(bundle), "L1.S2", "--pool", str(night / "pool"))
    assert result.exit_code == 0, result.output
    assert f"-> {want.id}" in result.output
    after = bundle.read_text()
    old_stages, new_stages = stage_texts(before), stage_texts(after)
    assert len(old_stages) == len(new_stages) == 3
    assert old_stages[0] == new_stages[0] and old_stages[2] == new_stages[2]
    assert before.split("levels:")[0] == after.split("levels:")[0]  # header untouched
    assert f"id: {want.id}" in new_stages[1] and f"target_score: {target}" in new_stages[1]
    assert validate_paths([bundle]).ok


def test_swap_keeps_the_removed_puzzle_in_the_pool_so_it_can_be_swapped_back(night: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.yaml"
    bundle.write_bytes((night / "bundle.yaml").read_bytes())
    pool = tmp_path / "pool"
    pool.mkdir()
    for p in (night / "pool").glob("*.yaml"):
        (pool / p.name).write_bytes(p.read_bytes())
    original = bundle.read_bytes()
    old = yaml.safe_load(original)["levels"][0]["stages"][0]["puzzle"]["id"]
    result = run("swap", str(bundle), "L1.S1")
    assert result.exit_code == 0 and f"{old} kept in {pool / (old + '.yaml')}" in result.output
    assert validate_paths([pool / f"{old}.yaml"]).ok
    back = run("swap", str(bundle), "L1.S1", "--with", old)
    assert back.exit_code == 0, back.output
    assert bundle.read_bytes() == original  # swapping back restores the bundle byte for byte


def test_swap_with_a_named_puzzle_and_dry_run(night: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.yaml"
    bundle.write_bytes((night / "bundle.yaml").read_bytes())
    pool_ids = sorted(p.stem for p in (night / "pool").glob("*.yaml"))
    before = bundle.read_bytes()
    dry = run("swap", str(bundle), "L1.S3", "--with", pool_ids[-1], "--pool", str(night / "pool"), "--dry-run")
    assert dry.exit_code == 0 and dry.output.startswith("(dry run)") and bundle.read_bytes() == before
    # The default pool is the bundle's own pool/ folder.
    (tmp_path / "pool").mkdir()
    for p in (night / "pool").glob("*.yaml"):
        (tmp_path / "pool" / p.name).write_bytes(p.read_bytes())
    done = run("swap", str(bundle), "L1.S3", "--with", pool_ids[-1])
    assert done.exit_code == 0 and pool_ids[-1] in bundle.read_text()
    assert validate_paths([bundle]).ok


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["L1.S9"], "there is no S9"),
        (["L2.S1"], "there is no L2"),
        (["third"], "write it as L<level>.S<stage>"),
        (["L1.S1", "--with", "nm1-000000000000"], "no such puzzle in the pool"),
    ],
)
def test_swap_refuses_in_one_line_and_leaves_the_bundle(night: Path, tmp_path: Path, args: list[str], message: str) -> None:
    bundle = tmp_path / "bundle.yaml"
    bundle.write_bytes((night / "bundle.yaml").read_bytes())
    before = bundle.read_bytes()
    result = run("swap", str(bundle), *args, "--pool", str(night / "pool"))
    assert result.exit_code == 1 and message in result.output and result.output.count("\n") == 1
    assert bundle.read_bytes() == before


def test_swap_refuses_a_puzzle_already_in_the_bundle(night: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.yaml"
    bundle.write_bytes((night / "bundle.yaml").read_bytes())
    used = yaml.safe_load(bundle.read_text())["levels"][0]["stages"][0]["puzzle"]["id"]
    result = run("swap", str(bundle), "L1.S2", "--with", used, "--pool", str(night / "bundle.yaml"))
    assert result.exit_code == 1 and "already in the bundle" in result.output


def _puzzles(night: Path) -> list[Puzzle]:
    bundle = yaml.safe_load((night / "bundle.yaml").read_text())
    used = [Puzzle.from_dict(s["puzzle"]) for lv in bundle["levels"] for s in lv["stages"]]
    return used + [Puzzle.from_dict(yaml.safe_load(p.read_text())) for p in sorted((night / "pool").glob("*.yaml"))]


def test_assemble_pins_and_excludes(night: Path) -> None:
    puzzles = _puzzles(night)
    free = assemble(puzzles, levels=1, stages=3, curve="flat")
    chosen = [p.puzzle.id for p in free.placements]
    spare = next(p.id for p in puzzles if p.id not in chosen)
    pinned = assemble(puzzles, levels=1, stages=3, curve="flat", pins={(1, 2): spare})
    assert pinned.placements[1].puzzle.id == spare
    dropped = assemble(puzzles, levels=1, stages=3, curve="flat", exclude=[chosen[0]])
    assert chosen[0] not in [p.puzzle.id for p in dropped.placements]
    with pytest.raises(AssemblyError, match="the bundle has Levels 1-1 of Stages 1-3"):
        assemble(puzzles, levels=1, stages=3, curve="flat", pins={(1, 4): spare})
    with pytest.raises(AssemblyError, match="no such puzzle"):
        assemble(puzzles, levels=1, stages=3, curve="flat", exclude=["nm1-000000000000"])
    with pytest.raises(AssemblyError, match="also excluded"):
        assemble(puzzles, levels=1, stages=3, curve="flat", pins={(1, 1): spare}, exclude=[spare])


def test_assemble_cli_pin(night: Path, tmp_path: Path) -> None:
    spare = sorted(p.stem for p in (night / "pool").glob("*.yaml"))[0]
    out = tmp_path / "b.yaml"
    result = run("assemble", str(night / "bundle.yaml"), str(night / "pool"), "--levels", "1", "--stages", "3",
                 "--curve", "flat", "--pin", f"L1.S3={spare}", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(out.read_text())["levels"][0]["stages"][2]["puzzle"]["id"] == spare
    bad = run("assemble", str(night / "pool"), "--levels", "1", "--stages", "3", "--pin", "L1S3", "--out", str(out))
    assert bad.exit_code == 1 and "L<level>.S<stage>=PUZZLE_ID" in bad.output


# --- pictures -------------------------------------------------------------------------------

def test_board_svg_draws_cells_gaps_and_highlights_deterministically() -> None:
    cells = parse("1.......9/3.5")
    svg = board_svg(cells, highlight=(0, 8))
    assert svg == board_svg(cells, highlight=(8, 0))
    assert svg.startswith("<svg") and "http" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert svg.count('fill="#ffd166"') == 2  # two highlighted cells
    assert svg.count("<rect") == 1 + len(cells)  # background + one per cell (gaps included)
    assert ">9</text>" in svg and ">5</text>" in svg
    with pytest.raises(ValueError, match="off the board"):
        board_svg(cells, highlight=(99,))
    assert "the Stage is won" in board_svg(b"")


def test_render_writes_an_svg_with_the_next_move(night: Path, tmp_path: Path) -> None:
    out = tmp_path / "stage.svg"
    src = f"{night / 'bundle.yaml'}:L1.S1"
    result = run("render", src, "--next", "--out", str(out))
    assert result.exit_code == 0 and "highlighted" in result.output
    first = resolve(src)
    move = first.solution[0]
    assert out.read_text().count('fill="#ffd166"') == (0 if move == "+" else 2)
    again = tmp_path / "again.svg"
    assert run("render", src, "--next", "--out", str(again)).exit_code == 0
    assert again.read_bytes() == out.read_bytes()
    bad = run("render", src, "--out", str(tmp_path / "x.png"))
    assert bad.exit_code == 1 and "name an .svg file" in bad.output
    assert not (tmp_path / "x.png").exists()


def test_a_won_stage_has_no_hint_and_takes_no_more_moves() -> None:
    out = run("play", "19", input="0,0-0,1\n?\n+\nq\n").output
    assert "won in 1 moves!" in out and "nothing to hint" in out and "the Stage is won: u to undo" in out


# --- report.html ----------------------------------------------------------------------------

def test_report_html_shows_every_stage_and_the_curve_self_contained(night: Path, tmp_path: Path) -> None:
    from html.parser import HTMLParser

    html = (night / "report.html").read_text()
    doc = yaml.safe_load((night / "bundle.yaml").read_text())

    class Collect(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.ids: list[str] = []
            self.links: list[str] = []
            self.tags: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append(tag)
            for k, v in attrs:
                if k == "id" and v:
                    self.ids.append(v)
                if k in ("href", "src") and v:
                    self.links.append(v)

    page = Collect()
    page.feed(html)
    assert "script" not in page.tags and all(link.startswith(("#", "data:")) for link in page.links)  # nothing external
    assert "curve-1" in page.ids and "curve-all" in page.ids
    for stage in doc["levels"][0]["stages"]:
        p = stage["puzzle"]
        assert f"L1.S{stage['stage']}" in page.ids
        card = html.split(f'id="L1.S{stage["stage"]}"')[1].split("</article>")[0]
        drawn = "".join(re.findall(r'font-weight="bold">(\d)</text>', card))
        assert drawn == p["board"].replace("/", "").replace(".", "")  # the board's picture, digit by digit
        assert card.count("<rect") == 1 + len(parse(p["board"]))  # every cell drawn, gaps included
        assert f"{p['board']}</title>" in html and p["id"] in html
        assert f"score {p['difficulty']['score']:.2f}" in html  # the curve's dot names the actual score
        assert f"target {stage['target_score']:.2f}" in html
    assert html.count('<article class="stage"') == 3
    assert html.count("<polyline") == 2 * 2  # target and score lines, for the night and for Level 1
    out = tmp_path / "again.html"
    result = run("report", str(night / "bundle.yaml"), "--out", str(out))
    assert result.exit_code == 0 and out.read_text() == html  # the same bundle gives the same page


def test_report_refuses_what_is_not_a_valid_bundle_in_one_line(night: Path, tmp_path: Path) -> None:
    out = tmp_path / "night.html"
    pool_file = sorted((night / "pool").glob("*.yaml"))[0]
    for args, message in (
        ([str(pool_file)], "is a puzzle, not a bundle"),
        ([str(tmp_path / "missing.yaml")], "no such file"),
        ([str(night / "bundle.yaml"), "--out", str(tmp_path / "night.txt")], "name an .html file"),
    ):
        result = run("report", *args, *([] if "--out" in args else ["--out", str(out)]))
        assert result.exit_code == 1 and message in result.output and result.output.count("\n") == 1
    broken = tmp_path / "broken.yaml"
    broken.write_text((night / "bundle.yaml").read_text().replace("kind: bundle", "kind: bundel", 1))
    result = run("report", str(broken), "--out", str(out))
    assert result.exit_code == 1 and "the report needs a valid bundle" in result.output
    assert not out.exists() and not (tmp_path / "night.txt").exists()


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
