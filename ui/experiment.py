"""The shared body of the environment pages (CartPole, Swimmer): widgets -> config -> pvnviz -> figures."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import streamlit as st

from pvnviz.core.configs import ConfigError, from_dict
from pvnviz.runs import archive
from pvnviz.runs.files import load_result
from pvnviz.runs.pipeline import ExperimentConfig, ExperimentResult, dataset_config
from pvnviz.runs.presets import preset_label
from pvnviz.runs.sizing import check_budget, check_memory, estimate
from pvnviz.runs.store import RUNS_ROOTS_ENV, RunError, list_runs, read_run, resolve_run, run_roots
from pvnviz.workers.jobqueue import JobView
from ui import computed, jobs, result_store, urlcheck
from ui.errors import guarded
from ui.job_progress import show as show_progress
from ui.result_choice import ResultChoice, ShippedRuns, Source, choose_result
from ui.settings import FIELDS, PRESET_CONFIGS, current_preset, sidebar_config, state_key  # noqa: F401 (pages)


def _last_good(last: ExperimentResult | None) -> ExperimentResult:
    """After bad input: the last result this session computed (``last``), so nothing computed is lost."""
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
    """The Run button: queue the run in a worker (sharing an identical one), with the dataset if it is cached."""
    if _over_budget(config) is not None:  # the button is disabled then; a stale click is refused too
        return
    old = st.session_state.get(state_key(env_name, "job"))
    if old is not None:  # a stale second click: this session stops waiting on its earlier job first
        jobs.stop(old)
    store, lock = result_store()
    with lock:
        dataset = store.get(("dataset", dataset_config(config), seed))  # reused when only later stages changed
    job = jobs.submit(
        ("experiment", config, seed),
        "experiment",
        {"config": config, "seed": seed, "dataset": dataset},
        lane="run",
        label=f"{env_name} seed {seed}",
        estimate=estimate(config).seconds,
    )
    st.session_state[state_key(env_name, "job")] = job.id
    st.session_state[state_key(env_name, "joined")] = False
    st.session_state.pop(state_key(env_name, "ended"), None)


def _stop(env_name: str, job_id: str) -> None:
    """The Stop button: this session stops waiting at once; the run is cancelled unless others wait on it."""
    jobs.stop(job_id)
    st.session_state[state_key(env_name, "job")] = None
    st.session_state[state_key(env_name, "ended")] = "cancelled"
    st.session_state[state_key(env_name, "left")] = job_id  # not joined again by the settings' match below


def _active_job(env_name: str, config: ExperimentConfig | None, seed: int) -> JobView | None:
    """This session's active job; else an active job of exactly these settings, which it then waits on too."""
    job = jobs.view(st.session_state.get(state_key(env_name, "job")))
    if job is not None and job.active:
        if st.session_state.get(state_key(env_name, "joined")) and job.key != ("experiment", config, seed):
            jobs.stop(job.id)  # joined for settings this session has since left: it no longer waits on it
            st.session_state[state_key(env_name, "job")] = None
            return None
        return job
    if job is None and config is not None:
        shared = jobs.job_queue().find(("experiment", config, seed))
        if shared is None or shared.id == st.session_state.get(state_key(env_name, "left")):
            return None
        if jobs.job_queue().attach(shared.id, jobs.session_id()) is not None:
            st.session_state.pop(state_key(env_name, "ended"), None)
            st.session_state[state_key(env_name, "job")] = shared.id
            st.session_state[state_key(env_name, "joined")] = True
            return shared
    return None


