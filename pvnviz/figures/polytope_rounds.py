"""The polytope's active rounds as an animation (Section 5, Algorithm 3's checks; Section 6.1's MDP).

``rounds_animation`` turns ``pvnviz.polytope.rounds.PolytopeRounds`` into frames for the browser player
(``pvnviz.figures.frames.animation``): ``FRAMES_PER_ROUND`` frames per round, the round's ascent growing over
them. One figure, two panels: the policy square, with the round's learned gradient field (one common arrow
scale over every round, so a field that grows or turns shows it), and the exact value polytope (its sides,
corners and optimum) with the ascent at its exact values and the checks at their measured values. In every frame:

- the zero-shot ascent of the same seed (round 0's path, whole, dashed grey) stays as it is;
- this round's ascent, solid, up to the frame's step, and the checks made so far (``checks_at``: a round's
  perturbations from its first frame, an iterate's check from the frame that reaches its step), the best
  measured so far (Algorithm 3's choice) ringed: one trace a panel, so that a frame moves four traces and one
  shape;
- the title counts the checks against the budget ("checks: 7 of 20"), as the player's caption does.

The animation is ``painted``: while it plays, the player paints the moving traces and the field on a canvas over
plotly's plot (``components/player_paint.js``) instead of asking plotly to redraw, so that a frame costs a few
milliseconds, not plotly's whole-figure pass; paused, plotly draws the exact frame.

Traces carry roles (``meta``, ``pvnviz.figures.roles``): ``current:{col}``, ``checks:{col}`` and
``zero-shot:{col}`` (col 1: the policy square, 2: the polytope); the field is the layout's one shape, an SVG path.
Pure: no Streamlit, no computation beyond drawing.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pvnviz.figures import theme
from pvnviz.figures.frames import changes_animation, plain_json
from pvnviz.figures.polytope import POLICY_AXIS, arrow_scale, polytope_outline, quiver_segments
from pvnviz.figures.roles import roles
from pvnviz.polytope.experiment import ExactView
from pvnviz.polytope.rounds import Checks, PolytopeRounds

FRAMES_PER_ROUND = 10  # a round's ascent grows over this many frames: 1/10 of its steps each
_CHECK = dict(size=10, color=theme.EXACT, line=dict(color="white", width=1.5))  # a check's marker
_BEST = dict(size=15, color=theme.EXACT, line=dict(color=theme.HIGHLIGHT, width=3))  # the best check's, ringed
FIELD_EVERY = 2  # arrows at every other grid point: 10 x 10 on the page's grid, few enough to redraw each frame
DIGITS = 4  # decimals of the coordinates sent (a ten-thousandth of the unit square: far below a pixel)
HEIGHT = 480


def frame_at(rounds: PolytopeRounds, frame: int) -> tuple[int, int]:
    """(round, ascent step) that ``frame`` shows: frame ``r * FRAMES_PER_ROUND + i`` shows round r up to step
    ``round((i + 1) * T / FRAMES_PER_ROUND)`` of its T steps (the last frame of a round: its whole ascent)."""
    r, i = divmod(int(frame), FRAMES_PER_ROUND)
    steps = len(rounds.rounds[r].ascent.policies) - 1
    return r, int(round((i + 1) * steps / FRAMES_PER_ROUND))


def num_frames(rounds: PolytopeRounds) -> int:
    return len(rounds.rounds) * FRAMES_PER_ROUND


def checks_at(rounds: PolytopeRounds, r: int, step: int) -> Checks:
    """The checks made once round ``r`` has ascended to ``step``: every check of rounds before r, round r's
    perturbations (made before its ascent) and its iterates' checks at steps up to ``step``, in the order made."""
    parts = [c for q in rounds.rounds[:r] for c in (q.perturbed, q.checked)]
    current = rounds.rounds[r]
    done = current.checked_steps <= step
    iterates = Checks(*(getattr(current.checked, name)[done] for name in ("policies", "values", "J", "exact_J")))
    return Checks.concat([*parts, current.perturbed, iterates])


