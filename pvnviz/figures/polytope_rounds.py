"""The polytope's active rounds as an animation (Section 5, Algorithm 3's checks; Section 6.1's MDP).

``rounds_animation`` turns ``pvnviz.polytope.rounds.PolytopeRounds`` into frames for the browser player
(``pvnviz.figures.frames.animation``): ``FRAMES_PER_ROUND`` frames per round, the round's ascent growing over
them. One figure, two panels: the policy square, with the round's learned gradient field (one common arrow
scale over every round, so a field that grows or turns shows it), and the exact value polytope (its sides,
corners and optimum) with the ascent at its exact values and the checks at their measured values. In every frame:

- the zero-shot ascent of the same seed (round 0's path, whole, dashed grey) stays as it is;
- the earlier rounds' ascents, faint; this round's, solid, up to the frame's step;
- the checks made so far (``checks_at``): a round's perturbations from its first frame, an iterate's check from
  the frame that reaches its step; the best measured so far (Algorithm 3's choice) ringed;
- the title counts the checks against the budget ("checks: 7 of 20").

Traces carry roles (``meta``, ``pvnviz.figures.roles``): ``field:{r}``, ``done:{r}:{col}``, ``current:{col}``,
``zero-shot:{col}``, ``checks:{col}``, ``best:{col}`` (col 1: the policy square, 2: the polytope). Pure: no
Streamlit, no computation beyond drawing.
"""

from __future__ import annotations

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
    """Each frame's name in the player: "round 3 of 7, step 40 · checks: 7 of 20"."""
    out = []
    for k in range(num_frames(rounds)):
        r, t = frame_at(rounds, k)
        out.append(f"round {r + 1} of {len(rounds.rounds)}, step {t} · {_count(rounds, r, t, budget)}")
    return out


def _count(rounds: PolytopeRounds, r: int, step: int, budget: int) -> str:
    return f"checks: {len(checks_at(rounds, r, step).J)} of {budget}"


def _xy(points: np.ndarray) -> dict:
    return dict(x=np.round(points[:, 0], DIGITS).tolist(), y=np.round(points[:, 1], DIGITS).tolist())


def _quiver(rounds: PolytopeRounds, field: np.ndarray, scale: float) -> dict:
    qx, qy = quiver_segments(rounds.grid, field, scale)
    return dict(
        x=[None if v is None else round(float(v), DIGITS) for v in qx],
        y=[None if v is None else round(float(v), DIGITS) for v in qy],
    )


