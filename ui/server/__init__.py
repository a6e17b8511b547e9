"""The app's server side: how ``app.py`` is served, and what its server answers besides Streamlit.

- ``app``: the one ``st.App`` (routes, middleware, lifespan) that ``make run``, ``make dev``, the browser tests and
  the benchmarks all serve (through the repository's ``asgi.py``);
- ``routes``: the app's own endpoints (a job's progress, Run, Stop, animations, plotly.js);
- ``store``: the one in-memory store those endpoints answer from;
- ``queue``: the server's job queue as the pages see it;
- ``early_plotly``: the middleware that starts plotly.js from each page's HTML;
- ``streamlit_internals``: the only use of Streamlit's non-public modules.
"""
