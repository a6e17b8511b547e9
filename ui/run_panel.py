"""The Run button's panel of the environment pages (Algorithms 1-3 live, on a server a class can share).

A Run click, from the button to the worker and back, in three files:

1. ``components/job_progress.js`` draws Run; its click POSTs the Run route with this session's one-time token;
2. ``ui/server/routes.py`` takes the token from the store and runs what this panel registered for it
   (``_run_in_server``): the job is queued (``ui/server/queue.py``) with no script run, and the answer names the
   job's progress route, which the page then reads about once a second, and its Stop;
3. this file: the session's next script run takes that job over (``_adopt``); when the job ends, the page's
   trigger reruns this panel and the page's results fragment (``results_key``), not the whole page.

Stop goes the same way (the Stop route, with no script run: within a second however busy the server is), then
reruns the panel to say so. A Run the server refused (a stale token) asks for a rerun, which queues it
(``_start``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import secrets
from typing import Any

import streamlit as st

from pvnviz.core.config_fields import ConfigError
from pvnviz.runs.pipeline import ExperimentConfig, dataset_config
from pvnviz.runs.sizing import check_budget, check_memory, estimate
from pvnviz.workers.jobqueue import JobQueue
from pvnviz.workers.jobs import JobView
from ui import result_store
from ui.job_progress import follow
from ui.job_progress import show as show_progress
from ui.server import queue as server_queue
from ui.server import routes, store, streamlit_internals
from ui.settings import PRESET_CONFIGS, state_key

LOG = logging.getLogger("pvnlab.run_panel")  # the server's log, with the error boundary's (ui.errors)
TIME_LIMIT_ENV = "PVN_LIVE_TIME_LIMIT_SECONDS"
RUN_LABEL = "Run with these settings"
RUN_HELP = (
    "Train the sidebar's settings live in a worker process (Algorithms 1-3); the page keeps showing the last "
    "result until done. Runs wait in line when every worker is busy; identical runs are shared."
)
REFUSED = b'{"refused":true}'  # a Run the server could not queue: the page asks again by a rerun
DEFAULT_TIME_LIMIT_SECONDS = 120.0


def live_time_limit() -> float:
    """The instructor's time limit for one live run, in estimated seconds of compute.

    From ``$PVN_LIVE_TIME_LIMIT_SECONDS``, else ``live_time_limit_seconds`` in ``.streamlit/secrets.toml``, else
    120 s.
    """
    text = os.environ.get(TIME_LIMIT_ENV)
    if text is None:
        try:
            text = st.secrets.get("live_time_limit_seconds")
        except Exception:  # noqa: BLE001 - no secrets.toml: Streamlit raises its own error type
            text = None
    try:
        value = float(text) if text is not None else DEFAULT_TIME_LIMIT_SECONDS
    except (TypeError, ValueError):
        value = DEFAULT_TIME_LIMIT_SECONDS
    return value if value > 0 else DEFAULT_TIME_LIMIT_SECONDS


def over_limits(config: ExperimentConfig | None) -> str | None:
    """Why the Run button refuses these settings (memory or the live run's time limit), or None."""
    if config is None:
        return None
    try:
        check_budget(config, live_time_limit(), check_memory(config))  # one estimate for both checks
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
    limits_checked: bool = False,
) -> JobView | None:
    """Queue (config, seed) for ``session`` in a worker (sharing an identical job), with the dataset if it is
    cached; the session stops waiting on its ``old`` job first, unless that one computes the same (a Run asked
    twice keeps its place in line). None if over the limits (the button is disabled then; a stale click is
    refused too; ``limits_checked``: the page checked them when it drew the button)."""
    if not limits_checked and over_limits(config) is not None:
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
    session = server_queue.session_id()
    job = _queue_run(server_queue.job_queue(), result_store(), session, old, config, seed, f"{env_name} seed {seed}")
    if job is not None:
        _took(env_name, job.id)


