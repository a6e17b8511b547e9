"""Fig. 1 of the paper drawn as a plotly figure: a PVN with network fingerprinting.

policy network pi_theta -> its outputs at the n probing states (the fingerprint) -> PVN -> a
histogram over return bins, read as J_hat. As in the paper, the probing states and the PVN form one
set of trained weights (drawn in the same colour); the policy is the input (Section 4).
"""

from __future__ import annotations

import plotly.graph_objects as go

from pvnviz.figures import theme

# (x0, x1, y0, y1) of each box in a 0..10 x 0..4 canvas, with its text and colour
BOXES = {
    "probes": ((0.1, 2.1, 2.6, 3.9), "probing states<br>s₁ … sₙ (learned)", theme.PROBE),
    "policy": ((0.1, 2.1, 0.2, 1.5), "policy π_θ<br>(any network)", theme.EXACT),
    "fingerprint": ((2.9, 4.9, 1.0, 3.0), "fingerprint<br>π_θ(·|s₁) … π_θ(·|sₙ)", theme.NEUTRAL),
    "pvn": ((5.7, 7.3, 1.0, 3.0), "PVN<br>MLP, softmax<br>over m bins", theme.PROBE),
}


def _box(fig: go.Figure, x0: float, x1: float, y0: float, y1: float, text: str, color: str) -> None:
    fig.add_shape(
        type="rect", x0=x0, x1=x1, y0=y0, y1=y1, line=dict(color=color, width=2), fillcolor=color, opacity=0.18
    )
    fig.add_annotation(x=(x0 + x1) / 2, y=(y0 + y1) / 2, text=text, showarrow=False, font=dict(size=13))


def _arrow(fig: go.Figure, start: tuple[float, float], end: tuple[float, float], text: str = "") -> None:
    fig.add_annotation(
        x=end[0], y=end[1], ax=start[0], ay=start[1], xref="x", yref="y", axref="x", ayref="y",
        showarrow=True, arrowhead=3, arrowwidth=2, arrowcolor=theme.NEUTRAL, text="",
    )  # fmt: skip
    if text:
        fig.add_annotation(
            x=(start[0] + end[0]) / 2, y=(start[1] + end[1]) / 2 + 0.25, text=text, showarrow=False, font=dict(size=11)
        )


def pvn_diagram(num_bins: int = 9) -> go.Figure:
    """The PVN with probing states (Fig. 1): probes and policy -> fingerprint -> PVN -> return histogram."""
    fig = go.Figure()
    for (x0, x1, y0, y1), text, color in BOXES.values():
        _box(fig, x0, x1, y0, y1, text, color)
    _arrow(fig, (2.1, 3.2), (2.9, 2.4), "feed")
    _arrow(fig, (2.1, 0.9), (2.9, 1.6), "evaluate")
    _arrow(fig, (4.9, 2.0), (5.7, 2.0), "input")
    _arrow(fig, (7.3, 2.0), (8.0, 2.0))
    heights = [0.2, 0.5, 1.0, 1.6, 1.3, 0.9, 0.5, 0.3, 0.15][:num_bins]
    width = 1.8 / len(heights)
    fig.add_trace(
        go.Bar(
            x=[8.1 + width * (k + 0.5) for k in range(len(heights))],
            y=heights,
            base=1.0,
            width=width * 0.9,
            marker=dict(color=theme.LEARNED),
            name="predicted return histogram",
            hoverinfo="skip",
        )
    )
    fig.add_annotation(x=9.0, y=0.75, text="return bins", showarrow=False, font=dict(size=11))
    fig.add_annotation(x=8.9, y=0.35, text="Ĵ = Σᵢ ψᵢ·midpointᵢ", showarrow=False, font=dict(size=11))
    fig.add_annotation(
        x=6.5, y=3.6, text="probes + PVN: one set of weights, trained together (Algorithm 2)", showarrow=False
    )
    fig.update_xaxes(visible=False, range=[0, 10])
    fig.update_yaxes(visible=False, range=[0, 4])
    theme.style(fig, "Fig. 1: a Policy Evaluation Network with network fingerprinting", height=330, wide=True)
    fig.update_layout(showlegend=False, margin=dict(l=10, r=10, t=50, b=10))
    return fig
