"""Fuzzing the stock's commands: random stock shapes through `stock`, `stock prune --dry-run`,
`validate`, `stock prune` and `stock prune --force`, and kills at random points.

Shapes (files cut, bytes replaced, emptied, binary; copies under another id, in another group,
under odd names; links inside and out of the stock, dangling, looping, to a folder, the whole
stock a link; a FIFO, a folder named like a puzzle; the index file garbage, cut, a folder, or
with forged rows): each command ends in its result or one `numbermatch: error:` line, never a
traceback; the reading commands change no file; prune keeps a file of every valid puzzle it
was given and never touches a file outside the stock. Kills (tests/killpoints.py): `stock
refill`, `stock prune --force` or a whole `nightly` killed at a random point lose no valid
puzzle (a night's are in the stock or in a published bundle), leave a stock that validates,
and the next run and night end well.

The default run is short and derandomized; `make fuzz` runs NM_FUZZ_EXAMPLES shapes and a
fifth as many kills.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from typer.testing import Result

from pipeline.engine.canonical import canonical_key
from pipeline.formats.index import LevelIndex, index_file
from pipeline.formats.loader import load_file
from pipeline.formats.puzzle import Puzzle
from pipeline.stock.store import prune, remove_keys
from pipeline.validator import Validator
from tests import killpoints
from tests.helpers import one_line_error, run
from tests.test_stock_kills import NEXT_NIGHT, NIGHT, REFILL, SMALL, copy_of

CAMPAIGN = int(os.environ.get("NM_FUZZ_EXAMPLES", "0"))
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
# no shrinking: an example takes a second or more, and the failure message names what was drawn
PHASES = [Phase.explicit, Phase.reuse, Phase.generate]
SHAPES = settings(
    max_examples=CAMPAIGN or 12,
    deadline=None,
    derandomize=not CAMPAIGN,
    phases=PHASES,
    suppress_health_check=HEALTH,
)
KILLS = settings(
    max_examples=CAMPAIGN // 5 or 3,
    deadline=None,
    derandomize=not CAMPAIGN,
    phases=PHASES,
    suppress_health_check=HEALTH,
)
ODD_NAMES = [
    " a.yaml",
    "-rf.yaml",
    "ü.yaml",
    "a\nb.yaml",
    "x.yml",
    "a;b.yaml",
    "$(x).yaml",
    "*.yaml",
]
OPS = [
    "cut",
    "byte",
    "empty",
    "binary",
    "copy-id",
    "copy-group",
    "odd-name",
    "link-in",
    "link-out",
    "dangling",
    "loop",
    "dir-link",
    "fifo",
    "folder",
    "stock-link",
    "index-garbage",
    "index-cut",
    "index-folder",
    "index-forged",
]


SEEN: Counter[str] = Counter()  # what the campaign met, printed at the end


@pytest.fixture(scope="module")
def stocked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A shipped night and a stock of three groups (the night's, and two refills); prints what
    the module's examples met when it is done."""
    out = tmp_path_factory.mktemp("fuzz-stock") / "out"
    made = run("nightly", "--date", NIGHT, "--levels", "1", "--stages", "2", "--out", out, *SMALL)
    assert made.exit_code == 0, made.output
    for tier, cells, adds in (("easy", "27", "3"), ("hard", "30", "2")):
        more = run(
            "stock", "refill", "--tier", tier, "--cells", cells, "--adds", adds, "--count", "2",
            "--out", out, "-j", "1",
        )  # fmt: skip
        assert more.exit_code == 0, more.output
    yield out
    if SEEN:
        print("\nstock fuzz: " + ", ".join(f"{k} {v}" for k, v in sorted(SEEN.items())))


def puzzle_key(path: Path) -> str | None:
    """The canonical key of a valid, current puzzle file (None: the validator refuses it), read
    here from the file alone."""
    if [p for p in Validator().add_file(path) if p.code not in ("NM304", "NM321")]:
        return None
    loaded = load_file(path)
    if loaded.document is None:
        return None
    p = Puzzle.from_dict(loaded.document.data)
    return canonical_key(p.board, p.adds, p.ruleset)


