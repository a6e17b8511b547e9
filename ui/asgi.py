"""What ``make run`` adds to ``app.py`` when it serves it as Streamlit's ASGI application (``st.App``, in the
repository's ``asgi.py``; ``ui/serve.py`` runs it).

- ``MIDDLEWARE``:
  - ``ProgressReads`` answers a page's reads of its job's progress (``ui.job_progress``) from memory, not from
    the file through Streamlit's static files, which costs the server more CPU per read. It also takes
    a page's Run and Stop, so that neither needs a script run, and serves the players' animations, which then go by URL
    instead of inside every page's script run (``ui.served_memory``).
  - ``ui.early_plotly.EarlyPlotly``. Every page Streamlit serves starts loading plotly.js from its HTML, while its
    first script run is still on the server, instead of when its first figure mounts after that run.
- ``start_workers``, the lifespan hook: the server starts its run workers when it starts. They then have imported
  torch and the rest before the first Run, which so does not wait for a worker that is still warming up.

``streamlit run app.py`` (``make dev``; ``AppTest`` in the tests) serves the same pages without them: the
components load plotly.js themselves, the pages read their progress files from disk, and the workers start when a
page with Run opens. Importing this module starts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

from starlette.middleware import Middleware

from ui import plotly_js, progress_memory, served_memory
from ui.early_plotly import EarlyPlotly

# Streamlit's static files, after the base URL path (any prefix is taken here: the file's name is the key)
STATIC = f"/{plotly_js.STATIC_ROUTE}/"
HEADERS = [
    (b"content-type", b"application/json"),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
]
# an animation's content never changes under its name: a tab that reloads the page takes it from its cache
KEPT = [(b"content-type", b"application/json"), (b"cache-control", b"private, max-age=86400, immutable"),
        (b"x-content-type-options", b"nosniff")]  # fmt: skip
STOPPED = b'{"stopped":true}'
HOLD = 1.0  # seconds a read that asks to wait is held at most: a page's reads stay about once a second


class ProgressReads:
    """ASGI middleware: a GET of a progress file this server writes (``static/jobs/<folder>/<file>``, its name
    holding a random token) gets its content from memory (``ui.progress_memory``); every other request, a
    wrong or an expired name included, goes on to Streamlit unchanged.

    A read with ``wait`` in its query is held until the job ends, at most ``HOLD`` seconds, then answered with
    the content of that moment: a page that reads again as soon as it is answered (``job_progress.js``) learns
    its job's end at once, not up to a second later at its next read, and still reads about once a second.

    A GET of ``static/anim/<name>`` is a player's animation (``ui.served_memory``), answered from memory with a
    long cache lifetime (its content never changes under its name).

    A POST to a progress file with ``stop=<token>`` is a page's Stop (``job_progress.js``): the session that got
    that token (``progress_memory.allow_stop``) stops waiting on the job at once, with no script run, and the
    answer is ``{"stopped":true}``. A POST with a wrong token goes on to Streamlit, which refuses it (405).

    A POST to ``static/jobs/start`` with ``run=<token>`` is a page's Run (``job_progress.js``): the session that got
    that token (``progress_memory.allow_start``) queues its job, with no script run, and the answer is what the page
    then follows (the job's progress file and Stop). A wrong or used token goes on to Streamlit (405): the page then
    asks for the Run by a script run instead."""

    def __init__(self, app) -> None:
        self.app = app
        served_memory.enable()  # the players' animations go by URL (ui.browser_player)
        progress_memory.enable_starts()  # the pages' Run buttons are drawn in the browser, and come here

    async def __call__(self, scope, receive, send) -> None:
        method = scope.get("method") if scope["type"] == "http" else None
        if method in ("GET", "POST"):
            _, found, path = scope.get("path", "").partition(STATIC)
            if found and method == "GET" and path.startswith(served_memory.PREFIX):
                gzipped = _accepts_gzip(scope)
                body = served_memory.get(path, gzipped)
                if body is not None:
                    encoding = [(b"content-encoding", b"gzip")] if gzipped else []
                    return await _answer(send, body, [*KEPT, *encoding, (b"vary", b"accept-encoding")])
            if found and method == "POST" and path == progress_memory.START_PATH:
                tokens = _query(scope).get("run", [])
                start = progress_memory.take_start(tokens[0]) if len(tokens) == 1 else None
                if start is not None:  # the queue's lock, off the event loop; the request's body is never read
                    return await _answer(send, await asyncio.to_thread(start))
            ours = found and path.startswith("jobs/") and progress_memory.serving(path) is not None
            query = _query(scope) if ours else {}
            if method == "POST":
                tokens = query.get("stop", [])
                action = progress_memory.take_stop(path, tokens[0]) if len(tokens) == 1 else None
                if action is not None:  # the queue's lock, off the event loop; the request's body is never read
                    await asyncio.to_thread(action)
                    return await _answer(send, STOPPED)
            elif ours:
                if "wait" in query:
                    await progress_memory.until_final(path, HOLD)
                body = progress_memory.serving(path)
                if body is not None:
                    return await _answer(send, body)
        await self.app(scope, receive, send)


def _query(scope) -> dict[str, list[str]]:
    """A request's query; as text: parse_qs of bytes raises on an escaped byte that is not UTF-8 (`?%ff`)."""
    return parse_qs(scope.get("query_string", b"").decode("latin-1"), errors="replace")


def _accepts_gzip(scope) -> bool:
    for name, value in scope.get("headers", []):
        if name.lower() == b"accept-encoding":
            return b"gzip" in value.lower()
    return False


async def _answer(send, body: bytes, kind: list[tuple[bytes, bytes]] = HEADERS) -> None:
    headers = [*kind, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


MIDDLEWARE = [Middleware(ProgressReads), Middleware(EarlyPlotly)]


@contextlib.asynccontextmanager
async def start_workers(_app: Any) -> AsyncIterator[None]:
    """Start the job queue's run workers once Streamlit's runtime is up (``ui.jobs.prepare_workers``; the one
    ``st.cache_resource`` queue the pages use too)."""
    from ui import jobs

    jobs.prepare_workers()
    yield
