"""The app in a real browser: a Streamlit server and Chromium, and the benchmarks that drive them (not in ``pvnviz``).

``browser`` starts ``streamlit run`` on a free port and headless Chromium through Playwright; the browser tests'
fixtures (``tests/conftest.py``) and the benchmarks here share it. The benchmarks (``ui``, ``load``, ``redraw``,
with their page probes ``instrument``, ``views`` and ``playback``) run as ``python -m pvnviz.bench ui|load|redraw``
from the repository's root, beside the compute benchmarks of ``pvnviz.bench``, which starts this package's
program (``python -m browserbench``, ``__main__``) in a child process: ``browserbench`` imports ``pvnviz``, never
the other way round.
"""
