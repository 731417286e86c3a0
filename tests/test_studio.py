"""The studio's server without a browser: paths, hostile requests, the game logic, the CLI."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip(
    "starlette", reason="the studio's web packages are not installed (pip install -e '.[test]')"
)

from starlette.testclient import TestClient

from pipeline.engine.board import parse
from pipeline.engine.moves import Move
from pipeline.solver import SOLVED, UNSOLVABLE, solve
from pipeline.studio import game
from pipeline.studio.app import create_app
from pipeline.studio.draft import Draft, DraftError
from pipeline.studio.paths import PathRefused, inside
from tests.conftest import studio_post
from tests.helpers import sigint_as_at_a_terminal

BUNDLE = "2026-01-02/bundle.yaml"
ORIGIN = "http://127.0.0.1:8765"


@pytest.fixture
def client(night_copy: Path) -> TestClient:
    return TestClient(
        create_app(night_copy), base_url="http://127.0.0.1:8765", raise_server_exceptions=False
    )


def post(client: TestClient, route: str, data: dict[str, str]) -> Any:
    return studio_post(client, route, data, follow=True)


def message(html: str) -> str:
    found = re.search(r'id="message">([^<]*)<', html)
    assert found, html[:500]
    return found.group(1)


def test_the_front_page_counts_each_tier_of_the_bundle(
    client: TestClient, night_copy: Path
) -> None:
    doc = yaml.safe_load((night_copy / BUNDLE).read_text())
    tiers = Counter(s["puzzle"]["difficulty"]["tier"] for lv in doc["levels"] for s in lv["stages"])
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", client.get("/").text))
    bundle_line = text[text.index("Bundle bundle.yaml") :]
    for tier, n in tiers.items():
        assert f"{tier} {n}" in bundle_line


@pytest.mark.parametrize(
    "rel", ["../x.yaml", "/etc/passwd", "a/../../x.yaml", "..", "a\\..\\x", "x\x00.yaml", ""]
)
def test_paths_that_escape_the_folder_are_refused(client: TestClient, rel: str) -> None:
    for route in ("/stage", "/bundle", "/folder", "/swap"):
        r = client.get(route, params={"path": rel, "at": "1.1"})
        assert r.status_code == 403, (route, rel)
        assert "refused" in message(r.text)


def test_a_link_leading_outside_the_folder_is_refused_and_not_listed(
    client: TestClient, night_copy: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.yaml"
    outside.write_text("kind: puzzle\nid: secret-outside\n")
    (night_copy / "2026-01-02" / "sneaky.yaml").symlink_to(outside)
    assert client.get("/stage", params={"path": "2026-01-02/sneaky.yaml"}).status_code == 403
    assert "secret-outside" not in client.get("/").text
    with pytest.raises(PathRefused):
        inside(night_copy, "2026-01-02/sneaky.yaml")


def test_a_post_to_save_is_refused_from_another_site_or_host(client: TestClient) -> None:
    form = {"path": BUNDLE, "base": "0" * 64, "draft": "s:1.1=nm1-000000000000"}
    assert (
        client.post("/save", data=form, headers={"Origin": "https://evil.example"}).status_code
        == 403
    )
    assert client.get("/", headers={"Host": "evil.example"}).status_code == 400  # DNS rebinding


@pytest.mark.parametrize(
    "query, words",
    [
        ({"at": "1.1", "m": "8,8-8,7"}, "move 1"),
        ({"at": "1.1", "m": "banana"}, "invalid move"),
        ({"at": "7.7"}, "there is no L7"),
        ({"at": "x"}, "names no Stage"),
        ({"at": "1.1", "draft": "s:1.1=nm1-nope"}, "not in the pool"),
        ({"at": "1.1", "draft": "rm -rf"}, "draft edit"),
    ],
)
def test_hostile_stage_requests_get_one_line_and_no_traceback(
    client: TestClient, query: dict[str, str], words: str
) -> None:
    r = client.get("/stage", params={"path": BUNDLE, **query})
    assert r.status_code == 400
    assert words in message(r.text) and "Traceback" not in r.text


def test_a_save_with_nothing_to_save_writes_nothing(client: TestClient, night_copy: Path) -> None:
    before = (night_copy / BUNDLE).read_bytes()
    r = post(client, "/save", {"path": BUNDLE, "base": "x", "draft": ""})
    assert r.status_code == 400 and "nothing to save" in message(r.text)
    assert (night_copy / BUNDLE).read_bytes() == before


def test_an_unknown_file_kind_and_broken_yaml_are_reported_in_one_line(
    client: TestClient, night_copy: Path
) -> None:
    (night_copy / "broken.yaml").write_text("kind: [unclosed\n")
    r = client.get("/stage", params={"path": "broken.yaml"})
    assert r.status_code == 400 and message(r.text).startswith("broken.yaml:")
    assert "broken.yaml" in client.get("/").text  # listed with its problem, the page still works


def test_act_redirects_to_the_position_the_engine_gives(
    client: TestClient, night_copy: Path
) -> None:
    doc = yaml.safe_load((night_copy / BUNDLE).read_text())
    puzzle = doc["levels"][0]["stages"][0]["puzzle"]
    first = Move.parse(puzzle["solution"][0])
    r = client.get(
        "/act",
        params={"path": BUNDLE, "at": "1.1", "click": first.second, "sel": first.first},
        follow_redirects=False,
    )
    assert r.status_code == 303 and f"m={str(first).replace(',', '%2C')}" in r.headers["location"]


def test_draft_text_round_trips_and_refuses_junk() -> None:
    d = Draft.parse("s:1.2=nm1-abc;p:2.3;x:nm1-def;s:1.2=nm1-ghi")
    assert d.swaps == (("1.2", "nm1-ghi"),) and d.pins == ("2.3",) and d.excludes == ("nm1-def",)
    assert Draft.parse(str(d)) == d
    for junk in ("s:0.1=x", "p:L1.S2", "s:1.2.3=x", "p:1.2;rm", "x:a b"):
        # the address's one spelling, 1.2
        with pytest.raises(DraftError):
            Draft.parse(junk)
    with pytest.raises(DraftError):
        d.with_swap("2.3", "nm1-x")  # pinned


def test_hint_and_winnable_agree_with_the_solver() -> None:
    start = game.replay(parse("123456789/987654321/135"), 2, ())
    h = game.hint(start)
    assert h.status == SOLVED and h.move is not None
    after = start.then(h.move)
    assert solve(after.cells, after.adds_left).status == SOLVED
    w = game.winnable(start)
    assert w.status == SOLVED and w.fewest is not None
    if w.exact and w.fewest > 0:
        assert solve(start.cells, w.fewest - 1).status == UNSOLVABLE
    assert solve(start.cells, w.fewest).status == SOLVED
    assert game.winnable(game.replay(parse("12"), 0, ())).status == UNSOLVABLE


def test_the_cli_serves_on_localhost_and_stops_cleanly_on_ctrl_c(night_copy: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "studio", str(night_copy), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=sigint_as_at_a_terminal,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        address = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert address, line
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(address.group(0), timeout=5) as r:
                    assert "2026-01-02" in r.read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err


def test_the_cli_refuses_a_missing_folder_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "studio", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "no such folder" in done.stderr


def test_stuck_and_won_are_shown_plainly(client: TestClient, night_copy: Path) -> None:
    from pipeline.formats.puzzle import Puzzle, dump_yaml

    stuck = Puzzle("12", 0, (), {})
    (night_copy / "mine").mkdir()
    (night_copy / "mine" / "stuck.yaml").write_text(dump_yaml(stuck.to_document()))
    page = client.get("/stage", params={"path": "mine/stuck.yaml"}).text
    assert re.search(r'id="status"[^>]*>\s*Stuck: no legal pair and no add left', page)
    r = client.get("/act", params={"path": "mine/stuck.yaml", "do": "add"})
    assert "Add refused: no adds left" in r.text  # the engine's reason
    won = Puzzle("19", 0, ("0,0-0,1",), {})
    (night_copy / "mine" / "won.yaml").write_text(dump_yaml(won.to_document()))
    page = client.get("/stage", params={"path": "mine/won.yaml", "m": "0,0-0,1"}).text
    assert re.search(r'id="status"[^>]*>\s*Won!', page)


def test_exclude_swaps_in_the_pools_best_and_pin_refuses_swaps(
    client: TestClient, night_copy: Path
) -> None:
    doc = yaml.safe_load((night_copy / BUNDLE).read_text())
    old = doc["levels"][0]["stages"][0]["puzzle"]["id"]
    r = post(client, "/draft", {"path": BUNDLE, "op": "exclude", "at": "1.1", "id": old})
    draft = Draft.parse(re.search(r'name="draft" value="([^"]*)"', r.text).group(1))  # type: ignore[union-attr]
    assert old in draft.excludes
    if draft.swaps:
        # the pool had a fitting puzzle: it is drafted for the Stage and never the excluded one
        assert draft.swaps[0][0] == "1.1" and draft.swaps[0][1] != old
    else:
        assert "no replacement" in r.text
    # Excluding a pool puzzle offered for a Stage only stops offering it; the Stage keeps its puzzle.
    offered = sorted(p.stem for p in (night_copy / "2026-01-02" / "pool").glob("*.yaml"))[0]
    r = post(client, "/draft", {"path": BUNDLE, "op": "exclude", "at": "1.3", "id": offered})
    only = Draft.parse(re.search(r'name="draft" value="([^"]*)"', r.text).group(1))  # type: ignore[union-attr]
    assert only.excludes == (offered,) and only.swaps == ()
    swap_page = client.get("/swap", params={"path": BUNDLE, "at": "1.3", "draft": str(only)}).text
    assert f'data-id="{offered}"' not in swap_page
    pinned = post(client, "/draft", {"path": BUNDLE, "op": "pin", "at": "1.2", "draft": str(draft)})
    pinned_draft = Draft.parse(re.search(r'name="draft" value="([^"]*)"', pinned.text).group(1))  # type: ignore[union-attr]
    assert "1.2" in pinned_draft.pins
    r = post(
        client,
        "/draft",
        {"path": BUNDLE, "op": "swap", "at": "1.2", "id": "nm1-x", "draft": str(pinned_draft)},
    )
    assert r.status_code == 400 and "pinned" in message(r.text)
    assert (
        "pinned"
        in client.get(
            "/swap", params={"path": BUNDLE, "at": "1.2", "draft": str(pinned_draft)}
        ).text
    )


def test_the_pool_folder_page_lists_each_puzzle_to_play(
    client: TestClient, night_copy: Path
) -> None:
    pool = sorted((night_copy / "2026-01-02" / "pool").glob("*.yaml"))
    assert pool
    page = client.get("/folder", params={"path": "2026-01-02/pool"}).text
    for f in pool:
        assert f.stem in page and f"2026-01-02%2Fpool%2F{f.name}" in page
    assert (
        client.get("/stage", params={"path": f"2026-01-02/pool/{pool[0].name}"}).status_code == 200
    )


def test_the_swap_page_offers_swaps_own_choice_without_reading_the_bundle_twice(
    client: TestClient, night_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.jobs import swap as swap_module
    from pipeline.jobs.inputs import load_puzzles

    pool = load_puzzles([night_copy / "2026-01-02" / "pool"])
    doc = yaml.safe_load((night_copy / BUNDLE).read_text())
    stages = [s for lv in doc["levels"] for s in lv["stages"]]
    for flat in range(len(stages)):
        at = f"1.{flat + 1}"
        try:
            expected: str | None = swap_module.swap_stage(
                night_copy / BUNDLE, 1, flat + 1, pool, write=False
            ).new.id
        except swap_module.SwapError:
            expected = None
        chosen = None
        try:
            chosen = swap_module.choose_replacement(stages, flat, pool, f"L1.S{flat + 1}").id
        except swap_module.SwapError:
            pass
        assert chosen == expected, at  # one choice, shared
        with monkeypatch.context() as m:  # the studio asks the pure choice, never swap_stage
            m.setattr(
                "pipeline.jobs.curate.swap_stage",
                lambda *a, **k: pytest.fail("the studio called swap_stage"),
            )
            page = client.get("/swap", params={"path": BUNDLE, "at": at}).text
        best = re.search(
            r'<ul class="offers" id="best">\s*<li class="offer" data-id="([^"]+)"', page
        )
        assert (best.group(1) if best else None) == expected, at


def test_stages_are_named_l1_s2_everywhere_and_a_refused_save_lists_the_draft_in_words(
    client: TestClient, night_copy: Path
) -> None:
    pool = sorted(p.stem for p in (night_copy / "2026-01-02" / "pool").glob("*.yaml"))
    draft = f"s:1.2={pool[0]};p:1.3;x:{pool[1]}"
    page = client.get("/bundle", params={"path": BUNDLE, "draft": draft}).text
    assert "L1.S2" in page and not re.search(r"L1\.2\b", page)
    r = post(client, "/save", {"path": BUNDLE, "base": "0" * 64, "draft": draft})
    assert r.status_code == 409
    listed = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r.text[r.text.index('id="draft"') :]))
    assert (
        f"put {pool[0]} in L1.S2" in listed
        and "keep L1.S3 as it is (pinned)" in listed
        and f"never offer {pool[1]}" in listed
    )
    assert draft not in re.sub(r"<a [^>]*>", "", r.text)  # the raw address form is not shown
    assert "s:1.2=" not in re.sub(r'href="[^"]*"', "", r.text)


def test_tier_colours_are_the_reports_and_ids_do_not_break_in_report_html(
    client: TestClient, night_copy: Path
) -> None:
    from pipeline.formats.source import read_document
    from pipeline.jobs.report_html import TIER_COLOURS, render_report_html

    page = client.get("/bundle", params={"path": BUNDLE}).text
    for tier, colour in TIER_COLOURS.items():
        assert re.search(rf"\.tier\.t-{tier} {{ background: {colour};", page), tier  # the badge
    css = client.get("/static/studio.css").text
    assert not re.search(
        r"\.t-(easy|medium|hard|expert)\s*{\s*background", css
    )  # no second palette
    html = render_report_html(read_document(night_copy / BUNDLE))
    ids = re.findall(r"id <code class='id'>([^<]+)</code>", html)
    assert ids and re.search(r"\.facts code\.id \{[^}]*white-space: nowrap", html)


def test_a_favicon_is_served_and_linked(client: TestClient, night_copy: Path) -> None:
    from pipeline.formats.source import read_document
    from pipeline.jobs.report_html import render_report_html

    page = client.get("/").text
    icon = re.search(r'<link rel="icon" href="([^"]+)"', page)
    assert icon
    r = client.get(icon.group(1))
    assert (
        r.status_code == 200
        and r.headers["content-type"].startswith("image/svg+xml")
        and "<svg" in r.text
    )
    assert client.get("/favicon.ico").status_code == 200
    assert '<link rel="icon" href="data:image/svg+xml,' in render_report_html(
        read_document(night_copy / BUNDLE)
    )


def test_showing_the_solution_keeps_the_game_in_progress(
    client: TestClient, night_copy: Path
) -> None:
    doc = yaml.safe_load((night_copy / BUNDLE).read_text())
    first = doc["levels"][0]["stages"][0]["puzzle"]["solution"][0]
    page = client.get("/stage", params={"path": BUNDLE, "at": "1.1", "m": first}).text
    link = re.search(r'id="solution"[^>]*|href="([^"]+)" id="solution"', page)
    assert link and link.group(1)
    href = link.group(1).replace("&amp;", "&")
    solution = client.get(href).text
    back = re.search(r'href="([^"]+)" id="back-to-game"', solution)
    assert back, "the solution page leads back to the game"
    game_page = client.get(back.group(1).replace("&amp;", "&")).text
    assert re.search(r'<ol id="moves"><li>' + re.escape(first) + "</li></ol>", game_page)
    nxt = re.search(r'href="([^"]+)" id="next"', solution)
    assert (
        nxt and 'id="back-to-game"' in client.get(nxt.group(1).replace("&amp;", "&")).text
    )  # kept while stepping


def test_the_studio_reads_bundles_and_puzzles_only_through_their_values() -> None:
    """One bundle view in the package: the studio walks `Bundle`/`Stage`/`Puzzle` values and reads
    scores and tiers through `Difficulty`, never a document's raw fields (a request's own
    fields, `q` and `form`, are not documents)."""
    from tests import helpers

    fields = (
        "levels",
        "stages",
        "puzzle",
        "target_score",
        "difficulty",
        "id",
        "board",
        "adds",
        "solution",
        "ruleset",
        "score",
        "tier",
    )
    offenders = []
    for path in sorted(
        (Path(__file__).resolve().parent.parent / "pipeline" / "studio").glob("*.py")
    ):
        reads = helpers.key_reads(path.read_text(), fields)
        offenders += [
            f"{path.name}:{line}: {text}"
            for line, text in reads
            if not text.startswith(("q.", "q[", "form"))
        ]
    assert offenders == [], (
        "read them through Bundle, Stage, Puzzle and Difficulty:\n  " + "\n  ".join(offenders)
    )


def test_the_studio_names_levels_as_the_bundle_numbers_them(night_copy: Path) -> None:
    doc = yaml.safe_load((night_copy / BUNDLE).read_text())
    doc["first_level"] = 5
    (night_copy / BUNDLE).write_text(yaml.safe_dump(doc, sort_keys=False))
    client = TestClient(create_app(night_copy), base_url=ORIGIN, raise_server_exceptions=False)
    page = client.get("/bundle", params={"path": BUNDLE}).text
    assert 'data-at="5.1"' in page and 'data-at="1.1"' not in page and ">L5.S2<" in page
    assert client.get("/stage", params={"path": BUNDLE, "at": "5.2"}).status_code == 200
    assert "there is no L1" in client.get("/stage", params={"path": BUNDLE, "at": "1.1"}).text


def test_each_card_shows_the_puzzles_facts(client: TestClient, night_copy: Path) -> None:
    """Every fact of a card comes from the Stage and Puzzle values (a name the page did not give
    renders blank, so each is checked)."""
    doc = yaml.safe_load((night_copy / BUNDLE).read_text())
    page = client.get("/bundle", params={"path": BUNDLE}).text
    cards = re.findall(r'<article class="card[^"]*" data-at="([^"]+)".*?</article>', page, re.S)
    assert cards == ["1.1", "1.2", "1.3", "1.4"]
    for k, stage in enumerate(doc["levels"][0]["stages"]):
        card = re.search(rf'data-at="1.{k + 1}".*?</article>', page, re.S).group(0)  # type: ignore[union-attr]
        p = stage["puzzle"]
        facts = dict(re.findall(r"<dt>([^<]+)</dt><dd[^>]*>([^<]*)</dd>", card))
        assert (
            facts["score"] == f"{p['difficulty']['score']:.1f}"
            and facts["target"] == f"{stage['target_score']:.1f}"
        )
        assert facts["adds"] == str(p["adds"]) and facts["id"] == p["id"]
        assert f'class="tier t-{p["difficulty"]["tier"]}">{p["difficulty"]["tier"]}<' in card


@pytest.fixture
def committed_night(tmp_path: Path) -> Path:
    """A copy of the repository's committed night (ten Levels of six Stages), as the studio's PATH."""
    import shutil

    root = tmp_path / "generated"
    night = Path(__file__).resolve().parent.parent / "generated" / "2026-11-29"
    shutil.copytree(night, root / night.name)
    return root


def test_the_bundle_page_groups_cards_per_level_under_headings_and_tables_the_stages(
    committed_night: Path,
) -> None:
    rel = "2026-11-29/bundle.yaml"
    doc = yaml.safe_load((committed_night / rel).read_text())
    client = TestClient(create_app(committed_night), base_url=ORIGIN, raise_server_exceptions=False)
    page = client.get("/bundle", params={"path": rel}).text
    for level in doc["levels"]:
        n = level["level"] if "level" in level else doc["levels"].index(level) + 1
        section = re.search(rf'<section class="level" id="level-{n}".*?</section>', page, re.S)
        assert section and f"<h3>Level {n}</h3>" in section.group(0)
        at = re.findall(r'<article class="card[^"]*" data-at="([^"]+)"', section.group(0))
        assert at == [f"{n}.{s + 1}" for s in range(len(level["stages"]))]
    # the table: a row per Stage, with its deviation; sorted by deviation the worst comes first
    stages = [(lv, s) for lv, level in enumerate(doc["levels"], 1) for s in level["stages"]]
    table = re.search(r'<table class="stages".*?</table>', page, re.S).group(0)  # type: ignore[union-attr]
    heads = re.findall(r"<th[^>]*><a href=\"([^\"]+)\">([^<]+)</a></th>", table)
    assert [h for _, h in heads] == ["Level", "Stage", "id", "tier", "score", "target", "deviation"]
    assert "sort=deviation" in dict((h, u) for u, h in heads)["deviation"]
    assert len(re.findall(r"<tr data-row=", table)) == len(stages)

    def devs(html: str) -> list[float]:
        return [float(d) for d in re.findall(r'<td class="dev">([0-9.]+)</td>', html)]

    want = [abs(s["puzzle"]["difficulty"]["score"] - s["target_score"]) for _, s in stages]
    assert devs(table) == [float(f"{d:.1f}") for d in want]
    worst = client.get("/bundle", params={"path": rel, "sort": "deviation"}).text
    assert devs(worst) == sorted(devs(table), reverse=True)
    first = max(range(len(want)), key=lambda k: (want[k], -k))
    lv, s = stages[first]
    assert re.search(r'<tr data-row="([^"]+)"', worst).group(1) == f"{lv}.{s['stage']}"  # type: ignore[union-attr]
    by_id = client.get("/bundle", params={"path": rel, "sort": "id"}).text
    ids = re.findall(r'<td class="pid">([^<]+)</td>', by_id)
    assert ids == sorted(ids)


def test_the_bundle_page_is_small_and_its_chart_scales_to_the_page(committed_night: Path) -> None:
    """Sixty boards and their buttons: the pictures share their paint, the buttons one form."""
    rel = "2026-11-29/bundle.yaml"
    client = TestClient(create_app(committed_night), base_url=ORIGIN, raise_server_exceptions=False)
    page = client.get("/bundle", params={"path": rel}).text
    cards = re.findall(r"<article class=\"card.*?</article>", page, re.S)
    assert len(cards) == 60 and max(len(c.encode()) for c in cards) < 4500
    assert page.count("<form") <= 3  # the edit form, the save form (and no form per button)
    assert 'form="edit" name="do" value="pin:1.1"' in page
    chart = re.search(r'<div class="chart" id="curve">(<svg[^>]*>)', page).group(1)  # type: ignore[union-attr]
    assert 'viewBox="0 0 1200 ' in chart


def test_a_button_of_the_edit_form_changes_the_draft(client: TestClient) -> None:
    r = post(client, "/draft", {"path": BUNDLE, "do": "pin:1.2", "draft": ""})
    assert r.status_code == 200 and "p:1.2" in str(r.url).replace("%3A", ":")


def test_the_cli_outside_a_checkout_says_generated_is_the_default_path(tmp_path: Path) -> None:
    from tests.helpers import one_line_refusal, run

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = run("studio")
    finally:
        os.chdir(cwd)
    one_line_refusal(result, "generated: no such folder here (it is the default PATH")