def _job_panel(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """Run and Stop, with the queue's place or the progress and live losses of this session's job.

    A fragment: a click on Run or Stop reruns only this panel, not the page (whose figures stay as they are
    until the run ends; a whole page's rerun re-sent about 1 MB to the tab, which re-rendered all of it). The
    browser follows the job from here, and reruns this panel when the job's state changes; at its end, the
    page reruns once to draw the result.
    """
    job_id = st.session_state.get(state_key(env_name, "job"))
    job = jobs.view(job_id)
    if job is not None and not job.active:  # it ended since the last look: remember how, and draw the page
        st.session_state[state_key(env_name, "job")] = None
        st.session_state[state_key(env_name, "ended")] = job.state
        st.session_state[state_key(env_name, "error")] = job.error
        st.rerun(scope="app")
    active = job is not None and job.active
    refusal = _over_budget(config)
    if refusal is not None and not active:
        st.warning(f"Too big to run live: {refusal}")
    with st.container(horizontal=True):
        st.button(
            "Run with these settings",
            on_click=_start,
            args=(env_name, config, seed),
            disabled=active or config is None or refusal is not None,
            type="primary",
            help=(
                "Train the sidebar's settings live in a worker process (Algorithms 1-3); the page keeps showing "
                "the last result until done. Runs wait in line when every worker is busy; identical runs are shared."
            ),
            key=state_key(env_name, "run_button"),
        )
        if active:
            st.button(
                "Leave the queue" if job.state == "queued" else "Stop",
                key=state_key(env_name, "stop"),
                on_click=_stop,
                args=(env_name, job.id),
                help="Stop waiting for this run (it is cancelled unless another session waits on it).",
            )
    if active:  # the browser follows it from here; it reruns this panel when the job's state changes
        show_progress(jobs.progress_files(), job, state_key(env_name, "progress"), on_state=lambda: None)
        return
    ended = st.session_state.get(state_key(env_name, "ended"))
    if ended == "cancelled":
        st.warning("Run stopped. The figures below are the last finished result.")
    elif ended == "failed":
        st.error(f"Please change a setting: {st.session_state.get(state_key(env_name, 'error'))}")


def _shipped(env_name: str, shipped: dict[str, str]) -> ShippedRuns:
    """The shipped runs' (config, seed, folder) per preset id, read from their config.json only."""
    out = {}
    for preset, folder in shipped.items():
        try:
            info = read_run(_resolve(folder), env_name)
            out[preset] = (from_dict(ExperimentConfig, info.config), info.seed, folder)
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
    jobs.prepare_workers()
    _active_job(env_name, config, seed)  # joins a running job of exactly these settings
    run_dir, uploaded = _run_sidebar(env_name, default_run=default_run)
    st.fragment(guarded(_job_panel))(env_name, config, seed)
    shipped_runs = _shipped(env_name, shipped or {})
    inputs = dict(
        run_dir=run_dir,
        config=config,
        seed=seed,
        live=_live_result(config, seed),
        shipped=shipped_runs,
        last=st.session_state.get(state_key(env_name, "last_result")),
        preset=current_preset(env_name, next(iter(shipped_runs))) if shipped_runs else None,
    )
    choice = choose_result(uploaded=uploaded is not None, **inputs)
    if choice.source is Source.UPLOAD:
        opened = _open_upload(uploaded, env_name)
        if opened is not None:
            return _remember(env_name, opened)
        choice = choose_result(uploaded=False, **inputs)  # the zip cannot be opened (said above): as without it
    return _show(choice, env_name, seed)


def _run_sidebar(env_name: str, *, default_run: str) -> tuple[str, Any]:
    """The sidebar's saved-run list and zip upload: (run folder, upload)."""
    with st.sidebar:
        names = [NO_RUN, *list_runs(env_name)]
        run_dir = st.selectbox(
            "Open a saved run",
            names,
            index=names.index(default_run) if default_run in names else 0,
            format_func=_run_label,
            key=state_key(env_name, "run"),
            bind="query-params",
            help=(
                f"Runs under {', '.join(r.name + '/' for r in run_roots())} (set {RUNS_ROOTS_ENV} to change): "
                "write one with `python -m pvnviz run ... --out runs/NAME`."
            ),
        )
        uploaded = st.file_uploader(
            "Open a run zip",
            type=["zip"],
            key=state_key(env_name, "upload"),
            help=f"A zip downloaded from this page (at most {archive.MAX_ZIP_BYTES // 2**20} MB).",
        )
    return run_dir, uploaded


def _live_result(config: ExperimentConfig | None, seed: int) -> ExperimentResult | None:
    """A finished live run of (config, seed) in the server's shared cache, or None."""
    if config is None:
        return None
    store, lock = result_store()
    with lock:
        return store.get(("experiment", config, seed))


def _open_upload(uploaded: Any, env_name: str) -> ExperimentResult | None:
    """The uploaded run zip, with a note saying so; None (after an error) when it cannot be opened."""
    try:
        data = uploaded.getvalue()  # keyed by its hash: the cache holds no copy of the upload's bytes
        result = computed(_unzip, hashlib.sha256(data).hexdigest(), env_name, label="Opening the zip", data=data)
    except archive.ArchiveError as err:
        st.error(f"Cannot open that zip: {err}")
        return None
    st.info(f"Showing the uploaded run `{uploaded.name}` ({_describe(result, env_name)}).")
    return result


def _open_saved(run_dir: str, env_name: str) -> ExperimentResult:
    """The saved run picked in the sidebar, with a note saying so; after an error, the last valid result."""
    try:
        path = str(resolve_run(run_dir))
        result = computed(_load, path, _stamp(path), env_name, label=f"Opening {run_dir}")
    except RunError as err:
        st.error(f"Cannot open that run: {err}")
        return _last_good(st.session_state.get(state_key(env_name, "last_result")))
    st.info(
        f"Showing the saved run in `{run_dir}` ({_describe(result, env_name)}); the sidebar's settings "
        "apply when you choose none in the sidebar's run list."
    )
    return _remember(env_name, result)


def _show(choice: ResultChoice, env_name: str, seed: int) -> ExperimentResult:
    """The result ``choice`` names (opened if it is a folder) under a note saying what it is; stops without one."""
    if choice.source is Source.SAVED_RUN:
        return _open_saved(choice.folder, env_name)
    if choice.source is Source.INVALID:
        return _last_good(choice.result)
    if choice.source is Source.LIVE:
        st.caption(f"Showing the live run of these settings ({_describe(choice.result, env_name)}).")
        return _remember(env_name, choice.result)
    if choice.source is Source.SHIPPED:
        label = preset_label(env_name, choice.preset)
        st.caption(f"Showing the shipped run `{choice.folder}` of these settings (preset {label}, seed {seed}).")
        return _remember(env_name, _open(choice.folder, env_name))
    if choice.source is Source.NOT_RUN:
        last = choice.result if choice.result is not None else _open(choice.folder, env_name)
        st.warning(
            f"These settings have not been run yet (seed {seed}). Shown below: {_describe(last, env_name)}. "
            "Press **Run with these settings** above to train them, or **Reset to the paper** to see the "
            "paper's run."
        )
        return last
    st.info("No result for these settings yet: press **Run with these settings** above.")
    urlcheck.stop()


def _describe(result: ExperimentResult, env_name: str) -> str:
    """'preset P, seed S' (P: the box's label) when a preset's config matches, else 'custom settings, seed S'."""
    for preset, config in PRESET_CONFIGS.get(env_name, {}).items():
        if config == result.config:
            return f"preset {preset_label(env_name, preset)}, seed {result.seed}"
    return f"custom settings, seed {result.seed}"


def _remember(env_name: str, result: ExperimentResult) -> ExperimentResult:
    st.session_state[state_key(env_name, "last_result")] = result
    return result


def _unzip(digest: str, env_name: str, on_progress, data: bytes = b"") -> ExperimentResult:
    return archive.read_run_zip(data, env_name)


def _stamp(path: str) -> float:
    """Latest modification time in a run folder, so a rewritten run is not served from the cache."""
    try:
        return max((f.stat().st_mtime for f in Path(path).iterdir()), default=0.0)
    except OSError:
        return 0.0


def _load(path: str, stamp: float, env_name: str, on_progress) -> ExperimentResult:
    return load_result(path, env_name)
