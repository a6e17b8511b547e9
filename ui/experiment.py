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
from pvnviz.experiment import (
    ExperimentConfig,
    ExperimentResult,
    collect,
    dataset_config,
    load_result,
    run_experiment,
)
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
    preset = st.session_state.get(preset_key, first)
    base = presets[preset if preset in presets else first]()
    with st.sidebar:
        st.header("Experiment settings")
        st.selectbox(
            "Preset",
            list(presets),
            index=0,
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
                    default = _to_widget(kind, getattr(base, field))  # the preset's value: not repeated in the URL
                    if kind in ("int", "float"):
                        value = st.number_input(label, value=default, key=key, help=tip, bind="query-params", **kwargs)
                    elif kind == "bool":
                        value = st.checkbox(label, value=default, key=key, help=tip, bind="query-params")
                    elif kind == "select":
                        options = kwargs["options"]
                        value = st.selectbox(
                            label, options, index=options.index(default), key=key, help=tip, bind="query-params"
                        )
                    else:
                        value = st.text_input(label, value=default, key=key, help=tip, bind="query-params")
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
            value=default_run,
            key=run_key,
            bind="query-params",
            help="A folder written by `python -m pvnviz run ... --out DIR`.",
        ).strip()
    if run_dir:
        path = _resolve(run_dir)
        try:
            result = computed(_load, path, _stamp(path), env_name, label=f"Opening {run_dir}")
            st.info(
                f"Showing the saved run in `{run_dir}` (seed {result.seed}); the sidebar's settings apply when "
                "you train live (clear the folder box)."
            )
            return result
        except RunError as err:
            st.error(f"Cannot open that run: {err}")
            return _last_good(env_name)
    if config is None:
        return _last_good(env_name)
    live_chart = st.empty()
    history: dict[str, list] = {mode: [] for mode in config.inputs}
    last_draw = [0.0]

    def on_metrics(mode: str, step: int, train: float, val: float) -> None:
        history[mode].append((step, train, val))
        now = time.perf_counter()
        if now - last_draw[0] > 0.4:
            last_draw[0] = now
            live_chart.plotly_chart(
                figs.loss_figure(figs.live_curves(history), "PVN training (live)"), key=f"live-{mode}-{step}"
            )

    try:
        dataset = computed(collect, dataset_config(config), seed, label="Collecting the dataset (Algorithm 1)")
        result = computed(
            run_experiment, config, seed, label="Training and ascending", on_metrics=on_metrics, dataset=dataset
        )
    except ValueError as err:
        live_chart.empty()
        st.error(f"Please change a setting: {err}")
        return _last_good(env_name)
    live_chart.empty()
    st.session_state[_key(env_name, "last_result")] = result
    return result


def _stamp(path: str) -> float:
    """Latest modification time in a run folder, so a rewritten run is not served from the cache."""
    try:
        return max((f.stat().st_mtime for f in Path(path).iterdir()), default=0.0)
    except OSError:
        return 0.0