def _title(rounds: PolytopeRounds, r: int, step: int, checks: Checks, budget: int, seed: int | None) -> str:
    best_J = f"best checked J = {float(np.max(checks.J)):.3f}" if len(checks.J) else "no check yet"
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
    scale = arrow_scale(rounds.grid, *(q.field for q in rounds.rounds))
    for q in rounds.rounds:  # one field per round, the round's shown
        fig.add_trace(
            go.Scatter(
                **_quiver(rounds, q.field, scale),
                mode="lines",
                line=dict(color=theme.LEARNED, width=1),
                opacity=0.45,
                name="learned gradient field (this round's PVN)",
                legendgroup="field",
                visible=q.index == r,
                meta=f"field:{q.index}",
                hoverinfo="skip",
            ),
            row=1,
            col=1,
        )
    zero = rounds.rounds[0].ascent
    checks = checks_at(rounds, r, step)
    best = checks.policies[[int(np.argmax(checks.J))]] if len(checks.J) else np.empty((0, 2))
    best_values = checks.values[[int(np.argmax(checks.J))]] if len(checks.J) else np.empty((0, 2))
    current = rounds.rounds[r].ascent
    for col in (1, 2):
        pick = (lambda path: path.policies) if col == 1 else (lambda path: path.values)
        fig.add_trace(
            go.Scatter(
                **_xy(pick(zero)),
                mode="lines",
                line=dict(color=theme.NEUTRAL, width=2, dash="dash"),
                name="zero-shot ascent (the paper's, same seed)",
                legendgroup="zero-shot",
                showlegend=col == 1,
                meta=f"zero-shot:{col}",
                hovertemplate="zero-shot ascent, step %{pointNumber}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        for q in rounds.rounds:  # earlier rounds' whole ascents, faint
            fig.add_trace(
                go.Scatter(
                    **_xy(pick(q.ascent)),
                    mode="lines",
                    line=dict(color=theme.LEARNED, width=1.5),
                    opacity=0.35,
                    name="earlier rounds' ascents",
                    legendgroup="done",
                    showlegend=col == 1 and q.index == 0,
                    visible=q.index < r,
                    meta=f"done:{q.index}:{col}",
                    hovertemplate=f"round {q.index + 1}'s ascent, step %{{pointNumber}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
        fig.add_trace(
            go.Scatter(
                **_xy(pick(current)[: step + 1]),
                mode="lines",
                line=dict(color=theme.LEARNED, width=3),
                name="this round's ascent (through the fine-tuned PVN)",
                legendgroup="current",
                showlegend=col == 1,
                meta=f"current:{col}",
                hovertemplate=f"round {r + 1}'s ascent, step %{{pointNumber}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Scatter(
                **_xy(checks.policies if col == 1 else checks.values),
                mode="markers",
                marker=dict(size=9, color=theme.EXACT, line=theme.OUTLINE),
                name="checked policies (measured J)" if col == 1 else "checks at their measured values",
                legendgroup="checks",
                showlegend=col == 1,
                customdata=np.round(np.stack([checks.J, checks.exact_J], axis=-1), DIGITS).tolist(),
                meta=f"checks:{col}",
                cliponaxis=False,
                hovertemplate="check: measured J = %{customdata[0]:.3f}, exact J = %{customdata[1]:.3f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Scatter(
                **_xy(best if col == 1 else best_values),
                mode="markers",
                marker=dict(size=18, color="rgba(0,0,0,0)", line=dict(width=3, color=theme.HIGHLIGHT)),
                name="best check so far (Algorithm 3's choice)",
                legendgroup="best",
                showlegend=col == 1,
                meta=f"best:{col}",
                cliponaxis=False,
                hoverinfo="skip",
            ),
            row=1,
            col=col,
        )
    fig.add_trace(
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
    fig.update_xaxes(title_text="P(a1 | s1)", row=1, col=1, **POLICY_AXIS)
    fig.update_yaxes(title_text="P(a1 | s2)", row=1, col=1, **POLICY_AXIS)
    fig.update_xaxes(title_text="V(s1)", row=1, col=2)
    fig.update_yaxes(title_text="V(s2)", row=1, col=2)
    fig = theme.style(fig, _title(rounds, r, step, checks, budget, seed), height=HEIGHT, wide=True)
    fig.update_layout(margin=dict(t=80, b=130), legend=dict(y=-0.2, yanchor="top", x=0.0))
    fig.add_annotation(  # the count, also while the player plays (it redraws titles only when it pauses)
        text=f"<b>{_count(rounds, r, step, budget)}</b>",
        x=1.0,
        y=1.0,
        xref="x domain",
        yref="y domain",
        xanchor="right",
        yanchor="top",
        showarrow=False,
        bgcolor=theme.LABEL_BG,
        font=dict(color=theme.EXACT),
        name="count",
        row=1,
        col=1,
    )
    return fig


def _changes(first: dict, rounds: PolytopeRounds, budget: int, frame: int, seed: int | None) -> dict:
    """What frame ``frame`` changes in ``first`` (frame 0's figure, plain JSON), without building its figure:
    every property that varies between frames (``rounds_frame`` draws the same), for every trace that has one."""
    r, step = frame_at(rounds, frame)
    index = roles(first)
    checks = checks_at(rounds, r, step)
    best = int(np.argmax(checks.J)) if len(checks.J) else None
    path = rounds.rounds[r].ascent
    traces: dict[int, dict] = {}
    for q in rounds.rounds:
        traces[index[f"field:{q.index}"]] = {"visible": q.index == r}
        for col in (1, 2):
            traces[index[f"done:{q.index}:{col}"]] = {"visible": q.index < r}
    for col, points, measured in ((1, path.policies, checks.policies), (2, path.values, checks.values)):
        traces[index[f"current:{col}"]] = {
            **_xy(points[: step + 1]),
            "hovertemplate": f"round {r + 1}'s ascent, step %{{pointNumber}}<extra></extra>",
        }
        traces[index[f"checks:{col}"]] = {
            **_xy(measured),
            "customdata": np.round(np.stack([checks.J, checks.exact_J], axis=-1), DIGITS).tolist(),
        }
        traces[index[f"best:{col}"]] = _xy(measured[[best]] if best is not None else np.empty((0, 2)))
    annotations = [dict(a) for a in first["layout"]["annotations"]]
    for a in annotations:
        if a.get("name") == "count":
            a["text"] = f"<b>{_count(rounds, r, step, budget)}</b>"
    title = dict(first["layout"]["title"], text=_title(rounds, r, step, checks, budget, seed))
    return {"traces": traces, "layout": {"annotations": annotations, "title": title}}


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
    changes = [{"rounds": _changes(first, rounds, budget, k, seed)} for k in range(1, num_frames(rounds))]
    if projector:  # the wrapped title of the projector's look
        chars = int(first["layout"].get("meta", {}).get("title_chars", theme.TITLE_CHARS) / theme.PROJECTOR_SCALE)
        for change in changes:
            title = change["rounds"]["layout"]["title"]
            title["text"] = "<br>".join(theme.wrap_title(title["text"], chars))
    return changes_animation({"rounds": first}, changes, frame_labels(rounds, budget))
