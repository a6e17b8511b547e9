"""Figures of the environment experiments, shared by CartPole and Swimmer (Sections 6.2-6.3, Fig. 4-5)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io

from pvnviz.core.histogram import ReturnBins
from pvnviz.core.pvn import TrainedPVN
from pvnviz.envs.batched import BatchedEnv
from pvnviz.figures import theme
from pvnviz.figures.frames import changes_animation
from pvnviz.figures.roles import roles, trace_index
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.pipeline import Split

MODE_COLOR = {"fingerprint": theme.FINGERPRINT, "flattened": theme.FLATTENED}
PROBES_TITLE = "Probing states through training"
MODE_LABEL = {"fingerprint": "fingerprint PVN", "flattened": "flattened-weights PVN"}
# Trace roles (``pvnviz.figures.roles``) of the probing states' figure, read by components/player.js too.
PROBES_START, PROBES_PATHS, PROBES_NOW = "probes:start", "probes:paths", "probes:now"


def returns_histogram(dataset: PolicyDataset, split: Split, return_limit: float | None) -> go.Figure:
    """Mean returns of the dataset's policies: kept in green, filtered in red, the limit (Fig. 4, left)."""
    means = dataset.mean_returns
    fig = go.Figure()
    low, high = float(means.min()), float(means.max())  # float64: float32 bins can end just short of the best
    size = max((high - low) / 40, 1e-3)
    bins = dict(start=low, end=high + size / 2, size=size)  # the best policy inside the last bin, never past it
    fig.add_trace(
        go.Histogram(
            x=means[split.kept], xbins=bins, name=f"kept for training ({split.kept.sum()})", marker_color=theme.TRAIN
        )
    )
    if (~split.kept).any():
        fig.add_trace(
            go.Histogram(
                x=means[~split.kept],
                xbins=bins,
                name=f"filtered out ({(~split.kept).sum()})",
                marker_color=theme.FILTERED,
            )
        )
    if return_limit is not None:
        fig.add_vline(
            x=return_limit,
            line=dict(color=theme.LIMIT, dash="dash", width=2),
            annotation_text=f"limit {return_limit:g}",
            annotation_position="top right",
        )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text="mean return of a random policy")
    fig.update_yaxes(title_text="policies")
    return theme.style(fig, "The dataset: random policies' mean returns", height=380)


def loss_figure(
    curves: dict[str, tuple], title: str = "PVN training: KL divergence to the return histograms"
) -> go.Figure:
    """Training (dotted) and validation (solid) KL per input; curves[input_mode] = (steps, train, val)."""
    fig = go.Figure()
    for input_mode, (steps, train, val) in curves.items():
        color = MODE_COLOR[input_mode]
        x = np.maximum(np.asarray(steps), 1)  # the log axis has no 0: step 0 is drawn at 1
        fig.add_trace(
            go.Scatter(x=x, y=train, name=f"{MODE_LABEL[input_mode]}: train", line=dict(color=color, dash="dot"))
        )
        fig.add_trace(go.Scatter(x=x, y=val, name=f"{MODE_LABEL[input_mode]}: validation", line=dict(color=color)))
    # log steps: the KL falls fastest in the first hundred steps, which a linear axis squeezes into a few pixels
    fig.update_xaxes(title_text="training step (log scale; step 0 at 1)", type="log")
    fig.update_yaxes(title_text="KL(target ‖ PVN)")
    return theme.style(fig, title, height=380)


def trained_curves(trained: dict[str, TrainedPVN]) -> dict[str, tuple]:
    """The loss curves of trained PVNs, for ``loss_figure``."""
    return {input_mode: (t.steps, t.train_loss, t.val_loss) for input_mode, t in trained.items()}


