"""The curating module (`pipeline/jobs/curate.py`): both front ends make the same edit through
it, a swap back undoes a swap with its reports, the stale note names every Stage changed, and
the stock sits below the jobs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

pytest.importorskip(
    "starlette", reason="the studio's web packages are not installed (pip install -e '.[test]')"
)

from starlette.testclient import TestClient

from pipeline.studio.app import create_app
from pipeline.studio.library import content_hash
from tests.conftest import STUDIO_ORIGIN, studio_post
from tests.helpers import run

NIGHT = "2026-01-02"
BUNDLE = f"{NIGHT}/bundle.yaml"


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".index" not in p.name and not p.name.startswith(".")
    }


def ids(root: Path) -> list[str]:
    doc = yaml.safe_load((root / BUNDLE).read_text())
    return [s["puzzle"]["id"] for lv in doc["levels"] for s in lv["stages"]]


def spares(root: Path) -> list[str]:
    return [
        p.stem for p in sorted((root / NIGHT / "pool").glob("*.yaml")) if p.stem not in ids(root)
    ]


def studio_save(root: Path, draft: str) -> None:
    client = TestClient(create_app(root), base_url=STUDIO_ORIGIN, raise_server_exceptions=False)
    base = content_hash((root / BUNDLE).read_bytes())
    r = studio_post(client, "/save", {"path": BUNDLE, "base": base, "draft": draft})
    assert r.status_code == 303, r.text


def cli_swap(root: Path, at: str, pid: str) -> None:
    result = run("swap", str(root / BUNDLE), at, "--with", pid)
    assert result.exit_code == 0, result.output


def test_the_cli_and_the_studio_make_the_same_edit(night_copy: Path, tmp_path: Path) -> None:
    """`numbermatch swap` and a studio Save of the same swap leave the same files, byte for
    byte: the bundle, the pool that took the old puzzle back, report.html and report.md."""
    other = tmp_path / "other"
    shutil.copytree(night_copy, other)
    new = spares(night_copy)[0]
    cli_swap(night_copy, "L1.S2", new)
    studio_save(other, f"s:1.2={new}")
    assert ids(night_copy)[1] == new
    assert tree(night_copy) == tree(other)


def test_a_swap_back_undoes_the_swap_and_its_reports(night_copy: Path, tmp_path: Path) -> None:
    """After two swaps report.md's stale note names both Stages; swapping both back (from either
    front end) gives the night as generated: bundle, reports and pool as they were."""
    original = tree(night_copy)
    first, second = ids(night_copy)[1], ids(night_copy)[2]
    a, b = spares(night_copy)[:2]
    cli_swap(night_copy, "L1.S2", a)
    studio_save(night_copy, f"s:1.3={b}")
    md = (night_copy / NIGHT / "report.md").read_text()
    assert md.count("**Stale:**") == 1 and "(L1.S2, L1.S3 swapped)" in md
    cli_swap(night_copy, "L1.S2", first)
    md = (night_copy / NIGHT / "report.md").read_text()
    assert "(L1.S3 swapped)" in md
    studio_save(night_copy, f"s:1.3={second}")
    after = tree(night_copy)
    assert after[BUNDLE] == original[BUNDLE]
    assert after[f"{NIGHT}/report.md"] == original[f"{NIGHT}/report.md"]
    assert after[f"{NIGHT}/report.html"] == original[f"{NIGHT}/report.html"]
    # the pool keeps what it was given back (the bundle's own puzzles now: never offered again)
    pool = {k for k in after if k.startswith(f"{NIGHT}/pool/")}
    was = {k for k in original if k.startswith(f"{NIGHT}/pool/")}
    assert pool - was == {f"{NIGHT}/pool/{first}.yaml", f"{NIGHT}/pool/{second}.yaml"}
    assert all(after[k] == original[k] for k in was)


def test_the_stock_is_below_the_jobs() -> None:
    """The stock is used by the jobs (the nightly draws and refills, the curating module takes
    and gives back) and uses none of them: the layers contract says so."""
    text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    layers = text.split("layers = [", 1)[1].split("]", 1)[0]
    rows = [
        line.strip().strip('",') for line in layers.splitlines() if line.strip().startswith('"')
    ]
    jobs = next(k for k, row in enumerate(rows) if row.startswith("pipeline.jobs"))
    assert "pipeline.stock" not in rows[jobs] and rows[jobs + 1] == "pipeline.stock"
