"""Fig. 5 at a glance: where each start's chosen policy ended, run by run, against the baselines.

Section 6.3 reports that all five starts of the ascent through the fingerprint PVN end above the baselines
(Spinning Up's DDPG 143 and below). This figure puts the fresh-episode return of each start's chosen iterate
(Algorithm 3) of several runs side by side: one column of dots per run, its mean as a bar, the dataset's
best policy as a short green line (re-measured on fresh episodes where the run did, as the starts are), and the
baselines as dashed lines across, so whether the starts clear them
reads at a glance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from pvnviz.figures import theme
from pvnviz.figures.ascent import baseline_labels, kept_best_line


@dataclass(frozen=True)
class StartsColumn:
    """One run's column: its label, the fresh return of each start's chosen policy (A,), and the line its ascent
    must beat (``best``: the dataset's best policy, or the best kept policy on fresh episodes; named ``best_label``
    in the legend)."""

    label: str
    fresh_returns: np.ndarray
    best: float | None = None
    best_label: str = "best policy of the dataset"


def column_from_summary(label: str, summary: dict, input_mode: str = "fingerprint") -> StartsColumn:
    """A run's column from its summary.json (``pvnviz.runs.pipeline.ExperimentResult.summary``): its line is
    the best kept policy on fresh episodes where the run has it (``kept_best_line``), else the dataset's best."""
    fresh = np.asarray(summary["inputs"][input_mode]["fresh_return_per_start"], dtype=float)
    if summary.get("kept_best_fresh_return") is not None:
        best, name = kept_best_line(summary)
        return StartsColumn(label, fresh, best, name)
    return StartsColumn(label, fresh, summary.get("dataset_best_mean_return"))


def starts_figure(columns: list[StartsColumn], baselines: dict[str, float], title: str) -> go.Figure:
    """One column of start dots per run, its mean, its dataset's best, and the baselines as dashed lines."""
    fig = go.Figure()
    labels = [c.label for c in columns]
    first_with = {}  # a best line's name -> the first column that draws it (the one in the legend)
    for i, column in enumerate(columns):
        if column.best is not None:
            first_with.setdefault(column.best_label, i)
    for i, column in enumerate(columns):
        returns = np.asarray(column.fresh_returns, dtype=float)
        jitter = np.linspace(-0.12, 0.12, len(returns)) if len(returns) > 1 else np.zeros(1)
        fig.add_trace(
            go.Scatter(
                x=i + jitter,
                y=returns,
                mode="markers",
                marker=dict(size=11, color=theme.EXACT, line=theme.OUTLINE),
                name="a start's chosen policy (fresh return)",
                legendgroup="starts",
                showlegend=i == 0,
                meta=f"starts:{i}",
                hovertemplate=f"{column.label}<br>start %{{customdata}}: %{{y:.1f}}<extra></extra>",
                customdata=np.arange(1, len(returns) + 1),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[i - 0.3, i + 0.3],
                y=[returns.mean()] * 2,
                mode="lines",
                line=dict(color=theme.EXACT, width=3),
                name="mean of the starts",
                legendgroup="mean",
                showlegend=i == 0,
                hovertemplate=f"{column.label}<br>mean %{{y:.1f}}<extra></extra>",
            )
        )
        if column.best is not None:
            fig.add_trace(
                go.Scatter(
                    x=[i - 0.3, i + 0.3],
                    y=[column.best] * 2,
                    mode="lines",
                    line=dict(color=theme.TRAIN, width=2, dash="dot"),
                    name=column.best_label,
                    legendgroup=column.best_label,
                    showlegend=first_with[column.best_label] == i,
                    hovertemplate=f"{column.label}<br>{column.best_label} %{{y:.1f}}<extra></extra>",
                )
            )
    for value in baselines.values():
        fig.add_hline(y=value, line=dict(color=theme.BASELINE, dash="dash", width=1))
    values = [v for c in columns for v in np.asarray(c.fresh_returns, dtype=float)] + list(baselines.values())
    low, high = min(values), max(values)
    fig.update_layout(annotations=baseline_labels(baselines, low, high))
    fig.update_xaxes(tickvals=list(range(len(columns))), ticktext=labels, range=[-0.6, len(columns) - 0.4])
    fig.update_yaxes(title="fresh return (10 episodes)")
    theme.style(fig, title, height=420)
    fig.update_layout(margin=dict(l=60, r=80, t=60, b=40))
    return fig
