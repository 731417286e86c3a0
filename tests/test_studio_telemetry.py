"""Hostile telemetry handed to the studio (`studio --telemetry`): the command reads it with the
telemetry reader, then the pages show what the players did. Bad records are counted (one line
per kind on start-up, naming the first places), never counted as games; HTML or script in any
field reaches no page; a name is read literally (no pattern, no `~`), a link is followed; a
name with a newline stays one line; a large file takes about as long as `observed` on it. The
refusals of files that cannot be read at all (a FIFO, a record over the limit, a Parquet bomb):
test_telemetry.py. The pages come from the in-process ASGI client, no server is started."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import one_line_refusal, run

pytest.importorskip("starlette", reason="the studio's web packages are not installed")

REPO = Path(__file__).resolve().parent.parent
NIGHT = REPO / "generated" / "2026-11-29"  # the committed night: 60 Stages
ORIGIN = "http://127.0.0.1:8765"
INJECTED = ("<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "</p><b>bold</b>")


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`studio` runs up to its server, which is replaced: what the command handed it is kept."""
    import pipeline.studio.server

    handed: dict[str, Any] = {}

    class NoServer:
        def run(self, sockets: Any) -> None:
            handed["ran"] = True

    def server(path: Path, **kw: Any) -> NoServer:
        handed.update(kw, path=path)
        return NoServer()

    monkeypatch.setattr(pipeline.studio.server, "uvicorn_server", server)
    monkeypatch.chdir(tmp_path)
    shutil.copytree(NIGHT, tmp_path / "generated" / NIGHT.name)
    return handed


def first_ids(n: int) -> list[str]:
    doc = yaml.safe_load((NIGHT / "bundle.yaml").read_text())
    return [s["puzzle"]["id"] for lv in doc["levels"] for s in lv["stages"]][:n]


def record(k: int, pid: str, **change: Any) -> dict[str, Any]:
    return {
        "attempt": f"a{k}",
        "puzzle": pid,
        "outcome": "won" if k % 4 == 0 else "lost",
        "adds_used": 0,
        "moves": 5,
        "seconds": 3.0,
        "player": f"p{k}",
        "client": "web",
        "at": "2026-11-29T10:00:00Z",
        **change,
    }


def pages(handed: dict[str, Any]) -> dict[str, str]:
    from starlette.testclient import TestClient

    from pipeline.studio.app import create_app

    client = TestClient(
        create_app(handed["path"], observed=handed["observed"], profile=handed.get("profile")),
        base_url=ORIGIN,
        raise_server_exceptions=False,
    )
    bundle = f"{NIGHT.name}/bundle.yaml"
    got = {
        "index": client.get("/"),
        "bundle": client.get("/bundle", params={"path": bundle}),
        "stage": client.get("/stage", params={"path": bundle, "at": "1.1"}),
    }
    for name, page in got.items():
        assert page.status_code == 200, (name, page.status_code)
    return {name: page.text for name, page in got.items() if page.status_code == 200}


def studio(*files: str | Path) -> Any:
    args: list[str] = ["studio", "generated", "--port", "0"]
    for f in files:
        args += ["--telemetry", str(f)]
    return run(*args)


@pytest.mark.slow  # seconds: the studio's start-up on each file, then its pages
@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_hostile_records_are_counted_not_played_and_reach_no_page_raw(
    served: dict[str, Any], tmp_path: Path, suffix: str
) -> None:
    """40 good records on the first Stage, then one of each hostile kind: malformed JSON (JSON
    Lines), fractions, hex, exponents and `infinity` where whole numbers belong, ids, outcomes
    and free text carrying HTML. The card counts the 40 and the one good record whose player
    and client are HTML (41 games); each bad one is counted by kind; no markup gets through."""
    pid, other = first_ids(2)
    rows = [record(k, pid) for k in range(40)]
    rows.append(record(40, pid, player=INJECTED[1], client=INJECTED[0], attempt=INJECTED[2]))
    bad_fields = [
        ("moves", 2.5),
        ("moves", "0x1"),
        ("moves", "1e3"),
        ("adds_used", -0.4),
        ("seconds", "infinity"),
        ("at", "infinity"),
        ("outcome", "<i>won</i>"),
    ]
    rows += [record(50 + k, pid, **{f: v}) for k, (f, v) in enumerate(bad_fields)]
    unknown = [record(60, INJECTED[0]), record(61, pid + INJECTED[1]), record(62, other + "\n")]
    rows += unknown
    path = tmp_path / f"hostile.{suffix}"
    if suffix == "jsonl":
        lines = [json.dumps(r) for r in rows]
        lines.insert(3, "{not json " + INJECTED[0])
        path.write_text("\n".join(lines) + "\n")
    else:
        fields = list(rows[0])
        text = [",".join([*fields, "<script>x</script>"])]
        for r in rows:
            cells = [r[f] if isinstance(r[f], str) else json.dumps(r[f]) for f in fields]
            text.append(",".join(f'"{c}"' if "," in c or "\n" in c else c for c in cells) + ",")
        path.write_text("\n".join(text) + "\n")
    started = time.perf_counter()
    result = studio(path)
    assert result.exit_code == 0 and served.get("ran"), result.output
    assert time.perf_counter() - started < 30
    skipped = [x for x in result.output.splitlines() if x.startswith("numbermatch: skipped ")]
    kinds = {x.split()[3]: int(x.split()[2]) for x in skipped}
    assert kinds.get("bad-field") == len(bad_fields), result.output
    assert kinds.get("unknown-puzzle", 0) >= 2, result.output  # the id that is all markup too
    assert kinds.get("not-json", 0) == (1 if suffix == "jsonl" else 0), result.output
    assert "<" not in "\n".join(skipped) and "alert" not in result.output  # places, not content
    assert served["observed"][pid]["games"] == 41, served["observed"][pid]
    assert set(served["observed"]) <= set(first_ids(60))
    shown = pages(served)
    assert "of 41 games" in shown["bundle"], shown["bundle"][:2000]
    for name, text in shown.items():
        for markup in ("alert(1)", "alert(2)", "onerror", "<b>bold</b>", "<i>won</i>"):
            assert markup not in text, (name, markup)


