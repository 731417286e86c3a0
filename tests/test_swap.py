"""`numbermatch swap` and the night's pool; `assemble --pin/--exclude` (a long one not echoed in full)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pipeline.formats.puzzle import Puzzle
from pipeline.jobs.assembler import AssemblyError, assemble
from pipeline.rating.tiers import tier_for
from pipeline.validator import validate_paths
from tests.helpers import one_line_refusal, run


def stage_texts(text: str) -> list[str]:
    """The text of each `- stage:` item of a bundle written by us."""
    parts = re.split(r"(?m)^(?=  - stage: )", text)
    return parts[1:]


def test_the_night_keeps_its_unused_valid_puzzles_in_a_pool(night: Path) -> None:
    pool = sorted((night / "pool").glob("*.yaml"))
    bundle = yaml.safe_load((night / "bundle.yaml").read_text())
    used = {s["puzzle"]["id"] for lv in bundle["levels"] for s in lv["stages"]}
    assert pool and not used & {p.stem for p in pool}
    assert validate_paths(pool).ok


def test_swap_replaces_one_stage_and_leaves_the_rest_byte_identical(
    night: Path, tmp_path: Path
) -> None:
    bundle = tmp_path / "bundle.yaml"
    bundle.write_bytes((night / "bundle.yaml").read_bytes())
    before = bundle.read_text()
    doc = yaml.safe_load(before)
    target = doc["levels"][0]["stages"][1]["target_score"]
    pool = [
        Puzzle.from_dict(yaml.safe_load(p.read_text())) for p in (night / "pool").glob("*.yaml")
    ]
    want = min(
        (p for p in pool if p.tier == tier_for(target)),
        key=lambda p: (abs(p.difficulty["score"] - target), p.id),
    )
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


def test_swap_keeps_the_removed_puzzle_in_the_pool_so_it_can_be_swapped_back(
    night: Path, tmp_path: Path
) -> None:
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
    dry = run(
        "swap",
        str(bundle),
        "L1.S3",
        "--with",
        pool_ids[-1],
        "--pool",
        str(night / "pool"),
        "--dry-run",
    )
    assert (
        dry.exit_code == 0 and dry.output.startswith("(dry run)") and bundle.read_bytes() == before
    )
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
def test_swap_refuses_in_one_line_and_leaves_the_bundle(
    night: Path, tmp_path: Path, args: list[str], message: str
) -> None:
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
    return used + [
        Puzzle.from_dict(yaml.safe_load(p.read_text()))
        for p in sorted((night / "pool").glob("*.yaml"))
    ]


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
    result = run(
        "assemble",
        str(night / "bundle.yaml"),
        str(night / "pool"),
        "--levels",
        "1",
        "--stages",
        "3",
        "--curve",
        "flat",
        "--pin",
        f"L1.S3={spare}",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(out.read_text())["levels"][0]["stages"][2]["puzzle"]["id"] == spare
    bad = run(
        "assemble",
        str(night / "pool"),
        "--levels",
        "1",
        "--stages",
        "3",
        "--pin",
        "L1S3",
        "--out",
        str(out),
    )
    assert bad.exit_code == 1 and "L<level>.S<stage>=PUZZLE_ID" in bad.output


def test_a_long_exclude_is_not_echoed_in_full(night_to_edit: Path) -> None:
    result = run(
        "assemble",
        str(night_to_edit),
        "--levels",
        "1",
        "--stages",
        "1",
        "--exclude",
        "x" * 100_000,
        "--out",
        str(night_to_edit / "x.yaml"),
    )
    one_line_refusal(result, "no such puzzle among the")
    assert len(result.output) < 300


def test_swap_with_a_puzzle_another_night_or_this_bundle_ships_says_where(tmp_path: Path) -> None:
    """From the stock: a shipped puzzle is not in it any more; say where it is shipped."""
    import shutil

    repo = Path(__file__).resolve().parent.parent / "generated"
    root = tmp_path / "generated"
    for name in ("2026-11-29", "2026-11-30", "stock"):
        shutil.copytree(repo / name, root / name)
    bundle = root / "2026-11-29" / "bundle.yaml"
    before = bundle.read_bytes()
    other = yaml.safe_load((root / "2026-11-30" / "bundle.yaml").read_text())
    theirs = other["levels"][0]["stages"][0]["puzzle"]["id"]
    first = other.get("first_level", 1)
    ours = yaml.safe_load(before)["levels"][0]["stages"][0]["puzzle"]["id"]
    shipped = run("swap", str(bundle), "L3.S2", "--with", theirs)
    one_line_refusal(
        shipped,
        f"puzzle {theirs}: not in the stock: it is shipped at"
        f" {root / '2026-11-30' / 'bundle.yaml'}:L{first}.S1",
    )
    mine = run("swap", str(bundle), "L3.S2", "--with", ours)
    one_line_refusal(mine, f"puzzle {ours}: already in this bundle at L1.S1")
    assert bundle.read_bytes() == before


def test_swap_json_is_one_summary_object(night: Path, tmp_path: Path) -> None:
    import json

    bundle = tmp_path / "bundle.yaml"
    bundle.write_bytes((night / "bundle.yaml").read_bytes())
    text = run("swap", str(bundle), "L1.S2", "--pool", str(night / "pool"), "--dry-run")
    out = run("swap", str(bundle), "L1.S2", "--pool", str(night / "pool"), "--dry-run", "--json")
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert set(data) == {"bundle", "stage", "target", "old", "new", "dry_run", "kept", "reports"}
    assert data["stage"] == "L1.S2" and data["dry_run"] is True and data["kept"] is None
    assert f"-> {data['new']['id']} ({data['new']['tier']}," in text.stdout
    assert f"L1.S2 {data['old']['id']} ({data['old']['tier']}," in text.stdout