def stock_keys(out: Path) -> set[str]:
    """The keys of the valid puzzles a stock holds, links followed, read from the files."""
    stock = out / "stock"
    found = set()
    for root, _, files in os.walk(stock, followlinks=True) if stock.exists() else ():
        if any(part.startswith(".") for part in Path(root).relative_to(stock).parts):
            continue
        for name in files:
            path = Path(root) / name
            if name.endswith((".yaml", ".yml")) and path.is_file() and not path.is_symlink():
                key = puzzle_key(path)
                if key is not None:
                    found.add(key)
    return found


def shape(out: Path, outside: Path, ops: list[tuple[str, int, int]]) -> None:
    """Apply the drawn changes to the stock under `out` (`outside`: a folder beside it)."""
    for op, pick, n in ops:
        SEEN[op] += 1
        files = sorted(p for p in (out / "stock").rglob("*.yaml") if p.is_file())
        if not files and not op.startswith("index"):
            continue
        path = files[pick % len(files)] if files else out
        group = path.parent
        try:
            if op == "cut":
                data = path.read_bytes()
                path.write_bytes(data[: n % max(1, len(data))])
            elif op == "byte":
                data = bytearray(path.read_bytes())
                data[n % len(data)] = n % 256
                path.write_bytes(bytes(data))
            elif op == "empty":
                path.write_bytes(b"")
            elif op == "binary":
                path.write_bytes(bytes(range(256)) * (1 + n % 4))
            elif op == "copy-id":
                shutil.copyfile(path, group / f"nm1-{n % 4096:012x}.yaml")
            elif op == "copy-group":
                (out / "stock" / "1" / "9x9").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, out / "stock" / "1" / "9x9" / path.name)
            elif op == "odd-name":
                shutil.copyfile(path, group / ODD_NAMES[n % len(ODD_NAMES)])
            elif op == "link-in":
                (group / f"link-{n}.yaml").symlink_to(path.name)
            elif op == "link-out":
                outside.mkdir(exist_ok=True)
                moved = outside / f"{n}-{path.name}"
                shutil.move(path, moved)
                path.symlink_to(moved)
            elif op == "dangling":
                (group / f"dangling-{n}.yaml").symlink_to(outside / "nowhere.yaml")
            elif op == "loop":
                (group / f"loop-{n}a.yaml").symlink_to(group / f"loop-{n}b.yaml")
                (group / f"loop-{n}b.yaml").symlink_to(group / f"loop-{n}a.yaml")
            elif op == "dir-link":
                (out / "stock" / "1" / f"dir-{n}").symlink_to(group, target_is_directory=True)
            elif op == "fifo":
                os.mkfifo(group / f"fifo-{n}.yaml")
            elif op == "folder":
                (group / f"folder-{n}.yaml").mkdir()
            elif op == "stock-link" and not (out / "stock").is_symlink():
                shared = outside / "shared-stock"
                outside.mkdir(exist_ok=True)
                shutil.move(out / "stock", shared)
                (out / "stock").symlink_to(shared, target_is_directory=True)
            elif op.startswith("index"):
                index = index_file(out)
                _index_cleanup(out)
                with LevelIndex(out) as built:
                    built.refresh()
                if op == "index-garbage":
                    index.write_bytes(bytes(range(256)) * (1 + n % 64))
                elif op == "index-cut":
                    index.write_bytes(index.read_bytes()[: n % (index.stat().st_size or 1)])
                elif op == "index-folder":
                    index.unlink()
                    index.mkdir()
                else:  # rows forged: every stock puzzle said shipped, or said another's copy
                    with sqlite3.connect(index) as db:
                        keys = [r[0] for r in db.execute("SELECT key FROM entries ORDER BY path")]
                        db.execute(
                            "UPDATE entries SET key = ? WHERE kind = 'stock'",
                            (keys[n % len(keys)],),
                        )
        except FileExistsError:
            pass