def prediction_figure(predictions: dict[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """PVN's J_hat against the Monte Carlo mean return on the validation policies."""
    fig = go.Figure()
    lo, hi = np.inf, -np.inf
    for input_mode, (true, pred) in predictions.items():
        fig.add_trace(
            go.Scatter(
                x=true,
                y=pred,
                mode="markers",
                name=MODE_LABEL[input_mode],
                marker=dict(color=MODE_COLOR[input_mode], size=6, opacity=0.7),
            )
        )
        if len(true):
            lo, hi = min(lo, true.min(), pred.min()), max(hi, true.max(), pred.max())
    if np.isfinite(lo):
        fig.add_trace(
            go.Scatter(
                x=[lo, hi],
                y=[lo, hi],
                mode="lines",
                name="perfect prediction",
                line=dict(color=theme.NEUTRAL, dash="dash", width=1),
            )
        )
    fig.update_xaxes(title_text="true mean return")
    fig.update_yaxes(title_text="PVN's Ĵ")
    return theme.style(fig, "Validation policies: predicted against true", height=400)


def distribution_figure(
    bins: ReturnBins, target: np.ndarray, predicted: dict[str, np.ndarray], title: str
) -> go.Figure:
    """One policy's empirical return histogram against each PVN's predicted distribution."""
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=bins.midpoints,
            y=target,
            name="empirical (Monte Carlo)",
            meta="empirical",
            marker_color=theme.EXACT,
            opacity=0.6,
            width=bins.width,
        )
    )
    for input_mode, probs in predicted.items():
        fig.add_trace(
            go.Scatter(
                x=bins.midpoints,
                y=probs,
                name=MODE_LABEL[input_mode],
                meta=f"predicted:{input_mode}",
                mode="lines+markers",
                line=dict(color=MODE_COLOR[input_mode], width=2),
            )
        )
    fig.update_xaxes(title_text="return bin (midpoint)")
    fig.update_yaxes(title_text="probability")
    return theme.style(fig, title, height=380)


def distribution_frames(
    bins: ReturnBins, targets: np.ndarray, predicted: dict[str, np.ndarray], numbers: list[int], projector: bool
) -> dict:
    """``distribution_figure`` for K policies as one animation (``figures.frames``): frame k is policy
    ``numbers[k]``, its histogram ``targets[k]`` against each PVN's ``predicted[input_mode][k]`` (arrays (K, m))."""
    first = distribution_figure(bins, targets[0], {m: p[0] for m, p in predicted.items()}, "")
    chars = int(theme.TITLE_CHARS / theme.PROJECTOR_SCALE) if projector else 10**6  # projector: wrapped alike
    title = lambda k: "<br>".join(theme.wrap_title(f"Policy #{numbers[k]}: return distribution", chars))  # noqa: E731
    first.update_layout(title_text=title(0))
    if projector:
        theme.projector(first)
    base_title = first.to_plotly_json()["layout"]["title"]
    role = roles(first)
    ys = {role["empirical"]: targets, **{role[f"predicted:{m}"]: p for m, p in predicted.items()}}
    changes = [
        {
            "policy": {
                "traces": {i: {"y": y[k].astype(np.float32)} for i, y in ys.items()},
                "layout": {"title": {**base_title, "text": title(k)}},
            }
        }
        for k in range(1, len(numbers))
    ]
    return changes_animation({"policy": first}, changes, [str(n) for n in numbers])


def probes_animation(
    trained: TrainedPVN, env: BatchedEnv, dims: tuple[int, int], frame: int | None = None
) -> go.Figure:
    """The probing states moving through training, in two chosen state dimensions.

    ``frame=None``: a plotly animation over every snapshot (with play controls, e.g. for export); ``frame=s``:
    the static figure of snapshot s, for the app's player (``ui.browser_player``).
    """
    snaps = np.asarray(trained.probe_snapshots, dtype=np.float64)  # (S, n, obs_dim); ranges computed in float64
    i, j = dims
    fig = go.Figure()
    _probes_backdrop(fig, snaps, env, dims)
    names = [str(int(s)) for s in trained.snapshot_steps]
    if frame is None:
        fig.add_trace(_probes_now(snaps, dims, len(snaps) - 1))
        now = trace_index(fig, PROBES_NOW)
        fig.frames = [
            go.Frame(data=[_probes_now(snaps, dims, s)], traces=[now], name=names[s]) for s in range(len(snaps))
        ]
        theme.play_controls(fig, names, "training step ")
    else:
        frame = int(np.clip(frame, 0, len(snaps) - 1))
        fig.add_trace(_probes_now(snaps, dims, frame))
    lo, hi = snaps[..., [i, j]].min((0, 1)), snaps[..., [i, j]].max((0, 1))  # (2,)
    for axis, bound in enumerate((env.state_bounds[i], env.state_bounds[j])):
        if bound is not None:
            lo[axis], hi[axis] = min(lo[axis], bound[0]), max(hi[axis], bound[1])
    pad = 0.08 * (hi - lo + 1e-6)
    fig.update_xaxes(title_text=env.state_labels[i], range=[lo[0] - pad[0], hi[0] + pad[0]])
    fig.update_yaxes(title_text=env.state_labels[j], range=[lo[1] - pad[1], hi[1] + pad[1]])
    title = PROBES_TITLE
    if frame is not None:
        title += f": step {names[frame]}"
    fig = theme.style(fig, title, height=520 if frame is None else 460)
    fig.update_layout(
        margin=dict(b=150 if frame is None else 50), legend=dict(y=1.0, yanchor="bottom", x=1.0, xanchor="right")
    )
    return fig


