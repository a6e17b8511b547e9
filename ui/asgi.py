"""The app as Streamlit's ASGI application (``st.App``), which ``make run`` serves (``ui/serve.py``).

It is ``app.py`` with one middleware, ``ui.early_plotly.EarlyPlotly``: every page Streamlit serves starts loading
plotly.js from its HTML, while its first script run is still on the server, instead of when its first figure
mounts after that run. ``streamlit run app.py`` (``make dev``; ``AppTest`` in the tests) serves the same pages
without it: the components load plotly.js themselves.

Streamlit finds ``app`` here by reading this file (``streamlit run`` serves an ``st.App`` it finds), and resolves
``../app.py`` against this file's folder. Importing this module constructs the App, which pins Streamlit's
main-script path for the process: only the server imports it.
"""

import streamlit as st
from starlette.middleware import Middleware

from ui.early_plotly import EarlyPlotly

app = st.App("../app.py", middleware=[Middleware(EarlyPlotly)])
