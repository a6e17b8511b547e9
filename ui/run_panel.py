"""The Run button's panel of the environment pages (Algorithms 1-3 live; issue 17: a server a class can share).

Run queues the sidebar's settings in a worker (sharing an identical job); Stop leaves it at once. The panel is a
fragment: Run reruns only it. The browser follows the job (``ui/job_progress.py``); when it ends, each tab that
waited on it reruns this panel and the page's results fragment (``results_key``), not the whole page. Stop is a
button of that browser component: under ``make run`` the server's middleware takes it with no script run, so it
takes effect within a second however busy the other sessions keep the server; the panel then reruns to say so.
"""

from __future__ import annotations

import functools
import os

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from pvnviz.core.configs import ConfigError
from pvnviz.runs.pipeline import ExperimentConfig, dataset_config
from pvnviz.runs.sizing import check_budget, check_memory, estimate
from pvnviz.workers.jobs import JobView
from ui import jobs, result_store
from ui.job_progress import show as show_progress
from ui.settings import state_key

BUDGET_ENV = "PVN_LIVE_BUDGET_SECONDS"
DEFAULT_BUDGET_SECONDS = 120.0


def live_budget_seconds() -> float:
    """The instructor's budget for one live run, in estimated seconds of compute.

    From ``$PVN_LIVE_BUDGET_SECONDS``, else ``live_budget_seconds`` in ``.streamlit/secrets.toml``, else 120 s.
    """
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


def over_budget(config: ExperimentConfig | None) -> str | None:
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
    if over_budget(config) is not None:  # the button is disabled then; a stale click is refused too
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


def _on_stop(env_name: str) -> None:
    """The browser's Stop, after the middleware took it (``make run``) or instead of it (``streamlit run``): this
    session stops waiting (again: it is idempotent), and the panel reruns to say so; the results stay as they are.
    A job that ended before the Stop (its end and the click crossed) is drawn as an end: panel and results."""
    if _ended(env_name):
        st.rerun(scope=[panel_key(env_name), results_key(env_name)])
    job_id = st.session_state.get(state_key(env_name, "job"))
    if job_id is not None:
        _stop(env_name, job_id)
    st.rerun(scope=[panel_key(env_name)])


def _stopped_in_browser(env_name: str) -> None:
    """If this session no longer waits on its active job (its Stop, taken by the middleware), note the Stop: the
    panel says so and the settings' match in ``active_job`` does not join the job again."""
    job_id = st.session_state.get(state_key(env_name, "job"))
    job = jobs.view(job_id)
    if job is not None and job.active and not jobs.job_queue().waits(job.id, jobs.session_id()):
        _stop(env_name, job.id)


def active_job(env_name: str, config: ExperimentConfig | None, seed: int) -> JobView | None:
    """This session's active job; else an active job of exactly these settings, which it then waits on too."""
    _stopped_in_browser(env_name)
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


def panel_key(env_name: str) -> str:
    return f"{env_name}-job-panel"


def results_key(env_name: str) -> str:
    return f"{env_name}-results"


def _ended(env_name: str) -> bool:
    """Whether this session's job ended (or the queue forgot it) since the last look; if so, remember how, and
    stop waiting on it."""
    job_id = st.session_state.get(state_key(env_name, "job"))
    job = jobs.view(job_id)
    if job_id is None or (job is not None and job.active):
        return False
    st.session_state[state_key(env_name, "job")] = None
    st.session_state[state_key(env_name, "ended")] = job.state if job is not None else None
    st.session_state[state_key(env_name, "error")] = job.error if job is not None else None
    return True


def _on_job_state(env_name: str) -> None:
    """The browser saw the job end: rerun the panel and the results, not the page (the sidebar, the explanations
    and the figures below stay as they are)."""
    if _ended(env_name):
        st.rerun(scope=[panel_key(env_name), results_key(env_name)])


def job_panel(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """Run and Stop, with the queue's place or the progress and live losses of this session's job.

    A fragment: a click on Run (or on Stop, once taken) reruns only this panel, not the page (whose figures stay
    as they are until the run ends; a whole page's rerun re-sent about 1 MB to the tab, which re-rendered all of
    it). The browser follows the job from here, with no rerun while it waits in line or runs; at its end, this
    panel and the results' fragment rerun to draw the result (``_on_job_state``).
    """
    _stopped_in_browser(env_name)
    ctx = get_script_run_ctx()
    if _ended(env_name) and ctx is not None and ctx.fragment_ids_this_run:
        st.rerun(scope="app")  # seen by this panel's own rerun (a click): the results below must be drawn too
    job = jobs.view(st.session_state.get(state_key(env_name, "job")))
    active = job is not None and job.active
    refusal = over_budget(config)
    if refusal is not None and not active:
        st.warning(f"Too big to run live: {refusal}")
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
    if active:  # the browser follows it from here; it reruns this panel and the results when the job ends
        show_progress(
            jobs.progress_files(),
            job,
            state_key(env_name, "progress"),
            on_state=functools.partial(_on_job_state, env_name),
            stop=functools.partial(jobs.job_queue().detach, job.id, jobs.session_id()),  # no script run needed
            on_stop=functools.partial(_on_stop, env_name),
        )
        return
    ended = st.session_state.get(state_key(env_name, "ended"))
    if ended == "cancelled":
        st.warning("Run stopped. The figures below are the last finished result.")
    elif ended == "failed":
        st.error(f"Please change a setting: {st.session_state.get(state_key(env_name, 'error'))}")
