"""``app.py`` as Streamlit's ASGI application, which ``make run`` serves (``python -m ui.serve``).

``streamlit run asgi.py`` finds ``app`` here by reading this file, and serves ``app.py`` with what ``ui/asgi.py``
adds: plotly.js started from each page's HTML, and the run workers started with the server. It lives beside
``app.py`` so that Streamlit puts the repository's folder first on ``sys.path`` and reads its ``.streamlit/``, as
for ``streamlit run app.py``.
"""

import streamlit as st

from ui.asgi import MIDDLEWARE, start_workers

app = st.App("app.py", middleware=MIDDLEWARE, lifespan=start_workers)
