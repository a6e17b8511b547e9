"""The Run button's panel of the environment pages (Algorithms 1-3 live, on a server a class can share).

Run queues the sidebar's settings in a worker (sharing an identical job); Stop leaves it at once. The panel is a
fragment. Served by ``make run``, Run is a button of the browser component that follows the job, as Stop is: its
click goes to the server's middleware, which queues the job with no script run (a class pressing Run at once costs
the server and each tab no rerun); the session's next script run adopts the job (``_adopt``). Under ``streamlit
run``, Run is a Streamlit button, and its click reruns only the panel. The browser follows the job
(``ui/job_progress.py``); when it ends, each tab that waited on it reruns this panel and the page's results
fragment (``results_key``), not the whole page. Stop is a button of that browser component: under ``make run`` the
server's middleware takes it with no script run, so it takes effect within a second however busy the other sessions
keep the server; the panel then reruns to say so.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import secrets
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from pvnviz.core.config_fields import ConfigError
from pvnviz.runs.pipeline import ExperimentConfig, dataset_config
from pvnviz.runs.sizing import check_budget, check_memory, estimate
from pvnviz.workers.jobqueue import JobQueue
from pvnviz.workers.jobs import JobView
from ui import jobs, progress_memory, result_store
from ui.components import static_url
from ui.job_progress import ProgressFiles, follow
from ui.job_progress import show as show_progress
from ui.settings import PRESET_CONFIGS, state_key

LOG = logging.getLogger("pvnlab.run_panel")  # the server's log, with the error boundary's (ui.errors)
BUDGET_ENV = "PVN_LIVE_BUDGET_SECONDS"
RUN_LABEL = "Run with these settings"
RUN_HELP = (
    "Train the sidebar's settings live in a worker process (Algorithms 1-3); the page keeps showing the last "
    "result until done. Runs wait in line when every worker is busy; identical runs are shared."
)
REFUSED = b'{"refused":true}'  # a browser Run the middleware could not queue: the page asks again by a rerun
# (session, env) -> (the job its browser's Run queued, that job's stop token, its key), until the session's next
# script run adopts it (``_adopt``); at most MAX_STARTED (the oldest go: a session closed before any rerun)
_STARTED: OrderedDict[tuple[str, str], tuple[str, str, Hashable]] = OrderedDict()
_STARTED_LOCK = threading.Lock()
MAX_STARTED = 4096
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


def _queue_run(
    queue: JobQueue,
    store: tuple[Any, Any],
    session: str,
    old: str | None,
    config: ExperimentConfig,
    seed: int,
    label: str,
    budget_checked: bool = False,
) -> JobView | None:
    """Queue (config, seed) for ``session`` in a worker (sharing an identical job), with the dataset if it is
    cached; the session stops waiting on its ``old`` job first, unless that one computes the same (a Run asked
    twice keeps its place in line). None if over the budget (the button is disabled then; a stale click is
    refused too; ``budget_checked``: the page checked it when it drew the button)."""
    if not budget_checked and over_budget(config) is not None:
        return None
    key = ("experiment", config, seed)
    if old is not None:
        kept = queue.view(old, session)
        if kept is not None and kept.active and kept.key == key and queue.waits(old, session):
            return kept
        queue.detach(old, session)  # a stale second click: this session stops waiting on its earlier job first
    cache, lock = store
    with lock:
        dataset = cache.get(("dataset", dataset_config(config), seed))  # reused when only later stages changed
    return queue.submit(
        session,
        key,
        "live_experiment",  # the run, then its replays: the page draws at once when it ends (pvnviz.runs.live)
        {"config": config, "seed": seed, "dataset": dataset},
        lane="run",
        label=label,
        estimate=estimate(config).seconds,
    )


def _took(env_name: str, job_id: str) -> None:
    """This session now waits on its own job ``job_id``."""
    st.session_state[state_key(env_name, "job")] = job_id
    st.session_state[state_key(env_name, "joined")] = False
    st.session_state.pop(state_key(env_name, "ended"), None)


def _start(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """The Run button, in a script run: queue the run (``_queue_run``)."""
    _adopt(env_name, config, seed)
    if config is None:  # the button is disabled then: a stale or forged click
        return
    old = _job_id(env_name)
    job = _queue_run(jobs.job_queue(), result_store(), jobs.session_id(), old, config, seed, f"{env_name} seed {seed}")
    if job is not None:
        _took(env_name, job.id)


def settings_id(config: ExperimentConfig | None, seed: int) -> str:
    """A short name of the settings a page shows (the browser compares a Run's with its page's)."""
    return hashlib.sha256(repr((config, seed)).encode()).hexdigest()[:16]


def _browser_start(
    queue: JobQueue,
    store: tuple[Any, Any],
    files: ProgressFiles,
    session: str,
    env_name: str,
    old: str | None,
    config: ExperimentConfig,
    seed: int,
) -> bytes:
    """The browser's Run, in the server's middleware (no script run): queue the run and answer with what the page
    follows (``ui.job_progress.follow``) and the settings' name; the session's next script run adopts the job
    (``_adopt``). A second Run before that replaces the first (the session stops waiting on it). Anything that goes
    wrong answers ``REFUSED``, and the page asks again by a rerun, which says what went wrong."""
    try:
        job = _queue_run(queue, store, session, old, config, seed, f"{env_name} seed {seed}", budget_checked=True)
        if job is None:
            return REFUSED
        followed = follow(files, job, functools.partial(queue.detach, job.id, session))
        with _STARTED_LOCK:
            earlier = _STARTED.pop((session, env_name), None)
            _STARTED[(session, env_name)] = (job.id, followed.pop("stopToken"), job.key)
            while len(_STARTED) > MAX_STARTED:
                _STARTED.popitem(last=False)
        if earlier is not None and earlier[0] != job.id:
            queue.detach(earlier[0], session)
        followed["settings"] = settings_id(config, seed)
        return json.dumps(followed, separators=(",", ":"), allow_nan=False).encode()
    except Exception:  # noqa: BLE001 - the traceback goes to the log; the page's rerun shows one clear message
        LOG.exception("a Run from the browser could not be queued; the page asks again by a rerun")
        return REFUSED


def _adopt(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """Take over the job this session's browser queued with no script run (``_browser_start``), if any: from now on
    it is this session's job, as if its Run had been a Streamlit button. Every script run of the panel calls this
    first, with the settings the page shows (the one place a job is adopted).

    A Run that reached the server with the settings its page showed before the last change (a setting typed, then
    Run at once: the click's POST outran the rerun the typing asked for) was meant for these settings: its job is
    left, and these are queued instead (unless the session already has a job, or these cannot run)."""
    with _STARTED_LOCK:
        started = _STARTED.pop((jobs.session_id(), env_name), None)
    if started is None:
        return
    job_id, token, key = started
    st.session_state[state_key(env_name, "adopted")] = job_id  # the browser stops following it on its own
    current = st.session_state.get(state_key(env_name, "job"))
    if key != ("experiment", config, seed):
        jobs.stop(job_id)
        if current is None:
            _start(env_name, config, seed)
        return
    if current is not None and current != job_id:  # a Run by a rerun came in between: the browser's is the last
        jobs.stop(current)
    _took(env_name, job_id)
    st.session_state[f"{state_key(env_name, 'progress')}-stop"] = (job_id, token)  # the page's Stop keeps working


def _job_id(env_name: str) -> str | None:
    """This session's job on this page, or None (a job its browser queued once ``_adopt`` took it over)."""
    return st.session_state.get(state_key(env_name, "job"))


def _stop(env_name: str, job_id: str) -> None:
    """The Stop button: this session stops waiting at once; the run is cancelled unless others wait on it."""
    jobs.stop(job_id)
    st.session_state[state_key(env_name, "job")] = None
    st.session_state[state_key(env_name, "ended")] = "cancelled"
    st.session_state[state_key(env_name, "left")] = job_id  # not joined again by the settings' match below


def _on_stop(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """The browser's Stop, after the middleware took it (``make run``) or instead of it (``streamlit run``): this
    session stops waiting (again: it is idempotent), and the panel reruns to say so; the results stay as they are.
    A job that ended before the Stop (its end and the click crossed) is drawn as an end: panel and results."""
    _adopt(env_name, config, seed)
    if _ended(env_name):
        st.rerun(scope=[panel_key(env_name), results_key(env_name)])
    job_id = _job_id(env_name)
    if job_id is not None:
        _stop(env_name, job_id)
    st.rerun(scope=[panel_key(env_name)])


def _stopped_in_browser(env_name: str) -> None:
    """If this session no longer waits on its active job (its Stop, taken by the middleware), note the Stop: the
    panel says so and the settings' match in ``active_job`` does not join the job again."""
    job_id = _job_id(env_name)
    job = jobs.view(job_id)
    if job is not None and job.active and not jobs.job_queue().waits(job.id, jobs.session_id()):
        _stop(env_name, job.id)


def active_job(env_name: str, config: ExperimentConfig | None, seed: int) -> JobView | None:
    """This session's active job; else an active job of exactly these settings, which it then waits on too."""
    _adopt(env_name, config, seed)
    _stopped_in_browser(env_name)
    job = jobs.view(_job_id(env_name))
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
    job_id = _job_id(env_name)
    job = jobs.view(job_id)
    if job_id is None or (job is not None and job.active):
        return False
    st.session_state[state_key(env_name, "job")] = None
    st.session_state[state_key(env_name, "ended")] = job.state if job is not None else None
    st.session_state[state_key(env_name, "error")] = job.error if job is not None else None
    return True


def _on_job_state(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """The browser saw the job end: rerun the panel and the results, not the page (the sidebar, the explanations
    and the figures below stay as they are)."""
    _adopt(env_name, config, seed)
    if _ended(env_name):
        st.rerun(scope=[panel_key(env_name), results_key(env_name)])


def _show(
    env_name: str,
    settings: tuple[ExperimentConfig | None, int],
    job: JobView | None,
    key: str,
    run: dict[str, Any] | None = None,
    on_run: Any = None,
) -> None:
    """The browser component that follows ``job`` (with its Stop), and with ``run`` draws the Run button too."""
    stop = None if job is None else functools.partial(jobs.job_queue().detach, job.id, jobs.session_id())
    show_progress(
        jobs.progress_files(),
        job,
        key,
        on_state=functools.partial(_on_job_state, env_name, *settings),
        stop=stop or (lambda: None),  # no script run needed
        on_stop=functools.partial(_on_stop, env_name, *settings),
        run=run,
        on_run=on_run,
    )


def job_panel(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """Run and Stop, with the queue's place or the progress and live losses of this session's job.

    A fragment: a click on Stop, once taken, reruns only this panel, not the page (whose figures stay as they are
    until the run ends; a whole page's rerun re-sent about 1 MB to the tab, which re-rendered all of it); so does a
    click on Run under ``streamlit run`` (under ``make run`` it needs no rerun at all: the middleware takes it).
    The browser follows the job from here, with no rerun while it waits in line or runs; at its end, this panel and
    the results' fragment rerun to draw the result (``_on_job_state``).
    """
    _adopt(env_name, config, seed)
    _stopped_in_browser(env_name)
    ctx = get_script_run_ctx()
    if _ended(env_name) and ctx is not None and ctx.fragment_ids_this_run:
        st.rerun(scope="app")  # seen by this panel's own rerun (a click): the results below must be drawn too
    job = jobs.view(_job_id(env_name))
    active = job is not None and job.active
    refusal = over_budget(config)
    if refusal is not None and not active:
        if config in PRESET_CONFIGS.get(env_name, {}).values():  # a preset as it ships: nothing the user did
            st.caption(f"Too big to run live: {refusal} This preset's shipped run, if any, is shown below.")
        else:
            st.warning(f"Too big to run live: {refusal}")
    disabled = active or config is None or refusal is not None
    on_run = functools.partial(_start, env_name, config, seed)
    progress = state_key(env_name, "progress")
    if progress_memory.starts_enabled():  # make run: Run is the component's, taken by the middleware
        run: dict[str, Any] = {
            "label": RUN_LABEL,
            "help": RUN_HELP,
            "disabled": disabled,
            "startUrl": None,
            "settings": settings_id(config, seed),
            "adopted": st.session_state.get(state_key(env_name, "adopted")),
        }
        session = jobs.session_id()
        if disabled:  # a token an earlier script run gave is no longer good either
            progress_memory.revoke_start((session, env_name))
        else:
            token = secrets.token_urlsafe(16)
            start = functools.partial(
                _browser_start, jobs.job_queue(), result_store(), jobs.progress_files(), session, env_name,
                _job_id(env_name), config, seed,
            )  # fmt: skip
            progress_memory.allow_start((session, env_name), token, start)
            run["startUrl"] = f"{static_url(progress_memory.START_PATH)}?run={token}"
        _show(env_name, (config, seed), job if active else None, progress, run, on_run)
        if active:
            return
    else:
        st.button(
            RUN_LABEL, on_click=on_run, disabled=disabled, type="primary", help=RUN_HELP,
            key=state_key(env_name, "run_button"),
        )  # fmt: skip
        if active:  # the browser follows it from here; it reruns this panel and the results when the job ends
            _show(env_name, (config, seed), job, progress)
            return
    ended = st.session_state.get(state_key(env_name, "ended"))
    if ended == "cancelled":
        st.warning("Run stopped. The figures below are the last finished result.")
    elif ended == "failed":
        st.error(f"Please change a setting: {st.session_state.get(state_key(env_name, 'error'))}")
