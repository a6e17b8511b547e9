"""The Streamlit script of ``python -m pvnviz.bench redraw`` (browserbench/redraw.py): three ``plotly_view``
figures, each with a benchmark slider (redraw_slider.js) that redraws it in the browser on every ``input`` event.

* ``line101``: a 101-point line, redrawn with ``Plotly.restyle`` of its y;
* ``gl5000``: 5,000 ``Scattergl`` markers and a 400-arrow quiver drawn as one line trace with None gaps, redrawn
  with ``Plotly.react`` of new arrays for both traces;
* ``svg5000``: the same with ``Scatter`` (SVG) markers.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # streamlit puts the script's folder on sys.path, not the repository

import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
import streamlit as st  # noqa: E402
from streamlit.components.v2 import component  # noqa: E402

from pvnviz.figures import theme  # noqa: E402
from ui.components import js_module, plotly_view  # noqa: E402

POINTS, ARROWS = 5000, 400  # redraw_slider.js draws the same counts


def quiver(phase: float) -> tuple[list, list]:
    """400 arrows on a 20x20 grid as one line: shaft, gap, head, gap (plotly.figure_factory's quiver layout)."""
    xs, ys = [], []
    for gx in np.linspace(-1.4, 1.4, 20):
        for gy in np.linspace(-1.4, 1.4, 20):
            angle = phase + gx + gy
            x1, y1 = gx + 0.1 * np.cos(angle), gy + 0.1 * np.sin(angle)
            left, right = angle + np.pi * 0.85, angle - np.pi * 0.85
            xs += [gx, x1, None, x1 + 0.04 * np.cos(left), x1, x1 + 0.04 * np.cos(right), None]
            ys += [gy, y1, None, y1 + 0.04 * np.sin(left), y1, y1 + 0.04 * np.sin(right), None]
    return xs, ys


def cloud_figure(trace_type, title: str) -> go.Figure:
    t = np.linspace(0.0, 2 * np.pi, POINTS)
    r = 1 + 0.3 * np.sin(5 * t)
    fig = go.Figure(trace_type(x=r * np.cos(t), y=r * np.sin(t), mode="markers", marker_size=4, name="points"))
    qx, qy = quiver(0.0)
    fig.add_scatter(x=qx, y=qy, mode="lines", line_width=1, name="field")
    fig.update_layout(xaxis_range=[-1.6, 1.6], yaxis_range=[-1.6, 1.6])
    return theme.style(fig, title, height=450)


st.set_page_config(page_title="redraw benchmark", layout="wide")
x = np.linspace(0.0, 2 * np.pi, 101)
line = theme.style(go.Figure(go.Scatter(x=x, y=np.sin(x), mode="lines", name="sine")), "101-point line", height=360)
slider = component("pvn_bench_slider", js=js_module(Path(__file__).with_name("redraw_slider.js")), isolate_styles=False)
cases = {
    "line101": ("restyle", line),
    "gl5000": ("react", cloud_figure(go.Scattergl, "5,000 Scattergl points and a 400-arrow quiver")),
    "svg5000": ("react", cloud_figure(go.Scatter, "5,000 Scatter (SVG) points and a 400-arrow quiver")),
}
for key, (mode, fig) in cases.items():
    slider(key=f"{key}_slider", data={"target": key, "mode": mode, "points": POINTS, "arrows": ARROWS})
    plotly_view(fig.to_plotly_json(), key=key, name=key)
