"""Every picture in docs/ from one command: `make docs-images` (`python -m tests.docs_images`).

- The SVGs are what `numbermatch render` draws for the committed night (`SVGS`);
  tests/test_docs_examples.py checks each committed file is byte-identical to a fresh render, so
  a change to the drawing or to the night fails `make test` until the pictures are made again.
- The studio's PNGs are screenshots: the studio serves a copy of `generated/` on a free local
  port and Playwright drives Debian's Chromium (/usr/bin/chromium) to the bundle page (at 1280
  px) and to a Stage half played with one cell selected; docs/report-phone.png is the night's
  report.html, rendered from the committed bundle, in a 390 px phone window. Screenshots depend on the fonts of the machine, so
  no test compares them byte for byte; the studio's browser tests check what the pages show.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from pipeline.formats.index import CACHE_ENV
from tests.docs_examples import ROOT, committed_copy, environment
from tests.helpers import click_cell, play

NIGHT = "2026-11-29"  # the committed night every docs example runs on
BUNDLE = f"{NIGHT}/bundle.yaml"
# docs picture -> the render arguments that draw it
SVGS: dict[str, list[str]] = {
    "docs/stage.svg": [f"generated/{BUNDLE}:L3.S2", "--next"],
}
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
]


def render_svg(picture: str, out: Path) -> bytes:
    """Draw one docs SVG into `out` (run from the repository's top, as the docs examples are)."""
    command = Path(sys.executable).with_name("numbermatch")
    subprocess.run(
        [str(command), "render", *SVGS[picture], "--out", str(out)],
        cwd=ROOT,
        env=environment(),
        check=True,
        capture_output=True,
    )
    return out.read_bytes()


def studio_pictures(out: Path) -> list[Path]:
    """docs/studio-bundle.png and docs/studio-stage.png, from the studio over a copy of the night."""
    from playwright.sync_api import sync_playwright

    from pipeline.engine.moves import Move
    from pipeline.studio.server import Background

    written = []
    with tempfile.TemporaryDirectory(prefix="nm-docs-images-") as tmp:
        # the night and the stock its swaps come from, as committed (not as a night left them)
        root = committed_copy(Path(tmp), (f"generated/{NIGHT}", "generated/stock")) / "generated"
        before = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = str(
            Path(tmp) / "index"
        )  # the stock's index: beside the copy, not in ~/.cache
        doc = yaml.safe_load((root / BUNDLE).read_text(encoding="utf-8"))
        stage = doc["levels"][0]["stages"][1]  # L1.S2
        solution = [Move.parse(m) for m in stage["puzzle"]["solution"]]
        with Background(root) as studio, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{studio.url}/bundle?path={BUNDLE}")
            page.wait_for_selector("#curve svg")
            written.append(_shot(page, out / "studio-bundle.png"))
            page.locator('article[data-at="1.2"] a.open').click()
            page.wait_for_selector("#grid")
            half = len(solution) // 2
            while solution[half].is_add:  # stop before a pair, to show one cell selected
                half += 1
            for move in solution[:half]:
                play(page, move)
            first = solution[half].first
            assert first is not None
            click_cell(page, first)
            written.append(_shot(page, out / "studio-stage.png"))
            written.append(_report_on_a_phone(browser, root / NIGHT, out / "report-phone.png"))
            browser.close()
        if before is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = before
    return written


def _report_on_a_phone(browser: Any, night: Path, path: Path) -> Path:
    """report.html of the night as `report` renders it now, in a 390 px wide phone window."""
    from pipeline.jobs.report_html import render_report_html

    html = night / "report-now.html"
    html.write_text(
        render_report_html(yaml.safe_load((night / "bundle.yaml").read_text(encoding="utf-8"))),
        encoding="utf-8",
    )
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    page = context.new_page()
    page.goto(html.as_uri())
    page.locator("#level-1").scroll_into_view_if_needed()  # a Level's chart and its first card
    page.screenshot(path=str(path))
    context.close()
    return path


def _shot(page: Any, path: Path) -> Path:
    page.screenshot(path=str(path))  # the window, as a person first sees the page
    return path


def main() -> int:
    for picture in SVGS:
        render_svg(picture, ROOT / picture)
        print(f"{picture}: rendered")
    if not CHROMIUM.exists():
        print(
            f"studio pictures not made: no Chromium at {CHROMIUM} (apt-get install chromium)",
            file=sys.stderr,
        )
        return 1
    for path in studio_pictures(ROOT / "docs"):
        print(f"{path.relative_to(ROOT)}: screenshot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
