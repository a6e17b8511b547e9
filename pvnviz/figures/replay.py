"""What a policy does before and after the ascent (Section 5): CartPole's cart and pole, Swimmer's bodies.

Pure figure builders over the episodes of ``pvnviz.replay`` (one panel per policy, the same start state);
``frame=t`` draws time step t for the app's player, ``frame=None`` a plotly animation for export.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pvnviz.cartpole import X_THRESHOLD
from pvnviz.figures import theme


def replay_steps(num_steps: int, frame_every: int) -> list[int]:
    """The time steps a replay shows: every ``frame_every``-th, always with the last (the player's frames)."""
    return theme.frame_steps(num_steps, frame_every)


def cartpole_steps(states: dict[str, np.ndarray], frame_every: int = 2) -> list[int]:
    """Time steps of ``cartpole_replay``'s frames."""
    return replay_steps(max(int(np.isfinite(v[:, 0]).sum()) for v in states.values()), frame_every)


def cartpole_replay(
    states: dict[str, np.ndarray],
    pole_length: float = 1.0,
    frame_every: int = 2,
    frame: int | None = None,
    track: float = X_THRESHOLD,
) -> go.Figure:
    """Cart and pole, one panel per policy; states[label] is (T+1, 4), NaN after termination.

    ``frame=None``: a plotly animation (play controls, e.g. for export); ``frame=t``: time step t, static, for
    the app's player.
    """
    labels = list(states)
    fig = make_subplots(rows=1, cols=len(labels), subplot_titles=labels, horizontal_spacing=0.05)
    lengths = {k: int(np.isfinite(v[:, 0]).sum()) for k, v in states.items()}
    num_frames = max(lengths.values())

    def shapes_at(t: int) -> list[go.Scatter]:
        traces = []
        for label in labels:
            s = states[label][min(t, lengths[label] - 1)]
            x, theta = float(s[0]), float(s[2])
            cart_x = [x - 0.25, x + 0.25, x + 0.25, x - 0.25, x - 0.25]
            cart_y = [0, 0, 0.15, 0.15, 0]
            tip = (x + pole_length * np.sin(theta), 0.15 + pole_length * np.cos(theta))
            traces.append(
                go.Scatter(
                    x=cart_x,
                    y=cart_y,
                    fill="toself",
                    mode="lines",
                    line=dict(color="#333"),
                    fillcolor="#888",
                    showlegend=False,
                    hoverinfo="skip",
                )
            )
            traces.append(
                go.Scatter(
                    x=[x, tip[0]],
                    y=[0.15, tip[1]],
                    mode="lines+markers",
                    showlegend=False,
                    line=dict(color="#c8781e", width=6),
                    marker=dict(size=[4, 8], color="#c8781e"),
                    hovertemplate=f"step {min(t, lengths[label] - 1)}<extra>{label}</extra>",
                )
            )
        return traces

    for col in range(1, len(labels) + 1):
        fig.add_trace(
            go.Scatter(
                x=[-track, track],  # the cart's termination bound (pvnviz.cartpole)
                y=[0, 0],
                mode="lines",
                line=dict(color=theme.NEUTRAL, width=1),
                showlegend=False,
                hoverinfo="skip",
            ),
            row=1,
            col=col,
        )
    base = len(fig.data)
    for k, tr in enumerate(shapes_at(0 if frame is None else frame)):
        fig.add_trace(tr, row=1, col=k // 2 + 1)
    dynamic = list(range(base, len(fig.data)))
    if frame is None:
        frame_steps = theme.frame_steps(num_frames, frame_every)
        names = [str(t) for t in frame_steps]
        fig.frames = [go.Frame(data=shapes_at(t), traces=dynamic, name=n) for t, n in zip(frame_steps, names)]
        theme.play_controls(fig, names, "time step ", duration=40, below_axis_title=True)
        fig.layout.sliders[0].active = 0
    for col in range(1, len(labels) + 1):
        fig.update_xaxes(title_text="cart position", range=[-2.6, 2.6], row=1, col=col)
        fig.update_yaxes(title_text="height", range=[-0.2, 1.3], row=1, col=col)
    title = "Replay: the same start state, before and after ascent"
    if frame is not None:
        title += f" (time step {frame})"
    fig = theme.style(fig, title, height=380 if frame is None else 330)
    fig.update_layout(margin=dict(b=190 if frame is None else 50), showlegend=False)
    return fig


def swimmer_steps(segments: dict[str, np.ndarray], frame_every: int = 10) -> list[int]:
    """Time steps of ``swimmer_replay``'s frames."""
    return replay_steps(min(len(s) for s in segments.values()), frame_every)


def swimmer_replay(segments: dict[str, np.ndarray], frame_every: int = 10, frame: int | None = None) -> go.Figure:
    """Swimmer bodies from above, one panel per policy; segments[label] is (T+1, 3, 2, 3).

    ``frame=None``: a plotly animation (play controls, e.g. for export); ``frame=t``: time step t, static, for
    the app's player.
    """
    labels = list(segments)
    fig = make_subplots(rows=len(labels), cols=1, subplot_titles=labels, vertical_spacing=0.22)
    num_frames = min(len(s) for s in segments.values())

    def bodies_at(t: int) -> list[go.Scatter]:
        traces = []
        for label in labels:
            ends = segments[label][t]  # (3 links, front/back, xyz)
            xs = np.concatenate([np.append(ends[i, :, 0], np.nan) for i in range(3)])
            ys = np.concatenate([np.append(ends[i, :, 1], np.nan) for i in range(3)])
            traces.append(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines+markers",
                    line=dict(color="#c8781e", width=7),
                    marker=dict(size=6, color="#333"),
                    showlegend=False,
                    hovertemplate=f"step {t}<extra>{label}</extra>",
                )
            )
        return traces

    for row, label in enumerate(labels, start=1):
        torso = segments[label][:, 0].mean(axis=1)  # (T+1, 3) centre of the front capsule
        fig.add_trace(
            go.Scatter(
                x=torso[:, 0],
                y=torso[:, 1],
                mode="lines",
                line=dict(color=theme.EXACT, width=1),
                name="path of the front link",
                showlegend=False,
                hoverinfo="skip",
            ),
            row=row,
            col=1,
        )
    base = len(fig.data)
    for row, trace in enumerate(bodies_at(0 if frame is None else min(frame, num_frames - 1)), start=1):
        fig.add_trace(trace, row=row, col=1)
    dynamic = list(range(base, len(fig.data)))
    if frame is None:
        frame_steps = theme.frame_steps(num_frames, frame_every)
        names = [str(t) for t in frame_steps]
        fig.frames = [go.Frame(data=bodies_at(t), traces=dynamic, name=n) for t, n in zip(frame_steps, names)]
        theme.play_controls(fig, names, "time step ", duration=50, below_axis_title=True)
        fig.layout.sliders[0].active = 0
    all_pts = np.concatenate([s[..., :2].reshape(-1, 2) for s in segments.values()])
    lo, hi = all_pts.min(0) - 0.3, all_pts.max(0) + 0.3
    for row in range(1, len(labels) + 1):
        fig.update_xaxes(title_text="x (m), forward →", range=[lo[0], hi[0]], row=row, col=1)
        fig.update_yaxes(
            title_text="y (m)", range=[lo[1], hi[1]], row=row, col=1, scaleanchor=f"x{'' if row == 1 else row}"
        )
    title = "Replay: the swimmer from above, before and after ascent"
    if frame is not None:
        title += f" (time step {frame})"
    fig = theme.style(fig, title, height=260 * len(labels) + (180 if frame is None else 60))
    fig.update_layout(margin=dict(b=200 if frame is None else 50))
    return fig
