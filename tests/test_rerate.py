"""`numbermatch rescore --rating-version N`: stored puzzles re-rated under a new rating version
(a puzzle file, a bundle, a stock), all or none written, and the old versions still valid.

The fixtures in tests/fixtures/rerate/ are version-3 files as the committed stock and nights held
them before version 4 (two stock puzzles of 27 cells and 3 adds, one of which moves from easy to
medium under version 4; a night's first Level cut to three Stages)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from pipeline.rating import CONFIRM_SEED
from pipeline.rating.score import rate
from tests.helpers import run

FIXTURES = Path(__file__).parent / "fixtures" / "rerate"
STOCK = FIXTURES / "stock"
BUNDLE = FIXTURES / "bundle.yaml"
MOVES = "nm1-99e39ef8d7a8.yaml"  # easy under version 3, medium under version 4
STAYS = "nm1-152a84137d38.yaml"


def _changed_lines(before: str, after: str) -> set[str]:
    """The keys of the lines that differ (a re-rating rewrites only the difficulty's values and
    the rating seed)."""
    old, new = before.splitlines(), after.splitlines()
    assert len(old) == len(new)
    return {b.split(":")[0].strip() for a, b in zip(old, new) if a != b}


def test_a_puzzle_file_is_rerated_with_the_confirmation_seed(tmp_path: Path) -> None:
    path = tmp_path / STAYS
    shutil.copy(STOCK / "1" / "27x3" / STAYS, path)
    before = path.read_text()
    dry = run("rescore", "--rating-version", "4", str(path), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "37.95 easy -> " in dry.output and "(dry run" in dry.output
    assert path.read_text() == before  # a dry run writes nothing
    result = run("rescore", "--rating-version", "4", str(path))
    assert result.exit_code == 0, result.output
    after = path.read_text()
    doc = yaml.safe_load(after)
    d = doc["difficulty"]
    assert d["version"] == 4 and doc["provenance"]["rating_seed"] == CONFIRM_SEED
    fresh = rate(doc["board"], doc["adds"], seed=CONFIRM_SEED, solution=doc["solution"], version=4)
    assert d == fresh.to_dict()
    assert _changed_lines(before, after) <= {
        "version",
        "tier",
        "score",
        "win_rate",
        "mean_moves",
        "playouts",
        "mean_branching",
        "collapse_openings",
        "rating_seed",
    }
    deep = run("validate", "--deep", str(path))
    assert deep.exit_code == 0, deep.output  # re-rated with the stored seed: the same rating
    again = run("rescore", "--rating-version", "4", str(path))
    assert again.exit_code == 0 and "1 already version 4" in again.output
    assert path.read_text() == after  # already version 4: nothing played, nothing written


def test_a_bundle_is_rerated_and_its_stages_keep_their_targets(tmp_path: Path) -> None:
    from pipeline.jobs.report_html import render_report_html

    path = tmp_path / "bundle.yaml"
    shutil.copy(BUNDLE, path)
    (tmp_path / "report.md").write_text("# the night as the nightly job made it\n")
    (tmp_path / "report.html").write_text(render_report_html(yaml.safe_load(BUNDLE.read_text())))
    before = yaml.safe_load(path.read_text())
    result = run("rescore", "--rating-version", "4", str(path))
    assert result.exit_code == 0, result.output
    after = yaml.safe_load(path.read_text())
    # a night's report.html shows the bundle as it is; report.md keeps the run's own figures
    assert (tmp_path / "report.html").read_text() == render_report_html(after)
    assert (tmp_path / "report.md").read_text() == "# the night as the nightly job made it\n"
    assert "report.html re-rendered" in result.output
    stages = [(lv, st) for lv in range(len(after["levels"])) for st in range(3)]
    for lv, st in stages:
        old, new = before["levels"][lv]["stages"][st], after["levels"][lv]["stages"][st]
        assert new["target_score"] == old["target_score"]
        assert new["puzzle"]["difficulty"]["version"] == 4
        assert {k: v for k, v in new["puzzle"].items() if k != "difficulty"} == {
            k: v for k, v in old["puzzle"].items() if k != "difficulty"
        }
        score = new["puzzle"]["difficulty"]["score"]
        assert f"L1.S{st + 1}: " in result.output and f"-> {score:.2f}" in result.output
        assert f"(target {old['target_score']:.2f})" in result.output
    assert {k: v for k, v in after.items() if k != "levels"} == {
        k: v for k, v in before.items() if k != "levels"
    }
    deep = run("validate", "--deep", str(path))
    assert deep.exit_code == 0, deep.output


def test_a_stock_is_rerated_in_place_and_a_tier_change_stays_in_its_folder(
    tmp_path: Path,
) -> None:
    root = tmp_path / "out"
    shutil.copytree(STOCK, root / "stock")
    files = sorted((root / "stock").rglob("*.yaml"))
    result = run("rescore", "--rating-version", "4", str(root / "stock"), "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert sorted((root / "stock").rglob("*.yaml")) == files  # no puzzle lost or moved
    moved = yaml.safe_load((root / "stock" / "1" / "27x3" / MOVES).read_text())["difficulty"]
    assert moved["version"] == 4 and moved["tier"] == "medium"
    assert "easy -> " in result.output and "medium" in result.output
    assert "stays where it is" in result.output and "1 changed tier" in result.output
    deep = run("validate", "--deep", str(root))
    assert deep.exit_code == 0, deep.output
    listed = run("stock", "--out", str(root), "--json")
    assert listed.exit_code == 0, listed.output
    (group,) = json.loads(listed.output)["groups"]
    assert group["tiers"] == {"easy": 1, "medium": 1}  # the stock counts it in its new tier


def test_version_3_files_stay_valid() -> None:
    """The old versions are still validated: the version-3 fixtures, shallow and deep."""
    result = run("validate", "--deep", str(FIXTURES))
    assert result.exit_code == 0, result.output
    assert "3 files checked: all valid" in result.output


def test_hostile_input_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    shutil.copy(STOCK / "1" / "27x3" / STAYS, pool / STAYS)
    (pool / "zz-broken.yaml").write_text("kind: puzzle\n")
    before = {p: p.read_bytes() for p in pool.iterdir()}
    result = run("rescore", "--rating-version", "4", str(pool))
    assert result.exit_code == 1 and "zz-broken.yaml" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in pool.iterdir()} == before  # all of them, or none
    for args, said in (
        (["--rating-version", "99"], "not a rating version"),
        (["--rating-version", "4", "--profile", str(pool / STAYS)], "give one of"),
        ([], "give one of"),
    ):
        result = run("rescore", *args, str(pool / STAYS))
        assert result.exit_code == 1 and said in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1
    flow = pool / "flow.yaml"
    doc = yaml.safe_load((pool / STAYS).read_text())
    flow.write_text(yaml.safe_dump(doc, default_flow_style=True))
    result = run("rescore", "--rating-version", "4", str(flow))
    assert result.exit_code == 1 and "cannot edit in place" in result.output, result.output


def test_prune_of_a_version_3_stock_names_the_command_that_rerates_it(tmp_path: Path) -> None:
    """A stock of an older rating version is what prune drops: each line, and the refusal to
    drop more than its share, names `rescore --rating-version 4`, after which prune keeps it."""
    root = tmp_path / "out"
    shutil.copytree(STOCK, root / "stock")
    command = f"numbermatch rescore --rating-version 4 {root / 'stock'}"
    dry = run("stock", "prune", "--out", str(root), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.output.count("rated by rating version 3; the current version is 4") == 2
    assert dry.output.count(command) == 2
    refused = run("stock", "prune", "--out", str(root))
    assert refused.exit_code == 1 and f"2 are of an older rating version: `{command}`" in (
        refused.output
    )
    assert len(list((root / "stock").rglob("*.yaml"))) == 2  # nothing dropped
    assert run("rescore", "--rating-version", "4", str(root / "stock")).exit_code == 0
    kept = run("stock", "prune", "--out", str(root), "--dry-run")
    assert kept.exit_code == 0 and "rated by rating version" not in kept.output, kept.output