def _index_cleanup(out: Path) -> None:
    index = index_file(out)
    if index.is_dir():
        shutil.rmtree(index)


def files_and_links(root: Path) -> dict[str, bytes | str]:
    """Every entry under `root` (hidden ones too): a file's bytes, a link's target, a FIFO's name."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = path.read_bytes()
        elif not path.is_dir():
            found[rel] = "special"
    return found


def ends_well(result: Result, command: str) -> None:
    """Exit 0, 1 or 2 (no traceback: `run` checks), a failing stock command in one error line."""
    SEEN[f"{command}: exit {result.exit_code}"] += 1
    assert result.exit_code in (0, 1, 2), (command, result.exit_code, result.output)
    if result.exit_code and command != "validate":
        one_line_error(result)


@pytest.mark.slow
@SHAPES
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(OPS), st.integers(0, 1000), st.integers(0, 10**6)),
        min_size=1,
        max_size=4,
    )
)
@example(ops=[(op, k, 7 * k + 3) for k, op in enumerate(OPS)])  # every shape at once
def test_hostile_stock_shapes_end_in_one_line_and_keep_every_valid_puzzle(
    stocked: Path, ops: list[tuple[str, int, int]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        outside = Path(tmp) / "outside"
        shutil.copytree(stocked, out, symlinks=True)
        try:
            shape(out, outside, ops)
            valid = stock_keys(out)
            beside = files_and_links(outside) if outside.exists() else {}
            seen = files_and_links(out)
            for args in (("stock",), ("stock", "prune", "--dry-run")):
                ends_well(run(*args, "--out", out), " ".join(args))
            ends_well(run("validate", out), "validate")
            assert files_and_links(out) == seen, "a reading command changed the stock"
            for args in (("stock", "prune"), ("stock", "prune", "--force")):
                ends_well(run(*args, "--out", out), " ".join(args))
                lost = valid - stock_keys(out)
                assert not lost, f"{ops}: {' '.join(args)} deleted every file of {sorted(lost)}"
            left = files_and_links(outside) if outside.exists() else {}
            assert {k: v for k, v in left.items() if not k.startswith("shared-stock/")} == {
                k: v for k, v in beside.items() if not k.startswith("shared-stock/")
            }, "prune touched a file outside the stock"
        finally:
            _index_cleanup(out)


def test_a_forged_index_never_makes_prune_or_a_swap_delete_a_valid_puzzle(
    stocked: Path, tmp_path: Path
) -> None:
    """Rows saying every stock puzzle is shipped (sizes, times and inodes still matching): prune
    --force dropped the whole stock, and a swap's clean-up deleted files of other puzzles."""
    out = copy_of(stocked, tmp_path / "out")
    before = killpoints.stock_files(out)
    with LevelIndex(out) as index:
        index.refresh()
        shipped = sorted(index.shipped_keys())[0]
    with sqlite3.connect(index_file(out)) as db:
        db.execute("UPDATE entries SET key = ? WHERE kind = 'stock'", (shipped,))
    assert prune(out, force=True) == []
    assert remove_keys(out, [shipped]) == []
    assert killpoints.stock_files(out) == before


