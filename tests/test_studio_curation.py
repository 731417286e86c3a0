"""Curating in the studio: a Save is `swap`'s own swap (the old puzzle back in the pool,
validation before offering), a refused Save keeps the draft and names no hidden file, pins and
excludes are kept where `assemble` reads them, and the night's reports follow. A night drawn
from the stock: tests/test_studio_stock.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip(
    "starlette", reason="the studio's web packages are not installed (pip install -e '.[test]')"
)

from starlette.testclient import TestClient

from pipeline.formats.curation import Curation, CurationError, read_curation
from pipeline.studio.library import content_hash
from tests.conftest import studio_post
from tests.helpers import run

BUNDLE = "2026-01-02/bundle.yaml"


@pytest.fixture
def client(studio_client: TestClient) -> TestClient:
    return studio_client


def save(client: TestClient, root: Path, draft: str) -> Any:
    return studio_post(
        client,
        "/save",
        {"path": BUNDLE, "base": content_hash((root / BUNDLE).read_bytes()), "draft": draft},
    )


def stage_ids(root: Path) -> list[str]:
    doc = yaml.safe_load((root / BUNDLE).read_text())
    return [s["puzzle"]["id"] for lv in doc["levels"] for s in lv["stages"]]


def pool_files(root: Path) -> list[Path]:
    return sorted((root / "2026-01-02" / "pool").glob("*.yaml"))


def test_a_studio_swap_returns_the_old_puzzle_to_the_pool_and_can_be_undone(
    client: TestClient, night_copy: Path
) -> None:
    original = (night_copy / BUNDLE).read_bytes()
    old = stage_ids(night_copy)[0]
    new = next(p.stem for p in pool_files(night_copy) if p.stem not in stage_ids(night_copy))
    assert not (night_copy / "2026-01-02" / "pool" / f"{old}.yaml").exists()
    r = save(client, night_copy, f"s:1.1={new}")
    assert r.status_code == 303, r.text
    assert stage_ids(night_copy)[0] == new
    assert (night_copy / "2026-01-02" / "pool" / f"{old}.yaml").is_file()  # as `swap` does
    assert f"{old} back in the pool" in client.get(r.headers["location"]).text
    assert save(client, night_copy, f"s:1.1={old}").status_code == 303  # undo
    assert (night_copy / BUNDLE).read_bytes() == original


def test_the_studio_offers_only_pool_puzzles_the_validator_accepts(
    client: TestClient, night_copy: Path
) -> None:
    files = [p for p in pool_files(night_copy) if p.stem not in stage_ids(night_copy)]
    edited, copied = files[0], files[1]
    text = edited.read_text()
    edited.write_text(re.sub(r"score: [0-9.]+", "score: 1.5", text, count=1))  # a hand-edited score
    (copied.parent / "copy-of-another.yaml").write_text(
        copied.read_text()
    )  # its id twice in the pool
    page = client.get("/swap", params={"path": BUNDLE, "at": "1.1"}).text
    offered = set(re.findall(r'<li class="offer" data-id="([^"]+)"', page))
    assert edited.stem not in offered
    refused = re.findall(r'<li class="problem">([^<]+)</li>', page)
    assert any(edited.name in line for line in refused)
    assert any("copy-of-another.yaml" in line and "NM304" in line for line in refused)
    before = (night_copy / BUNDLE).read_bytes()
    r = save(client, night_copy, f"s:1.1={edited.stem}")  # a draft naming it anyway is refused...
    assert r.status_code == 400 and "validator refuses" in r.text
    assert (night_copy / BUNDLE).read_bytes() == before
    assert (
        str(night_copy) not in r.text and ".tmp" not in r.text
    )  # ...naming no hidden or absolute path
    kept = re.search(r'href="([^"]+)" id="with-draft"', r.text)  # ...and keeping the draft
    assert kept and f"s%3A1.1%3D{edited.stem}" in kept.group(1)
    assert f"put {edited.stem} in L1.S1" in r.text


def test_pins_and_excludes_are_kept_beside_the_bundle_and_assemble_reads_them(
    client: TestClient, night_copy: Path
) -> None:

    ids = stage_ids(night_copy)
    spare = next(p.stem for p in pool_files(night_copy) if p.stem not in ids)
    r = save(client, night_copy, f"p:1.2;x:{spare}")
    assert r.status_code == 303, r.text
    kept = read_curation(night_copy / "2026-01-02" / "bundle.curation.txt")
    assert kept == Curation((((1, 2), ids[1]),), (spare,))
    assert stage_ids(night_copy) == ids  # the bundle is unchanged
    page = client.get("/bundle", params={"path": BUNDLE}).text  # a fresh page opens with them
    assert 'title="pinned"' in page and f"exclude {spare}" in page
    assert 'id="save" disabled' in page  # nothing new to save
    out = night_copy / "again.yaml"
    done = run(
        *[
            "assemble",
            str(night_copy / "2026-01-02" / "pool"),
            str(night_copy / BUNDLE),
            "--levels",
            "1",
            "--stages",
            "4",
            "--curve",
            "ramp",
            "--out",
            str(out),
            "--curation",
            str(night_copy / "2026-01-02" / "bundle.curation.txt"),
        ]
    )
    assert done.exit_code == 0, done.output
    again = yaml.safe_load(out.read_text())
    placed = [s["puzzle"]["id"] for lv in again["levels"] for s in lv["stages"]]
    assert placed[1] == ids[1] and spare not in placed


def test_a_curation_file_is_read_strictly() -> None:
    assert Curation.parse("# note\npin L1.S2=nm1-abc\nexclude nm1-def\n") == Curation(
        (((1, 2), "nm1-abc"),), ("nm1-def",)
    )
    text = Curation((((2, 1), "nm1-x"),), ("nm1-y",)).text("bundle.yaml")
    assert Curation.parse(text) == Curation((((2, 1), "nm1-x"),), ("nm1-y",))
    with pytest.raises(CurationError, match=r"f:2: 'pin 1.2=x'"):
        Curation.parse("exclude a\npin 1.2=x\n", "f")


def test_after_a_studio_save_report_html_is_current_and_report_md_marked_stale(
    client: TestClient, night_copy: Path
) -> None:
    night = night_copy / "2026-01-02"
    assert (night / "report.html").is_file() and (night / "report.md").is_file()
    new = next(p.stem for p in pool_files(night_copy) if p.stem not in stage_ids(night_copy))
    assert new not in (night / "report.html").read_text()
    r = save(client, night_copy, f"s:1.3={new}")
    assert r.status_code == 303
    assert new in (night / "report.html").read_text()
    md = (night / "report.md").read_text()
    assert (
        md.startswith("# Nightly bundle")
        and "**Stale:** bundle.yaml was edited after this report" in md
        and "L1.S3" in md
    )
    message = client.get(r.headers["location"]).text
    assert "report.html re-rendered" in message and "report.md marked stale" in message
    save(client, night_copy, f"s:1.3={stage_ids(night_copy)[2]}")  # a second edit marks it once
    assert (night / "report.md").read_text().count("**Stale:**") <= 1


def test_a_save_racing_another_writer_never_reports_success_for_a_lost_edit(
    client: TestClient, night_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.jobs import curate

    real = curate.swap_stage
    bundle = night_copy / BUNDLE

    def then_someone_writes(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        bundle.write_bytes(bundle.read_bytes() + b"# another writer's edit\n")  # e.g. a CLI swap
        return result

    monkeypatch.setattr(curate, "swap_stage", then_someone_writes)  # where a Save binds it
    new = next(p.stem for p in pool_files(night_copy) if p.stem not in stage_ids(night_copy))
    r = save(client, night_copy, f"s:1.1={new}")
    assert r.status_code == 400 and "changed on disk" in r.text
    assert (
        bundle.read_bytes().endswith(b"# another writer's edit\n") and new not in bundle.read_text()
    )
    assert str(night_copy) not in r.text
    assert f"put {new} in L1.S1" in r.text  # the draft is kept


def test_a_save_naming_another_kind_of_file_says_what_it_is(
    client: TestClient, night_copy: Path
) -> None:
    night = night_copy / "2026-01-02"
    puzzle = pool_files(night_copy)[0]
    for rel in ("2026-01-02/report.md", f"2026-01-02/pool/{puzzle.name}"):
        before = (night_copy / rel).read_bytes()
        r = studio_post(
            client,
            "/save",
            {
                "path": rel,
                "base": content_hash((night / "bundle.yaml").read_bytes()),
                "draft": "s:1.1=x",
            },
        )
        assert r.status_code == 400, (rel, r.status_code)
        shown = re.search(r'id="message">([^<]*)<', r.text)
        assert shown and "changed on disk" not in shown.group(1), shown
        assert "not a bundle" in shown.group(1) or "not a level file" in shown.group(1), (
            shown.group(1)
        )
        assert (night_copy / rel).read_bytes() == before


def test_a_broken_or_huge_curation_file_is_one_line(client: TestClient, night_copy: Path) -> None:
    from pipeline.limits import MAX_CURATION_BYTES

    kept = night_copy / "2026-01-02" / "bundle.curation.txt"
    kept.write_text("pin nonsense\n")
    r = client.get("/bundle", params={"path": BUNDLE})
    assert (
        r.status_code == 400
        and "2026-01-02/bundle.curation.txt:1:" in r.text
        and "Traceback" not in r.text
    )
    assert str(night_copy) not in r.text
    kept.write_text("# x\n" * (MAX_CURATION_BYTES // 4 + 1))
    with pytest.raises(CurationError, match="larger than"):
        read_curation(kept)


def test_a_save_writes_nothing_outside_the_studio_folder(
    client: TestClient, night_copy: Path, tmp_path: Path
) -> None:
    night = night_copy / "2026-01-02"
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("report.html", "report.md"):
        (outside / name).write_text("theirs\n")
        (night / name).unlink()
        (night / name).symlink_to(outside / name)
    (outside / "curation.txt").write_text("# theirs\n")
    (night / "bundle.curation.txt").symlink_to(outside / "curation.txt")
    assert client.get("/bundle", params={"path": BUNDLE}).status_code == 403  # the link is refused
    (night / "bundle.curation.txt").unlink()
    new = next(p.stem for p in pool_files(night_copy) if p.stem not in stage_ids(night_copy))
    r = save(client, night_copy, f"s:1.2={new}")
    assert r.status_code == 303
    assert "not touched: it links outside" in client.get(r.headers["location"]).text
    assert [p.read_text() for p in sorted(outside.iterdir())] == [
        "# theirs\n",
        "theirs\n",
        "theirs\n",
    ]


def test_a_studio_save_racing_a_cli_swap_never_loses_a_reported_edit(
    client: TestClient, night_copy: Path
) -> None:
    """A studio Save during a CLI `swap` of another Stage. Each writer that reports success
    has its edit on disk; the other is refused in one line (or lands after it)."""
    import random
    import shutil
    import subprocess
    import sys
    import time

    night = night_copy / "2026-01-02"
    pristine = {p.name: p.read_bytes() for p in (night / "pool").iterdir()}
    original = (night / "bundle.yaml").read_bytes()
    rng = random.Random(22)
    outcomes = []
    for _ in range(4):
        (night / "bundle.yaml").write_bytes(original)
        shutil.rmtree(night / "pool")
        (night / "pool").mkdir()
        for name, data in pristine.items():
            (night / "pool" / name).write_bytes(data)
        spare = [p.stem for p in pool_files(night_copy) if p.stem not in stage_ids(night_copy)]
        cli_id, studio_id = spare[0], spare[1]
        form = {"path": BUNDLE, "base": content_hash(original), "draft": f"s:1.1={studio_id}"}
        cli = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pipeline.cli",
                "swap",
                str(night / "bundle.yaml"),
                "L1.S3",
                "--with",
                cli_id,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(
            rng.uniform(0.2, 0.9)
        )  # somewhere in the CLI's start-up, read, validation or write
        r = studio_post(client, "/save", form)
        out, err = cli.communicate(timeout=60)
        final = (night / "bundle.yaml").read_text()
        if cli.returncode == 0:
            assert cli_id in final, (out, err)
        else:
            assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        if r.status_code == 303:
            assert studio_id in final
        else:
            assert r.status_code in (400, 409) and studio_id not in final
        assert cli.returncode == 0 or r.status_code == 303  # one of them always lands
        outcomes.append((cli.returncode, r.status_code))
    assert len(outcomes) == 4


def test_a_report_that_cannot_be_written_does_not_turn_a_done_save_into_a_refusal(
    client: TestClient, night_copy: Path
) -> None:
    night = night_copy / "2026-01-02"
    (night / "report.html").chmod(0o444)
    new = next(p.stem for p in pool_files(night_copy) if p.stem not in stage_ids(night_copy))
    r = save(client, night_copy, f"s:1.2={new}")
    assert r.status_code == 303 and stage_ids(night_copy)[1] == new
    page = client.get(r.headers["location"]).text
    assert "reports not refreshed" in page and str(night_copy) not in page


def test_after_a_save_the_whole_message_shows_and_the_draft_box_says_what_is_saved(
    client: TestClient, night_copy: Path
) -> None:
    """The banner after a Save carries every line (it was cut at 300 characters, in the middle of
    "report.md marked stale"), and the pins and excludes just written are listed as kept in the
    curation file, not under "Nothing is written until you save" as if still to do."""
    ids = stage_ids(night_copy)
    spare = [p.stem for p in pool_files(night_copy) if p.stem not in ids]
    r = save(client, night_copy, f"s:1.1={spare[0]};s:1.3={spare[1]};p:1.2;x:{spare[2]}")
    assert r.status_code == 303, r.text
    page = client.get(r.headers["location"]).text
    assert len(r.headers["location"]) > 300
    assert (
        "report.md marked stale (it describes the night as generated; report.html is current)"
        in page
    )
    assert "No unsaved changes" in page
    assert "pin L1.S2 (saved in bundle.curation.txt)" in page
    assert f"exclude {spare[2]} (saved in bundle.curation.txt)" in page
    assert 'id="save" disabled' in page