@pytest.mark.slow  # seconds: seven start-ups
def test_names_are_read_literally_and_links_followed(
    served: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'[ab].jsonl' is that file (not a.jsonl and b.jsonl), '~/t.jsonl' is not $HOME's, a link
    is read through to its file; a name with a newline is refused on one line."""
    pid = first_ids(1)[0]

    def write(path: Path, n: int) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(record(k, pid)) + "\n" for k in range(n)))
        return path

    write(tmp_path / "[ab].jsonl", 1)
    write(tmp_path / "a.jsonl", 10)
    write(tmp_path / "b.jsonl", 10)
    assert studio("[ab].jsonl").exit_code == 0
    assert served["observed"][pid]["games"] == 1
    monkeypatch.setenv("HOME", str(write(tmp_path / "home" / "t.jsonl", 10).parent))
    one_line_refusal(studio("~/t.jsonl"), "--telemetry: ~/t.jsonl: no such file")
    write(tmp_path / "~" / "t.jsonl", 3)  # a folder named ~ here: that file is the one named
    assert studio("~/t.jsonl").exit_code == 0 and served["observed"][pid]["games"] == 3
    shared = write(tmp_path / "exports" / "night.jsonl", 7)
    (tmp_path / "link.jsonl").symlink_to(shared)
    assert studio("link.jsonl").exit_code == 0 and served["observed"][pid]["games"] == 7
    assert "of 7 games" in pages(served)["bundle"]
    result = studio("two\nlines.jsonl")
    one_line_refusal(result, "--telemetry: two\\nlines.jsonl: no such file")
    odd = write(tmp_path / "odd\nname.jsonl", 2)
    odd.write_text(odd.read_text() + "{broken\n")
    result = studio(odd)
    assert result.exit_code == 0
    assert [x for x in result.output.splitlines() if "skipped" in x] == [
        f"numbermatch: skipped 1 not-json (not a JSON object): {tmp_path}/odd\\nname.jsonl:3"
    ]


@pytest.mark.slow
def test_a_large_file_takes_about_as_long_as_observed(
    served: dict[str, Any], tmp_path: Path
) -> None:
    """100,000 records on the 60 Stages, one malformed line in eleven: the studio starts in
    about the time `observed` takes on the same file (the same reader), its skipped line cut to
    the first places, and every page renders."""
    ids = first_ids(60)
    path = tmp_path / "big.jsonl"
    with path.open("w") as fh:
        for k in range(100_000):
            fh.write(json.dumps(record(k, ids[k % 60])) + "\n")
            if k % 10 == 0:
                fh.write("{broken\n")
    started = time.perf_counter()
    report = run("observed", str(path), "--levels", "generated")
    observed_s = time.perf_counter() - started
    assert report.exit_code == 0
    started = time.perf_counter()
    result = studio(path)
    studio_s = time.perf_counter() - started
    assert result.exit_code == 0
    skipped = [x for x in result.output.splitlines() if "skipped" in x]
    assert (
        len(skipped) == 1 and skipped[0].endswith(", ...") and skipped[0].count("big.jsonl:") <= 5
    )
    assert skipped[0].startswith("numbermatch: skipped 10000 not-json")
    size = os.path.getsize(path) / 1e6
    print(
        f"\nstudio --telemetry, {size:.1f} MB: studio {studio_s:.2f} s, observed {observed_s:.2f} s,"
        f" ratio {studio_s / observed_s:.2f}"
    )
    assert studio_s < 3 * observed_s + 2
    shown = pages(served)
    assert shown["bundle"].count("players lost") == 60


def test_a_control_character_in_a_name_is_escaped_in_every_refusal(tmp_path: Path) -> None:
    """`fail` writes a newline or a terminal escape in what it repeats as an escape: the error
    stays one line and cannot recolour or clear the user's terminal."""
    from pipeline.errors import printable

    assert printable("a\nb\x1b[2J\x7f\u0085ok é") == "a\\nb\\x1b[2J\\x7f\\x85ok é"
    name = str(tmp_path / "x\n\x1b[2Jy.jsonl")
    one_line_refusal(run("observed", name, "--levels", str(NIGHT)), "x\\n\\x1b[2Jy.jsonl")
