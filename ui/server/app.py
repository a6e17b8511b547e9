"""The app as Streamlit's ASGI application: ``app.py`` with the app's routes, middleware and lifespan.

The repository's ``asgi.py`` builds the ``st.App`` from these parts and ``ui.server.routes``; ``streamlit run
asgi.py`` serves it: ``make run`` (``python -m ui.serve``), ``make dev`` (the same, rerunning on save), the browser
tests and the benchmarks. ``lifespan`` starts the server's side when the server starts (``start``): the job
queue's run workers, so the first Run finds them warm, and the store the routes answer from. Pages find that store
(``ui.server.store.current``); ``app.py`` refuses to run without it (``streamlit run app.py`` has no routes).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.middleware import Middleware

from ui.server import guard, store
from ui.server.early_plotly import EarlyPlotly

ROOT = Path(__file__).resolve().parents[2]


def middleware() -> list[Middleware]:
    """The request guard first (``ui.server.guard``: what the app does not serve gets a 4xx before anything reads
    it), then ``EarlyPlotly``."""
    return [*guard.MIDDLEWARE, Middleware(EarlyPlotly)]


def start() -> store.Store:
    """The server's side, as the server starts it: the run workers started, the store made (a new one)."""
    from ui.server import queue

    queue.prepare_workers()
    return store.start(queue.describe)


@contextlib.asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """``start`` once Streamlit's runtime is up; the store closed when the server stops."""
    start()
    try:
        yield
    finally:
        store.stop()