def settings_id(config: ExperimentConfig | None, seed: int) -> str:
    """A short name of the settings a page shows (the browser compares a Run's with its page's)."""
    return hashlib.sha256(repr((config, seed)).encode()).hexdigest()[:16]


def _run_in_server(
    queue: JobQueue,
    cache: tuple[Any, Any],
    session: str,
    env_name: str,
    old: str | None,
    config: ExperimentConfig,
    seed: int,
) -> bytes:
    """The browser's Run, in the server's Run route (no script run): queue the run and answer with what the page
    follows (``ui.job_progress.follow``) and the settings' name; the session's next script run adopts the job
    (``_adopt``). A second Run before that replaces the first (the session stops waiting on it). Anything that goes
    wrong answers ``REFUSED``, and the page asks again by a rerun, which says what went wrong."""
    try:
        job = _queue_run(queue, cache, session, old, config, seed, f"{env_name} seed {seed}", limits_checked=True)
        if job is None:
            return REFUSED
        followed = follow(job, functools.partial(queue.detach, job.id, session))
        earlier = store.current().hand_over((session, env_name), (job.id, followed.pop("stopToken"), job.key))
        if earlier is not None and earlier[0] != job.id:
            queue.detach(earlier[0], session)
        followed["settings"] = settings_id(config, seed)
        return json.dumps(followed, separators=(",", ":"), allow_nan=False).encode()
    except Exception:  # noqa: BLE001 - the traceback goes to the log; the page's rerun shows one clear message
        LOG.exception("a Run from the browser could not be queued; the page asks again by a rerun")
        return REFUSED


