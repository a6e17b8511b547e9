"""Figures of the polytope experiment (Section 6.1: Figs. 2, 3 and the Appendix A figure)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pvnviz.figures import theme
from pvnviz.polytope.experiment import AscentPath, ExactView, LearnedView, TrainedPolytopePVN

POLICY_AXIS = dict(range=[-0.03, 1.03], constrain="domain")
START_PICKER = "click to start here"


def _corner_label(x: np.ndarray) -> str:
    return "π=(" + ",".join("a1" if v > 0.5 else "a2" for v in x) + ")"


def _corner_labels(fig: go.Figure, exact: ExactView, row=None, col=None) -> None:
    """Corner names as annotations: drawn above every trace (also WebGL ones), never clipped by the axes."""
    kw = {} if row is None else dict(row=row, col=col)
    for i, (x, v) in enumerate(zip(exact.corner_policies, exact.corner_values)):
        fig.add_annotation(
            x=v[0],
            y=v[1],
            text=_corner_label(x),
            showarrow=False,
            yshift=14,
            font=dict(size=11, color=theme.CORNER),
            bgcolor=theme.LABEL_BG,
            name=f"corner{i}",  # found by name in components/polytope.js
            **kw,
        )


def _padded_range(values: np.ndarray, pad: float = 0.1) -> list[float]:
    lo, hi = float(np.min(values)), float(np.max(values))
    margin = pad * max(hi - lo, 1e-6)
    return [lo - margin, hi + margin]


def polytope_outline(fig: go.Figure, exact: ExactView, row=None, col=None, cloud: bool = True) -> None:
    """Cloud (optional), the image of the square's sides, corners and optimum; WebGL markers when the cloud is
    drawn, so the markers added after it stay on top of its 5,000 points."""
    kw = {} if row is None else dict(row=row, col=col)
    marker_type = go.Scattergl if cloud else go.Scatter
    if cloud:
        fig.add_trace(_cloud_trace(exact), **kw)
    for i, edge in enumerate(exact.edges):
        fig.add_trace(
            go.Scatter(
                x=edge[:, 0],
                y=edge[:, 1],
                mode="lines",
                line=dict(color="#999", width=1),
                name="image of the square's sides",
                legendgroup="edges",
                meta=f"edge{i}",
                showlegend=(i == 0) and cloud,
                hoverinfo="skip",
            ),
            **kw,
        )
    fig.add_trace(_corners_trace(exact, marker_type, cloud), **kw)
    _corner_labels(fig, exact, row, col)
    fig.add_trace(_optimum_trace(exact, marker_type, cloud), **kw)
    xr = _padded_range(np.concatenate([exact.cloud_values[:, 0], exact.corner_values[:, 0]]))
    yr = _padded_range(np.concatenate([exact.cloud_values[:, 1], exact.corner_values[:, 1]]), pad=0.14)
    fig.update_xaxes(range=xr, **kw)
    fig.update_yaxes(range=yr, **kw)


def _cloud_trace(exact: ExactView) -> go.Scattergl:
    """The sampled policies at their values, coloured by J."""
    return go.Scattergl(
        x=exact.cloud_values[:, 0].astype(np.float32),  # float32: half the bytes sent, far below a pixel
        y=exact.cloud_values[:, 1].astype(np.float32),
        mode="markers",
        marker=dict(
            size=4,
            color=exact.cloud_J.astype(np.float32),
            colorscale="Viridis",
            opacity=0.5,
            colorbar=dict(title="J", len=0.8),
        ),
        name="policies (coloured by J)",
        meta="cloud",
        hovertemplate="V(s1)=%{x:.3f}<br>V(s2)=%{y:.3f}<br>J=%{marker.color:.3f}<extra></extra>",
    )


def _corners_trace(exact: ExactView, marker_type: type, showlegend: bool) -> go.Scatter | go.Scattergl:
    """The deterministic policies (the polytope's corners) as squares, named and with their J on hover."""
    return marker_type(
        x=exact.corner_values[:, 0],
        y=exact.corner_values[:, 1],
        mode="markers",
        marker=dict(size=10, color=theme.CORNER, symbol="square", line=theme.OUTLINE),
        text=[_corner_label(x) for x in exact.corner_policies],
        name="deterministic policies (corners)",
        meta="corners",
        showlegend=showlegend,
        hovertemplate="%{text}<br>J=%{customdata:.3f}<extra></extra>",
        customdata=exact.corner_J,
    )


def _optimum_trace(exact: ExactView, marker_type: type, showlegend: bool) -> go.Scatter | go.Scattergl:
    """A star on the best corner's values."""
    opt_v = exact.corner_values[np.argmax(exact.corner_J)]
    return marker_type(
        x=[opt_v[0]],
        y=[opt_v[1]],
        mode="markers",
        marker=dict(size=18, color=theme.OPTIMUM, symbol="star", line=dict(width=1, color=theme.CORNER)),
        name=f"optimum (J={exact.optimal_J:.3f})",
        meta="optimum",
        showlegend=showlegend,
    )


def polytope_figure(exact: ExactView, trained: TrainedPolytopePVN | None = None) -> go.Figure:
    """The value polytope coloured by J, corners, optimum, train/test policies (Fig. 2a-b)."""
    fig = go.Figure()
    polytope_outline(fig, exact)
    if trained is not None:
        for name, values, color in (
            ("train policies", trained.train_values, theme.TRAIN),
            ("test policies", trained.test_values, theme.TEST),
        ):
            fig.add_trace(  # WebGL like the cloud, added after it: drawn on top of it
                go.Scattergl(
                    x=values[:, 0],
                    y=values[:, 1],
                    mode="markers",
                    name=name,
                    meta=name.split()[0],  # "train" or "test"
                    marker=dict(size=10, color=color, line=dict(width=1.5, color="white")),
                )
            )
    fig.update_xaxes(title_text="V(s1)")
    fig.update_yaxes(title_text="V(s2)")
    return theme.style(fig, "Value polytope: every policy as its values (V(s1), V(s2))", height=480)


def quiver_segments(grid: np.ndarray, field: np.ndarray, scale: float) -> tuple[list, list]:
    """Line segments (with None breaks) of arrows at grid points; heads at ±25 degrees."""
    gx, gy = np.meshgrid(grid, grid, indexing="ij")
    x0, y0 = gx.ravel(), gy.ravel()
    u, v = field[..., 0].ravel() * scale, field[..., 1].ravel() * scale
    x1, y1 = x0 + u, y0 + v
    length = np.hypot(u, v)
    angle = np.arctan2(v, u)
    head = 0.3 * length
    xs, ys = [], []
    for sign in (1, -1):
        hx = x1 - head * np.cos(angle + sign * np.radians(25))
        hy = y1 - head * np.sin(angle + sign * np.radians(25))
        xs.append(np.stack([x1, hx, np.full_like(x1, np.nan)], 1))
        ys.append(np.stack([y1, hy, np.full_like(y1, np.nan)], 1))
    shaft_x = np.stack([x0, x1, np.full_like(x0, np.nan)], 1)
    shaft_y = np.stack([y0, y1, np.full_like(y0, np.nan)], 1)
    return (  # arrays, not lists: sent as compact typed arrays (float32: half the bytes, far below a pixel)
        np.concatenate([shaft_x, *xs]).ravel().astype(np.float32),
        np.concatenate([shaft_y, *ys]).ravel().astype(np.float32),
    )


def arrow_scale(grid: np.ndarray, *fields: np.ndarray) -> float:
    """One scale for all fields: the longest arrow spans 90% of a grid cell."""
    spacing = grid[1] - grid[0] if len(grid) > 1 else 1.0
    longest = max(float(np.max(np.linalg.norm(f, axis=-1))) for f in fields)
    return 0.9 * spacing / max(longest, 1e-12)


def _path_trace(path: AscentPath, name: str, color: str, upto: int | None = None) -> go.Scatter:
    p = path.policies if upto is None else path.policies[: upto + 1]
    return go.Scatter(
        x=p[:, 0],
        y=p[:, 1],
        mode="lines+markers",
        name=name,
        line=dict(color=color, width=2),
        marker=dict(size=5, color=color),
        meta=f"path:{name}",
    )


def fields_figure(
    exact: ExactView, learned: LearnedView | None = None, picker: bool = True, paths: bool = True
) -> go.Figure:
    """Exact and learned gradient fields side by side, same arrow scale, with ascent paths (Fig. 3a-b).

    ``paths=False`` leaves out the ascent paths and the start mark: the figure then depends only on the MDP
    and the PVN, and stays the same while the ascent changes (the page draws the paths in ``ascent_frame``).
    """
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.08,
        subplot_titles=("Exact gradient dJ/dπ", "Learned gradient dĴ/dπ (through the PVN)"),
    )
    fields = [exact.field] + ([learned.field] if learned is not None else [])
    scale = arrow_scale(exact.grid, *fields)
    for col, (field, color, path, name) in enumerate(
        [(exact.field, theme.EXACT, exact.ascent, "exact ascent")]
        + ([(learned.field, theme.LEARNED, learned.ascent, "learned ascent")] if learned else []),
        start=1,
    ):
        fig.add_trace(_field_trace(exact.grid, field, scale, color, "exact" if col == 1 else "learned"), row=1, col=col)
        if paths:
            fig.add_trace(_path_trace(path, name, color), row=1, col=col)
    if picker:
        fig.add_trace(_picker_trace(), row=1, col=1)
    if learned is None:
        fig.add_annotation(text="Train the PVN to see its gradient field", x=0.5, y=0.5, showarrow=False, row=1, col=2)
    _square_panels(fig, exact.ascent.policies[0], paths)
    return theme.style(fig, "Policy-gradient fields on the policy square", height=480)


