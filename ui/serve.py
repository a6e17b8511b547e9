"""``make run``: the Streamlit server of the app, with its heavy modules imported before the first visitor.

``python -m ui.serve [streamlit run options]`` imports torch, plotly's figure builders and the run loaders
(``WARM``), then runs ``streamlit run asgi.py`` (``app.py`` as Streamlit's ASGI application with the app's routes:
``ui/server/app.py``) in the same process. ``make dev`` adds ``--server.runOnSave true``. Without
these imports the first visitor of a results page would wait for them (most of that page's first run); with them
the server takes that time before it answers its health check, and every visitor finds them done. No page module
is imported here: they register browser components, which needs a running server.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pvnviz  # noqa: F401  first, before streamlit loads NumPy: AVX2's kernels (pvnviz.kernels)
from ui.server import streamlit_internals

# what a results page imports on its first run, slowest first (python -X importtime)
WARM = (
    "torch",
    "gymnasium",  # the environments' action spaces
    "streamlit.emojis",  # the pages' emoji icons, checked on app.py's first run
    "pandas",  # plotly's JSON encoder and Streamlit's component data import it on the first figure: 0.3 s
    "pvnviz.runs.files",
    "pvnviz.runs.pipeline",
    "pvnviz.envs.registry",
    "pvnviz.envs.swimmer",  # MuJoCo: the Swimmer page's budget check builds the environment (0.3 s)
    "pvnviz.envs.cartpole",
    "pvnviz.figures.experiment",
    "pvnviz.figures.replay",
    "pvnviz.figures.polytope",
    "pvnviz.figures.diagram",
    "pvnviz.figures.frames",
)


ASGI_APP = Path(__file__).resolve().parents[1] / "asgi.py"  # app.py as an st.App: see that file and ui/server/app.py


def main(argv: list[str] | None = None) -> None:
    """Import ``WARM``, then ``streamlit run asgi.py`` (app.py as an ``st.App``) with ``argv`` (e.g.
    ``--server.port 8501``)."""
    for name in WARM:
        importlib.import_module(name)
    streamlit_internals.run_cli(["run", str(ASGI_APP), *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