def _adopt(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """Take over the job this session's browser queued with no script run (``_run_in_server``), if any: from now on
    it is this session's job, as if a script run had queued it (``_start``). Every script run of the panel calls this
    first, with the settings the page shows (the one place a job is adopted).

    A Run that reached the server with the settings its page showed before the last change (a setting typed, then
    Run at once: the click's POST outran the rerun the typing asked for) was meant for these settings: its job is
    left, and these are queued instead (unless the session already has a job, or these cannot run)."""
    started = store.current().take_over((server_queue.session_id(), env_name))
    if started is None:
        return
    job_id, token, key = started
    st.session_state[state_key(env_name, "adopted")] = job_id  # the browser stops following it on its own
    current = st.session_state.get(state_key(env_name, "job"))
    if key != ("experiment", config, seed):
        server_queue.stop(job_id)
        if current is None:
            _start(env_name, config, seed)
        return
    if current is not None and current != job_id:  # a Run by a rerun came in between: the browser's is the last
        server_queue.stop(current)
    _took(env_name, job_id)
    st.session_state[f"{state_key(env_name, 'progress')}-stop"] = (job_id, token)  # the page's Stop keeps working


def _job_id(env_name: str) -> str | None:
    """This session's job on this page, or None (a job its browser queued once ``_adopt`` took it over)."""
    return st.session_state.get(state_key(env_name, "job"))


def _stop(env_name: str, job_id: str) -> None:
    """The Stop button: this session stops waiting at once; the run is cancelled unless others wait on it."""
    server_queue.stop(job_id)
    st.session_state[state_key(env_name, "job")] = None
    st.session_state[state_key(env_name, "ended")] = "cancelled"
    st.session_state[state_key(env_name, "left")] = job_id  # not joined again by the settings' match below


def _on_stop(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """The browser's Stop, after the Stop route took it (or instead of it, if that failed): this session stops
    waiting (again: it is idempotent), and the panel reruns to say so; the results stay as they are.
    A job that ended before the Stop (its end and the click crossed) is drawn as an end: panel and results."""
    _adopt(env_name, config, seed)
    if _ended(env_name):
        st.rerun(scope=[panel_key(env_name), results_key(env_name)])
    job_id = _job_id(env_name)
    if job_id is not None:
        _stop(env_name, job_id)
    st.rerun(scope=[panel_key(env_name)])


def _stopped_in_browser(env_name: str) -> None:
    """If this session no longer waits on its active job (its Stop, taken by the Stop route), note the Stop: the
    panel says so and the settings' match in ``active_job`` does not join the job again."""
    job_id = _job_id(env_name)
    job = server_queue.view(job_id)
    if job is not None and job.active and not server_queue.job_queue().waits(job.id, server_queue.session_id()):
        _stop(env_name, job.id)


def active_job(env_name: str, config: ExperimentConfig | None, seed: int) -> JobView | None:
    """This session's active job; else an active job of exactly these settings, which it then waits on too."""
    _adopt(env_name, config, seed)
    _stopped_in_browser(env_name)
    job = server_queue.view(_job_id(env_name))
    if job is not None and job.active:
        if st.session_state.get(state_key(env_name, "joined")) and job.key != ("experiment", config, seed):
            server_queue.stop(job.id)  # joined for settings this session has since left: it no longer waits on it
            st.session_state[state_key(env_name, "job")] = None
            return None
        return job
    if job is None and config is not None:
        shared = server_queue.job_queue().find(("experiment", config, seed))
        if shared is None or shared.id == st.session_state.get(state_key(env_name, "left")):
            return None
        if server_queue.job_queue().attach(shared.id, server_queue.session_id()) is not None:
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
    job = server_queue.view(job_id)
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


def job_panel(env_name: str, config: ExperimentConfig | None, seed: int) -> None:
    """Run and Stop, with the queue's place or the progress and live losses of this session's job.

    A fragment: a click on Stop, once taken, reruns only this panel, not the page (whose figures stay as they are
    until the run ends); a click on Run needs no rerun at all (the Run route takes it). The browser follows the job
    from here, with no rerun while it waits in line or runs; at its end, this panel and the results' fragment rerun
    to draw the result (``_on_job_state``).
    """
    _adopt(env_name, config, seed)
    _stopped_in_browser(env_name)
    if _ended(env_name) and streamlit_internals.fragment_rerun():
        st.rerun(scope="app")  # seen by this panel's own rerun (a click): the results below must be drawn too
    job = server_queue.view(_job_id(env_name))
    active = job is not None and job.active
    refusal = over_limits(config)
    if refusal is not None and not active:
        if config in PRESET_CONFIGS.get(env_name, {}).values():  # a preset as it ships: nothing the user did
            st.caption(f"Too big to run live: {refusal} This preset's shipped run, if any, is shown below.")
        else:
            st.warning(f"Too big to run live: {refusal}")
    disabled = active or config is None or refusal is not None
    run: dict[str, Any] = {
        "label": RUN_LABEL,
        "help": RUN_HELP,
        "disabled": disabled,
        "startUrl": None,
        "settings": settings_id(config, seed),
        "adopted": st.session_state.get(state_key(env_name, "adopted")),
    }
    session = server_queue.session_id()
    if disabled:  # a token an earlier script run gave is no longer good either
        store.current().revoke_run((session, env_name))
    else:
        token = secrets.token_urlsafe(16)
        start = functools.partial(
            _run_in_server, server_queue.job_queue(), result_store(), session, env_name, _job_id(env_name),
            config, seed,
        )  # fmt: skip
        store.current().allow_run((session, env_name), token, start)
        run["startUrl"] = f"{routes.url('run')}?token={token}"
    show_progress(
        job if active else None,
        state_key(env_name, "progress"),
        on_state=functools.partial(_on_job_state, env_name, config, seed),
        stop=functools.partial(server_queue.job_queue().detach, job.id, session) if active else lambda: None,
        on_stop=functools.partial(_on_stop, env_name, config, seed),
        run=run,
        on_run=functools.partial(_start, env_name, config, seed),  # a Run the route refused: asked by a rerun
    )
    if active:
        return
    ended = st.session_state.get(state_key(env_name, "ended"))
    if ended == "cancelled":
        st.warning("Run stopped. The figures below are the last finished result.")
    elif ended == "failed":
        st.error(f"Please change a setting: {st.session_state.get(state_key(env_name, 'error'))}")
