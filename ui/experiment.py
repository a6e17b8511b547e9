"""The shared body of the environment pages (CartPole, Swimmer): widgets -> config -> pvnviz -> figures."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import streamlit as st

from pvnviz.configs import ConfigError, help_text
from pvnviz.envs import get_env
from pvnviz.experiment import ExperimentConfig, ExperimentResult, load_result, run_experiment
from pvnviz.figures import experiment as figs
from pvnviz.runs import RunError
from ui import computed, what_to_look_at

# (config field, label, kind, extra widget kwargs); kind: int, float, bool, select, layers
FIELDS = [
    (
        "Dataset (Appendix C)",
        [
            ("num_policies", "Policies K", "int", dict(min_value=2, max_value=20000, step=50)),
            ("num_episodes", "Rollouts per policy B", "int", dict(min_value=1, max_value=1000, step=5)),
            ("horizon", "Horizon", "int", dict(min_value=0, max_value=5000, step=50)),
            ("return_limit", "Training-set limit (blank: none)", "optfloat", {}),
            ("policy_hidden", "Policy hidden layers (e.g. 30 or 64,64; blank: linear)", "layers", {}),
        ],
    ),
    (
        "PVN (Sections 3-4, Appendix B)",
        [
            ("num_bins", "Return bins m", "int", dict(min_value=0, max_value=201, step=1)),
            ("num_probes", "Probing states n", "int", dict(min_value=0, max_value=200, step=1)),
            ("train_probes", "Train the probing states", "bool", {}),
            ("probe_init", "Probe initialisation", "select", dict(options=["noise", "visited"])),
            ("pvn_hidden", "PVN hidden layers", "layers", {}),
            ("temperature", "Softmax temperature", "float", dict(min_value=0.01, max_value=100.0, step=0.5)),
            (
                "learning_rate",
                "PVN learning rate (Adam)",
                "float",
                dict(min_value=1e-5, max_value=1.0, step=0.001, format="%.4f"),
            ),
            ("train_steps", "Training steps", "int", dict(min_value=1, max_value=50000, step=100)),
            ("batch_size", "Batch size", "int", dict(min_value=1, max_value=1024, step=1)),
            ("val_fraction", "Validation share", "float", dict(min_value=0.0, max_value=0.9, step=0.05)),
        ],
    ),
    (
        "Gradient ascent (Section 5)",
        [
            ("num_starts", "Starting policies A", "int", dict(min_value=1, max_value=100, step=1)),
            ("ascent_steps", "Ascent steps T", "int", dict(min_value=0, max_value=10000, step=50)),
            (
                "ascent_learning_rate",
                "Ascent learning rate (Adam)",
                "float",
                dict(min_value=1e-5, max_value=1.0, step=0.0005, format="%.4f"),
            ),
            ("eval_every", "Score every k steps", "int", dict(min_value=1, max_value=1000, step=5)),
            ("eval_episodes", "Rollouts per score", "int", dict(min_value=1, max_value=1000, step=5)),
        ],
    ),
]


def _to_widget(kind: str, value):
    if kind == "layers":
        return ",".join(str(v) for v in value)
    if kind == "optfloat":
        return "" if value is None else f"{value:g}"
    return value


def _from_widget(kind: str, value, name: str):
    if kind == "layers":
        try:
            return tuple(int(v) for v in str(value).replace(" ", "").split(",") if v)
        except ValueError:
            message = f"{name}: write layer sizes as whole numbers separated by commas, e.g. 30 or 64,64."
            raise ConfigError(message) from None
    if kind == "optfloat":
        text = str(value).strip()
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{name}: write a number, or leave it blank for no limit.") from None
    return value


def _key(env_name: str, field: str) -> str:
    return f"{env_name}_{field}"


def _apply_preset(env_name: str, presets: dict[str, Callable[[], ExperimentConfig]]) -> None:
    config = presets[st.session_state[_key(env_name, "preset")]]()
    for _, fields in FIELDS:
        for field, _, kind, _ in fields:
            st.session_state[_key(env_name, field)] = _to_widget(kind, getattr(config, field))


def sidebar_config(env_name: str, presets: dict[str, Callable[[], ExperimentConfig]]) -> ExperimentConfig | None:
    """Preset picker and every hyperparameter, bound to the URL; the config, or None after an st.error."""
    first = next(iter(presets))
    preset_key = _key(env_name, "preset")
    st.session_state.setdefault(preset_key, first)
    base = presets[st.session_state[preset_key]]()
    for _, fields in FIELDS:
        for field, _, kind, _ in fields:
            st.session_state.setdefault(_key(env_name, field), _to_widget(kind, getattr(base, field)))
    with st.sidebar:
        st.header("Experiment settings")
        st.selectbox(
            "Preset",
            list(presets),
            key=preset_key,
            on_change=_apply_preset,
            args=(env_name, presets),
            help="Quick: results in seconds. Paper: Appendix B.",
            bind="query-params",
        )
        changes = {}
        for title, fields in FIELDS:
            with st.expander(title, expanded=False):
                for field, label, kind, kwargs in fields:
                    key, tip = _key(env_name, field), help_text(ExperimentConfig, field)
                    if kind in ("int", "float"):
                        value = st.number_input(label, key=key, help=tip, bind="query-params", **kwargs)
                    elif kind == "bool":
                        value = st.checkbox(label, key=key, help=tip, bind="query-params")
                    elif kind == "select":
                        value = st.selectbox(label, key=key, help=tip, bind="query-params", **kwargs)
                    else:
                        value = st.text_input(label, key=key, help=tip, bind="query-params")
                    changes[field] = (kind, value, label)
    try:
        values = {f: _from_widget(kind, v, label) for f, (kind, v, label) in changes.items()}
        return dataclasses.replace(base, env=env_name, **values)
    except (ConfigError, ValueError) as err:
        st.error(f"Please change a setting: {err}")
        return None


def _last_good(env_name: str) -> ExperimentResult:
    """After bad input: the last result this session computed, so nothing computed is lost."""
    last = st.session_state.get(_key(env_name, "last_result"))
    if last is None:
        st.stop()
    st.caption("Showing your last valid run until the settings are fixed.")
    return last


REPO_ROOT = Path(__file__).resolve().parents[1]


def _resolve(run_dir: str) -> str:
    path = Path(run_dir).expanduser()
    if not path.is_absolute() and not path.exists() and (REPO_ROOT / path).exists():
        path = REPO_ROOT / path
    return str(path)


def obtain_result(env_name: str, config: ExperimentConfig | None, seed: int, default_run: str = "") -> ExperimentResult:
    """A saved run if the sidebar names one, else a live run (cached), with progress and a growing loss chart."""
    run_key = _key(env_name, "run")
    st.session_state.setdefault(run_key, default_run)
    with st.sidebar:
        if default_run:
            st.button(
                "Train live with these settings",
                on_click=st.session_state.__setitem__,
                args=(run_key, ""),
                help="Leave the shipped run and train with the settings above.",
                type="primary",
            )
        run_dir = st.text_input(
            "Open a saved run (folder)",
            key=_key(env_name, "run"),
            bind="query-params",
            help="A folder written by `python -m pvnviz run ... --out DIR`.",
        ).strip()
    if config is None:
        return _last_good(env_name)
    if run_dir:
        try:
            result = computed(_load, _resolve(run_dir), env_name, label=f"Opening {run_dir}")
            st.info(f"Showing the saved run in `{run_dir}` (seed {result.seed}). Clear the folder box to train live.")
            return result
        except RunError as err:
            st.error(f"Cannot open that run: {err}")
            return _last_good(env_name)
    live_chart = st.empty()
    history: dict[str, list] = {mode: [] for mode in config.inputs}
    last_draw = [0.0]

    def on_metrics(mode: str, step: int, train: float, val: float) -> None:
        history[mode].append((step, train, val))
        now = time.perf_counter()
        if now - last_draw[0] > 0.4:
            last_draw[0] = now
            live_chart.plotly_chart(figs.live_loss_figure(history), key=f"live-{mode}-{step}")

    try:
        result = computed(run_experiment, config, seed, label="Collecting, training, ascending", on_metrics=on_metrics)
    except ValueError as err:
        live_chart.empty()
        st.error(f"Please change a setting: {err}")
        return _last_good(env_name)
    live_chart.empty()
    st.session_state[_key(env_name, "last_result")] = result
    return result


def _load(path: str, env_name: str, on_progress) -> ExperimentResult:
    return load_result(path, env_name)


def render_results(
    result: ExperimentResult,
    paper_note: str,
    baselines: dict | None = None,
    baseline_source: str = "",
    replay: Callable | None = None,
) -> None:
    """Every figure of the experiment, each with its 'what to look at'."""
    config, dataset, split = result.config, result.dataset, result.split
    env = get_env(config.env)
    summary = result.summary()
    cols = st.columns(4)
    cols[0].metric("Policies kept / collected", f"{summary['num_kept']} / {summary['num_policies']}")
    cols[1].metric("Best kept policy (mean return)", f"{summary['kept_best_mean_return']:.1f}")
    for col, (mode, values) in zip(cols[2:], summary["inputs"].items()):
        col.metric(
            f"Ascent best, {figs.MODE_LABEL[mode]}",
            f"{values['best_mean_return']:.1f}",
            delta=f"{values['best_mean_return'] - summary['kept_best_mean_return']:+.1f} vs best kept",
        )

    left, right = st.columns(2)
    left.plotly_chart(figs.returns_histogram(dataset, split, config.return_limit))
    with left:
        what_to_look_at(
            "Fig. 4 (left). Each bar counts random policies by mean return over their rollouts. Green "
            "policies train the PVN; red ones beat the limit and are thrown away, so any ascent result "
            "right of the dashed line is a policy better than everything the PVN saw."
        )
    right.plotly_chart(figs.loss_figure(result.trained))
    with right:
        what_to_look_at(
            "Algorithm 2. KL divergence between each policy's return histogram and the PVN's prediction, "
            "dotted on training batches and solid on held-out policies. The fingerprint PVN (orange) "
            "generalises better than the flattened-weights PVN (grey) on MLP policies (Section 6.2)."
        )

    st.plotly_chart(
        figs.ascent_figure(
            result.traces, config.return_limit, summary["kept_best_mean_return"], baselines, baseline_source
        )
    )
    what_to_look_at(paper_note)

    left, right = st.columns(2)
    predictions = {}
    for mode, trained in result.trained.items():
        _, j_hat = trained.predict(dataset.params[split.val_idx])
        predictions[mode] = (dataset.mean_returns[split.val_idx], j_hat)
    left.plotly_chart(figs.prediction_figure(predictions))
    with left:
        what_to_look_at(
            "Validation policies, never trained on: the PVN's Ĵ (the histogram's mean, Section 3) against "
            "the Monte Carlo mean. Points on the diagonal are right."
        )
    with right:
        if len(split.val_idx):
            pick = st.slider("Validation policy", 0, len(split.val_idx) - 1, 0, key=f"{config.env}_val_pick")
            index = int(split.val_idx[pick])
            target = split.bins.pmf(dataset.returns[index : index + 1])[0]
            predicted = {m: t.predict(dataset.params[index : index + 1])[0][0] for m, t in result.trained.items()}
            st.plotly_chart(
                figs.distribution_figure(split.bins, target, predicted, f"Policy #{index}: return distribution")
            )
            what_to_look_at(
                "Section 3: the PVN predicts a whole distribution over return bins; bars are this "
                "policy's empirical histogram from its rollouts."
            )

    if "fingerprint" in result.trained and result.trained["fingerprint"].probe_snapshots is not None:
        st.subheader("Probing states")
        c1, c2 = st.columns(2)
        dim_x = c1.selectbox(
            "Horizontal axis",
            range(env.obs_dim),
            0,
            format_func=lambda d: env.state_labels[d],
            key=f"{config.env}_probe_x",
        )
        dim_y = c2.selectbox(
            "Vertical axis",
            range(env.obs_dim),
            min(2, env.obs_dim - 1),
            format_func=lambda d: env.state_labels[d],
            key=f"{config.env}_probe_y",
        )
        st.plotly_chart(figs.probes_animation(result.trained["fingerprint"], env, (dim_x, dim_y)))
        what_to_look_at(
            "Section 4. The fingerprint is the policy's output at these states; press ▶ to watch them "
            "move as they are trained with the PVN. Dashed lines are termination bounds where the state "
            "has any: probes drift towards the states that tell good policies from bad."
        )

    if replay is not None and result.traces:
        st.subheader("Replay: before and after ascent")
        mode = st.radio(
            "Ascent through",
            list(result.traces),
            horizontal=True,
            key=f"{config.env}_replay_mode",
            format_func=lambda m: figs.MODE_LABEL[m],
        )
        trace = result.traces[mode]
        start = st.slider("Start", 1, trace.params.shape[1], 1, key=f"{config.env}_replay_start") - 1
        replay(result, trace, start)


def policy_pair(trace, start: int) -> np.ndarray:
    """(2, P): the start policy and the best-seen policy of its ascent."""
    return np.stack([trace.params[0, start], trace.best_params[start]])
