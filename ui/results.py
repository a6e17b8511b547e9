"""The results of an environment run on its page (Sections 6.2-6.3, Fig. 4-5): figures and what to look at."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import streamlit as st

from pvnviz.envs import registry as envs
from pvnviz.envs.registry import get_env
from pvnviz.figures import ascent as ascent_figs
from pvnviz.figures import experiment as figs
from pvnviz.figures import gif
from pvnviz.figures.replay import replay_steps, replay_variants
from pvnviz.runs import archive
from pvnviz.runs.live import replay_pairs_of, replays_key, values_digest
from pvnviz.runs.pipeline import ExperimentResult
from ui import gif_download, urlcheck, what_to_look_at
from ui.beyond import render_beyond
from ui.browser_player import Choice, play
from ui.components import PlainFigure, chart, result_figure
from ui.headline import render_headline
from ui.server import queue as jobs

REPLAY_NAMES = ("before ascent", "after ascent")  # pvnviz.runs.live.policy_pair: the start, the chosen iterate


def render_results(
    result: ExperimentResult,
    paper_note: str,
    baselines: dict | None = None,
    baseline_source: str = "",
) -> None:
    """Every figure of the experiment, each with its 'what to look at', in page order."""
    replay = get_env(result.config.env_name).replay
    if replay is not None and result.traces:  # a worker replays every start while the figures above are drawn
        key, task, kwargs, extra = _replays_job(result)
        jobs.prefetch(key, task, kwargs, **extra)
    summary = result.summary()
    _render_download(result)
    render_headline(summary)
    _render_dataset_and_training(result)
    _render_ascent(
        result,
        summary,
        paper_note=paper_note,
        baselines=baselines,
        baseline_source=baseline_source,
        highlighted=replay_start(result) if replay is not None else -1,
    )
    render_beyond(result)
    _render_validation(result)
    if "fingerprint" in result.trained and result.trained["fingerprint"].probe_snapshots is not None:
        _render_probes(result)
    if replay is not None and result.traces:
        st.subheader("Replay: before and after ascent")
        render_replay(result)


def _render_download(result: ExperimentResult) -> None:
    """The run as a zip, to open again here or on another server."""
    st.download_button(
        "Download this run (zip: config, summary, arrays, PVN weights)",
        data=lambda: archive.run_zip(result),
        file_name=f"pvn-{result.config.env_name}-seed{result.seed}.zip",
        mime="application/zip",
        on_click="ignore",
        help="Open it again with 'Open a run zip' in the sidebar, here or on another server.",
    )


def _render_dataset_and_training(result: ExperimentResult) -> None:
    """Side by side: the dataset's returns (Algorithm 1, Fig. 4 left) and the PVN's training curves (Algorithm 2)."""
    config = result.config
    left, right = st.columns(2)
    with left:
        histogram = result_figure(
            result, "dataset", lambda: figs.returns_histogram(result.dataset, result.split, config.return_limit)
        )
        chart(histogram, f"{config.env_name}-dataset")
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
                "(no limit here, as in Section 6.3). The right-most bar holds the best policy the PVN trained on: "
                "the one an ascent must beat."
            )
    with right:
        losses = result_figure(result, "pvn-training", lambda: figs.loss_figure(figs.trained_curves(result.trained)))
        chart(losses, f"{config.env_name}-pvn-training")
    with right:
        what_to_look_at(
            "Algorithm 2. KL divergence between each policy's return histogram and the PVN's prediction, "
            "dotted on training batches and solid on held-out policies"
            + (", orange for the fingerprint PVN and grey for flattened weights. " if len(result.trained) > 1 else ". ")
            + "A validation curve that turns up while the training curve falls is the PVN overfitting."
        )


def _render_ascent(
    result: ExperimentResult,
    summary: dict,
    *,
    paper_note: str,
    baselines: dict | None,
    baseline_source: str,
    highlighted: int,
) -> None:
    """Algorithm 3: each start's true return along its ascent (Fig. 4 right, Fig. 5), the ``highlighted`` start
    (0-based; -1: none) the one the replay shows, under the page's note on the paper's figure."""
    config = result.config
    best, best_label = ascent_figs.kept_best_line(summary)

    def build():
        return ascent_figs.ascent_figure(
            result.traces, config.return_limit, best, baselines, baseline_source, best_label=best_label
        )

    key = ("ascent", best, best_label, tuple((baselines or {}).items()), baseline_source)
    figure = result_figure(result, key, build)
    # a copy with the replayed start brought out, sharing the encoded figure's other traces
    chart(PlainFigure(ascent_figs.highlight_start(figure, highlighted)), f"{config.env_name}-ascent")
    what_to_look_at(paper_note)


def _render_validation(result: ExperimentResult) -> None:
    """The validation policies (never trained on): predicted against true mean return, and each one's distribution."""
    config, split = result.config, result.split
    left, right = st.columns(2)
    if not len(split.val_idx):
        st.caption("No validation policies (validation share 0): prediction panels are skipped.")
    else:
        with left:
            figure = result_figure(result, "predictions", lambda: _prediction_figure(result))
            chart(figure, f"{config.env_name}-predictions")
    with left:
        what_to_look_at(
            "Validation policies, never trained on: the PVN's Ĵ (the histogram's mean, Section 3) against "
            "the Monte Carlo mean. Points on the diagonal are right."
        )
    with right:
        if len(split.val_idx):
            _validation_distributions(result, config.env_name)
            what_to_look_at(
                "Section 3: the PVN predicts a whole distribution over return bins; bars are this "
                "policy's empirical histogram from its rollouts."
            )


