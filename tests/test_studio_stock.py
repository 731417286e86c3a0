"""The studio on a night drawn from the stock (no pool/ folder): swaps take from the stock of the
nights' folder, the puzzle swapped out goes back to it and the one taken leaves it, and no puzzle
a bundle under the studio's folder ships (nor a relabelled copy) is ever offered."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip(
    "starlette", reason="the studio's web packages are not installed (pip install -e '.[test]')"
)

from starlette.testclient import TestClient

from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.jobs.publish import locked
from pipeline.rating.tiers import tier_for
from pipeline.stock.store import put, read_puzzle, stock_path
from pipeline.studio.library import content_hash
from pipeline.validator import validate_paths
from tests.conftest import STUDIO_DATE, studio_post

BUNDLE = "2026-01-02/bundle.yaml"
MIRROR = str.maketrans("123456789", "987654321")  # v -> 10 - v: a relabelled copy that plays alike


@pytest.fixture
def root(night_copy: Path) -> Path:
    """The studio's night as one drawn from the stock: no pool/, its puzzles in `<out>/stock/`."""
    pool = night_copy / "2026-01-02" / "pool"
    put(night_copy, [read_puzzle(p) for p in sorted(pool.glob("*.yaml"))], STUDIO_DATE)
    shutil.rmtree(pool)
    return night_copy


@pytest.fixture
def client(root: Path) -> TestClient:
    from pipeline.studio.app import create_app

    return TestClient(
        create_app(root), base_url="http://127.0.0.1:8765", raise_server_exceptions=False
    )


def stock(root: Path) -> dict[str, Puzzle]:
    return {p.stem: read_puzzle(p) for p in sorted((root / "stock").rglob("*.yaml"))}


def stages(root: Path) -> list[dict[str, Any]]:
    doc = yaml.safe_load((root / BUNDLE).read_text())
    return [s for lv in doc["levels"] for s in lv["stages"]]


def offered(client: TestClient, at: str) -> list[str]:
    page = client.get("/swap", params={"path": BUNDLE, "at": at}).text
    return re.findall(r'<li class="offer" data-id="([^"]+)"', page)


def save(client: TestClient, root: Path, draft: str) -> Any:
    return studio_post(
        client,
        "/save",
        {"path": BUNDLE, "base": content_hash((root / BUNDLE).read_bytes()), "draft": draft},
    )


def test_the_swap_page_of_a_stock_night_offers_the_stock(client: TestClient, root: Path) -> None:
    assert not (root / "2026-01-02" / "pool").exists()
    tiers = {tier_for(s["target_score"]) for s in stages(root)}
    wanted = {i for i, p in stock(root).items() if p.tier in tiers}
    ids = offered(client, "1.1")
    assert (
        wanted and set(ids) == wanted
    )  # the stock's puzzles of the tiers the bundle's Stages target
    target = tier_for(stages(root)[0]["target_score"])
    assert stock(root)[ids[0]].tier == target  # swap's own choice first: the Stage's tier
    assert (
        "candidates from the stock"
        in client.get("/swap", params={"path": BUNDLE, "at": "1.1"}).text
    )
    assert "swaps from the stock" in client.get("/bundle", params={"path": BUNDLE}).text


def test_a_save_from_the_stock_takes_the_puzzle_out_and_puts_the_old_one_back(
    client: TestClient, root: Path
) -> None:
    original = (root / BUNDLE).read_bytes()
    old = Puzzle.from_dict(stages(root)[0]["puzzle"])
    new = offered(client, "1.1")[0]  # the best candidate: swap's own choice
    before = set(stock(root))
    r = save(client, root, f"s:1.1={new}")
    assert r.status_code == 303, r.text
    assert stages(root)[0]["puzzle"]["id"] == new
    assert set(stock(root)) == before - {new} | {old.id}  # the taken one left, the old one is back
    assert (
        read_puzzle(stock_path(root, old)).provenance["stocked"] == "2026-01-02"
    )  # the latest night's date, as swap's
    assert f"{old.id} back in the stock" in client.get(r.headers["location"]).text
    assert validate_paths([root]).ok  # nothing shipped twice, nothing shipped and in stock (NM321)
    assert save(client, root, f"s:1.1={old.id}").status_code == 303  # undone from the stock too
    assert (root / BUNDLE).read_bytes() == original and set(stock(root)) == before


