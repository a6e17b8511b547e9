"""plotly.js for the app's figures (UI only): the installed plotly wheel's copy, served from the app's own server.

``ensure_plotly_js`` copies ``plotly/package_data/plotly.min.js`` into the ``static/`` folder beside the main
script, which Streamlit serves at ``<baseUrlPath>/app/static/`` (``[server] enableStaticServing = true`` in
``.streamlit/config.toml``), and ``url`` names it with a hash of its content, so a new wheel is fetched again.
Nothing here registers a component or needs a script run: ``ui.asgi`` uses it to name the file in the page's
HTML, ``ui.components`` in every figure's data.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

import plotly

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
COMPONENTS_DIR = Path(__file__).resolve().parents[1] / "components"
PRELUDE = COMPONENTS_DIR / "plotly_lib.js"  # pvnPlotly, the page-wide loader and registry (see that file)
STATIC_ROUTE = "app/static"  # where Streamlit serves the main script's ./static/ folder (after baseUrlPath)


@functools.cache
def ensure_plotly_js(static_dir: str) -> str:
    """Copy the plotly wheel's ``plotly.min.js`` into ``static_dir`` unless an identical copy is there; returns
    a short hash of its content. Checked once per process and folder; the copy is written to a temporary file
    and renamed, so a browser or another server never reads half a file."""
    source = PLOTLY_JS.read_bytes()
    target = Path(static_dir) / "plotly.min.js"
    if not target.is_file() or target.read_bytes() != source:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".plotly-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(source)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return hashlib.sha256(source).hexdigest()[:12]


def static_url(name: str, base_url_path: str) -> str:
    """The server path of ``static/<name>`` under Streamlit's ``server.baseUrlPath``:
    ``/<baseUrlPath>/app/static/<name>``."""
    base = (base_url_path or "").strip("/")
    prefix = f"/{base}/" if base else "/"
    return f"{prefix}{STATIC_ROUTE}/{name}"


def url(static_dir: str | Path, base_url_path: str) -> str:
    """The server path of plotly.min.js (``/<baseUrlPath>/app/static/plotly.min.js?v=<hash>``), copying the
    file into ``static_dir`` first if needed."""
    return static_url(f"plotly.min.js?v={ensure_plotly_js(str(static_dir))}", base_url_path)
