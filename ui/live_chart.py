"""The live loss chart of a run in progress (Algorithm 2's training, Section 4), drawn in the browser.

A Streamlit v2 component (``pages/components/loss_chart.js``, plain JavaScript on a canvas): each poll of a
running job sends only its loss rows, and the browser redraws in about a millisecond. A plotly chart in its
place re-laid out the whole figure on every poll, about a third of a core per watching tab (issue 17).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pvnviz.figures.experiment import MODE_COLOR, MODE_LABEL

JS = Path(__file__).resolve().parents[1] / "pages" / "components" / "loss_chart.js"
MAX_POINTS = 300  # per curve: a canvas 1,000 px wide shows no more

_loss_chart = st.components.v2.component(
    "pvn_loss_chart",
    js=JS.read_text(encoding="utf-8"),
    css=".pvn-loss-chart { width: 100%; height: 300px; display: block; }",
)


def _thin(values: tuple, keep: list[int]) -> list[float]:
    return [float(values[i]) for i in keep]


def chart_data(history: dict[str, list[tuple[int, float, float]]], title: str) -> dict:
    """The component's data: training (dotted) and validation (solid) KL per input, at most MAX_POINTS each."""
    series = []
    for mode, rows in history.items():
        if not rows:
            continue
        steps, train, val = zip(*rows)
        stride = max(1, -(-len(steps) // MAX_POINTS))
        keep = sorted({*range(0, len(steps), stride), len(steps) - 1})
        x = _thin(steps, keep)
        color, label = MODE_COLOR[mode], MODE_LABEL[mode]
        series.append({"name": f"{label}: train", "color": color, "dash": "dot", "x": x, "y": _thin(train, keep)})
        series.append({"name": f"{label}: validation", "color": color, "dash": "solid", "x": x, "y": _thin(val, keep)})
    return {
        "title": title,
        "xTitle": "training step (log scale; step 0 at 1)",
        "yTitle": "KL(target ‖ PVN)",
        "series": series,
    }


def live_loss_chart(history: dict[str, list[tuple[int, float, float]]], key: str, title: str) -> None:
    """Draw (or redraw in place) the live loss chart of ``history`` under the component key ``key``."""
    _loss_chart(data=chart_data(history, title), key=key)