def frame_labels(rounds: PolytopeRounds, budget: int) -> list[str]:
    """Each frame's name in the player, after its caption's "round": "3 of 7, step 40 · checks: 7 of 20"."""
    out = []
    for k in range(num_frames(rounds)):
        r, t = frame_at(rounds, k)
        out.append(f"{r + 1} of {len(rounds.rounds)}, step {t} · {_count(rounds, r, t, budget)}")
    return out


def _count(rounds: PolytopeRounds, r: int, step: int, budget: int) -> str:
    return f"checks: {len(checks_at(rounds, r, step).J)} of {budget}"


def _xy(points: np.ndarray) -> dict:
    return dict(x=np.round(points[:, 0], DIGITS).tolist(), y=np.round(points[:, 1], DIGITS).tolist())


def _quiver(rounds: PolytopeRounds, field: np.ndarray, scale: float) -> dict:
    """The field's arrows at every ``FIELD_EVERY``-th grid point on each axis, as one SVG path shape on the
    policy square: the player relays out a shape only when it changes (once a round), where a trace would be
    redrawn in every frame."""
    qx, qy = quiver_segments(rounds.grid[::FIELD_EVERY], field[::FIELD_EVERY, ::FIELD_EVERY], scale)
    path, pen = [], "M"
    for x, y in zip(qx, qy):
        if x is None or y is None or not (np.isfinite(x) and np.isfinite(y)):  # a break between two arrows
            pen = "M"
            continue
        path.append(f"{pen}{float(x):.{DIGITS}f},{float(y):.{DIGITS}f}")
        pen = "L"
    return dict(
        type="path",
        path="".join(path),
        xref="x",
        yref="y",
        line=dict(color=theme.LEARNED, width=1),
        opacity=0.5,
        layer="below",
        name="field",
    )


def _title(rounds: PolytopeRounds, r: int, step: int, budget: int, seed: int | None) -> str:
    checks = checks_at(rounds, r, step)
    best_J = f"best measured J = {float(np.max(checks.J)):.3f}" if len(checks.J) else "no check yet"
    who = "" if seed is None else f", seed {seed}"
    return (
        f"Active rounds{who}: round {r + 1} of {len(rounds.rounds)}, step {step} · "
        f"checks: {len(checks.J)} of {budget} · {best_J} (J* = {rounds.optimal_J:.3f})"
    )


def rounds_frame(
    rounds: PolytopeRounds, exact: ExactView, budget: int, frame: int, seed: int | None = None
) -> go.Figure:
    """Frame ``frame`` (0 .. ``num_frames(rounds) - 1``) of the rounds' animation: the same traces in every frame
    (the player sends frame 0 whole and what each later frame changes). ``exact`` is the exact view of the same
    MDP (the polytope's sides, corners and optimum); ``budget`` the checks the rounds may spend (``max_checks``)."""
    r, step = frame_at(rounds, frame)
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("Policy square: the PVN's gradient field", "Value polytope (exact)"),
    )
    polytope_outline(fig, exact, row=1, col=2, cloud=False)
    data = _frame_data(rounds, r, step, _scale(rounds))
    fig.add_shape(**data["field"])
    fig.add_trace(  # below the checks: a check at the optimum stays visible, ringed
        go.Scatter(
            x=[float(rounds.optimal_policy[0])],
            y=[float(rounds.optimal_policy[1])],
            mode="markers",
            marker=dict(size=18, color=theme.OPTIMUM, symbol="star", line=dict(width=1, color=theme.CORNER)),
            name=f"optimum (J* = {rounds.optimal_J:.3f})",
            meta="optimum:1",
            cliponaxis=False,
        ),
        row=1,
        col=1,
    )
    for col in (1, 2):
        _moving_traces(fig, rounds.rounds[0].ascent, data, col)
    for name, mode, line, marker in (  # the legend of the field (a shape) and of the moving traces
        ("learned gradient field (this round's PVN)", "lines", dict(color=theme.LEARNED, width=1), None),
        ("this round's ascent (through the fine-tuned PVN)", "lines", dict(color=theme.LEARNED, width=3), None),
        ("checked policies (measured J)", "markers", None, _CHECK),
        ("best check so far (Algorithm 3's choice)", "markers", None, _BEST),
    ):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode=mode, line=line, marker=marker, name=name), row=1, col=1)
    fig.update_xaxes(title_text="P(a1 | s1)", row=1, col=1, **POLICY_AXIS)
    fig.update_yaxes(title_text="P(a1 | s2)", row=1, col=1, **POLICY_AXIS)
    fig.update_xaxes(title_text="V(s1)", row=1, col=2)
    fig.update_yaxes(title_text="V(s2)", row=1, col=2)
    fig = theme.style(fig, _title(rounds, r, step, budget, seed), height=HEIGHT, wide=True)
    fig.update_layout(margin=dict(t=80, b=130), legend=dict(y=-0.2, yanchor="top", x=0.0))
    return fig


