"""A throwaway Streamlit script for tests/test_browser_components.py: two ``plotly_view`` figures and a demo
slider component that redraws a trace in the browser on every ``input`` event and reports its value to Python
on ``change``, and, far below them, a figure whose data changes with a button (``streamlit run
tests/components_app.py``; not a page of the app)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # streamlit puts the script's folder, tests/, on sys.path, not the repository

import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
import streamlit as st  # noqa: E402
from streamlit.components.v2 import component  # noqa: E402

from pvnviz.figures import theme  # noqa: E402  (plotly_white, the template of every page's figures)
from ui.components import js_module, plotly_view  # noqa: E402

st.set_page_config(page_title="plotly components", layout="wide")

x = np.linspace(0.0, 2 * np.pi, 101)
line = go.Figure(go.Scatter(x=x, y=np.sin(x), mode="lines", name="sine"))
line.add_scatter(x=[0.0, np.pi], y=[0.0, 0.0], mode="markers", name="zeros")
theme.style(line, "A sine", height=360).update_layout(yaxis_range=[-1.1, 1.1])
bars = theme.style(go.Figure(go.Bar(x=["a", "b", "c"], y=[3, 1, 2], name="bars")), "Some bars", height=300)

demo = component("pvn_test_slider", js=js_module(ROOT / "tests" / "components_demo.js"), isolate_styles=False)
slider = demo(key="demo_slider", data={"target": "demo_line"}, default={"phase": 0}, on_phase_change=lambda: None)
st.write(f"phase from the browser: {slider.phase}")
plotly_view(line.to_plotly_json(), key="demo_line", name="sine")
plotly_view(bars.to_plotly_json(), key="demo_bars", name="bars")
st.button("Rerun")
if st.button("Next data", key="next_data"):
    st.session_state.far = st.session_state.get("far", 0) + 1
st.space(3000)  # pixels: the figure below is more than a screen away from the buttons
n = st.session_state.get("far", 0)
far = theme.style(go.Figure(go.Scatter(x=[0, 1, 2], y=[n, n, n], name=f"data {n}")), "Far below", height=300)
plotly_view(far.to_plotly_json(), key="far_line", name="far")
