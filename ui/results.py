"""The results of an environment run on its page (Sections 6.2-6.3, Fig. 4-5): figures and what to look at."""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from pvnviz import archive
from pvnviz.envs import get_env
from pvnviz.experiment import ExperimentResult
from pvnviz.figures import experiment as figs
from pvnviz.figures import gif
from pvnviz.figures.replay import replay_figure, replay_steps
from ui import chart, gif_download, what_to_look_at
from ui.browser_player import animate, play
from ui.settings import FIELDS, _key  # noqa: F401

REPLAY_NAMES = ("before ascent", "after ascent (best seen)")  # the policies of policy_pair, in order


def render_results(
    result: ExperimentResult,
    paper_note: str,
    baselines: dict | None = None,
    baseline_source: str = "",
) -> None:
    """Every figure of the experiment, each with its 'what to look at'."""
    config, dataset, split = result.config, result.dataset, result.split
    env = get_env(config.env)
    replay = env.replay
    summary = result.summary()
    st.download_button(
        "Download this run (zip: config, summary, arrays, PVN weights)",
        data=lambda: archive.run_zip(result),
        file_name=f"pvn-{config.env}-seed{result.seed}.zip",
        mime="application/zip",
        on_click="ignore",
        help="Open it again with 'Open a run zip' in the sidebar, here or on another server.",
    )
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
            help=f"Selection estimate (the checks that chose each start's iterate): {values['best_mean_return']:.1f}. "
            f"Env steps beyond the dataset (Algorithm 3's checks {values['check_env_steps']:,}, the rounds' "
            f"perturbations {values['explore_env_steps']:,}): "
            f"{values['beyond_dataset_fraction']:.1%} of the dataset's.",
        )

    left, right = st.columns(2)
    with left:
        chart(figs.returns_histogram(dataset, split, config.return_limit), f"{config.env}-dataset")
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
    with right:
        chart(figs.loss_figure(figs.trained_curves(result.trained)), f"{config.env}-pvn-training")
    with right:
        what_to_look_at(
            "Algorithm 2. KL divergence between each policy's return histogram and the PVN's prediction, "
            "dotted on training batches and solid on held-out policies"
            + (", orange for the fingerprint PVN and grey for flattened weights. " if len(result.trained) > 1 else ". ")
            + "A validation curve that turns up while the training curve falls is the PVN overfitting."
        )

    chart(
        figs.highlight_start(
            figs.ascent_figure(
                result.traces, config.return_limit, summary["kept_best_mean_return"], baselines, baseline_source
            ),
            replay_start(result) if replay is not None else -1,
        ),
        f"{config.env}-ascent",
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
        with left:
            chart(figs.prediction_figure(predictions), f"{config.env}-predictions")
    with left:
        what_to_look_at(
            "Validation policies, never trained on: the PVN's Ĵ (the histogram's mean, Section 3) against "
            "the Monte Carlo mean. Points on the diagonal are right."
        )
    with right:
        if len(split.val_idx):
            _validation_distributions(result, config.env)
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
            bind="query-params",
        )
        dim_y = c2.selectbox(
            "Vertical axis",
            range(env.obs_dim),
            min(2, env.obs_dim - 1),
            format_func=lambda d: env.state_labels[d],
            key=f"{config.env}_probe_y",
            bind="query-params",
        )
        labels = (env.state_labels[dim_x], env.state_labels[dim_y])
        gif_download(
            "Download the probing states (GIF)",
            lambda: gif.probes_gif(result.trained["fingerprint"], (dim_x, dim_y), labels),
            f"{config.env}-probes.gif",
        )
        steps = range(len(result.trained["fingerprint"].probe_snapshots))
        animate(
            f"{config.env}_probes",
            steps,
            lambda s: figs.probes_animation(result.trained["fingerprint"], env, (dim_x, dim_y), frame=s),
            label="snapshot",
            start=len(steps) - 1,
            reset_on=(config, _digest(result.trained["fingerprint"].probe_snapshots), dim_x, dim_y),
        )
        bounds = get_env(config.env).bounds_label
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
            bind="query-params",
            format_func=lambda m: figs.MODE_LABEL[m],
        )
        trace = result.traces[mode]
        start = 0
        if trace.params.shape[1] > 1:  # opens on the start whose ascent found the best policy
            key = f"{config.env}_replay_start"
            start = _replay_start_slider(key, trace.params.shape[1], replay_start(result) + 1) - 1
        render_replay(result, trace, start)


MAX_VALIDATION_SHOWN = 200  # validation policies a page sends (evenly spread when there are more)


