"""`numbermatch report`: a bundle as one self-contained HTML page."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from pipeline.engine.board import parse
from tests.helpers import run


def test_report_html_shows_every_stage_and_the_curve_self_contained(
    night: Path, tmp_path: Path
) -> None:
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
    assert "script" not in page.tags and all(
        link.startswith(("#", "data:")) for link in page.links
    )  # nothing external
    assert "curve-1" in page.ids and "curve-all" in page.ids
    for stage in doc["levels"][0]["stages"]:
        p = stage["puzzle"]
        assert f"L1.S{stage['stage']}" in page.ids
        card = html.split(f'id="L1.S{stage["stage"]}"')[1].split("</article>")[0]
        digits = re.search(r'font-weight="bold">(.*?)</g>', card, re.S)
        drawn = "".join(re.findall(r">(\d)</text>", digits.group(1) if digits else ""))
        assert drawn == p["board"].replace("/", "").replace(
            ".", ""
        )  # the board's picture, digit by digit
        assert card.count("<rect") == 1 + len(parse(p["board"]))  # every cell drawn, gaps included
        assert f"{p['board']}</title>" in html and p["id"] in html
        assert (
            f"score {p['difficulty']['score']:.2f}" in html
        )  # the curve's dot names the actual score
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
    broken.write_text(
        (night / "bundle.yaml").read_text().replace("kind: bundle", "kind: bundel", 1)
    )
    result = run("report", str(broken), "--out", str(out))
    assert result.exit_code == 1 and "the report needs a valid bundle" in result.output
    assert not out.exists() and not (tmp_path / "night.txt").exists()


def test_report_html_fits_a_phone_width_window(night: Path) -> None:
    """At 390 px nothing runs off the page: the cards and the Level charts shrink to the
    window, the night's wide chart scrolls inside its own frame."""
    import pytest

    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip(f"no Chromium at {chromium} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(chromium), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
            page.goto((night / "report.html").as_uri())
            assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
            for selector in ("#curve-all", "#curve-1 svg", "article.stage", "article.stage svg"):
                box = page.locator(selector).first.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (
                    selector,
                    box,
                )
        finally:
            browser.close()
