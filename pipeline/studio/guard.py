"""What keeps another web page from driving the studio: one ASGI middleware in front of every route.

The studio listens on 127.0.0.1 only, but any page the designer opens in the same browser can
send requests to it. So:

- every response carries headers that forbid framing it (clickjacking) and running scripts that
  are not the studio's own (`SECURITY_HEADERS`);
- a request that changes something is a POST, and is accepted only when its `Origin` (or, when
  the browser sends none, its `Referer`) is exactly the studio's own origin (scheme, host and
  port) AND it carries the per-run secret token the studio put in its own forms. `Origin: null`
  (a sandboxed or no-referrer page), another port, or neither header: 403, one line;
- a POST body is an urlencoded form of at most `MAX_FORM_BYTES`, refused (413) on its
  Content-Length before anything is read, and again while it streams in; no multipart;
- a foreign Host header is refused by starlette's TrustedHostMiddleware (DNS rebinding).

Slow clients (headers that never end) are closed by the server (`server.py`), not here.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pipeline.limits import MAX_FORM_BYTES

LOCAL_HOSTS = ("127.0.0.1", "localhost")
TOKEN_FIELD = "token"  # the hidden form field; scripts may send the header instead
TOKEN_HEADER = b"x-studio-token"
SAFE_METHODS = (b"GET", b"HEAD")
FORM_TYPE = "application/x-www-form-urlencoded"

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:;"
        b" frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def new_token() -> str:
    """A per-run secret: only pages the studio served know it."""
    return secrets.token_urlsafe(32)


def own_origins(scope: Scope) -> set[str]:
    """The studio's origins for this request's port: http://127.0.0.1:PORT and http://localhost:PORT."""
    server = scope.get("server") or ("", None)
    port = server[1]
    return {f"http://{host}:{port}" for host in LOCAL_HOSTS} if port else set()


def request_origin(headers: dict[bytes, bytes]) -> str | None:
    """The origin the browser states: `Origin`, else the scheme://host:port of `Referer`."""
    origin = headers.get(b"origin")
    if origin is not None:
        return origin.decode("latin-1")
    referer = headers.get(b"referer")
    if referer is None:
        return None
    parts = urlsplit(referer.decode("latin-1"))
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


MAX_FIELDS = 20  # the studio's forms have at most six


def form_fields(body: bytes) -> dict[str, str] | None:
    """The fields of an urlencoded body (the last value of a repeated name); None for more than
    MAX_FIELDS of them."""
    try:
        return dict(
            parse_qsl(
                body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=MAX_FIELDS
            )
        )
    except ValueError:  # more fields than max_num_fields
        return None


class Guard:
    """The middleware: security headers on every response; origin, token and size for every POST.

    A POST that passes has its (small) body read here once and replayed to the route, and its
    fields put in `scope["form"]`, so routes never parse a body themselves."""

    def __init__(self, app: Any, token: str, render: Callable[[int, str], Any]) -> None:
        self.app = app
        self.token = token
        self.render = render  # (status, message) -> a Response (the studio's one-line page)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        if scope["method"].encode() in SAFE_METHODS:
            await self.app(scope, receive, send_with_headers)
            return
        try:
            refused = await self.check(scope, receive)
        except Exception:
            refused = (400, "refused: the request could not be read")
        if isinstance(refused, tuple):
            status, text = refused
            await self.render(status, text)(scope, receive, send_with_headers)
            return
        body = refused
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send_with_headers)

    async def check(self, scope: Scope, receive: Receive) -> bytes | tuple[int, str]:
        """The body of an acceptable POST, or (status, one line) for a refused one."""
        headers = dict(scope["headers"])
        if scope["method"] != "POST":
            return (
                405,
                f"method {scope['method'][:10]} not allowed: the studio changes things only by POST",
            )
        origin = request_origin(headers)
        if origin is None:
            return (
                403,
                "refused: the request names no Origin or Referer, so it may come from another site",
            )
        if origin not in own_origins(scope):
            return (
                403,
                f"refused: a request from {origin[:80] or 'an unnamed origin'} may not change the studio's files",
            )
        length = headers.get(b"content-length", b"0")
        if not length.isdigit():
            return 400, "refused: the request's Content-Length is not a number"
        if int(length) > MAX_FORM_BYTES:
            return 413, f"refused: the form is larger than {MAX_FORM_BYTES:,} bytes"
        ctype = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
        if ctype != FORM_TYPE:
            return 415, f"refused: the studio takes only {FORM_TYPE} forms"
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return 400, "the client went away"
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_FORM_BYTES:
                return 413, f"refused: the form is larger than {MAX_FORM_BYTES:,} bytes"
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        fields = form_fields(body)
        if fields is None:
            return 400, f"refused: the form has more than {MAX_FIELDS} fields"
        sent = headers.get(TOKEN_HEADER, b"").decode("latin-1") or fields.get(TOKEN_FIELD, "")
        if not hmac.compare_digest(sent.encode("utf-8", "replace"), self.token.encode()):
            return (
                403,
                "refused: the form's studio token is missing or out of date; reload the page and try again",
            )
        scope["form"] = fields
        return body