def _moving_traces(fig: go.Figure, zero: Any, data: dict[str, Any], col: int) -> None:
    """Panel ``col``'s paths and checks (1: the policy square, 2: the value polytope): the zero-shot ascent
    ``zero`` (fixed in every frame), this round's ascent and the checks so far (``data``, from ``_frame_data``)."""
    xy = _xy(zero.policies if col == 1 else zero.values)
    traces = (
        go.Scatter(**xy, mode="lines", line=dict(color=theme.NEUTRAL, width=2, dash="dash"),
                   name="zero-shot ascent (the paper's, same seed)", legendgroup="zero-shot", showlegend=col == 1,
                   meta=f"zero-shot:{col}", hovertemplate="zero-shot ascent, step %{pointNumber}<extra></extra>"),
        go.Scatter(**data[f"current:{col}"], mode="lines", line=dict(color=theme.LEARNED, width=3),
                   showlegend=False, meta=f"current:{col}",
                   hovertemplate="this round's ascent, step %{pointNumber}<extra></extra>"),
        go.Scatter(**data[f"checks:{col}"], mode="markers", showlegend=False, meta=f"checks:{col}",
                   cliponaxis=False, hovertemplate="%{text}<extra></extra>"),
    )  # fmt: skip
    for trace in traces:
        fig.add_trace(trace, row=1, col=col)


def _scale(rounds: PolytopeRounds) -> float:
    """One arrow scale for every round's field (``figures.polytope.arrow_scale``)."""
    return arrow_scale(rounds.grid[::FIELD_EVERY], *(q.field[::FIELD_EVERY, ::FIELD_EVERY] for q in rounds.rounds))


def _checks_trace(measured: np.ndarray, checks: Checks, best: int | None) -> dict:
    """One panel's checks: a marker each, the best ringed, hover text with the measured and the exact J."""
    k = len(measured)
    size, edge, width = [_CHECK["size"]] * k, [_CHECK["line"]["color"]] * k, [_CHECK["line"]["width"]] * k
    text = [f"check {i + 1}: measured J = {checks.J[i]:.3f}, exact J = {checks.exact_J[i]:.3f}" for i in range(k)]
    if best is not None:
        size[best], edge[best], width[best] = _BEST["size"], _BEST["line"]["color"], _BEST["line"]["width"]
        text[best] += " (the best so far)"
    marker = dict(size=size, color=theme.EXACT, line=dict(color=edge, width=width))
    return {**_xy(measured), "marker": marker, "text": text}