def _validation_distributions(result: ExperimentResult, env: str) -> None:
    """Each validation policy's return distribution, the empirical histogram against each PVN's, in a browser
    player (sent once; the policy is picked in the page, ◀ ▶ step through them, the URL keeps the one shown)."""
    dataset, split = result.dataset, result.split
    keep = np.unique(np.linspace(0, len(split.val_idx) - 1, min(len(split.val_idx), MAX_VALIDATION_SHOWN)).astype(int))
    options = [int(i) for i in np.asarray(split.val_idx)[keep]]

    def frames(projector: bool) -> dict:
        predicted = {m: t.predict(dataset.params[options])[0] for m, t in result.trained.items()}
        targets = split.bins.pmf(dataset.returns[options])
        return figs.distribution_frames(split.bins, targets, predicted, options, projector)

    play(
        f"{env}_val",
        None,  # the frames are made at once by distribution_frames
        len(options),
        label="validation policy #",
        frame_labels=[str(i) for i in options],
        fps=2.0,  # Play walks through them at 2 a second
        reset_on=(result.config, _digest(dataset.params[options], dataset.returns[options])),
        names={"policy": f"{env}-validation-policy"},
        prebuilt=frames,
    )


def _replay_start_slider(key: str, starts: int, opening: int) -> int:
    """The replay's start (1-based), always in the URL, the opening start too: which start a page opens on depends
    on the result shown, so a link without it could open another start than the one on screen. A link's start is
    taken when it is one of this result's; otherwise the result's opening start (``ui.urlcheck`` names the link's)."""
    held = st.session_state.get(key)
    if not isinstance(held, int) or not 1 <= held <= starts:
        asked = st.query_params.get(key, "")
        st.session_state[key] = int(asked) if asked.isdigit() and 1 <= int(asked) <= starts else opening
    start = st.slider("Start", 1, starts, key=key)
    if st.query_params.get(key) != str(start):
        st.query_params[key] = str(start)
    return start


def render_replay(result: ExperimentResult, trace, start: int) -> None:
    """The environment's replay (``EnvSpec.replay``) of start ``start`` before and after its ascent: a player,
    GIF/MP4 downloads and the environment's caption."""
    env = result.config.env
    seed = int(st.session_state.get("seed", 0))
    pair = policy_pair(trace, start)
    replay = get_env(env).replay(result.config.arch(), pair, result.config.horizon, seed)
    labels = [f"{name}: {panel.summary}" for name, panel in zip(REPLAY_NAMES, replay.panels)]
    animate(
        f"{env}_replay",
        replay_steps(replay),
        lambda t: replay_figure(replay, labels, frame=t),
        reset_on=(result.config, seed, _digest(*pair), tuple(labels)),  # what the frames are drawn from
    )
    gif_download("Download this replay (GIF)", lambda: gif.replay_gif(replay, labels), f"{env}-replay.gif")
    what_to_look_at(replay.caption)


def _digest(*arrays) -> str:
    """A digest of arrays' values: animations are shared between sessions by what they are drawn from, and two
    runs (an upload, say) can have the same config and seed but other numbers."""
    digest = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(np.asarray(a, dtype=float))
        digest.update(str(a.shape).encode() + a.tobytes())
    return digest.hexdigest()


def replay_start(result: ExperimentResult) -> int:
    """The start the replay shows (0-based): the one picked, else the best start (highest true return seen)."""
    first = next(iter(result.traces))
    trace = result.traces.get(st.session_state.get(f"{result.config.env}_replay_mode", first), result.traces[first])
    best = int(np.argmax(trace.true_returns.max(0)))
    return int(st.session_state.get(f"{result.config.env}_replay_start", best + 1)) - 1


def _render_beyond(result: ExperimentResult) -> None:
    """Honest Algorithm 3 (fresh re-measurement) and, for an ensemble, its disagreement along the ascent."""
    from pvnviz.figures import beyond

    for mode, trace in result.traces.items():
        if trace.fresh_returns is None and trace.disagreement is None:
            continue
        left, right = st.columns(2)
        env = result.config.env
        chart(beyond.fresh_figure(trace), f"{env}-fresh-{mode}", left, key=f"{env}_fresh_{mode}")
        with left:
            what_to_look_at(
                f"{figs.MODE_LABEL[mode]}. Hatched: where each start began (its first Monte Carlo check"
                f"{'; the starts are the dataset’s best policies' if trace.start_counts else ''}). Algorithm 3 keeps "
                "each start's iterate with the best check; that check is the maximum of noisy estimates, so it "
                "overstates the policy (grey). Blue re-measures the same policy on fresh episodes that played no part "
                "in choosing it: the honest number."
            )
        if trace.disagreement is not None:
            ens = result.ensembles.get(mode)
            chart(
                beyond.disagreement_figure(trace, ens.val_spread if ens else None),
                f"{result.config.env}-disagreement-{mode}",
                right,
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


def render_budget(name: str, text: str, env_title: str, y_range: tuple | None) -> None:
    """The shipped same-budget comparison ``data/<name>`` (``python -m pvnviz.compare``), with its explanation."""
    from pvnviz.compare import load_rows
    from pvnviz.figures.beyond import budget_figure
    from pvnviz.runs import REPO_ROOT

    st.subheader("The same budget for random search (beyond the paper)")
    try:
        rows = load_rows(REPO_ROOT / "data" / name)
    except (OSError, ValueError) as err:
        st.warning(f"The shipped comparison cannot be read: {err}")
        return
    chart(budget_figure(rows, env_title, y_range), name.removesuffix(".jsonl"))
    what_to_look_at(text)