@pytest.mark.slow
@KILLS
@given(
    command=st.sampled_from(["refill", "prune", "nightly"]),
    seed=st.integers(0, 10**6),
    where=st.floats(0, 1),
)
@example(command="nightly", seed=5, where=0.9)  # in the refill after the night
def test_a_stock_command_killed_at_a_random_point_loses_nothing(
    stocked: Path, command: str, seed: int, where: float
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        base = tmp_path / "base"
        shutil.copytree(stocked, base, symlinks=True)
        shipped = sorted(base.glob("*/bundle.yaml"))
        if command == "prune":  # something to drop: a copy of a stock puzzle cut short
            first = sorted((base / "stock").rglob("*.yaml"))[seed % 6]
            (first.parent / "nm1-000000000000.yaml").write_bytes(first.read_bytes()[: seed % 500])
        args = {
            "refill": (*REFILL, "--seed", str(seed), "-j", "1"),
            "prune": ("stock", "prune", "--force"),
            "nightly": (*NEXT_NIGHT, "--seed", str(seed), *SMALL),
        }[command]
        whole = copy_of(base, tmp_path / "whole")
        total = len(killpoints.points([*args, "--out", whole], log=tmp_path / "log").points)
        n = 1 + round(where * (total - 1))
        out = copy_of(base, tmp_path / "out")
        before = killpoints.visible_files(out)
        cut = killpoints.run_to([*args, "--out", out], n, log=tmp_path / "log")
        assert cut.killed, (command, n, total, cut.stderr)
        SEEN[f"{command} killed"] += 1
        where_ = f"{command} killed at point {n} of {total} ({cut.points[-1]})"
        left = killpoints.visible_files(out)
        ship = {
            canonical_key(s["puzzle"]["board"], s["puzzle"]["adds"], s["puzzle"]["ruleset"])
            for b in out.glob("*/bundle.yaml")
            for lv in yaml.safe_load(b.read_text())["levels"]
            for s in lv["stages"]
        }
        for rel, data in before.items():
            if rel.endswith("nm1-000000000000.yaml"):
                continue  # the planted file prune drops
            if rel.startswith("stock/") and left.get(rel) != data:
                key = puzzle_key(base / rel)
                assert key in ship, f"{where_}: lost {rel}"  # a night may ship a stock puzzle
            elif not rel.startswith("stock/"):
                assert left.get(rel) == data, f"{where_}: changed {rel}"
        assert shipped == sorted(base.glob("*/bundle.yaml"))
        ignore = {r for r in before if r.endswith("nm1-000000000000.yaml")}
        problems = killpoints.stock_problems(out, ignore)
        assert not problems, f"{where_}: {problems}"
        again = run(*args, "--out", out, *(("--skip-existing",) if command == "nightly" else ()))
        assert again.exit_code == 0, f"{where_}: the rerun: {again.output}"
        after = run(
            "nightly",
            "--date",
            "2026-03-03",
            "--levels",
            "1",
            "--stages",
            "2",
            "--out",
            out,
            *SMALL,
        )
        assert after.exit_code == 0, f"{where_}: the next night: {after.output}"
        problems = killpoints.stock_problems(out)
        assert not problems, f"{where_}: after the next night: {problems}"


def test_prune_keeps_the_file_a_link_in_the_stock_names(stocked: Path, tmp_path: Path) -> None:
    """A link beside a stock file, named before it: prune kept the link as the oldest copy and
    deleted the file it names (the puzzle lost, the link left dangling)."""
    out = copy_of(stocked, tmp_path / "out")
    real = sorted((out / "stock").rglob("*.yaml"))[0]
    (real.parent / "a-link.yaml").symlink_to(real.name)
    before = real.read_bytes()
    (dropped,) = prune(out, force=True)
    assert dropped.path == real.parent / "a-link.yaml" and "a copy of" in dropped.reason
    assert real.read_bytes() == before and not (real.parent / "a-link.yaml").is_symlink()


def test_a_loop_of_links_in_the_stock_is_reported_not_a_traceback(
    stocked: Path, tmp_path: Path
) -> None:
    """`a.yaml -> b.yaml -> a.yaml` in the stock: prune ended in RuntimeError("Symlink loop")."""
    out = copy_of(stocked, tmp_path / "out")
    group = sorted((out / "stock").rglob("*.yaml"))[0].parent
    (group / "a.yaml").symlink_to("b.yaml")
    (group / "b.yaml").symlink_to("a.yaml")
    dry = run("stock", "prune", "--out", out, "--dry-run")
    assert dry.exit_code == 0 and dry.stdout.count("symbolic links") == 2, dry.output
    assert run("stock", "prune", "--out", out, "--force").exit_code == 0
    assert not os.path.lexists(group / "a.yaml") and stock_keys(out) == stock_keys(stocked)
