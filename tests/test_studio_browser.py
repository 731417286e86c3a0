"""The studio in a real browser: Playwright driving Debian's Chromium (/usr/bin/chromium).

Playwright cannot download its own browser on our machines, so these tests use the system
Chromium and skip (with one line) where it is missing; `.ci/run` installs it, so CI runs them.
Screenshots go to each test's tmp folder, and also to $NM_STUDIO_SCREENSHOTS when set (the
docs' pictures come from `make docs-images`, tests/docs_images.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.engine.board import parse
from pipeline.engine.moves import Move
from pipeline.engine.rules import legal_pairs, pair_problem, remove_pair
from pipeline.solver import SOLVED, solve
from tests.helpers import click_cell, play

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BUNDLE = "2026-01-02/bundle.yaml"

if not CHROMIUM.exists():
    pytest.skip(
        f"browser tests skipped: no Chromium at {CHROMIUM} (apt-get install chromium)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests skipped: playwright is not installed"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


def shot(page: Any, tmp_path: Path, name: str) -> Path:
    """Save a full-page screenshot in the test's tmp folder (and $NM_STUDIO_SCREENSHOTS)."""
    out = tmp_path / name
    page.screenshot(path=str(out), full_page=True)
    extra = os.environ.get("NM_STUDIO_SCREENSHOTS")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(extra) / name), full_page=True)
    return out


def stages(root: Path) -> list[dict[str, Any]]:
    doc = yaml.safe_load((root / BUNDLE).read_text(encoding="utf-8"))
    return [s for level in doc["levels"] for s in level["stages"]]


def board_texts(page: Any) -> list[str]:
    return page.locator("#grid .cell").all_inner_texts()  # type: ignore[no-any-return]


def open_stage(page: Any, url: str, at: str = "1.1") -> None:
    page.goto(f"{url}/bundle?path={BUNDLE}")
    page.locator(f'article[data-at="{at}"] a.open').click()
    page.wait_for_selector("#grid")


def test_the_front_page_lists_the_night_and_the_bundle_page_has_the_curve_and_a_card_per_stage(
    studio: Any, page: Any, tmp_path: Path
) -> None:
    page.goto(studio.url + "/")
    assert "2026-01-02" in page.locator("main").inner_text()
    page.get_by_role("link", name=re.compile("Bundle bundle.yaml")).click()
    page.wait_for_selector("#curve svg")
    want = stages(studio.root)
    assert page.locator("article.card").count() == len(want)
    # the chart: per Stage a target point and a score point, titled with their values
    titles = page.locator("#curve svg circle title").all_text_contents()
    for s in want:
        label = f"L1.S{s['stage']}"
        assert f"{label} target {s['target_score']:.2f}" in titles
        assert (
            f"{label} score {s['puzzle']['difficulty']['score']:.2f} ({s['puzzle']['difficulty']['tier']})"
            in titles
        )
    for s in want:  # each card names its puzzle, tier and an explanation of the rating
        card = page.locator(f'article[data-at="1.{s["stage"]}"]')
        assert s["puzzle"]["id"] in card.inner_text()
        assert s["puzzle"]["difficulty"]["tier"] in card.locator(".tier").inner_text()
        assert card.locator(".summary").inner_text().strip()
        assert card.locator(".metrics tr.decides").count() >= 1
    assert shot(page, tmp_path, "studio-bundle.png").stat().st_size > 10_000


def test_each_stage_card_shows_its_board_picture(studio: Any, page: Any) -> None:
    page.goto(f"{studio.url}/bundle?path={BUNDLE}")
    for s in stages(studio.root):
        pic = page.locator(f'article[data-at="1.{s["stage"]}"] .pic svg')
        assert pic.count() == 1
        digits = "".join(ch for ch in s["puzzle"]["board"] if ch.isdigit())
        assert "".join(pic.locator("text").all_text_contents()).endswith(digits)