def _frame_data(rounds: PolytopeRounds, r: int, step: int, scale: float) -> dict[str, dict]:
    """{role: the trace properties that vary between frames} at round ``r``, ascent step ``step``."""
    checks = checks_at(rounds, r, step)
    best = int(np.argmax(checks.J)) if len(checks.J) else None
    path = rounds.rounds[r].ascent
    data: dict[str, dict] = {"field": _quiver(rounds, rounds.rounds[r].field, scale)}  # a shape, not a trace
    for col, pick, measured in ((1, path.policies, checks.policies), (2, path.values, checks.values)):
        data[f"current:{col}"] = _xy(pick[: step + 1])
        data[f"checks:{col}"] = _checks_trace(measured, checks, best)
    return data


def _changes(first: dict, rounds: PolytopeRounds, budget: int, frame: int, seed: int | None, scale: float) -> dict:
    """What frame ``frame`` changes in ``first`` (frame 0's figure, plain JSON), without building its figure: the
    properties ``_frame_data`` gives that differ from frame 0's, and the title."""
    r, step = frame_at(rounds, frame)
    index = roles(first)
    traces: dict[int, dict] = {}
    data = _frame_data(rounds, r, step, scale)
    field = data.pop("field")
    layout: dict = {"title": dict(first["layout"]["title"], text=_title(rounds, r, step, budget, seed))}
    if first["layout"]["shapes"][0]["path"] != field["path"]:
        layout["shapes"] = [dict(first["layout"]["shapes"][0], path=field["path"])]
    for role, props in data.items():
        base = first["data"][index[role]]
        changed = {k: v for k, v in props.items() if not _same(base.get(k), v)}
        if changed:
            traces[index[role]] = changed
    return {"traces": traces, "layout": layout}


def _same(a: object, b: object) -> bool:
    """Equal as plain JSON (plotly sends arrays of numbers as typed arrays: compared by their values)."""
    return json.dumps(plain_json({"v": a})) == json.dumps(plain_json({"v": b}))


def _bigger_markers(props: dict) -> None:
    """Per-point marker sizes and outline widths times ``theme.PROJECTOR_SCALE``, in place."""
    marker = props.get("marker")
    if isinstance(marker, dict) and isinstance(marker.get("size"), list):
        marker["size"] = [v * theme.PROJECTOR_SCALE for v in marker["size"]]
        line = marker.get("line", {})
        if isinstance(line.get("width"), list):
            line["width"] = [v * theme.PROJECTOR_SCALE for v in line["width"]]


def rounds_animation(
    rounds: PolytopeRounds, exact: ExactView, budget: int, seed: int | None = None, projector: bool = False
) -> dict:
    """The player's animation (``frames.changes_animation``): frame 0's figure whole, then what each later frame
    changes; the same frames as ``rounds_frame(rounds, exact, budget, k, seed)`` for every k (``projector``:
    the lecture-hall look, ``theme.projector``)."""
    fig = rounds_frame(rounds, exact, budget, 0, seed)
    if projector:
        fig = theme.projector(fig)
    first = plain_json(fig)
    scale = _scale(rounds)
    index_of_checks = [i for role, i in roles(first).items() if role.startswith("checks:")]
    changes = [{"rounds": _changes(first, rounds, budget, k, seed, scale)} for k in range(1, num_frames(rounds))]
    if projector:  # the checks' markers (per-point sizes, which theme.projector leaves) and the wrapped title
        for props in [*first["data"], *(c["rounds"]["traces"].get(i, {}) for c in changes for i in index_of_checks)]:
            _bigger_markers(props)
        chars = int(first["layout"].get("meta", {}).get("title_chars", theme.TITLE_CHARS) / theme.PROJECTOR_SCALE)
        for change in changes:
            title = change["rounds"]["layout"]["title"]
            title["text"] = "<br>".join(theme.wrap_title(title["text"], chars))
    animation = changes_animation({"rounds": first}, changes, frame_labels(rounds, budget))
    animation["painted"] = True  # while playing, the player paints what the frames move (components/player_paint.js)
    return animation