def test_a_relabelled_copy_of_a_shipped_puzzle_in_the_stock_is_never_offered(
    client: TestClient, root: Path
) -> None:
    shipped = Puzzle.from_dict(stages(root)[1]["puzzle"])
    copy = Puzzle(
        shipped.board.translate(MIRROR), shipped.adds, shipped.solution, shipped.difficulty
    )
    planted = stock_path(root, copy)
    planted.write_text(dump_yaml(copy.to_document()))
    assert (
        copy.id != shipped.id and validate_paths([planted]).ok
    )  # a valid puzzle file, by itself...
    assert copy.tier in {
        tier_for(s["target_score"]) for s in stages(root)
    }  # ...of a tier the bundle targets
    for at in ("1.1", "1.2", "1.3", "1.4"):
        assert copy.id not in offered(client, at)
    before = (root / BUNDLE).read_bytes()
    r = save(client, root, f"s:1.1={copy.id}")  # a draft naming it anyway is refused
    assert r.status_code == 400 and "not in the stock" in r.text
    assert (root / BUNDLE).read_bytes() == before and planted.is_file()


def test_a_refused_save_leaves_the_stock_as_it_was(client: TestClient, root: Path) -> None:
    new = offered(client, "1.1")[0]
    files = {p: p.read_bytes() for p in (root / "stock").rglob("*.yaml")}
    (root / BUNDLE).chmod(
        0o444
    )  # the bundle cannot be written: the old puzzle's stock file is taken back
    try:
        r = save(client, root, f"s:1.1={new}")
    finally:
        (root / BUNDLE).chmod(0o644)
    assert r.status_code == 400 and "read-only" in r.text
    assert {p: p.read_bytes() for p in (root / "stock").rglob("*.yaml")} == files
    with locked(root):  # a nightly run holds the nights' folder: a Save from its stock waits for it
        r = save(client, root, f"s:1.1={new}")
    assert r.status_code == 400 and "nightly run" in r.text
    assert {p: p.read_bytes() for p in (root / "stock").rglob("*.yaml")} == files
    assert stages(root)[0]["puzzle"]["id"] != new


def test_a_puzzle_another_bundle_took_meanwhile_is_not_shipped_twice(
    client: TestClient, root: Path
) -> None:
    """The Save's last check under the nights' lock: the taken puzzle is still in the stock and
    no other bundle ships it (a `numbermatch swap` elsewhere may have taken it since)."""
    from pipeline.jobs import curate
    from pipeline.jobs.swap import SwapError, swap_stage

    new = stock(root)[offered(client, "1.1")[0]]
    other = root / "2026-01-03"
    shutil.copytree(root / "2026-01-02", other)
    swap_stage(other / "bundle.yaml", 1, 1, [new], with_id=new.id)  # another night ships it now
    bundle = root / BUNDLE
    before = bundle.read_bytes()
    files = {p: p.read_bytes() for p in (root / "stock").rglob("*.yaml")}
    result = swap_stage(bundle, 1, 1, [new], with_id=new.id, write=False)
    with pytest.raises(
        SwapError,
        match=rf"{new.id} \(or a relabelled copy\) is already shipped at 2026-01-03/bundle.yaml:L1.S1",
    ):
        curate.commit(curate.Source(curate.STOCK, root), result, content_hash(before))
    assert (
        bundle.read_bytes() == before
        and {p: p.read_bytes() for p in (root / "stock").rglob("*.yaml")} == files
    )


def test_excluding_a_stages_puzzle_drafts_the_stocks_best_and_a_stage_page_plays_it(
    client: TestClient, root: Path
) -> None:
    old = stages(root)[0]["puzzle"]["id"]
    best = offered(client, "1.1")[0]
    r = studio_post(
        client, "/draft", {"path": BUNDLE, "op": "exclude", "at": "1.1", "id": old}, follow=True
    )
    draft = re.search(r'name="draft" value="([^"]*)"', r.text)
    assert draft and draft.group(1) == f"s:1.1={best};x:{old}"  # swap's own choice, from the stock
    page = client.get("/stage", params={"path": BUNDLE, "at": "1.1", "draft": draft.group(1)})
    assert (
        page.status_code == 200 and best in page.text
    )  # the drafted stock puzzle is the one played


def test_a_stage_the_stock_cannot_serve_says_so_in_the_stocks_words(
    client: TestClient, root: Path
) -> None:
    tier = tier_for(stages(root)[0]["target_score"])
    for p in stock(root).values():
        if p.tier == tier:
            stock_path(root, p).unlink()
    page = client.get("/swap", params={"path": BUNDLE, "at": "1.1"}).text
    assert 'id="best"' not in page and f"the stock has no unused {tier} puzzle for L1.S1" in page
