"""The app as Streamlit's ASGI application (``st.App``), which ``make run`` serves (``ui/serve.py``).

It is ``app.py`` with two additions:

- a middleware, ``ui.early_plotly.EarlyPlotly``: every page Streamlit serves starts loading plotly.js from its
  HTML, while its first script run is still on the server, instead of when its first figure mounts after that run;
- a lifespan hook, ``start_workers``: the server starts its run workers when it starts, so they have imported
  torch and the rest before the first Run (started when the first page with Run opened, they were still warming
  up when a visitor clicked Run a few seconds later, which then waited 4.7 s for a worker).

``streamlit run app.py`` (``make dev``; ``AppTest`` in the tests) serves the same pages without them: the
components load plotly.js themselves, and the workers start when a page with Run opens.

Streamlit finds ``app`` here by reading this file (``streamlit run`` serves an ``st.App`` it finds), and resolves
``../app.py`` against this file's folder. Importing this module constructs the App, which pins Streamlit's
main-script path for the process: only the server imports it.
"""

import contextlib
from collections.abc import AsyncIterator

import streamlit as st
from starlette.middleware import Middleware

from ui.early_plotly import EarlyPlotly


@contextlib.asynccontextmanager
async def start_workers(_app: st.App) -> AsyncIterator[None]:
    """Start the job queue's run workers once Streamlit's runtime is up (``ui.jobs.prepare_workers``)."""
    from ui import jobs

    jobs.prepare_workers()
    yield


app = st.App("../app.py", middleware=[Middleware(EarlyPlotly)], lifespan=start_workers)