def test_a_stage_is_won_by_clicking_the_certificates_cells_in_order(
    studio: Any, page: Any, tmp_path: Path
) -> None:
    stage = stages(studio.root)[1]
    open_stage(page, studio.url, "1.2")
    solution = [Move.parse(m) for m in stage["puzzle"]["solution"]]
    for n, move in enumerate(solution):
        # mid-game, with the next move's first cell selected
        if n == len(solution) // 2 and not move.is_add:
            assert move.first is not None
            click_cell(page, move.first)
            assert page.locator("button.cell.sel").count() == 1
            shot(page, tmp_path, "studio-stage.png")
            click_cell(page, move.first)  # clicking it again clears the choice
        play(page, move)
        assert "In play" in page.locator("#status").inner_text() or n == len(solution) - 1
    assert "Won" in page.locator("#status").inner_text()
    assert page.locator("#grid .cell").count() == 0
    assert page.locator("#moves li").count() == len(solution)


def _illegal_pair(cells: bytes) -> tuple[int, int, str]:
    active = [i for i, v in enumerate(cells) if v]
    for a in active:
        for b in active:
            if a < b and (problem := pair_problem(cells, a, b)) is not None:
                return a, b, problem
    raise AssertionError("every pair is legal")


def test_an_illegal_pair_shows_the_engines_reason_and_leaves_the_board_unchanged(
    studio: Any, page: Any
) -> None:
    stage = stages(studio.root)[0]
    cells = parse(stage["puzzle"]["board"])
    open_stage(page, studio.url)
    before = board_texts(page)
    a, b, problem = _illegal_pair(cells)
    click_cell(page, a)
    click_cell(page, b)
    note = page.locator("#note .note.illegal").inner_text()
    assert problem in note and str(Move.pair(a, b)) in note
    assert board_texts(page) == before
    assert page.locator("#moves").count() == 0
    assert page.locator("#adds-left").inner_text() == str(stage["puzzle"]["adds"])


def test_add_undo_and_a_hint_that_keeps_the_stage_winnable(studio: Any, page: Any) -> None:
    stage = stages(studio.root)[0]
    cells, adds = parse(stage["puzzle"]["board"]), stage["puzzle"]["adds"]
    assert adds > 0
    open_stage(page, studio.url)
    before = board_texts(page)
    with page.expect_navigation():
        page.locator("#add").click()
    assert page.locator("#adds-left").inner_text() == str(adds - 1)
    active = [t for t in before if t]
    assert board_texts(page)[: len(before)] == before
    assert [
        t for t in board_texts(page)[len(before) :] if t
    ] == active  # the copies, in reading order
    with page.expect_navigation():
        page.locator("#undo").click()
    assert board_texts(page) == before and page.locator("#adds-left").inner_text() == str(adds)
    # Play one legal pair, then ask for a hint and check it with the solver.
    i, j = legal_pairs(cells)[0]
    play(page, Move(i, j))
    cells = remove_pair(cells, i, j)
    with page.expect_navigation():
        page.keyboard.press("h")  # the keyboard shortcut for Hint
    hinted = page.locator("#note .note.hint").get_attribute("data-move")
    assert hinted
    hint = Move.parse(hinted)
    if hint.is_add:
        after, left = cells + cells.replace(b"\x00", b""), adds - 1
    else:
        assert hint.first is not None and hint.second is not None
        assert page.locator("button.cell.hl").count() == 2
        after, left = remove_pair(cells, hint.first, hint.second), adds
    assert solve(after, left).status == SOLVED
    play(page, hint)
    with page.expect_navigation():
        page.locator("#winnable").click()
    assert "Still winnable" in page.locator("#note").inner_text()


def test_the_board_can_be_played_with_the_keyboard(studio: Any, page: Any) -> None:
    stage = stages(studio.root)[0]
    cells = parse(stage["puzzle"]["board"])
    i, j = legal_pairs(cells)[0]
    open_stage(page, studio.url)
    page.locator('button.cell[data-i="0"]').focus()
    for target in (i, j):
        r, c = divmod(target, 9)
        page.locator('button.cell[data-i="0"]').focus()
        for _ in range(r):
            page.keyboard.press("ArrowDown")
        for _ in range(c):
            page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.dataset.i") == str(target)
        with page.expect_navigation():
            page.keyboard.press("Enter")
    assert page.locator("#moves li").all_inner_texts() == [str(Move(i, j))]


def test_the_solution_steps_through_the_certificate(studio: Any, page: Any) -> None:
    stage = stages(studio.root)[0]
    solution = stage["puzzle"]["solution"]
    open_stage(page, studio.url)
    page.locator("#solution").click()
    page.wait_for_selector("#next-move")
    for k in range(3):
        want = "Add numbers (+)" if solution[k] == "+" else solution[k]
        assert page.locator("#next-move").inner_text() == want
        page.locator("#next").click()
    page.locator("#play-here").click()
    assert page.locator("#moves li").all_inner_texts() == solution[:3]


