"""One score scale per bundle (`pipeline.formats.scale`): a rescored bundle records its profile,
and swap, the studio, assemble, the report, the nightly and the stock read and write on it."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.formats.profile_file import profile_document, write_profile
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.formats.scale import BUNDLE_KEY, block_profile, convert_target, tiers_of
from pipeline.rating.profile import RatingProfile
from pipeline.rating.versions import score_from_metrics
from pipeline.stock import night as stock_night
from pipeline.stock.store import put, stock_path
from pipeline.validator import validate_paths
from tests.helpers import run
from tests.test_telemetry import strong

REPO_GENERATED = Path(__file__).parent.parent / "generated"
NIGHT = "2026-11-29"


@pytest.fixture
def rescored(tmp_path: Path) -> tuple[Path, Path, RatingProfile]:
    """A copy of the committed nights and stock, night 2026-11-29 rescored under `strong`."""
    out = tmp_path / "generated"
    shutil.copytree(REPO_GENERATED, out)
    profile = tmp_path / "strong.yaml"
    write_profile(profile, profile_document(strong()))
    bundle = out / NIGHT / "bundle.yaml"
    done = run("rescore", "--profile", str(profile), str(bundle))
    assert done.exit_code == 0, done.output
    return bundle, profile, strong()


def _blocks(bundle: Path) -> list[dict[str, Any]]:
    doc = yaml.safe_load(bundle.read_text())
    return [s["puzzle"]["difficulty"] for lv in doc["levels"] for s in lv["stages"]]


def test_rescore_records_the_scale_and_moves_the_targets_within_their_tiers(
    rescored: tuple[Path, Path, RatingProfile],
) -> None:
    bundle, _, profile = rescored
    before = yaml.safe_load((REPO_GENERATED / NIGHT / "bundle.yaml").read_text())
    after = yaml.safe_load(bundle.read_text())
    assert after[BUNDLE_KEY]["digest"] == profile.digest
    for lv_a, lv_b in zip(before["levels"], after["levels"], strict=True):
        for a, b in zip(lv_a["stages"], lv_b["stages"], strict=True):
            old, new = a["target_score"], b["target_score"]
            assert new == convert_target(old, None, profile)
            (tier,) = [n for n, lo, hi in tiers_of(None) if lo <= old < hi]
            assert profile.tier_for(new) == tier  # the same tier, the same place in it
    assert validate_paths([bundle]).ok


def test_a_plain_swap_on_a_rescored_bundle_keeps_one_scale_and_the_stock_its_own(
    rescored: tuple[Path, Path, RatingProfile],
) -> None:
    """A plain swap left 59 profile-scored Stages and 1 default-scored one, its line compared a
    profile score with a default one against a default-scale target, and the profile-scored
    puzzle went back into the stock."""
    bundle, profile_file, profile = rescored
    old = _blocks(bundle)[1]
    done = run("swap", str(bundle), "L1.S2")
    assert done.exit_code == 0, done.output
    blocks = _blocks(bundle)
    assert all(block_profile(b) == profile for b in blocks)  # 60 Stages on one scale
    new = blocks[1]
    assert new["score"] == profile.score(new) and new["tier"] == profile.tier_for(new["score"])
    doc = yaml.safe_load(bundle.read_text())
    target = doc["levels"][0]["stages"][1]["target_score"]
    line = done.output.splitlines()[0]
    assert f"score {old['score']:.2f}) -> " in line and f"score {new['score']:.2f}), " in line
    assert line.endswith(f"target {target:.2f}")
    back = re.search(r"back in the stock at (\S+)", done.output)
    assert back is not None
    stocked = yaml.safe_load(Path(back.group(1)).read_text())["difficulty"]
    assert "profile" not in stocked and stocked["score"] == score_from_metrics(stocked)
    out = bundle.parent.parent
    assert validate_paths([out]).ok
    assert validate_paths([bundle], profile=profile).ok
    assert run("validate", str(bundle), "--profile", str(profile_file)).exit_code == 0


def test_validate_profile_flags_stages_scored_otherwise_and_a_mixed_bundle_is_nm322(
    rescored: tuple[Path, Path, RatingProfile], tmp_path: Path
) -> None:
    """`validate --profile` said all valid for a bundle never rescored."""
    bundle, profile_file, _ = rescored
    plain = REPO_GENERATED / NIGHT / "bundle.yaml"
    result = run("validate", str(plain), "--profile", str(profile_file))
    assert result.exit_code == 1 and result.output.count("NM318") == 60
    assert "scored on the rating's own scale, not under the given profile 'strong'" in result.output
    doc = yaml.safe_load(bundle.read_text())
    default_stage = yaml.safe_load(plain.read_text())["levels"][0]["stages"][1]["puzzle"]
    doc["levels"][0]["stages"][1]["puzzle"] = default_stage  # one Stage on another scale
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(dump_yaml(doc))
    problems = validate_paths([mixed]).problems
    assert [p.code for p in problems] == ["NM322"]
    assert "L1.S2 is scored on the rating's own scale, the bundle's score_profile on profile" in (
        problems[0].message
    )
    refused = run("swap", str(mixed), "L1.S3", "--pool", str(REPO_GENERATED / "stock"))
    assert refused.exit_code == 1 and "NM322" in refused.output


def test_assemble_refuses_puzzles_on_two_scales_and_records_the_one_it_uses(
    tmp_path: Path,
) -> None:
    pool = tmp_path / "pool"
    shutil.copytree(REPO_GENERATED / "stock", pool)
    profile = tmp_path / "strong.yaml"
    write_profile(profile, profile_document(strong()))
    for f in sorted(pool.rglob("*.yaml"))[::2]:  # half the pool rescored: two scales
        assert run("rescore", "--profile", str(profile), str(f)).exit_code == 0
    out = tmp_path / "b.yaml"
    args = ["assemble", str(pool), "--levels", "1", "--stages", "3", "--out", str(out)]
    result = run(*args)
    assert result.exit_code == 1 and "one bundle holds one scale" in result.output, result.output
    assert not out.exists()
    under = run(*args, "--profile", str(profile), "--force")
    assert under.exit_code == 0, under.output
    doc = yaml.safe_load(out.read_text())
    assert doc[BUNDLE_KEY]["digest"] == strong().digest and validate_paths([out]).ok


def test_the_stock_holds_one_scale(tmp_path: Path) -> None:
    doc = yaml.safe_load((REPO_GENERATED / NIGHT / "bundle.yaml").read_text())
    puzzle = Puzzle.from_dict(doc["levels"][0]["stages"][0]["puzzle"]).under(strong())
    (written,) = put(tmp_path, [puzzle], dt.date(2026, 3, 1))
    stored = yaml.safe_load(written.read_text())["difficulty"]
    assert "profile" not in stored and stored["score"] == score_from_metrics(stored)
    # a profile-scored file put in the stock by hand is set aside when a night draws it
    path = stock_path(tmp_path, puzzle)
    path.write_text(dump_yaml({**puzzle.to_document(), "provenance": {"stocked": "2026-02-01"}}))
    drawn = stock_night.draw(
        tmp_path, {puzzle.tier: [50.0]}, {puzzle.tier: 1}, 1, set_invalid_aside=True
    )
    assert drawn.puzzles == {} and "scored on profile 'strong'" in str(drawn.aside[0])


def test_the_report_of_a_rescored_bundle_is_on_its_profile_throughout(
    rescored: tuple[Path, Path, RatingProfile], tmp_path: Path
) -> None:
    """report.html drew the default bands (blue "medium" dots in the orange hard band) and
    measured the profile's scores against default-scale targets."""
    bundle, _, profile = rescored
    page = tmp_path / "r.html"
    assert run("report", str(bundle), "--out", str(page)).exit_code == 0
    html = page.read_text()
    legend = re.search(r'<p class="legend">(.*?)</p>', html)
    assert legend is not None
    text = re.sub(r"<[^>]+>", "", legend.group(1))
    assert (
        text
        == "Tiers by score: "
        + " ".join(f"{n} {lo:g}-{hi:g}" for n, lo, hi in profile.tiers)
        + " (rating profile strong)"
    )
    doc = yaml.safe_load(bundle.read_text())
    stages = [s for lv in doc["levels"] for s in lv["stages"]]
    deviation = sum(abs(s["puzzle"]["difficulty"]["score"] - s["target_score"]) for s in stages)
    assert f"total deviation from the curve {deviation:.2f} points" in html
    first = stages[0]["target_score"]
    assert f"target {first:.2f} ({profile.tier_for(first)})" in html  # the cards' labels


