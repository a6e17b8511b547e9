"""What a policy does before and after the ascent (Section 5): any environment's replay, one panel per policy.

A pure figure builder over a ``pvnviz.envs.scene.Replay`` (made by the environment's ``BatchedEnv.replay``): it draws
each part by its style role and knows no environment. ``frame=t`` draws time step t for the app's player,
``frame=None`` a plotly animation for export.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pvnviz.envs.scene import STATIC_ROLES, Part, Replay
from pvnviz.figures import theme

ORANGE, DARK, GREY = "#c8781e", "#333", "#888"


def replay_steps(replay: Replay) -> list[int]:
    """The time steps a replay shows: every ``frame_every``-th, always with the last (the player's frames)."""
    return theme.frame_steps(replay.num_frames, replay.frame_every)


def _trace(part: Part, t: int, step: int, label: str) -> go.Scatter:
    """One part at time step t as a scatter trace, styled by its role (``pvnviz.envs.scene.ROLES``)."""
    points = part.at(t)
    style: dict = dict(x=points[:, 0], y=points[:, 1], showlegend=False, hoverinfo="skip")
    if part.role == "track":
        style.update(mode="lines", line=dict(color=theme.NEUTRAL, width=1))
    elif part.role == "trail":
        style.update(mode="lines", line=dict(color=theme.EXACT, width=1), name=part.name)
    elif part.role == "body":
        style.update(mode="lines", fill="toself", line=dict(color=DARK), fillcolor=GREY)
    else:
        pole = part.role == "pole"
        style.update(
            mode="lines+markers",
            line=dict(color=ORANGE, width=6 if pole else 7),
            marker=dict(size=[4] * (len(points) - 1) + [8], color=ORANGE) if pole else dict(size=6, color=DARK),
            hovertemplate=f"step {step}<extra>{label}</extra>",
        )
        del style["hoverinfo"]
    return go.Scatter(**style)


def replay_figure(replay: Replay, labels: Sequence[str], frame: int | None = None) -> go.Figure:
    """The replay's panels (titled ``labels``, one per policy) side by side or stacked, as its layout says.

    ``frame=None``: a plotly animation (play controls, e.g. for export); ``frame=t``: time step t, static, for
    the app's player. A finished episode holds its last frame.
    """
    labels = list(labels)
    n = len(replay.panels)
    columns = replay.layout == "columns"
    if columns:
        fig = make_subplots(rows=1, cols=n, subplot_titles=labels, horizontal_spacing=0.05)
    else:
        fig = make_subplots(rows=n, cols=1, subplot_titles=labels, vertical_spacing=0.22)
    cells = [dict(row=1, col=k + 1) if columns else dict(row=k + 1, col=1) for k in range(n)]

    def moving_at(t: int) -> list[tuple[int, go.Scatter]]:
        return [
            (k, _trace(part, t, min(t, panel.frames - 1), label))
            for k, (panel, label) in enumerate(zip(replay.panels, labels))
            for part in panel.parts
            if part.role not in STATIC_ROLES
        ]

    for k, panel in enumerate(replay.panels):
        for part in panel.parts:
            if part.role in STATIC_ROLES:
                fig.add_trace(_trace(part, 0, 0, labels[k]), **cells[k])
    base = len(fig.data)
    for k, trace in moving_at(0 if frame is None else frame):
        fig.add_trace(trace, **cells[k])
    dynamic = list(range(base, len(fig.data)))
    if frame is None:
        frame_steps = replay_steps(replay)
        names = [str(t) for t in frame_steps]
        fig.frames = [
            go.Frame(data=[tr for _, tr in moving_at(t)], traces=dynamic, name=name)
            for t, name in zip(frame_steps, names)
        ]
        theme.play_controls(fig, names, "time step ", duration=replay.frame_ms, below_axis_title=True)
        fig.layout.sliders[0].active = 0
    if replay.fit_aspect:  # one metre as long across as up, all panels on the same ranges
        points = replay.all_points()
        lo, hi = points.min(0) - 0.3, points.max(0) + 0.3
        x_range, y_range = (lo[0], hi[0]), (lo[1], hi[1])
    else:
        x_range, y_range = replay.x_range, replay.y_range
    for k, cell in enumerate(cells):
        anchor = dict(scaleanchor=f"x{'' if k == 0 else k + 1}") if replay.fit_aspect else {}
        fig.update_xaxes(title_text=replay.x_title, range=list(x_range), **cell)
        fig.update_yaxes(title_text=replay.y_title, range=list(y_range), **cell, **anchor)
    title = replay.title if frame is None else f"{replay.title} (time step {frame})"
    if columns:
        fig = theme.style(fig, title, height=380 if frame is None else 330)
        fig.update_layout(margin=dict(b=190 if frame is None else 50), showlegend=False)
    else:
        fig = theme.style(fig, title, height=260 * n + (180 if frame is None else 60))
        fig.update_layout(margin=dict(b=200 if frame is None else 50))
    return fig


def _structure(replay: Replay) -> tuple:
    """What ``replay_figure`` draws the same for two replays: all but the points and the panels' titles."""
    roles = tuple(tuple(part.role for part in panel.parts) for panel in replay.panels)
    return replay.layout, replay.fit_aspect, replay.title, replay.x_range, replay.y_range, replay.x_title, roles


def _parts(replay: Replay, labels: Sequence[str], static: bool) -> list[tuple]:
    """(panel, part, label) in ``replay_figure``'s trace order: every panel's static parts, then the moving ones."""
    return [
        (panel, part, label)
        for panel, label in zip(replay.panels, labels)
        for part in panel.parts
        if (part.role in STATIC_ROLES) == static
    ]


def _at(panel, part, label: str, t: int) -> dict:
    """A moving part's trace properties at time step t (as ``_trace``: all but the body name their step)."""
    points = part.at(t)
    props = {"x": points[:, 0], "y": points[:, 1]}
    if part.role != "body":
        props["hovertemplate"] = f"step {min(t, panel.frames - 1)}<extra>{label}</extra>"
    return props


def _refill(template: dict, replay: Replay, labels: Sequence[str]) -> dict:
    """``replay_figure(replay, labels, frame=0)`` from the plain figure of another replay of the same structure:
    its points, its panels' titles, and (for a fitted aspect) its ranges."""
    from pvnviz.figures.frames import plain_json

    fig = {"data": [dict(trace) for trace in template["data"]], "layout": dict(template["layout"])}
    still = _parts(replay, labels, static=True)
    props = [{"x": part.at(0)[:, 0], "y": part.at(0)[:, 1]} for _, part, _ in still]
    props += [_at(*parts, 0) for parts in _parts(replay, labels, static=False)]
    for trace, new in zip(fig["data"], plain_json({"p": props})["p"], strict=True):
        trace.update(new)
    fig["layout"]["annotations"] = [dict(a, text=text) for a, text in zip(template["layout"]["annotations"], labels)]
    if replay.fit_aspect:
        points = replay.all_points()
        lo, hi = points.min(0) - 0.3, points.max(0) + 0.3
        for k in range(len(replay.panels)):
            suffix = "" if k == 0 else str(k + 1)
            for axis, r in (("xaxis", [lo[0], hi[0]]), ("yaxis", [lo[1], hi[1]])):
                fig["layout"][axis + suffix] = {**fig["layout"][axis + suffix], "range": [float(v) for v in r]}
    return fig


def replay_variants(
    replays: dict, titles: dict, name: str = "replay", projector: bool = False
) -> dict[object, dict]:
    """``replay_frames`` of many replays (e.g. every start's, ``{key: Replay}`` titled ``titles[key]``): the
    figure is built once per structure and refilled for the others (``make_subplots`` is most of the cost)."""
    built: dict[tuple, dict] = {}
    out = {}
    for key, replay in replays.items():
        shape = _structure(replay)
        template = built.get(shape)
        out[key] = replay_frames(replay, titles[key], name, projector, template)
        built.setdefault(shape, out[key]["figures"][name])
    return out


def replay_frames(
    replay: Replay, labels: Sequence[str], name: str = "replay", projector: bool = False, template: dict | None = None
) -> dict:
    """``replay_figure`` at every ``replay_steps`` time step as one animation (``figures.frames``), made at once:
    frame 0's figure whole, then each frame's moving parts and title (no figure built per frame; the figure
    ``name`` is the player's name for it). Equals ``frames.animation`` over ``replay_figure(frame=t)``.
    ``template``: frame 0's plain figure of a replay of the same structure, refilled instead of built."""
    from pvnviz.figures.frames import changes_animation

    labels = list(labels)
    steps = replay_steps(replay)
    if template is not None and steps[0] == 0:
        first = _refill(template, replay, labels)
    else:
        figure = replay_figure(replay, labels, frame=steps[0])
        if projector:
            theme.projector(figure)
        first = figure.to_plotly_json()
    title = first["layout"]["title"]
    moving = _parts(replay, labels, static=False)
    static = len(first["data"]) - len(moving)
    changes = []
    for t in steps[1:]:
        traces = {static + n: _at(panel, part, label, t) for n, (panel, part, label) in enumerate(moving)}
        layout = {"title": {**title, "text": f"{replay.title} (time step {t})"}}
        changes.append({name: {"traces": traces, "layout": layout}})
    return changes_animation({name: first}, changes, [str(s) for s in steps])