def test_a_narrow_window_shows_the_whole_board_without_sideways_scrolling(
    studio: Any, browser: Any
) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740})
    pg = context.new_page()
    try:
        pg.goto(f"{studio.url}/stage?path={BUNDLE}&at=1.1")
        assert pg.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
        box = pg.locator("#grid").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360
        pg.goto(f"{studio.url}/bundle?path={BUNDLE}")
        assert pg.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    finally:
        context.close()


def _swap_first_offer(page: Any, url: str, at: str) -> str:
    page.goto(f"{url}/bundle?path={BUNDLE}")
    page.locator(f'article[data-at="{at}"] a', has_text="Swap").click()
    offer = page.locator("li.offer").first
    pid = offer.get_attribute("data-id")
    assert pid
    offer.locator(".use").click()
    page.wait_for_selector("#curve svg")
    assert page.locator(f'article[data-at="{at}"].changed').count() == 1
    return pid


def test_swap_a_stage_from_the_pool_and_save(studio: Any, page: Any) -> None:
    before = stages(studio.root)
    pid = _swap_first_offer(page, studio.url, "1.3")
    assert (studio.root / "2026-01-02" / "pool" / f"{pid}.yaml").is_file()  # the night's leftovers
    page.locator("#save").click()
    page.wait_for_selector("#message")
    assert "Saved" in page.locator("#message").inner_text()
    after = stages(studio.root)
    assert after[2]["puzzle"]["id"] == pid != before[2]["puzzle"]["id"]
    assert [s for k, s in enumerate(after) if k != 2] == [s for k, s in enumerate(before) if k != 2]
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "validate", str(studio.root / BUNDLE)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [
        p for p in (studio.root / "2026-01-02").iterdir() if p.name.startswith(".")
    ]  # no work copy left


def test_swap_a_stage_of_a_stock_night_from_the_stock_and_save(night_copy: Path, page: Any) -> None:
    """A night drawn from the stock has no pool/: the swap page offers the nights' stock, and a
    Save moves the taken puzzle out of it and the old one back in."""
    import shutil

    from pipeline.stock.store import put, read_puzzle
    from pipeline.studio.server import Background
    from tests.conftest import STUDIO_DATE

    pool = night_copy / "2026-01-02" / "pool"
    put(night_copy, [read_puzzle(p) for p in sorted(pool.glob("*.yaml"))], STUDIO_DATE)
    shutil.rmtree(pool)
    old = stages(night_copy)[2]["puzzle"]["id"]
    with Background(night_copy) as studio:
        pid = _swap_first_offer(page, studio.url, "1.3")
        assert list(night_copy.glob(f"stock/*/*/{pid}.yaml"))  # offered from the stock
        page.locator("#save").click()
        page.wait_for_selector("#message")
        assert f"{old} back in the stock" in page.locator("#message").inner_text()
    assert stages(night_copy)[2]["puzzle"]["id"] == pid
    assert not list(night_copy.glob(f"stock/*/*/{pid}.yaml")) and list(
        night_copy.glob(f"stock/*/*/{old}.yaml")
    )


def test_a_stale_save_is_refused_and_the_file_on_disk_is_intact(studio: Any, page: Any) -> None:
    _swap_first_offer(page, studio.url, "1.2")
    path = studio.root / BUNDLE
    edited = path.read_bytes() + b"# edited by someone else while the studio had it open\n"
    path.write_bytes(edited)
    page.locator("#save").click()
    page.wait_for_selector("#message")
    assert "changed on disk" in page.locator("#message").inner_text()
    assert "Save refused" in page.locator("h1").inner_text()
    assert path.read_bytes() == edited


