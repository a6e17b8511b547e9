"""The ascent figure of the environment experiments (Algorithm 3, Section 5; Fig. 4 right and Fig. 5): each start's
true return along its gradient ascent through the PVN, one panel per PVN input, with the training set's limit, the
best kept policy and reference scores as horizontal lines, the best check so far (which reads as improvement where the
checks themselves saw-tooth), and the start the replay shows brought out."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pvnviz.core.ascent import AscentTrace
from pvnviz.figures import theme
from pvnviz.figures.experiment import MODE_COLOR, MODE_LABEL
from pvnviz.figures.roles import roles


def kept_best_line(summary: dict) -> tuple[float, str]:
    """The line an ascent must beat, and its name, from a run's summary.json: the best kept policy re-measured on
    fresh episodes, as the starts' chosen policies are, where the run has it (``kept_best_fresh_return``); else its
    dataset return (``kept_best_mean_return``; with few episodes a policy, the luckiest measurement)."""
    if summary.get("kept_best_fresh_return") is not None:
        return float(summary["kept_best_fresh_return"]), "best kept policy, fresh episodes"
    return float(summary["kept_best_mean_return"]), "best kept policy"


def start_role(input_mode: str, start: int) -> str:
    """The role of start ``start``'s (0-based) line in the ``input_mode`` panel of an ``ascent_figure``."""
    return f"start:{input_mode}:{start}"


def ascent_figure(
    traces: dict[str, AscentTrace],
    return_limit: float | None,
    best: float | None = None,
    baselines: dict[str, float] | None = None,
    baseline_source: str = "",
    best_label: str = "best kept policy",
) -> go.Figure:
    """True return along the ascent: each start light, the mean bold, the best check so far dashed, one panel per
    input (Fig. 4-5); ``best`` (named ``best_label``) the line an ascent must beat: the dataset's best policy,
    or the best kept policy on fresh episodes."""
    input_modes = list(traces)
    fig = make_subplots(
        rows=1,
        cols=len(input_modes),
        shared_yaxes=True,
        horizontal_spacing=0.04,
        subplot_titles=[f"through the {MODE_LABEL[m]}" for m in input_modes],
    )
    shapes: list[dict] = []
    notes: list[dict] = list(fig.layout.annotations)  # the panels' titles
    for col, input_mode in enumerate(input_modes, start=1):
        _ascent_lines(fig, traces[input_mode], input_mode, col)
        _reference_lines(shapes, notes, col, return_limit, (best, best_label), baselines)
        fig.update_xaxes(title_text="ascent step", row=1, col=col)
    if baselines:
        values = [v for t in traces.values() for v in (t.true_returns.min(), t.true_returns.max())]
        values += list(baselines.values())
        notes += baseline_labels(baselines, min(values), max(values))
    fig.update_layout(shapes=shapes, annotations=notes)  # at once: fig.add_hline copies every shape per call
    fig.update_yaxes(title_text="true mean return (Monte Carlo)", row=1, col=1)
    title = "Zero-shot gradient ascent through the PVN"
    if baseline_source:
        title += f" (dashed grey: {baseline_source})"
    theme.style(fig, title, height=440, wide=True)
    if baselines:
        fig.update_layout(margin=dict(r=90))  # room for the baseline names
    return fig


def best_so_far(true_returns: np.ndarray) -> np.ndarray:
    """The best check so far along the ascent, averaged over the starts: from true returns (checks, starts), the
    mean over starts of each start's running maximum, (checks,). It never falls: the policy Algorithm 3 would keep
    if it stopped at that check, where the checks themselves (noisy, and after overshooting steps) saw-tooth."""
    return np.maximum.accumulate(np.asarray(true_returns, dtype=np.float64), axis=0).mean(1)