def _probes_backdrop(fig: go.Figure, snaps: np.ndarray, env: BatchedEnv, dims: tuple[int, int]) -> None:
    """What every frame shares: the state bounds (dashed), the initial probes, each probe's path through training."""
    i, j = dims
    for v in env.state_bounds[i] or ():
        fig.add_vline(x=v, line=dict(color=theme.LIMIT, dash="dash", width=1))
    for v in env.state_bounds[j] or ():
        fig.add_hline(y=v, line=dict(color=theme.LIMIT, dash="dash", width=1))
    fig.add_trace(
        go.Scatter(
            x=snaps[0, :, i],
            y=snaps[0, :, j],
            mode="markers",
            name="initial probes",
            meta=PROBES_START,
            marker=dict(color="lightgrey", size=9, symbol="circle-open"),
        )
    )
    trail_x = np.concatenate([np.append(snaps[:, p, i], np.nan) for p in range(snaps.shape[1])])
    trail_y = np.concatenate([np.append(snaps[:, p, j], np.nan) for p in range(snaps.shape[1])])
    fig.add_trace(
        go.Scatter(
            x=trail_x,
            y=trail_y,
            mode="lines",
            name="paths",
            meta=PROBES_PATHS,
            line=dict(color=theme.rgba(theme.PROBE, 0.3), width=1),
            hoverinfo="skip",
        )
    )


def _probes_now(snaps: np.ndarray, dims: tuple[int, int], s: int) -> go.Scatter:
    """The numbered probing states at snapshot ``s``."""
    i, j = dims
    return go.Scatter(
        x=snaps[s, :, i],
        y=snaps[s, :, j],
        mode="markers+text",
        name="probing states",
        meta=PROBES_NOW,
        text=[str(p + 1) for p in range(snaps.shape[1])],
        textposition="top center",
        marker=dict(color=theme.PROBE, size=10, line=dict(color="white", width=1)),
    )


def probes_data(trained: TrainedPVN, env: BatchedEnv, name: str, projector: bool = False) -> dict:
    """The probing states for a browser player that picks the axes itself (``components/player.js``
    projects them as ``probes_animation`` does): ``probes_animation`` of the first snapshot as the template of
    the look, and the snapshots (S, n, obs_dim, flat float64) with each dimension's label and bounds."""
    snaps = np.ascontiguousarray(trained.probe_snapshots, dtype=np.float64)
    template = probes_animation(trained, env, (0, min(2, env.obs_dim - 1)), frame=0)
    if projector:
        theme.projector(template)
    data = changes_animation({name: template}, [], ["0"])
    data["probes"] = {
        "snaps": snaps.ravel(),
        "shape": list(snaps.shape),
        "steps": [str(int(s)) for s in trained.snapshot_steps],
        "labels": list(env.state_labels),
        "bounds": [None if b is None else [float(v) for v in b] for b in env.state_bounds],
        "line": dict(color=theme.LIMIT, dash="dash", width=1),
        "title": PROBES_TITLE,
    }
    return json.loads(plotly.io.json.to_json_plotly(data))  # the snapshots as a typed array