def _prediction_figure(result: ExperimentResult) -> dict:
    """Each PVN's Ĵ against the Monte Carlo mean return on the validation policies, as plotly JSON."""
    dataset, val = result.dataset, result.split.val_idx
    predictions = {}
    for mode, trained in result.trained.items():
        _, j_hat = trained.predict(dataset.params[val])
        predictions[mode] = (dataset.mean_returns[val], j_hat)
    return figs.prediction_figure(predictions).to_plotly_json()


def _render_probes(result: ExperimentResult) -> None:
    """The probing states moving through training (Section 4), in a player that picks its axes in the page."""
    config, trained = result.config, result.trained["fingerprint"]
    env = get_env(config.env_name)
    st.subheader("Probing states")
    labels = list(env.state_labels)
    defaults = {"x": 0, "y": min(2, env.obs_dim - 1)}
    dims = {axis: _held(f"{config.env_name}_probe_{axis}", env.obs_dim, default) for axis, default in defaults.items()}

    def keep(choice: dict[str, int]) -> None:
        for axis, default in defaults.items():
            _keep(f"{config.env_name}_probe_{axis}", choice[axis], default)

    gif_download(
        "Download the probing states (GIF)",
        lambda: gif.probes_gif(trained, (dims["x"], dims["y"]), (labels[dims["x"]], labels[dims["y"]])),
        f"{config.env_name}-probes.gif",
    )
    key = f"{config.env_name}_probes"
    snapshots = len(trained.probe_snapshots)
    play(
        key,
        None,  # the page projects the snapshots on the chosen axes (figures.experiment.probes_data)
        snapshots,
        label="snapshot",
        start=snapshots - 1,
        reset_on=(config, values_digest(trained.probe_snapshots)),
        names={key: key},
        prebuilt=lambda projector: figs.probes_data(trained, env, key, projector),
        choices=(Choice("x", "Horizontal axis", labels), Choice("y", "Vertical axis", labels)),
        choice=dims,
        on_choice=keep,
    )
    moving = (
        "press ▶ to watch them move as they are trained jointly with the PVN (Algorithm 2)"
        if config.train_probes
        else "they are frozen here (training them is off), so they stay where they started"
    )
    what_to_look_at(
        f"Section 4. The fingerprint is the policy's output at these probing states; {moving}. Grey rings "
        f"are where they started, faint lines their paths; dashed lines mark {env.bounds_label}. The axes "
        "switch in the page."
    )


def _held(key: str, size: int, default: int, base: int = 0) -> int:
    """A view's option index (shown ``base``-based in the URL): this session's, else the link's if it is one of the
    ``size`` options, else ``default`` (``ui.urlcheck`` names a link value not taken)."""
    held = st.session_state.get(key)
    if type(held) is int and base <= held < size + base:
        return held - base
    asked = urlcheck.link_int(key, base, size - 1 + base, instead=str(default + base))
    index = default if asked is None else asked - base
    st.session_state[key] = index + base
    return index


def _keep(key: str, index: int, default: int | None, base: int = 0) -> None:
    """A view switched in the page: into the session and the URL (left out when it is ``default``)."""
    st.session_state[key] = index + base
    urlcheck.put(key, None if index == default else str(index + base))


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
        reset_on=(result.config, values_digest(dataset.params[options], dataset.returns[options])),
        names={"policy": f"{env}-validation-policy"},
        prebuilt=frames,
    )


