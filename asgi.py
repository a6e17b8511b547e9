"""PVN Lab as Streamlit's ASGI application: ``app.py`` with the app's routes (``ui/server/routes.py``), middleware
and lifespan (``ui/server/app.py``). Every way of serving the app serves this: ``make run`` and ``make dev``
(``streamlit run asgi.py``, through ``python -m ui.serve``), the browser tests and the benchmarks.

It lives beside ``app.py`` so that Streamlit puts the repository's folder first on ``sys.path`` and reads its
``.streamlit/``; ``streamlit run`` finds ``app`` here by reading this file. ``$PVN_APP_SCRIPT`` serves another
script of the repository the same way (the browser tests' and benchmarks' pages of bare components).
"""

import os

import streamlit as st

from ui.server import routes
from ui.server.app import ROOT, lifespan, middleware

app = st.App(
    str(ROOT / os.environ.get("PVN_APP_SCRIPT", "app.py")),
    routes=routes.routes(),
    middleware=middleware(),
    lifespan=lifespan,
)
