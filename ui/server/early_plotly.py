"""ASGI middleware that starts plotly.js from the HTML page Streamlit serves (``ui.server.app`` uses it).

``EarlyPlotly`` puts a preload of plotly.js and a script into the ``<head>`` of the app's page: the components'
shared prelude (``components/plotly_lib.js``, the page-wide ``pvnPlotly``) and
``components/plotly_early.js``, which calls ``pvnPlotly.load`` as soon as the page's first script run starts on
the server. Every page draws a figure in its first screen. The plotly components load plotly.js only when they
mount, after that run, and evaluating it then would add to a new visitor's wait.
"""

from __future__ import annotations

import functools
import html
import logging
from pathlib import Path

import streamlit as st

from ui.server import routes

COMPONENTS_DIR = Path(__file__).resolve().parents[2] / "components"
PRELUDE = COMPONENTS_DIR / "plotly_lib.js"  # pvnPlotly, the page-wide loader and registry (see that file)
EARLY_JS = COMPONENTS_DIR / "plotly_early.js"
MAX_HTML = 1 << 20  # bytes of an HTML response rewritten; a larger one (there is none) passes unchanged
log = logging.getLogger(__name__)


def head_snippet(base_url_path: str) -> bytes:
    """What goes before ``</head>``: a preload of plotly.js (fetched while Streamlit's own scripts load) and the
    script that evaluates it when the first script run starts."""
    url = html.escape(routes.plotly_url(base_url_path))
    # in a block: the prelude's `const pvnPlotly` stays out of the page's global scope, as in a component's module
    code = "{\n" + "\n".join(f.read_text(encoding="utf-8") for f in (PRELUDE, EARLY_JS)) + "\n}"
    return f'<link rel="preload" as="script" href="{url}"><script data-plotly="{url}">{code}</script>'.encode()


# Request headers that would let the page come back as a 304 or a byte range of the file as it is on disk: the
# browser's copy is the rewritten page, whose snippet changes with plotly.js's hash and the base URL path.
CONDITIONAL = {b"accept-encoding", b"if-none-match", b"if-modified-since", b"range", b"if-range"}
VALIDATORS = {b"content-length", b"etag", b"last-modified"}  # of the file on disk, not of the rewritten page


class EarlyPlotly:
    """ASGI middleware: puts ``head_snippet`` into every HTML page Streamlit serves (the app's index page, under
    any page's URL). Other responses pass through untouched. An HTML request is asked for uncompressed and whole,
    so the snippet can be inserted (the page is about 1 KB); the page keeps no validator of the file on disk."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        headers = scope.get("headers") or []
        if scope["type"] != "http" or scope.get("method") != "GET" or not _accepts_html(headers):
            await self.app(scope, receive, send)
            return
        extensions = {k: v for k, v in (scope.get("extensions") or {}).items() if k != "http.response.pathsend"}
        scope = dict(scope, headers=[(k, v) for k, v in headers if k.lower() not in CONDITIONAL], extensions=extensions)
        start: dict = {}
        body: list[bytes] = []
        size = 0
        passing = False

        async def rewrite(message) -> None:
            nonlocal passing, size
            if message["type"] == "http.response.start":
                start.update(message)
                passing = message.get("status") != 200 or not _is_html(message.get("headers") or [])
                if passing:
                    await send(message)
                return
            if passing or message["type"] != "http.response.body":
                await send(message)
                return
            body.append(message.get("body", b""))
            size += len(body[-1])
            if size > MAX_HTML:  # not the index page: send what came, unchanged
                passing = True
                await send(start)
                await send({"type": "http.response.body", "body": b"".join(body), "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": message.get("more_body", False)})
                return
            if message.get("more_body"):
                return
            page = b"".join(body)
            if b"</head>" in page:
                page = page.replace(b"</head>", _snippet(st.get_option("server.baseUrlPath") or "") + b"</head>", 1)
            kept = [(k, v) for k, v in start.get("headers", []) if k.lower() not in VALIDATORS]
            await send({**start, "headers": [*kept, (b"content-length", str(len(page)).encode())]})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, rewrite)


@functools.cache
def _snippet(base_url_path: str) -> bytes:
    """``head_snippet``, made once per base URL path; nothing when it cannot be made (the page still works: its
    components load plotly.js themselves), with the reason in the server's log once."""
    try:
        return head_snippet(base_url_path)
    except OSError:
        log.exception("plotly.js is not started from the page's HTML")
        return b""


def _accepts_html(headers) -> bool:
    return any(k.lower() == b"accept" and b"text/html" in v for k, v in headers)


def _is_html(headers) -> bool:
    return any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)