def _load(path: str, stamp: float, env_name: str, on_progress) -> ExperimentResult:
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
        # Headline: the chosen iterates re-measured on fresh episodes (honest Algorithm 3), when the run has them.
        headline = values.get("fresh_mean_return", values["best_mean_return"])
        col.metric(
            f"Ascent best, {figs.MODE_LABEL[mode]}" + (", fresh episodes" if "fresh_mean_return" in values else ""),
            f"{headline:.1f}",
            delta=f"{headline - summary['kept_best_mean_return']:+.1f} vs best kept",
            help=f"Selection estimate (the checks that chose each start's iterate): {values['best_mean_return']:.1f}",
        )

    left, right = st.columns(2)
    left.plotly_chart(figs.returns_histogram(dataset, split, config.return_limit))
    with left:
        if config.return_limit is not None:
            what_to_look_at(
                "Fig. 4 (left). Each bar counts random policies by mean return over their rollouts. Green "
                "policies train the PVN; red ones beat the limit (dashed) and are thrown away, so an ascent "
                "that ends right of the limit has found a policy better than every policy the PVN trained on."
            )
        else:
            what_to_look_at(
                "Each bar counts random policies by mean return over their rollouts; all of them train the PVN "
                "(no limit here, as in Section 6.3). Most random policies barely move; a thin tail swims."
            )
    right.plotly_chart(figs.loss_figure(figs.trained_curves(result.trained)))
    with right:
        what_to_look_at(
            "Algorithm 2. KL divergence between each policy's return histogram and the PVN's prediction, "
            "dotted on training batches and solid on held-out policies"
            + (", orange for the fingerprint PVN and grey for flattened weights. " if len(result.trained) > 1 else ". ")
            + "A validation curve that turns up while the training curve falls is the PVN overfitting."
        )

    st.plotly_chart(
        figs.ascent_figure(
            result.traces, config.return_limit, summary["kept_best_mean_return"], baselines, baseline_source
        )
    )
    what_to_look_at(paper_note)
    _render_beyond(result)

    left, right = st.columns(2)
    predictions = {}
    if not len(split.val_idx):
        st.caption("No validation policies (validation share 0): prediction panels are skipped.")
    for mode, trained in result.trained.items() if len(split.val_idx) else []:
        _, j_hat = trained.predict(dataset.params[split.val_idx])
        predictions[mode] = (dataset.mean_returns[split.val_idx], j_hat)
    if predictions:
        left.plotly_chart(figs.prediction_figure(predictions))
    with left:
        what_to_look_at(
            "Validation policies, never trained on: the PVN's Ĵ (the histogram's mean, Section 3) against "
            "the Monte Carlo mean. Points on the diagonal are right."
        )
    with right:
        if len(split.val_idx):
            pick = 0
            if len(split.val_idx) > 1:
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
        bounds = "termination bounds" if config.env == "cartpole" else "the rotors' joint limits"
        moving = (
            "press ▶ to watch them move as they are trained jointly with the PVN (Algorithm 2)"
            if config.train_probes
            else "they are frozen here (training them is off), so they stay where they started"
        )
        what_to_look_at(
            f"Section 4. The fingerprint is the policy's output at these probing states; {moving}. Grey rings "
            f"are where they started, faint lines their paths; dashed lines mark {bounds}."
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
        start = 0
        if trace.params.shape[1] > 1:
            start = st.slider("Start", 1, trace.params.shape[1], 1, key=f"{config.env}_replay_start") - 1
        replay(result, trace, start)


def _render_beyond(result: ExperimentResult) -> None:
    """Honest Algorithm 3 (fresh re-measurement) and, for an ensemble, its disagreement along the ascent."""
    from pvnviz.figures import beyond

    for mode, trace in result.traces.items():
        if trace.fresh_returns is None and trace.disagreement is None:
            continue
        left, right = st.columns(2)
        left.plotly_chart(beyond.fresh_figure(trace), key=f"{result.config.env}_fresh_{mode}")
        with left:
            what_to_look_at(
                f"{figs.MODE_LABEL[mode]}. Algorithm 3 keeps each start's iterate with the best Monte Carlo check; "
                "that check is the maximum of noisy estimates, so it overstates the policy (grey). Blue re-measures "
                "the same policy on fresh episodes that played no part in choosing it: the honest number."
            )
        if trace.disagreement is not None:
            ens = result.ensembles.get(mode)
            right.plotly_chart(
                beyond.disagreement_figure(trace, ens.val_spread if ens else None),
                key=f"{result.config.env}_disagree_{mode}",
            )
            with right:
                what_to_look_at(
                    "Section 5: the ascent may leave the region the PVN's data covers. Bootstrapped PVNs agree "
                    "where data is dense; their spread rising above the held-out level (dashed) marks the ascent "
                    "walking out of the data; diamonds are the iterates Algorithm 3 chose."
                )


def policy_pair(trace, start: int) -> np.ndarray:
    """(2, P): the start policy and the best-seen policy of its ascent."""
    return np.stack([trace.params[0, start], trace.best_params[start]])
