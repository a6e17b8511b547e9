"""Figures of the polytope PVN's training (Section 6.1, Fig. 2): its losses and its predictions against J."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from pvnviz.figures import theme
from pvnviz.figures.polytope import polytope_outline
from pvnviz.polytope.experiment import ExactView, LearnedView, TrainedPolytopePVN


def polytope_loss_figure(trained: TrainedPolytopePVN) -> go.Figure:
    """Train and test MSE during PVN training (Fig. 2c)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=trained.logged_steps, y=trained.train_loss, name="train", line=dict(color=theme.TRAIN)))
    fig.add_trace(go.Scatter(x=trained.logged_steps, y=trained.test_loss, name="test", line=dict(color=theme.TEST)))
    fig.update_xaxes(title_text="training step")
    fig.update_yaxes(title_text="MSE of V (log scale)", type="log")
    return theme.style(fig, "PVN training curves", height=380)


def predictions_figure(exact: ExactView, trained: TrainedPolytopePVN, learned: LearnedView) -> go.Figure:
    """Exact against PVN-predicted values inside the polytope (Appendix A figure)."""
    fig = go.Figure()
    polytope_outline(fig, exact, cloud=False)
    for name, true_v, pred_v, color in (
        ("train", trained.train_values, learned.train_predicted, theme.TRAIN),
        ("test", trained.test_values, learned.test_predicted, theme.TEST),
    ):
        seg_x = np.stack([true_v[:, 0], pred_v[:, 0], np.full(len(true_v), np.nan)], 1).ravel()
        seg_y = np.stack([true_v[:, 1], pred_v[:, 1], np.full(len(true_v), np.nan)], 1).ravel()
        fig.add_trace(
            go.Scatter(
                x=seg_x, y=seg_y, mode="lines", line=dict(color=color, width=1), showlegend=False, hoverinfo="skip"
            )
        )
        fig.add_trace(
            go.Scatter(
                x=true_v[:, 0], y=true_v[:, 1], mode="markers", name=f"{name}: exact", marker=dict(color=color, size=8)
            )
        )
        fig.add_trace(
            go.Scatter(
                x=pred_v[:, 0],
                y=pred_v[:, 1],
                mode="markers",
                name=f"{name}: PVN",
                marker=dict(color=color, size=9, symbol="x"),
            )
        )
    fig.update_xaxes(title_text="V(s1)")
    fig.update_yaxes(title_text="V(s2)")
    return theme.style(fig, "Exact (●) against predicted (×) values", height=420)
