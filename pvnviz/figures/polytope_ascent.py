"""The policy square and the value polytope at one iterate of the polytope's gradient ascent (Fig. 3c).

``ascent_frame`` draws iterate t of both ascents on the policy square and at its exact values in the value
polytope; ``ascent_returns_figure(..., highlight=t)`` in ``figures.polytope`` rings the same iterate on the J
curve. The page's instrument (``ui.polytope_instrument``) uses them as templates: their look, legends and the
roles of their traces (``meta``), whose data the browser computes for each iterate.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pvnviz.figures import theme
from pvnviz.figures.polytope import arrow_scale, polytope_outline, quiver_segments
from pvnviz.polytope.experiment import AscentPath, ExactView, LearnedView


def ascent_frame(exact: ExactView, learned: LearnedView | None, t: int) -> go.Figure:
    """Iterate t of both ascents, highlighted on the policy square and at its exact values in the polytope.

    Each whole path is drawn faint, the part up to t solid, iterate t as a ringed dot (the frame the page's
    player shows; Fig. 3c).
    """
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14, subplot_titles=("Policy square", "Value polytope"))
    polytope_outline(fig, exact, row=1, col=2, cloud=False)
    paths = [("exact ascent", exact.ascent, theme.EXACT)]
    if learned is not None:
        paths.append(("learned ascent", learned.ascent, theme.LEARNED))
    t = int(np.clip(t, 0, len(exact.ascent.policies) - 1))
    fig.add_trace(_faint_field(exact), row=1, col=1)
    for name, path, color in paths:
        for col in (1, 2):
            for trace in _iterate_traces(name, path, color, col, t):
                fig.add_trace(trace, row=1, col=col)
    fig.add_trace(_start_mark(exact.ascent.policies[0]), row=1, col=1)
    fig.update_xaxes(title_text="P(a1 | s1)", range=[-0.03, 1.03], row=1, col=1)
    fig.update_yaxes(title_text="P(a1 | s2)", range=[-0.03, 1.03], row=1, col=1)
    fig.update_xaxes(title_text="V(s1)", row=1, col=2)
    fig.update_yaxes(title_text="V(s2)", row=1, col=2)
    fig = theme.style(fig, f"Gradient ascent, exact against learned: step {t}", height=440)
    fig.update_layout(margin=dict(t=70, b=90), legend=dict(y=-0.2, yanchor="top", x=0.0))
    return fig


def _faint_field(exact: ExactView) -> go.Scatter:
    """The exact gradient field, faint, behind the paths on the policy square."""
    qx, qy = quiver_segments(exact.grid, exact.field, arrow_scale(exact.grid, exact.field))
    return go.Scatter(
        x=qx,
        y=qy,
        mode="lines",
        line=dict(color=theme.EXACT, width=1),
        opacity=0.25,
        name="exact gradient field",
        meta="field:exact",
        hoverinfo="skip",
    )


def _iterate_traces(name: str, path: AscentPath, color: str, col: int, t: int) -> tuple[go.Scatter, ...]:
    """One path in panel ``col`` (1: its policies, 2: its values): whole and faint, solid up to iterate t, and
    iterate t ringed."""
    points = path.policies if col == 1 else path.values
    full = go.Scatter(
        x=points[:, 0],
        y=points[:, 1],
        mode="lines",
        line=dict(color=color, width=1),
        opacity=0.3,
        showlegend=False,
        hoverinfo="skip",
        legendgroup=name,
        meta=f"full:{name}:{col}",
    )
    upto = go.Scatter(
        x=points[: t + 1, 0],
        y=points[: t + 1, 1],
        meta=f"upto:{name}:{col}",
        mode="lines+markers",
        name=name,
        line=dict(color=color, width=2),
        marker=dict(size=4, color=color),
        legendgroup=name,
        showlegend=col == 1,
        hovertemplate=f"{name}, step %{{pointNumber}}<extra></extra>",
    )
    ring = go.Scatter(
        x=[points[t, 0]],
        y=[points[t, 1]],
        meta=f"ring:{name}:{col}",
        mode="markers",
        name=f"{name}: step {t}",
        marker=dict(size=15, color=color, line=dict(width=3, color=theme.HIGHLIGHT)),
        cliponaxis=False,
        legendgroup=name,
        showlegend=False,
        hovertemplate=f"{name}, step {t}: J = {path.exact_J[t]:.3f}<extra></extra>",
    )
    return full, upto, ring


def _start_mark(start: np.ndarray) -> go.Scatter:
    """A cross on the start policy."""
    return go.Scatter(
        x=[start[0]],
        y=[start[1]],
        mode="markers",
        marker=dict(size=12, color=theme.START, symbol="x", line=theme.OUTLINE),
        name="start",
        meta="start",
        cliponaxis=False,
    )