def test_a_path_outside_the_studio_folder_is_refused(
    studio: Any, page: Any, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.yaml"
    secret.write_text("kind: puzzle\nsecret: do-not-serve\n")
    (studio.root / "link.yaml").symlink_to(secret)
    for rel in ("../outside.yaml", str(secret), "link.yaml", "2026-01-02/../../outside.yaml"):
        response = page.goto(f"{studio.url}/stage?path={rel}")
        assert response is not None and response.status == 403, rel
        assert "refused" in page.locator("#message").inner_text()
        assert "do-not-serve" not in page.content()


def test_a_page_on_another_origin_can_neither_save_nor_frame_the_studio(
    studio: Any, page: Any, tmp_path: Path
) -> None:
    """Another local site (another port) auto-submits a Save form and frames the bundle page."""
    import http.server
    import threading
    from functools import partial

    from pipeline.studio.library import content_hash

    bundle = studio.root / BUNDLE
    before = bundle.read_bytes()
    pid = sorted((studio.root / "2026-01-02" / "pool").glob("*.yaml"))[0].stem
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "post.html").write_text(
        f'<form method="post" action="{studio.url}/save" id="f"><input name="path" value="{BUNDLE}">'
        f'<input name="base" value="{content_hash(before)}"><input name="draft" value="s:1.1={pid}">'
        '<input name="token" value="guessed"></form><script>document.getElementById("f").submit()</script>'
    )
    (evil / "frame.html").write_text(
        f'<iframe id="x" src="{studio.url}/bundle?path={BUNDLE}"></iframe>'
    )
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(evil))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        other = f"http://127.0.0.1:{server.server_address[1]}"
        with page.expect_response(lambda r: r.url.endswith("/save")) as answer:
            page.goto(f"{other}/post.html")
        assert answer.value.status == 403
        assert bundle.read_bytes() == before
        page.goto(f"{other}/frame.html")
        page.wait_for_timeout(500)
        framed = [f for f in page.frames if f != page.main_frame]
        assert framed and all(
            "Bundle" not in f.content() for f in framed
        )  # the browser refused to show it
    finally:
        server.shutdown()
        server.server_close()


def test_the_studios_own_save_carries_its_token(studio: Any, page: Any) -> None:
    pid = _swap_first_offer(page, studio.url, "1.4")
    token = page.locator('form.save input[name="token"]').get_attribute("value")
    assert token and len(token) >= 32
    page.locator("#save").click()
    page.wait_for_selector("#message")
    assert "Saved" in page.locator("#message").inner_text()
    assert stages(studio.root)[3]["puzzle"]["id"] == pid


def test_a_pin_made_in_the_browser_is_saved_and_still_there_on_a_fresh_page(
    studio: Any, page: Any
) -> None:
    page.goto(f"{studio.url}/bundle?path={BUNDLE}")
    page.locator('article[data-at="1.2"] button', has_text="Pin").click()
    page.wait_for_selector('article[data-at="1.2"] .pin')
    page.locator("#save").click()
    page.wait_for_selector("#message")
    assert (
        "pins and excludes kept in 2026-01-02/bundle.curation.txt"
        in page.locator("#message").inner_text()
    )
    page.goto(f"{studio.url}/bundle?path={BUNDLE}")  # a new tab: no draft in the address
    assert page.locator('article[data-at="1.2"] .pin').count() == 1
    assert "pin L1.S2=" in (studio.root / "2026-01-02" / "bundle.curation.txt").read_text()


def test_the_bundle_page_at_1280_px_has_a_full_width_chart_level_headings_and_a_sortable_table(
    studio: Any, browser: Any, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    try:
        pg.goto(f"{studio.url}/bundle?path={BUNDLE}")
        panel = pg.locator("#curve").bounding_box()
        chart = pg.locator("#curve svg").bounding_box()
        assert panel and chart and chart["width"] >= 0.95 * (panel["width"] - 10)
        assert pg.locator("#level-1 h3").inner_text() == "Level 1"
        assert pg.locator("#level-1 article.card").count() == len(stages(studio.root))
        pg.locator("#stage-table th a", has_text="deviation").click()
        pg.wait_for_selector('#stage-table th[aria-sort="descending"]')
        shown = [float(t) for t in pg.locator("#stage-table td.dev").all_inner_texts()]
        assert shown == sorted(shown, reverse=True) and len(shown) == len(stages(studio.root))
        assert "sort=deviation" in pg.url
        pg.locator('article[data-at="1.2"] button', has_text="Pin").click()  # the one edit form
        pg.wait_for_selector('article[data-at="1.2"] .pin')
        shot(pg, tmp_path, "studio-bundle-1280.png")
    finally:
        context.close()