def _field_trace(grid: np.ndarray, field: np.ndarray, scale: float, color: str, kind: str) -> go.Scatter:
    """The ``kind`` ("exact" or "learned") gradient field as arrows on the grid."""
    qx, qy = quiver_segments(grid, field, scale)
    return go.Scatter(
        x=qx,
        y=qy,
        mode="lines",
        line=dict(color=color, width=1.2),
        name=f"{kind} gradient field",
        meta=f"field:{kind}",
        opacity=0.55,
        hoverinfo="skip",
    )


def _picker_trace() -> go.Scatter:
    """Nearly invisible points over the policy square, for the page to read a click as a start."""
    t = np.linspace(0, 1, 41)
    px, py = np.meshgrid(t, t, indexing="ij")
    return go.Scatter(
        x=px.ravel(),
        y=py.ravel(),
        mode="markers",
        name=START_PICKER,
        meta="picker",
        marker=dict(size=9, color="rgba(0,0,0,0.02)"),
        showlegend=False,
        hovertemplate="start here: [%{x:.3f}, %{y:.3f}]<extra></extra>",
    )


def _square_panels(fig: go.Figure, start: np.ndarray, paths: bool) -> None:
    """Both panels' start mark (with the paths) and policy-square axes, square and equally scaled."""
    for col in (1, 2):
        if paths:
            fig.add_trace(
                go.Scatter(
                    x=[start[0]],
                    y=[start[1]],
                    mode="markers",
                    showlegend=col == 1,
                    marker=dict(size=12, color=theme.START, symbol="x", line=theme.OUTLINE),
                    name="start",
                    meta="start",
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(title_text="P(a1 | s1)", row=1, col=col, **POLICY_AXIS)
        fig.update_yaxes(
            title_text="P(a1 | s2)", row=1, col=col, range=[-0.03, 1.03], scaleanchor=f"x{'' if col == 1 else 2}"
        )


def ascent_returns_figure(
    exact: ExactView, learned: LearnedView | None = None, highlight: int | None = None
) -> go.Figure:
    """Exact J along each ascent; the learned path also with the PVN's own estimate; step ``highlight`` ringed."""
    fig = go.Figure()
    steps = np.arange(len(exact.ascent.exact_J))
    fig.add_trace(
        go.Scatter(
            x=steps, y=exact.ascent.exact_J, name="exact ascent: J", line=dict(color=theme.EXACT), meta="J:exact"
        )
    )
    if learned is not None:
        fig.add_trace(
            go.Scatter(
                x=steps,
                y=learned.ascent.exact_J,
                name="learned ascent: exact J",
                line=dict(color=theme.LEARNED),
                meta="J:learned",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=steps,
                y=learned.ascent.predicted_J,
                name="learned ascent: PVN's Ĵ",
                meta="Jhat:learned",
                line=dict(color=theme.LEARNED, dash="dot"),
            )
        )
    fig.add_hline(
        y=exact.optimal_J,
        line=dict(color=theme.OPTIMUM, dash="dash", width=2),
        annotation_text="optimal J",
        annotation_position="bottom left",
    )
    fig.layout.shapes[-1].name = fig.layout.annotations[-1].name = "optimal"  # found by name in the browser
    if highlight is not None:
        _highlight_step(fig, exact, learned, int(np.clip(highlight, 0, len(steps) - 1)))
    fig.update_xaxes(title_text="ascent step")
    fig.update_yaxes(title_text="J = d0 · V")
    return theme.style(fig, "Objective along the ascent", height=380)


def _highlight_step(fig: go.Figure, exact: ExactView, learned: LearnedView | None, t: int) -> None:
    """A dotted vertical line at step ``t`` across every curve, and rings on the curves' values there."""
    curves = [exact.ascent.exact_J, [exact.optimal_J]]
    if learned is not None:
        curves += [learned.ascent.exact_J, learned.ascent.predicted_J]
    low, high = float(min(np.min(c) for c in curves)), float(max(np.max(c) for c in curves))
    fig.add_trace(  # a trace, not a layout shape: the browser player moves it without a full replot
        go.Scatter(
            x=[t, t],
            y=[low, high],
            mode="lines",
            line=dict(color=theme.HIGHLIGHT, width=1, dash="dot"),
            showlegend=False,
            hoverinfo="skip",
            meta="highlight-line",
        )
    )
    ys = [(exact.ascent.exact_J[t], theme.EXACT)]
    if learned is not None:
        ys += [(learned.ascent.exact_J[t], theme.LEARNED), (learned.ascent.predicted_J[t], theme.LEARNED)]
    fig.add_trace(
        go.Scatter(
            x=[t] * len(ys),
            y=[y for y, _ in ys],
            mode="markers",
            name=f"step {t}",
            showlegend=False,
            marker=dict(size=13, color=[c for _, c in ys], line=dict(width=3, color=theme.HIGHLIGHT)),
            cliponaxis=False,
            hovertemplate="step %{x}: %{y:.3f}<extra></extra>",
            meta="highlight",
        )
    )
