"""An animation as data the browser can play: the first frame's figures whole, then what each frame changes.

Every animation of the app (the polytope ascents of Section 6.1 / Fig. 3, the probing states of Section 4, the
CartPole and Swimmer replays of Section 6.2-6.3) is a sequence of frames, each one or more plotly figures with
the same traces. ``animation`` sends the first frame's figures in full and, for each later frame, only the trace
properties and layout entries that differ from the first (``Plotly.update(div, traces, layout, indices)`` in the
browser applies them), so a player in the page steps through the frames with no server round trip.

Frames are plotly JSON dicts (``fig.to_plotly_json()``): ``{"data": [trace, ...], "layout": {...}}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import plotly.io


def plain_json(figure: Any) -> dict:
    """A figure (go.Figure or plotly JSON dict) as plain JSON: lists and numbers, no numpy arrays."""
    if hasattr(figure, "to_plotly_json"):
        figure = figure.to_plotly_json()
    return json.loads(plotly.io.json.to_json_plotly(figure))


def _trace_changes(base: list[dict], frame: list[dict]) -> dict[str, dict]:
    """{trace index: {property: new value}} for the properties of each trace that differ from ``base``."""
    if len(base) != len(frame):
        raise ValueError(f"every frame must have the same traces: {len(frame)} traces where the first has {len(base)}")
    changes: dict[str, dict] = {}
    for i, (old, new) in enumerate(zip(base, frame)):
        changed = {k: v for k, v in new.items() if old.get(k) != v}
        changed.update({k: None for k in old if k not in new})
        if changed:
            changes[str(i)] = changed
    return changes


def _layout_changes(base: dict, frame: dict) -> dict:
    """The layout's top-level entries (title, shapes, annotations, axis ranges...) that differ from ``base``."""
    changed = {k: v for k, v in frame.items() if base.get(k) != v}
    changed.update({k: None for k in base if k not in frame})
    return changed


def animation(
    build: Callable[[int], dict[str, Any]],
    num_frames: int,
    *,
    labels: Sequence[str] | None = None,
) -> dict:
    """Frames ``build(0) .. build(num_frames - 1)``, each ``{figure name: figure}``, as
    ``{"figures": {name: first frame's figure}, "frames": [{name: {"traces": ..., "layout": ...}}, ...],
    "labels": [...]}``; frame 0's changes are empty."""
    if num_frames < 1:
        raise ValueError("an animation needs at least one frame")
    first = {name: plain_json(fig) for name, fig in build(0).items()}
    frames: list[dict] = [{}]
    for t in range(1, num_frames):
        figures = build(t)
        if set(figures) != set(first):
            raise ValueError(f"frame {t} draws {sorted(figures)}, the first frame {sorted(first)}")
        frame = {}
        for name, fig in figures.items():
            fig = plain_json(fig)
            traces = _trace_changes(first[name].get("data", []), fig.get("data", []))
            layout = _layout_changes(first[name].get("layout", {}), fig.get("layout", {}))
            if traces or layout:
                frame[name] = {"traces": traces, "layout": layout}
        frames.append(frame)
    names = [str(x) for x in labels] if labels is not None else [str(t) for t in range(num_frames)]
    if len(names) != num_frames:
        raise ValueError(f"{len(names)} labels for {num_frames} frames")
    return {"figures": first, "frames": frames, "labels": names}


def changes_animation(first: dict[str, Any], changes: Sequence[dict[str, dict]], labels: Sequence[str]) -> dict:
    """The same data as ``animation`` when the caller knows what each frame changes: ``first`` is frame 0's
    figures, ``changes[t - 1]`` frame t's ``{figure name: {"traces": {index: {property: value}}, "layout": {...}}}``.
    No figure is built per frame: for hundreds of frames that differ in a few arrays (e.g. one histogram each)."""
    if len(labels) != len(changes) + 1:
        raise ValueError(f"{len(labels)} labels for {len(changes) + 1} frames")
    plain_first = {name: plain_json(fig) for name, fig in first.items()}
    frames = [{}] + [
        {name: {"traces": {str(i): p for i, p in c.get("traces", {}).items()}, "layout": c.get("layout", {})}
         for name, c in change.items()}
        for change in json.loads(plotly.io.json.to_json_plotly(list(changes)))
    ]  # fmt: skip
    return {"figures": plain_first, "frames": frames, "labels": [str(x) for x in labels]}
