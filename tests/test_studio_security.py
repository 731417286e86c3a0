"""The studio against another web page and hostile clients: only its own pages may change
files, it cannot be framed, bodies are small, bad links and long names are one-line pages, and
slow clients are dropped."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip(
    "starlette", reason="the studio's web packages are not installed (pip install -e '.[test]')"
)

from starlette.testclient import TestClient

from pipeline.limits import MAX_FORM_BYTES
from pipeline.studio.app import create_app
from pipeline.studio.library import content_hash

BUNDLE = "2026-01-02/bundle.yaml"
ORIGIN = "http://127.0.0.1:8765"


@pytest.fixture
def client(studio_client: TestClient) -> TestClient:
    return studio_client


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the studio's folder, to check a request wrote nothing."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def a_save(client: TestClient, root: Path, k: int = 0) -> dict[str, str]:
    """A Save form that would change the bundle: the `k`-th pool puzzle (wrapping) of Stage 1.1's
    tier that the bundle does not use, in Stage 1.1 (a puzzle of another tier is no candidate
    for it; a pool keeps the file of a puzzle a save placed)."""
    doc = yaml.safe_load((root / BUNDLE).read_text())
    used = {s["puzzle"]["id"] for lv in doc["levels"] for s in lv["stages"]}
    tier = doc["levels"][0]["stages"][0]["puzzle"]["difficulty"]["tier"]
    pool = [
        p
        for p in sorted((root / "2026-01-02" / "pool").glob("*.yaml"))
        if p.stem not in used and yaml.safe_load(p.read_text())["difficulty"]["tier"] == tier
    ]
    base = content_hash((root / BUNDLE).read_bytes())
    return {
        "path": BUNDLE,
        "base": base,
        "draft": f"s:1.1={pool[k % len(pool)].stem}",
        "token": client.app.token,
    }  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "null"},
        {"Origin": "http://localhost:9999"},
        {"Origin": "http://127.0.0.1:9999"},
        {"Origin": "https://127.0.0.1:8765"},
        {"Origin": "https://evil.example"},
        {},  # neither Origin nor Referer
        {"Referer": "http://evil.example/page"},
        {"Referer": "http://127.0.0.1:9999/bundle"},
    ],
)
def test_a_save_from_another_origin_is_refused_and_writes_nothing(
    client: TestClient, night_copy: Path, headers: dict[str, str]
) -> None:
    before = snapshot(night_copy)
    r = client.post(
        "/save", data=a_save(client, night_copy), headers=headers, follow_redirects=False
    )
    assert r.status_code == 403 and "refused" in r.text
    assert snapshot(night_copy) == before


def test_a_save_without_the_runs_token_is_refused(client: TestClient, night_copy: Path) -> None:
    before = snapshot(night_copy)
    for token in ("", "x" * 43, "0"):
        form = {**a_save(client, night_copy), "token": token}
        r = client.post("/save", data=form, headers={"Origin": ORIGIN}, follow_redirects=False)
        assert r.status_code == 403 and "token" in r.text
    other = TestClient(create_app(night_copy), base_url=ORIGIN)  # another run has another token
    form = {**a_save(client, night_copy), "token": other.app.token}  # type: ignore[attr-defined]
    assert client.post("/save", data=form, headers={"Origin": ORIGIN}).status_code == 403
    assert snapshot(night_copy) == before


def test_the_studios_own_origin_and_token_may_save(client: TestClient, night_copy: Path) -> None:
    for k, headers in enumerate(
        [
            {"Origin": ORIGIN},
            {"Origin": "http://localhost:8765"},
            {"Referer": ORIGIN + "/bundle?path=x"},
        ]
    ):
        form = a_save(client, night_copy, k)
        r = client.post("/save", data=form, headers=headers, follow_redirects=False)
        assert r.status_code == 303, r.text
        assert form["draft"].split("=")[1] in (night_copy / BUNDLE).read_text()


def test_draft_edits_are_posts_and_a_get_changes_nothing(
    client: TestClient, night_copy: Path
) -> None:
    r = client.get("/draft", params={"path": BUNDLE, "op": "exclude", "at": "1.1", "id": "nm1-x"})
    assert r.status_code == 405
    bundle_page = client.get("/bundle", params={"path": BUNDLE}).text
    assert 'href="/draft' not in bundle_page  # every draft edit is a form that POSTs with the token
    assert 'action="/draft"' in bundle_page and 'name="token"' in bundle_page


def test_every_response_forbids_framing_and_foreign_scripts(client: TestClient) -> None:
    for route, params in [
        ("/", {}),
        ("/bundle", {"path": BUNDLE}),
        ("/stage", {"path": "../x"}),
        ("/nope", {}),
        ("/static/studio.css", {}),
    ]:
        r = client.get(route, params=params)
        csp = r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, route
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"]
    refused = client.post("/save", data={}, headers={"Origin": "null"})
    assert refused.headers["x-frame-options"] == "DENY"
    page = client.get("/bundle", params={"path": BUNDLE}).text
    assert (
        "<script>" not in page and " on" + "click=" not in page
    )  # no inline script the CSP would block


def test_a_large_or_multipart_body_is_refused_before_it_is_read(
    client: TestClient, night_copy: Path
) -> None:
    headers = {"Origin": ORIGIN}
    big = {**a_save(client, night_copy), "pad": "x" * (MAX_FORM_BYTES + 1)}
    assert client.post("/save", data=big, headers=headers).status_code == 413
    r = client.post(
        "/save",
        files={"f": ("a.bin", b"x" * 100)},
        data=a_save(client, night_copy),
        headers=headers,
    )
    assert r.status_code == 415

    def endless() -> Any:  # chunked, no Content-Length: counted while it streams in
        for _ in range(1000):
            yield b"x" * 1024

    r = client.post(
        "/save",
        content=endless(),
        headers={**headers, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 413
    many = b"&".join(b"f%d=1" % i for i in range(60))  # small, but more fields than any form has
    r = client.post(
        "/save",
        content=many,
        headers={**headers, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 400 and "fields" in r.text


def test_a_huge_content_length_is_refused_on_the_header_alone(night_copy: Path) -> None:
    from pipeline.studio.server import Background

    with Background(night_copy) as served:
        port = int(served.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(
                f"POST /save HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
                "Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 1200000000\r\n\r\n".encode()
            )
            assert s.recv(100).startswith(b"HTTP/1.1 413")


def test_bad_links_long_names_and_missing_files_are_pages_not_500(
    client: TestClient, night_copy: Path, tmp_path: Path
) -> None:
    night = night_copy / "2026-01-02"
    (night / "dangling.yaml").symlink_to(night / "gone.yaml")
    (night / "loop.yaml").symlink_to(night / "loop.yaml")
    other = night_copy / "2026-01-03"
    other.mkdir()
    (other / "bundle.yaml").write_bytes((night / "bundle.yaml").read_bytes())
    outside_pool = tmp_path / "elsewhere"
    (outside_pool).mkdir()
    (other / "pool").symlink_to(outside_pool)
    r = client.get("/")
    assert r.status_code == 200 and "bundle.yaml" in r.text
    assert client.get("/bundle", params={"path": "2026-01-03/bundle.yaml"}).status_code == 200
    assert (
        client.get("/swap", params={"path": "2026-01-03/bundle.yaml", "at": "1.1"}).status_code
        == 200
    )
    long = "x" * 300 + ".yaml"
    for route in ("/stage", "/bundle", "/folder", "/swap"):
        for rel in (
            "2026-01-02/dangling.yaml",
            "2026-01-02/loop.yaml",
            long,
            f"2026-01-02/{long}",
            "2026-01-02/deleted.yaml",
        ):
            r = client.get(route, params={"path": rel, "at": "1.1"})
            assert r.status_code in (400, 403, 404), (route, rel, r.status_code)
            assert str(night_copy) not in r.text  # names only the path the user gave
    for rel in (
        "2026-01-02",
        "2026-01-02/deleted.yaml",
        "2026-01-02/dangling.yaml",
        long,
        "2026-01-02/loop.yaml",
    ):
        form = {**a_save(client, night_copy), "path": rel}
        r = client.post("/save", data=form, headers={"Origin": ORIGIN})
        assert r.status_code in (400, 403, 404), (rel, r.status_code)
        assert str(night_copy) not in r.text


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(100) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_a_client_that_never_finishes_its_headers_is_dropped(night_copy: Path) -> None:
    from pipeline.studio.server import Background

    with Background(night_copy, header_timeout=1.0, keep_alive=1) as served:
        port = int(served.url.rsplit(":", 1)[1])
        silent = socket.create_connection(("127.0.0.1", port))
        trickle = socket.create_connection(("127.0.0.1", port))
        start = time.monotonic()
        trickle.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(0.4)
        trickle.sendall(b"X-Slow: 1\r\n")  # still no blank line: the request never ends
        assert _closed_within(silent, 5) and _closed_within(trickle, 5)
        assert time.monotonic() - start < 4
        silent.close()
        trickle.close()
        # A normal client is served, and its idle kept-alive connection closed afterwards.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as ok:
            ok.sendall(
                f"GET /static/studio.css HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
            )
            assert ok.recv(20).startswith(b"HTTP/1.1 200")
            ok.settimeout(5)
            start = time.monotonic()
            while ok.recv(65536):
                # the rest of the response, then the server closes the idle connection
                pass
            assert time.monotonic() - start < 4
