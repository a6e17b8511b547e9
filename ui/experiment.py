"""The shared body of the environment pages (CartPole, Swimmer): widgets -> config -> pvnviz -> figures."""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from pvnviz import archive
from pvnviz.configs import ConfigError, from_dict
from pvnviz.experiment import (
    ExperimentConfig,
    ExperimentResult,
    collect,
    dataset_config,
    run_experiment,
)
from pvnviz.figures import experiment as figs
from pvnviz.run_files import load_result
from pvnviz.runs import RUNS_ROOTS_ENV, RunError, list_runs, read_run, resolve_run, run_roots
from pvnviz.sizing import check_budget, check_memory
from ui import MAX_RESULTS, _store, chart, computed, urlcheck
from ui.errors import guarded
from ui.jobs import Job
from ui.settings import FIELDS, PRESET_CONFIGS, _current_preset, _key, sidebar_config  # noqa: F401 (pages)


def _last_good(env_name: str) -> ExperimentResult:
    """After bad input: the last result this session computed, so nothing computed is lost."""
    last = st.session_state.get(_key(env_name, "last_result"))
    if last is None:
        urlcheck.stop()
    st.caption("Showing your last valid run until the settings are fixed.")
    return last


REPO_ROOT = Path(__file__).resolve().parents[1]


def _resolve(run_dir: str) -> str:
    """A shipped run's folder (named in the page's code, relative to the project)."""
    return str(REPO_ROOT / run_dir)


NO_RUN = ""


def _run_label(name: str) -> str:
    return "— none: use the settings above —" if name == NO_RUN else name


def _experiment_job(config: ExperimentConfig, seed: int, store, on_progress, job: Job) -> ExperimentResult:
    """The live run, in the job's thread: the dataset (reused when only later stages changed), then the rest."""
    results, lock = store
    data_key = ("dataset", dataset_config(config), seed)
    with lock:
        dataset = results.get(data_key)
    if dataset is None:
        dataset = collect(dataset_config(config), seed, on_progress)
        with lock:
            results[data_key] = dataset
    on_progress(0, 1, "dataset ready; splitting and training")  # stops here if Stop came during the last rollouts
    result = run_experiment(config, seed, on_progress, on_metrics=job.on_metrics, dataset=dataset)
    with lock:
        results[("experiment", config, seed)] = result  # a copied link opened on this server finds it
        while len(results) > MAX_RESULTS:
            results.popitem(last=False)
    return result


BUDGET_ENV = "PVN_LIVE_BUDGET_SECONDS"
DEFAULT_BUDGET_SECONDS = 120.0


def live_budget_seconds() -> float:
    """The instructor's budget for one live run, in estimated seconds of compute.

    From ``$PVN_LIVE_BUDGET_SECONDS``, else ``live_budget_seconds`` in ``.streamlit/secrets.toml``, else 120 s.
    """
    import os

    text = os.environ.get(BUDGET_ENV)
    if text is None:
        try:
            text = st.secrets.get("live_budget_seconds")
        except Exception:  # noqa: BLE001 - no secrets.toml: Streamlit raises its own error type
            text = None
    try:
        value = float(text) if text is not None else DEFAULT_BUDGET_SECONDS
    except (TypeError, ValueError):
        value = DEFAULT_BUDGET_SECONDS
    return value if value > 0 else DEFAULT_BUDGET_SECONDS


def _over_budget(config: ExperimentConfig | None) -> str | None:
    """Why the Run button refuses these settings (memory or the live-run budget), or None."""
    if config is None:
        return None
    try:
        check_budget(config, live_budget_seconds(), check_memory(config))  # one estimate for both checks
    except ConfigError as err:
        return str(err)
    return None


def _start(env_name: str, config: ExperimentConfig, seed: int) -> None:
    if _over_budget(config) is not None:  # the button is disabled then; a stale click is refused too
        return
    job = Job(f"{env_name} seed {seed}", key=("experiment", config, seed))
    st.session_state[_key(env_name, "job")] = job.start(_experiment_job, config=config, seed=seed, store=_store())


def _job_panel(env_name: str) -> None:
    """Progress, live losses and Stop of this session's running job; on its end, one rerun draws the result."""
    job: Job | None = st.session_state.get(_key(env_name, "job"))
    if job is None:
        return
    if job.running:
        done, total, info = job.progress
        left, right = st.columns([5, 1])
        elapsed = time.perf_counter() - job.started
        left.progress(min(done / max(total, 1), 1.0), text=f"Running ({elapsed:.0f} s): {info}")
        right.button("Stop", key=_key(env_name, "stop"), on_click=job.stop, type="primary", help="Cancel this run.")
        if job.history:
            curves = figs.live_curves({m: list(h) for m, h in job.history.items()})
            live = figs.loss_figure(curves, "PVN training (live)")
            chart(live, "pvn-training-live", key=_key(env_name, "live_chart"))
        return
    if not getattr(job, "shown", False):
        job.shown = True
        st.rerun(scope="app")
    if job.cancelled:
        st.warning("Run stopped. The figures below are the last finished result.")
    elif job.error:
        st.error(f"Please change a setting: {job.error}")


def _shipped(env_name: str, shipped: dict[str, str]) -> dict[str, tuple[ExperimentConfig, int, str]]:
    """The shipped runs' (config, seed, folder) per preset label, read from their config.json only."""
    out = {}
    for label, folder in shipped.items():
        try:
            info = read_run(_resolve(folder), env_name)
            out[label] = (from_dict(ExperimentConfig, info.config), info.seed, folder)
        except (RunError, ConfigError, TypeError) as err:
            st.warning(f"Shipped run {folder} cannot be opened: {err}")
    return out


