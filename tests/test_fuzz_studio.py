"""Random malformed requests against the studio: never a 500, never a traceback, and no file under
PATH changes unless the request is a Save from the studio's own origin carrying its token (and
then the bundle still validates).

`make test` runs a few dozen requests; `make fuzz` runs NM_FUZZ_EXAMPLES of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip(
    "starlette", reason="the studio's web packages are not installed (pip install -e '.[test]')"
)

from pipeline.validator import validate_paths
from tests.conftest import STUDIO_ORIGIN

pytestmark = pytest.mark.slow

BUNDLE = "2026-01-02/bundle.yaml"
CAMPAIGN = int(os.environ.get("NM_FUZZ_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=CAMPAIGN or 40,
    deadline=None,
    derandomize=not CAMPAIGN,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
ROUTES = [
    "/",
    "/bundle",
    "/folder",
    "/stage",
    "/act",
    "/swap",
    "/draft",
    "/save",
    "/static/studio.css",
    "/favicon.ico",
    "/nope",
]
KEYS = [
    "path",
    "at",
    "draft",
    "base",
    "m",
    "sel",
    "note",
    "sol",
    "click",
    "do",
    "op",
    "id",
    "game",
    "msg",
    "f",
    "token",
]
NASTY = [
    BUNDLE,
    "2026-01-02",
    "2026-01-02/pool",
    "../x.yaml",
    "/etc/passwd",
    "x" * 300,
    "a/" * 200,
    "%00",
    "\x00",
    "1.1",
    "9999.9999",
    "0.0",
    "s:1.1=nm1-x",
    "s:1.1=" + "a" * 90,
    "p:1.1;" * 600,
    "x:" + "é" * 40,
    "+",
    "0,0-0,1",
    "bad:+",
    "hint",
    "win",
    "-1",
    "99999999999999",
    "exclude",
    "swap",
    "pin",
    "unswap",
    "",
    " ",
    "<script>",
    "1.1;" * 50,
]
GOOD: list[
    str
] = []  # filled by the test: the night's own ids, drafts and hash, so some edits are real
chars = st.characters(blacklist_categories=("Cs",))  # a client cannot send a lone surrogate
good = st.integers(0, 10_000).map(lambda k: GOOD[k % len(GOOD)] if GOOD else "")
text = st.one_of(
    st.sampled_from(NASTY),
    good,
    good,
    st.text(chars, max_size=60),
    st.text(alphabet="0123456789.,;:-=+sxp", max_size=40),
)
OPS = ["swap", "unswap", "pin", "exclude", "nope"]
ORIGINS = [
    STUDIO_ORIGIN,
    "null",
    "http://127.0.0.1:9",
    "http://localhost:8765",
    "https://evil.example",
    None,
]
CTYPES = [
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json",
    "text/plain",
    None,
]


@st.composite
def requests(draw: Any) -> dict[str, Any]:
    params = draw(st.dictionaries(st.sampled_from(KEYS), text, max_size=6))
    form = st.dictionaries(st.sampled_from(KEYS), text, max_size=6)
    if draw(st.booleans()):  # past the guard: the handlers behind it get the random fields
        return {
            "method": "POST",
            "route": draw(st.sampled_from(["/draft", "/save"])),
            "params": params,
            "body": {
                "path": BUNDLE,
                "base": GOOD[-1] if GOOD else "",
                "draft": draw(good),
                "op": draw(st.sampled_from(OPS)),
                "at": draw(st.sampled_from(["1.1", "1.2", "1.3", "1.4"])),
                "id": draw(good),
                **draw(form),
            },
            "origin": STUDIO_ORIGIN,
            "ctype": CTYPES[0],
            "token": "right",
        }
    many = st.integers(0, 80).map(lambda n: b"&".join(b"f%d=%d" % (k, k) for k in range(n)))
    body = draw(st.one_of(st.none(), st.binary(max_size=300), form, many))
    return {
        "method": draw(
            st.sampled_from(
                ["GET", "GET", "GET", "POST", "POST", "HEAD", "PUT", "DELETE", "OPTIONS"]
            )
        ),
        "route": draw(
            st.one_of(
                st.sampled_from(ROUTES),
                st.text(alphabet="/abcdefgh.%?", max_size=20).map(lambda s: "/" + s),
            )
        ),
        "params": params,
        "body": body,
        "origin": draw(st.sampled_from(ORIGINS)),
        "ctype": draw(st.sampled_from(CTYPES)),
        "token": draw(st.sampled_from(["right", "wrong", "none"])),
    }


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_random_requests_get_no_500_and_write_nothing_without_origin_and_token(
    studio_client: Any, night_copy: Path
) -> None:
    from pipeline.studio.library import content_hash

    client = studio_client
    token = client.app.token
    ids = sorted(p.stem for p in (night_copy / "2026-01-02" / "pool").glob("*.yaml"))
    stages = ["1.1", "1.2", "1.3", "1.4"]
    GOOD[:] = (
        ids
        + stages
        + [f"s:{at}={pid}" for at in stages for pid in ids[:3]]
        + [f"p:{at}" for at in stages]
    )
    GOOD.append(content_hash((night_copy / BUNDLE).read_bytes()))
    statuses: dict[int, int] = {}

    @SETTINGS
    @given(req=requests())
    def one(req: dict[str, Any]) -> None:
        before = snapshot(night_copy)
        headers = {}
        if req["origin"] is not None:
            headers["Origin"] = req["origin"]
        if req["ctype"] is not None:
            headers["Content-Type"] = req["ctype"]
        body = req["body"]
        if isinstance(body, dict):
            if req["token"] == "right":
                body = {**body, "token": token}
            elif req["token"] == "wrong":
                body = {**body, "token": "x" * 43}
            from urllib.parse import urlencode

            body = urlencode(body).encode()
        r = client.request(
            req["method"],
            req["route"],
            params=req["params"],
            content=body,
            headers=headers,
            follow_redirects=False,
        )
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert r.status_code < 500, (req, r.text[:300])
        assert "Traceback" not in r.text
        assert r.headers.get("x-frame-options") == "DENY"
        after = snapshot(night_copy)
        if after != before:
            allowed = (
                req["method"] == "POST"
                and req["route"] == "/save"
                and req["origin"] in (STUDIO_ORIGIN, "http://localhost:8765")
                and req["token"] == "right"
                and req["ctype"] == "application/x-www-form-urlencoded"
            )
            assert allowed, (req, sorted(set(after) ^ set(before)))
            assert validate_paths([night_copy / BUNDLE]).ok

    one()
    if CAMPAIGN:
        print(
            f"\nstudio fuzz: {sum(statuses.values())} requests, statuses {dict(sorted(statuses.items()))}"
        )


def test_random_bytes_on_the_socket_get_a_4xx_or_a_close_and_the_studio_keeps_serving(
    night_copy: Path,
) -> None:
    """Below the framework: whatever arrives on the socket, uvicorn answers 4xx or closes, within
    the header timeout, and the next well-formed request is served."""
    import socket

    from pipeline.studio.server import Background

    lines = st.sampled_from(
        [
            b"GET / HTTP/1.1",
            b"POST /save HTTP/1.1",
            b"GET /" + b"a" * 70000 + b" HTTP/1.1",
            b"\x00\xff",
            b"",
        ]
    )
    header = st.binary(max_size=200).map(lambda b: b.replace(b"\r\n\r\n", b""))
    raw = st.tuples(lines, st.lists(header, max_size=4), st.binary(max_size=200)).map(
        lambda t: t[0] + b"\r\n" + b"\r\n".join(t[1]) + b"\r\n\r\n" + t[2]
    )
    with Background(night_copy, header_timeout=0.5) as served:
        port = int(served.url.rsplit(":", 1)[1])

        @settings(SETTINGS, max_examples=CAMPAIGN or 15)
        @given(data=raw)
        def one(data: bytes) -> None:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                try:
                    s.sendall(data)
                    answer = s.recv(64)
                except (ConnectionResetError, BrokenPipeError):
                    return
                assert answer == b"" or answer.startswith(
                    (b"HTTP/1.1 4", b"HTTP/1.1 2", b"HTTP/1.1 3")
                ), answer
                assert not answer.startswith(b"HTTP/1.1 5")

        one()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(f"GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert s.recv(20).startswith(b"HTTP/1.1 200")
