"""Where the PVN works: every seed's fresh return of each method at the same env-step budget, one panel per
gymnasium environment (``pvnviz.runs.env_results``; beyond the paper's Section 6)."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pvnviz.figures.beyond import METHOD_COLORS
from pvnviz.figures.theme import BASELINE, style
from pvnviz.runs.env_results import EnvSeedResult, steps_text

# (label on the x axis, EnvSeedResult field, colour): the methods in the order the table gives them
METHODS = (
    ("best of random", "best_of_random", METHOD_COLORS["best of random policies"]),
    ("PVN mean of starts", "pvn_mean", METHOD_COLORS["PVN beyond"]),
    ("PVN best start", "pvn_best", METHOD_COLORS["PVN beyond"]),
    ("ARS V1-t", "ars_v1", METHOD_COLORS["ARS V1-t"]),
    ("ARS V2-t", "ars_v2", METHOD_COLORS["ARS V2-t"]),
)


def env_results_figure(results: list[EnvSeedResult], columns: int = 3) -> go.Figure:
    """One panel per environment and PVN preset (each with its own return axis, in first-seen order), a marker per
    seed and method, the methods' labels on the x axis. ``results``: ``pvnviz.runs.env_results.env_results``."""
    panels = list(dict.fromkeys((r.env, r.preset) for r in results))
    cols = max(1, min(columns, len(panels)))
    rows = max(1, math.ceil(len(panels) / cols))
    titles = [f"{env.removeprefix('gym:')}, {preset}, {_steps(results, env, preset)}" for env, preset in panels]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles or None, horizontal_spacing=0.08,
                        vertical_spacing=0.22)  # fmt: skip
    for i, panel in enumerate(panels):
        mine = [r for r in results if (r.env, r.preset) == panel]
        for label, field, color in METHODS:
            fig.add_trace(
                go.Scatter(
                    x=[label] * len(mine),
                    y=[getattr(r, field) for r in mine],
                    mode="markers",
                    marker=dict(size=10, color=color or BASELINE, symbol="diamond" if "best" in field else "circle"),
                    text=[f"seed {r.seed}" for r in mine],
                    hovertemplate="%{text}: %{y:.1f}<extra>" + label + "</extra>",
                    name=label,
                    legendgroup=label,
                    showlegend=i == 0,
                ),
                row=i // cols + 1,
                col=i % cols + 1,
            )
    fig.update_xaxes(tickangle=-30, tickfont=dict(size=10))
    fig.update_yaxes(title_text="return on fresh episodes", col=1)
    style(fig, "Where the PVN works: every seed at the same env-step budget", height=320 * rows + 120, wide=True)
    return fig


def _steps(results: list[EnvSeedResult], env: str, preset: str) -> str:
    """A panel's budget: the most env steps any of its seeds' ARS runs took."""
    most = max(r.ars_steps for r in results if (r.env, r.preset) == (env, preset))
    return f"{steps_text(most)} steps"