def replay_choice(result: ExperimentResult) -> tuple[str, int]:
    """The replay's PVN and start (0-based): this session's, else the link's, else the first PVN's best start
    (highest true return seen). The start is always in the URL, the opening one too: which start a page opens on
    depends on the result, so a link without it could open another start than the one on screen."""
    env, modes = result.config.env_name, list(result.traces)
    held = st.session_state.get(f"{env}_replay_mode")
    if held not in modes:
        asked = st.query_params.get(f"{env}_replay_mode", "")
        held = st.session_state[f"{env}_replay_mode"] = asked if asked in modes else modes[0]
    trace = result.traces[held]
    best = int(np.argmax(trace.true_returns.max(0)))
    start = _held(f"{env}_replay_start", trace.params.shape[1], best, base=1)
    st.query_params[f"{env}_replay_start"] = str(start + 1)
    return held, start


def render_replay(result: ExperimentResult) -> None:
    """The environment's replay (``BatchedEnv.replay``) of every start before and after its ascent, through each
    PVN, sent once to a player that switches start and PVN in the page; GIF/MP4 downloads and the caption."""
    config = result.config
    env, modes = config.env_name, list(result.traces)
    job_key, task, kwargs, extra = _replays_job(result)
    pairs, digest = kwargs["pairs"], job_key[3]  # the pairs' values digested, as the key has them
    try:
        replays = jobs.in_worker(job_key, task, kwargs, **extra)
    except RuntimeError as err:
        st.error(f"The replays could not be made: {err}")
        return
    titles = {k: [f"{n}: {panel.summary}" for n, panel in zip(REPLAY_NAMES, r.panels)] for k, r in replays.items()}
    mode, start = replay_choice(result)
    starts = max(len(p) for p in pairs.values())
    key = f"{env}_replay"

    def variants(projector: bool) -> dict:
        made = replay_variants(replays, titles, key, projector)
        return {"variants": {f"{modes.index(m)}|{s}": anim for (m, s), anim in made.items()}}

    def keep(choice: dict[str, int]) -> None:
        picked = modes[choice["mode"]]
        st.session_state[f"{env}_replay_mode"] = picked
        urlcheck.put(f"{env}_replay_mode", None if picked == modes[0] else picked)
        _keep(f"{env}_replay_start", min(choice["start"], len(pairs[picked]) - 1), None, base=1)

    shown = replays[mode, start]
    play(
        key,
        None,
        len(replay_steps(shown)),
        label="time step",
        reset_on=(config, result.seed, digest),
        names={key: key},
        prebuilt=variants,
        choices=(
            Choice("mode", "Ascent through", [figs.MODE_LABEL[m] for m in modes]),
            Choice("start", "Start", [str(s + 1) for s in range(starts)]),
        ),
        choice={"mode": modes.index(mode), "start": start},
        on_choice=keep,
    )
    gif_download(
        "Download this replay (GIF)", lambda: gif.replay_gif(shown, titles[mode, start]), f"{env}-replay.gif"
    )
    what_to_look_at(shown.caption)


def _replays_job(result: ExperimentResult) -> tuple[Hashable, str, dict, dict]:
    """``jobs.in_worker``'s arguments for every start's replay (the ``replays`` task, in a quick worker), from the
    run's own seed: every session showing the run shares one job and one animation, whatever its sidebar's seed
    (a page whose settings have not been run shows seed 0's run; each visitor's seed made its replays again).
    A live run made them in its own worker (``pvnviz.runs.live``), under the same key: then they are cached."""
    config, env, seed = result.config, result.config.env_name, result.seed
    pairs = replay_pairs_of(result)
    kwargs = {
        "env_name": env,
        "arch": config.arch(),
        "pairs": pairs,
        "horizon": config.horizon,
        "seed": seed,
        "factory": None if env in envs.BUILT_IN else envs.ENVIRONMENTS.get(env),  # a gym: name builds anywhere
    }
    label = "Replaying each start before and after its ascent"
    extra = {"label": label, "estimate": 0.3 * sum(map(len, pairs.values()))}
    return replays_key(result, pairs), "replays", kwargs, extra


def replay_start(result: ExperimentResult) -> int:
    """The start the replay shows (0-based): the one picked, else the best start (highest true return seen)."""
    return replay_choice(result)[1]
