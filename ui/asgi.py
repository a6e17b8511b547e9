"""What ``make run`` adds to ``app.py`` when it serves it as Streamlit's ASGI application (``st.App``, in the
repository's ``asgi.py``; ``ui/serve.py`` runs it).

- ``MIDDLEWARE``: ``ui.early_plotly.EarlyPlotly``. Every page Streamlit serves starts loading plotly.js from its
  HTML, while its first script run is still on the server, instead of when its first figure mounts after that run.
- ``start_workers``, the lifespan hook: the server starts its run workers when it starts. They then have imported
  torch and the rest before the first Run. Before, they started when the first page with Run opened, and were
  still warming up when a visitor clicked Run a few seconds later; that Run waited 4.7 s for a worker.

``streamlit run app.py`` (``make dev``; ``AppTest`` in the tests) serves the same pages without them: the
components load plotly.js themselves, and the workers start when a page with Run opens. Importing this module
starts nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.middleware import Middleware

from ui.early_plotly import EarlyPlotly

MIDDLEWARE = [Middleware(EarlyPlotly)]


@contextlib.asynccontextmanager
async def start_workers(_app: Any) -> AsyncIterator[None]:
    """Start the job queue's run workers once Streamlit's runtime is up (``ui.jobs.prepare_workers``; the one
    ``st.cache_resource`` queue the pages use too)."""
    from ui import jobs

    jobs.prepare_workers()
    yield