def _ascent_lines(fig: go.Figure, trace: AscentTrace, input_mode: str, col: int) -> None:
    """Panel ``col``'s lines: one light line per start, their mean in bold, and the best check so far (stepped,
    dashed: ``best_so_far``)."""
    color = MODE_COLOR[input_mode]
    for a in range(trace.true_returns.shape[1]):
        fig.add_trace(
            go.Scatter(
                x=trace.checked_steps,
                y=trace.true_returns[:, a],
                mode="lines",
                line=dict(color=theme.rgba(color, 0.35), width=1.5),
                name="each start",
                legendgroup=f"start-{input_mode}",
                showlegend=(a == 0),
                meta=start_role(input_mode, a),
            ),
            row=1,
            col=col,
        )
    fig.add_trace(
        go.Scatter(
            x=trace.checked_steps,
            y=trace.true_returns.mean(1),
            mode="lines",
            line=dict(color=color, width=4),
            name=f"mean: {MODE_LABEL[input_mode]}",
            meta=f"mean:{input_mode}",
        ),
        row=1,
        col=col,
    )
    fig.add_trace(
        go.Scatter(
            x=trace.checked_steps,
            y=best_so_far(trace.true_returns),
            mode="lines",
            line=dict(color=color, width=3, dash="dash", shape="hv"),
            name=f"best check so far: {MODE_LABEL[input_mode]}",
            meta=f"best:{input_mode}",
        ),
        row=1,
        col=col,
    )


def _reference_lines(
    shapes: list[dict],
    notes: list[dict],
    col: int,
    limit: float | None,
    best: tuple[float | None, str],
    baselines: dict | None,
) -> None:
    """Panel ``col``'s horizontal lines (what ``fig.add_hline`` makes, without its copying of every shape per
    call): the training-set limit, the best kept policy, the baselines; the labels only on the first panel."""
    axis = "" if col == 1 else str(col)

    def line(y: float, **style) -> None:
        shapes.append(dict(type="line", xref=f"x{axis} domain", x0=0, x1=1, yref=f"y{axis}", y0=y, y1=y, line=style))

    def label(y: float, text: str, below: bool) -> None:
        notes.append(dict(text=text, showarrow=False, xref=f"x{axis} domain", x=1, xanchor="right", yref=f"y{axis}",
                          y=y, yanchor="top" if below else "bottom"))  # fmt: skip

    if limit is not None:
        line(limit, color=theme.LIMIT, dash="dash", width=2)
        if col == 1:
            label(limit, "training-set limit", below=False)
    value, name = best
    if value is not None:
        line(value, color=theme.TRAIN, dash="dot", width=1.5)
        if col == 1:
            label(value, name, below=True)
    for value in (baselines or {}).values():
        line(value, color=theme.BASELINE, dash="dash", width=1)


def baseline_labels(baselines: dict[str, float], low: float, high: float) -> list[dict]:
    """Baseline names in the right margin at their lines, pushed apart so that none overlaps another."""
    gap = 0.06 * (high - low)  # about one text line on a 440 px figure
    placed: list[float] = []
    labels = []
    for name, value in sorted(baselines.items(), key=lambda item: item[1]):
        y = value if not placed else max(value, placed[-1] + gap)
        placed.append(y)
        labels.append(
            dict(text=name, x=1.0, xref="paper", xanchor="left", y=y, yref="y", showarrow=False,
                 font=dict(color=theme.BASELINE, size=11))
        )  # fmt: skip
    return labels


def highlight_start(fig: go.Figure | dict, start: int) -> go.Figure | dict:
    """Bring out start ``start`` (0-based) in every panel of an ``ascent_figure``: the one the replay shows.

    A go.Figure is changed in place; a plotly JSON dict (``fig.to_plotly_json()``, e.g. shared between sessions)
    is left as it is and a new dict returned, sharing its unchanged traces."""
    role = roles(fig)
    lines = sorted(
        role[start_role(input_mode, start)] for input_mode in MODE_LABEL if start_role(input_mode, start) in role
    )
    if isinstance(fig, dict):
        data = list(fig["data"])
        for n, index in enumerate(lines):
            line = {**data[index].get("line", {}), "color": theme.HIGHLIGHT, "width": 3}
            name = f"start {start + 1} (replayed)"
            data[index] = {**data[index], "line": line, "name": name, "showlegend": n == 0}
        return {**fig, "data": data}
    for n, index in enumerate(lines):  # one legend entry, the first panel's
        fig.data[index].update(
            line=dict(color=theme.HIGHLIGHT, width=3), name=f"start {start + 1} (replayed)", showlegend=n == 0
        )
    return fig