def _open(folder: str, env_name: str) -> ExperimentResult:
    path = _resolve(folder)
    return computed(_load, path, _stamp(path), env_name, label=f"Opening {folder}")


def obtain_result(
    env_name: str,
    config: ExperimentConfig | None,
    seed: int,
    default_run: str = "",
    shipped: dict[str, str] | None = None,
) -> ExperimentResult:
    """What the page draws: a folder or zip the user opened, else the result of (config, seed) if any run made it
    (a live run on this server, or a shipped run), else the last finished result with a note saying so.

    Live training starts only from the Run button, in a background job with progress and Stop.
    """
    run_key, job_key = _key(env_name, "run"), _key(env_name, "job")
    job: Job | None = st.session_state.get(job_key)
    busy = job is not None and job.running
    refusal = _over_budget(config)
    with st.sidebar:
        if refusal is not None:
            st.warning(f"Too big to run live: {refusal}")
        st.button(
            "Run with these settings",
            on_click=_start,
            args=(env_name, config, seed),
            disabled=busy or config is None or refusal is not None,
            type="primary",
            help="Train live in the background (Algorithms 1-3); the page keeps showing the last result until done.",
            key=_key(env_name, "run_button"),
        )
        names = [NO_RUN, *list_runs(env_name)]
        run_dir = st.selectbox(
            "Open a saved run",
            names,
            index=names.index(default_run) if default_run in names else 0,
            format_func=_run_label,
            key=run_key,
            bind="query-params",
            help=(
                f"Runs under {', '.join(r.name + '/' for r in run_roots())} (set {RUNS_ROOTS_ENV} to change): "
                "write one with `python -m pvnviz run ... --out runs/NAME`."
            ),
        )
        uploaded = st.file_uploader(
            "Open a run zip",
            type=["zip"],
            key=_key(env_name, "upload"),
            help=f"A zip downloaded from this page (at most {archive.MAX_ZIP_BYTES // 2**20} MB).",
        )
    st.fragment(guarded(_job_panel), run_every=0.5 if busy else None)(env_name)
    shipped_runs = _shipped(env_name, shipped or {})
    presets = PRESET_CONFIGS.get(env_name, {})
    if uploaded is not None:
        try:
            result = computed(_unzip, uploaded.getvalue(), env_name, label="Opening the zip")
            st.info(f"Showing the uploaded run `{uploaded.name}` ({_describe(result, presets)}).")
            return _remember(env_name, result)
        except archive.ArchiveError as err:
            st.error(f"Cannot open that zip: {err}")
    if run_dir:
        try:
            path = str(resolve_run(run_dir))
            result = computed(_load, path, _stamp(path), env_name, label=f"Opening {run_dir}")
            st.info(
                f"Showing the saved run in `{run_dir}` ({_describe(result, presets)}); the sidebar's settings "
                "apply when you choose none in the sidebar's run list."
            )
            return _remember(env_name, result)
        except RunError as err:
            st.error(f"Cannot open that run: {err}")
            return _last_good(env_name)
    if config is None:
        return _last_good(env_name)
    store, lock = _store()
    with lock:
        result = store.get(("experiment", config, seed))
    if result is not None:
        st.caption(f"Showing the live run of these settings ({_describe(result, presets)}).")
        return _remember(env_name, result)
    for label, (run_config, run_seed, folder) in shipped_runs.items():
        if run_config == config and run_seed == seed:
            st.caption(f"Showing the shipped run `{folder}` of these settings (preset {label}, seed {seed}).")
            return _remember(env_name, _open(folder, env_name))
    last = st.session_state.get(_key(env_name, "last_result"))
    if last is None and shipped_runs:
        label = _current_preset(env_name, shipped_runs, next(iter(shipped_runs)))
        last = _open(shipped_runs[label][2], env_name)
    if last is None:
        st.info("No result for these settings yet: press **Run with these settings** in the sidebar.")
        urlcheck.stop()
    st.warning(
        f"These settings have not been run yet (seed {seed}). Shown below: {_describe(last, presets)}. "
        "Press **Run with these settings** in the sidebar to train them, or **Reset to the paper** to see the "
        "paper's run."
    )
    return last


def _describe(result: ExperimentResult, presets: dict[str, ExperimentConfig]) -> str:
    """'preset P, seed S' when a preset's config matches, else 'custom settings, seed S'."""
    for label, preset in presets.items():
        if preset == result.config:
            return f"preset {label}, seed {result.seed}"
    return f"custom settings, seed {result.seed}"


def _remember(env_name: str, result: ExperimentResult) -> ExperimentResult:
    st.session_state[_key(env_name, "last_result")] = result
    return result


def _unzip(data: bytes, env_name: str, on_progress) -> ExperimentResult:
    return archive.read_run_zip(data, env_name)


def _stamp(path: str) -> float:
    """Latest modification time in a run folder, so a rewritten run is not served from the cache."""
    try:
        return max((f.stat().st_mtime for f in Path(path).iterdir()), default=0.0)
    except OSError:
        return 0.0


def _load(path: str, stamp: float, env_name: str, on_progress) -> ExperimentResult:
    return load_result(path, env_name)
