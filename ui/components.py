"""Streamlit v2 components that draw Plotly figures in the browser with plotly.js (UI only; no math here).

``plotly_view`` mounts ``components/figure.js``: the figure, given as plotly JSON, is drawn by plotly.js in
the page, and sibling component modules can change its traces in the browser (``Plotly.restyle`` /
``Plotly.react``) without a server rerun, through the page-wide registry that ``components/plotly_lib.js``
defines (see that file for the JavaScript API).

How the pieces are loaded (Streamlit 1.67):

* A component's inline ``js`` is turned into a Blob URL and ``import()``-ed as an ES module, once per page and
  content; its default export runs at mount and again whenever ``data`` (or the theme) changes, on the same DOM
  node; a rerun with identical data does not call it. ``js_module`` returns the text: the shared prelude
  ``plotly_lib.js`` followed by the component's own file, both read from ``components/``.
* plotly.js comes from the installed plotly wheel, never from a CDN: the server's route serves the wheel's own
  file (``ui.server.routes.plotly_url``, versioned by a hash of the file, so a new wheel is fetched again). The
  page loads it with one classic ``<script>`` shared by every component instance, started from the page's HTML
  while its first script run is still on the server (``ui.server.early_plotly``); the components take that copy.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
import streamlit as st
from streamlit.components.v2 import component

from pvnviz.figures import theme
from ui import chart_config, per_result
from ui.server import routes
from ui.server.early_plotly import COMPONENTS_DIR, PRELUDE


def js_module(*paths: str | Path) -> str:
    """The JavaScript of a plotly component: the shared prelude, then each of ``paths`` in order (relative to
    ``components/`` unless absolute), as one module: the last file must ``export default`` the component's
    function, the others define what it uses (a Blob-URL module cannot import another)."""
    files = [PRELUDE] + [Path(p) if Path(p).is_absolute() else COMPONENTS_DIR / p for p in paths]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def plotly_js_url() -> str:
    """The server path of plotly.js (``/<baseUrlPath>/pvn/plotly.min.js?v=<hash>``, ``ui.server.routes``)."""
    return routes.plotly_url()


class PlainFigure(dict):
    """A figure already as plain JSON (``plain``): ``figure_data`` sends it as it is."""


def plain(figure: Any) -> PlainFigure:
    """``figure`` (a plotly figure or its ``to_plotly_json()``) as plain JSON: numpy arrays as plotly's typed-array
    specs or lists, by plotly's own encoder."""
    figure_json = figure.to_plotly_json() if hasattr(figure, "to_plotly_json") else figure
    return PlainFigure(json.loads(plotly.io.json.to_json_plotly(figure_json)))


def result_figure(result: object, key: Any, make: Callable[[], Any]) -> PlainFigure:
    """``make()``'s figure as plain JSON, made once per result object and ``key`` for every session and rerun
    (``ui.per_result``): when a run that a class waited on ends, each tab's rerun sends it without encoding it
    again. Callers must not change what they get."""
    return per_result(result, ("figure", key), lambda: plain(make()))


def figure_data(figure_json: dict, key: str, name: str) -> dict[str, Any]:
    """The ``data`` a plotly component gets: the figure as plain JSON (``plain``; as it is if it is one already),
    its plotly.js config (as ``ui.components.chart``) and plotly.js's URL."""
    if st.session_state.get("projector"):
        figure = plain(theme.projector(go.Figure(figure_json)))  # a copy, as ui.components.chart
    else:
        figure = figure_json if isinstance(figure_json, PlainFigure) else plain(figure_json)
    return {"key": key, "figure": figure, "config": chart_config(name), "plotly": plotly_js_url()}


_plotly_view = component(
    "pvn_plotly_view",
    js=js_module("figure.js"),
    css=".pvn-plotly-error { color: var(--st-red-color); font-family: var(--st-font); }",
    isolate_styles=False,  # plotly.js puts its modebar and hover styles in document.head: no shadow root
)


def plotly_view(figure_json: dict, key: str, *, name: str = "figure", container: Any = None) -> Any:
    """Draw ``figure_json`` (``fig.to_plotly_json()``) with plotly.js in the browser, under ``key``.

    ``key`` names the figure for sibling modules too (``pvnPlotly.figure(key)`` in JavaScript). A rerun with the
    same figure leaves the drawn figure (and any change made to it in the browser) as it is; a changed figure is
    drawn with ``Plotly.react``. ``name`` is the modebar download's file name. Returns the component's result.
    """
    data = figure_data(figure_json, key, name)
    if container is None:
        return _plotly_view(key=key, data=data, width="stretch", height="content")
    with container:
        return _plotly_view(key=key, data=data, width="stretch", height="content")


def chart(fig, name: str = "figure", container: Any = None, key: str | None = None) -> Any:
    """A plotly figure drawn by the app's own plotly.js (``ui.components.plotly_view``, as the players draw), with
    the sidebar's projector mode applied and the modebar's camera downloading the figure client-side in the
    sidebar's format (PNG or SVG), named ``name``. Not ``st.plotly_chart``: that loads Streamlit's own copy of
    plotly.js besides the players', a second copy for the browser to evaluate on every page open."""
    figure_json = fig.to_plotly_json() if hasattr(fig, "to_plotly_json") else fig
    return plotly_view(figure_json, key or f"chart-{name}", name=name, container=container)
