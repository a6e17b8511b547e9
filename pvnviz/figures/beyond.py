"""Figures for going beyond zero-shot ascent (Section 5's future work).

``disagreement_figure``: a bootstrapped ensemble's spread (std of J_hat across members) along
each start's ascent, against the spread on held-out policies. ``fresh_figure``: each start's
chosen iterate, its selection estimate (the periodic checks of Algorithm 3 that chose it)
beside its re-measurement on fresh episodes.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from pvnviz.core.ascent import AscentTrace
from pvnviz.figures.theme import BASELINE, EXACT, LEARNED, START, TEST, style


def disagreement_figure(trace: AscentTrace, val_spread: float | None = None) -> go.Figure:
    """Std of J_hat across ensemble members along each start's ascent (one line per start)."""
    fig = go.Figure()
    if trace.disagreement is None:
        return style(fig, "No ensemble in this run: no disagreement to show")
    steps = np.arange(len(trace.disagreement))
    for a in range(trace.disagreement.shape[1]):
        fig.add_trace(
            go.Scatter(
                x=steps,
                y=trace.disagreement[:, a],
                mode="lines",
                line=dict(color=LEARNED, width=1.5),
                opacity=0.35 + 0.65 * (a == 0),
                name="each start",
                legendgroup="start",
                showlegend=(a == 0),
            )
        )
    chosen = trace.checked_steps[trace.best_index]
    fig.add_trace(
        go.Scatter(
            x=chosen,
            y=trace.disagreement[chosen, np.arange(len(chosen))],
            mode="markers",
            marker=dict(color=EXACT, size=10, symbol="diamond"),
            name="chosen iterate",
        )
    )
    if val_spread is not None and np.isfinite(val_spread):
        fig.add_hline(
            y=val_spread,
            line=dict(color=TEST, dash="dash"),
            annotation_text="mean spread on held-out policies",
        )
    fig.update_xaxes(title="ascent step")
    fig.update_yaxes(title="members' disagreement: std of Ĵ", rangemode="tozero")
    return style(fig, "Ensemble disagreement along the ascent")


def fresh_figure(trace: AscentTrace, pvn: str = "") -> go.Figure:
    """Per start: its own first check, the selection estimate of the chosen iterate, its fresh re-measurement;
    ``pvn`` names the PVN the ascent went through in the title (figures side by side differ by it)."""
    fig = go.Figure()
    starts = [f"start {a + 1}" for a in range(trace.true_returns.shape[1])]
    fig.add_trace(
        go.Bar(
            x=starts,
            y=trace.true_returns[0],
            name="start policy (its first check)",
            marker=dict(color="rgba(0,0,0,0)", line=dict(color=START, width=2), pattern_shape="/"),
        )
    )
    fig.add_trace(go.Bar(x=starts, y=trace.best_returns, name="selection estimate (chose it)", marker_color=BASELINE))
    if trace.fresh_returns is not None:
        fig.add_trace(go.Bar(x=starts, y=trace.fresh_returns, name="fresh episodes (headline)", marker_color=EXACT))
    fig.update_layout(barmode="group")
    fig.update_yaxes(title="mean return")
    return style(fig, f"Chosen iterates: {pvn}" if pvn else "Each start's chosen iterate")


METHOD_COLORS = {
    "PVN paper": BASELINE,  # the zero-shot PVN (CartPole's paper preset)
    "PVN budget-10000x1": BASELINE,  # the zero-shot PVN (Swimmer)
    "PVN beyond": LEARNED,
    "best of random policies": TEST,
    "ARS V1-t": EXACT,
    "ARS V2-t": "#17becf",
}


def budget_figure(
    rows: list[dict], env_title: str = "CartPole", y_range: tuple[float, float] | None = (0, 105)
) -> go.Figure:
    """Fresh-episode return of each method's final policy against the environment steps it spent.

    ``rows`` are ``pvnviz.baselines.compare.compare`` rows: method, seed, env_steps, fresh_mean. ``y_range`` None: fit.
    """
    fig = go.Figure()
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method]
        fig.add_trace(
            go.Scatter(
                x=[r["env_steps"] for r in mine],
                y=[r["fresh_mean"] for r in mine],
                mode="markers",
                marker=dict(size=11, color=METHOD_COLORS.get(method, BASELINE)),
                text=[f"seed {r['seed']}" for r in mine],
                name=method,
            )
        )
    fig.update_xaxes(title="environment steps spent (dataset + checks, or ARS rollouts)")
    fig.update_yaxes(title="return on fresh episodes", range=None if y_range is None else list(y_range))
    return style(fig, f"{env_title}: the same environment-step budget for every method", wide=True)
