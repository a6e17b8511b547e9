"""The request guard: the app's first middleware, which refuses what the app does not serve, before anything else
reads it, with a 4xx and a short log line.

``RequestGuard`` is pure ASGI and reads no body itself. It looks at what a request states before its body: the
percent-encoded path (``raw_path``), each of its segments decoded, the query string and the ``Content-Length``;
then it counts the body's bytes as the application reads them. The caps are ``ui.server.limits``'s:

- a path over ``PATH_BYTES``, or a query over ``QUERY_BYTES``: 414 URI Too Long;
- a path segment over ``SEGMENT_BYTES`` (no file has such a name): 404 Not Found;
- a ``..`` or ``.`` segment (an escaped ``/`` splits too), a backslash or a NUL byte: 400 Bad Request;
- a body over its cap by its ``Content-Length``: 413 Content Too Large, its body not read;
- a body with no ``Content-Length`` (chunked): 413 once it passes its cap, the rest not read.

A body's cap is ``UPLOAD_BODY_BYTES`` on Streamlit's upload path and ``BODY_BYTES`` elsewhere. A refused
websocket is closed before it is accepted (the server answers its handshake with 403). Each refusal is answered
with a few bytes and ``connection: close``; the log gets at most one line per ``LOG_EVERY`` seconds (the first
refusal of that time, its path cut to ``SHOWN`` characters, and how many more there were), so a client that sends
bad requests cannot flood the log. Everything else goes on unchanged.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.middleware import Middleware

from ui.server import limits

LOG = logging.getLogger(__name__)
LOG_EVERY = 10.0  # seconds between two log lines at least
SHOWN = 80  # characters of a refused path a log line repeats
REASONS = {400: b"Bad Request", 404: b"Not Found", 413: b"Content Too Large", 414: b"URI Too Long"}

Scope = dict[str, Any]


class BodyTooLarge(Exception):
    """Raised into the application by the guard's ``receive`` once a body passes its cap."""


def refusal(scope: Scope) -> tuple[int, str] | None:
    """(status, why) for a request the app does not serve, judged from its path and query alone; None if served."""
    raw = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "surrogateescape")
    query = scope.get("query_string", b"")
    if len(raw) > limits.PATH_BYTES:
        return 414, f"a path of {len(raw)} bytes"
    if len(query) > limits.QUERY_BYTES:
        return 414, f"a query of {len(query)} bytes"
    for name in unquote_to_bytes(raw).split(b"/"):  # as the application sees them: an escaped "/" splits too
        if len(name) > limits.SEGMENT_BYTES:
            return 404, f"a path segment of {len(name)} bytes"
        if name in (b".", b"..") or b"\\" in name or b"\x00" in name:
            return 400, "a path that leaves its folder"
    return None


def body_cap(scope: Scope) -> int:
    """The largest body the app takes on this request's path, in bytes (an upload's under any base URL path)."""
    return limits.UPLOAD_BODY_BYTES if limits.UPLOAD_PATH in scope.get("path", "") else limits.BODY_BYTES


def declared_length(scope: Scope) -> int | None:
    """The request's ``Content-Length``, or None when it has none (or one that is not a number)."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            return int(value) if value.strip().isdigit() else None
    return None


class _Log:
    """At most one line per ``LOG_EVERY`` s: the first refusal of that time, and the count of those after it."""

    def __init__(self) -> None:
        self.last, self.skipped = float("-inf"), 0

    def refused(self, status: int, why: str, path: str) -> None:
        now = time.monotonic()
        if now - self.last < LOG_EVERY:
            self.skipped += 1
            return
        more = f" ({self.skipped} more refused since the last line)" if self.skipped else ""
        shown = path if len(path) <= SHOWN else path[:SHOWN] + "..."
        LOG.warning("Refused %s: %s, %r%s", status, why, shown, more)
        self.last, self.skipped = now, 0


class RequestGuard:
    """ASGI middleware: see the module's docstring. ``app`` is the rest of the application."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.log = _Log()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        found = refusal(scope)
        if found is None and scope["type"] == "http":
            length, cap = declared_length(scope), body_cap(scope)
            if length is not None and length > cap:
                found = 413, f"a body of {length} bytes (at most {cap})"
        if found is not None:
            self.log.refused(*found, scope.get("path", ""))
            if scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008})
            return await _answer(send, found[0])
        if scope["type"] == "websocket":
            return await self.app(scope, receive, send)
        await self._counted(scope, receive, send, body_cap(scope))

    async def _counted(self, scope: Scope, receive: Any, send: Any, cap: int) -> None:
        """The application, with its body's bytes counted as it reads them; 413 once they pass ``cap``."""
        received, started = 0, False

        async def counting_receive() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise BodyTooLarge
            return message

        async def noting_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, noting_send)
        except BodyTooLarge:
            self.log.refused(413, f"a body of more than {cap} bytes", scope.get("path", ""))
            if not started:
                await _answer(send, 413)


async def _answer(send: Any, status: int) -> None:
    body = REASONS[status]
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


MIDDLEWARE = [Middleware(RequestGuard)]  # the app's first middleware (ui.server.app)