def test_the_studio_chart_and_cards_of_a_rescored_bundle_use_its_profile(
    rescored: tuple[Path, Path, RatingProfile],
) -> None:
    pytest.importorskip("starlette", reason="the studio's web packages are not installed")
    from starlette.testclient import TestClient

    from pipeline.jobs.report_html import curve_svg
    from pipeline.studio.app import create_app
    from tests.conftest import STUDIO_ORIGIN

    bundle, _, profile = rescored
    root = bundle.parent.parent
    client = TestClient(
        create_app(root, profile=profile), base_url=STUDIO_ORIGIN, raise_server_exceptions=False
    )
    page = client.get("/bundle", params={"path": f"{NIGHT}/bundle.yaml"})
    assert page.status_code == 200
    # the cards gave "score 61.7 ... audience 61.7 medium": the same number twice
    assert 'class="profiled"' not in page.text
    bands = curve_svg([("x", 50.0, 50.0, "hard")], tiers=profile.tiers)
    default = curve_svg([("x", 50.0, 50.0, "hard")])
    band = re.compile(r'<rect x="\d+" y="[0-9.]+" width="\d+" height="[0-9.]+" fill="#[0-9a-f]+"/>')
    ours = band.findall(bands)
    assert ours != band.findall(default)
    heights = {re.search(r'height="([0-9.]+)"', r).group(1) for r in ours}  # type: ignore[union-attr]
    assert heights <= set(re.findall(r'height="([0-9.]+)"', page.text))
