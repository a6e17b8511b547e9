"""The app's own HTTP endpoints, as Starlette routes that ``st.App(routes=...)`` serves beside Streamlit's.

All live under ``/<server.baseUrlPath>/pvn/`` (``url``) and answer from the server's store (``ui.server.store``):

=========================================  ===================================================================
``GET  pvn/progress/<name>[?wait=1]``      a job's progress (JSON, not cached); ``wait``: held until the job
                                           ends, at most ``HOLD`` s, so a page that reads again at once learns
                                           the end at once and still reads about once a second
``POST pvn/stop/<name>?token=<t>``         a session's Stop of the job at ``<name>``: that session stops
                                           waiting on it, with no script run; ``{"stopped":true}``
``POST pvn/run?token=<t>``                 a session's Run: the job queued with the settings its page showed,
                                           with no script run; the answer is what the page then follows
``GET  pvn/anim/<name>``                   a player's animation (JSON, gzipped when asked; cached: a name's
                                           content never changes)
``GET  pvn/plotly.min.js?v=<hash>``        plotly.js, straight from the installed plotly wheel's file
=========================================  ===================================================================

A token is good once; a wrong, used, replaced or expired one gets 404, as does an unknown name. A name or
token longer than ``MAX_NAME``, or a query longer than ``MAX_QUERY``, gets 400 before any lookup. No request body
is read.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
from pathlib import Path

import plotly
import streamlit as st
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from ui.server import store

PREFIX = "pvn"  # the app's endpoints, after the base URL path
PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
HOLD = 1.0  # seconds a read that asks to wait is held at most
MAX_NAME = 160  # characters of a name or token
MAX_QUERY = 512  # characters of a query string
NAME = re.compile(r"[A-Za-z0-9_.-]+")  # what the store names things with (keys, ids, url-safe tokens)
JSON = "application/json"
NO_STORE = {"cache-control": "no-store", "x-content-type-options": "nosniff"}
KEPT = {"cache-control": "private, max-age=86400, immutable", "x-content-type-options": "nosniff"}
STOPPED = b'{"stopped":true}'


def url(name: str, base_url_path: str | None = None) -> str:
    """The server path of endpoint ``name`` (e.g. ``"progress/7-abc"``): ``/<baseUrlPath>/pvn/<name>``; the base
    URL path is Streamlit's ``server.baseUrlPath`` unless given."""
    base = (st.get_option("server.baseUrlPath") if base_url_path is None else base_url_path) or ""
    base = base.strip("/")
    return f"/{base}/{PREFIX}/{name}" if base else f"/{PREFIX}/{name}"


@functools.cache
def plotly_version() -> str:
    """A short hash of the installed plotly.js: its URL changes with the wheel, so browsers fetch a new one."""
    return hashlib.sha256(PLOTLY_JS.read_bytes()).hexdigest()[:12]


def plotly_url(base_url_path: str | None = None) -> str:
    """The server path of plotly.js, versioned (``/<baseUrlPath>/pvn/plotly.min.js?v=<hash>``)."""
    return f"{url('plotly.min.js', base_url_path)}?v={plotly_version()}"


def _refused(request: Request, *names: str) -> Response | None:
    """400 for an oversized query or a malformed name; 503 while the server's store is not started."""
    if len(request.url.query) > MAX_QUERY:
        return Response("query too long", status_code=400)
    for name in names:
        if len(name) > MAX_NAME or not NAME.fullmatch(name) or name.startswith("."):
            return Response("bad name", status_code=400)
    if not store.started():
        return Response("not started", status_code=503)
    return None


def _token(request: Request) -> str | None:
    tokens = request.query_params.getlist("token")
    return tokens[0] if len(tokens) == 1 and tokens[0] else None


async def progress(request: Request) -> Response:
    name = request.path_params["name"]
    if (refused := _refused(request, name)) is not None:
        return refused
    kept = store.current()
    if "wait" in request.query_params:
        await kept.until_final(name, HOLD)
    body = kept.progress(name)
    if body is None:
        return Response("no such job", status_code=404)
    return Response(body, media_type=JSON, headers=NO_STORE)


async def stop(request: Request) -> Response:
    name, token = request.path_params["name"], _token(request)
    if (refused := _refused(request, name, token or "")) is not None:
        return refused
    action = store.current().take_stop(name, token)
    if action is None:
        return Response("no such stop", status_code=404)
    await asyncio.to_thread(action)  # the queue's lock, off the event loop
    return Response(STOPPED, media_type=JSON, headers=NO_STORE)


async def run(request: Request) -> Response:
    token = _token(request)
    if (refused := _refused(request, token or "")) is not None:
        return refused
    action = store.current().take_run(token)
    if action is None:
        return Response("no such run", status_code=404)
    return Response(await asyncio.to_thread(action), media_type=JSON, headers=NO_STORE)


async def animation(request: Request) -> Response:
    name = request.path_params["name"]
    if (refused := _refused(request, name)) is not None:
        return refused
    gzipped = "gzip" in request.headers.get("accept-encoding", "").lower()
    body = store.current().animation(name, gzipped)
    if body is None:
        return Response("no such animation", status_code=404)
    headers = {**KEPT, "vary": "accept-encoding", **({"content-encoding": "gzip"} if gzipped else {})}
    return Response(body, media_type=JSON, headers=headers)


async def plotly_js(request: Request) -> Response:
    if len(request.url.query) > MAX_QUERY:
        return Response("query too long", status_code=400)
    cache = "public, max-age=31536000, immutable" if request.query_params.get("v") == plotly_version() else "no-cache"
    return FileResponse(PLOTLY_JS, media_type="text/javascript", headers={"cache-control": cache})


def routes(base_url_path: str | None = None) -> list[Route]:
    """The endpoints above, under the base URL path (Streamlit's ``server.baseUrlPath`` unless given)."""
    return [
        Route(url("progress/{name}", base_url_path), progress, methods=["GET"]),
        Route(url("stop/{name}", base_url_path), stop, methods=["POST"]),
        Route(url("run", base_url_path), run, methods=["POST"]),
        Route(url("anim/{name}", base_url_path), animation, methods=["GET"]),
        Route(url("plotly.min.js", base_url_path), plotly_js, methods=["GET"]),
    ]
