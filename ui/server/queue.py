"""The server's job queue as the pages see it: Run, wait in line, watch progress, Stop (UI only; no math here).

One ``pvnviz.workers.jobqueue.JobQueue`` per server (``st.cache_resource``) runs every live computation in worker
processes (``pvnviz.workers.pool``: a local pool, or the Ray cluster at ``$PVN_RAY_ADDRESS``). A session knows
its jobs by id in ``st.session_state``; the queue counts it as waiting while its browser session is connected,
and cancels a job once every session waiting on it has stopped or gone. A page follows its job's progress in the
browser (``ui.job_progress``), from what ``describe`` says of it (through the server's store,
``ui.server.store``). Finished results go into the shared result cache (``ui.result_store``), keyed like the pages
look them up, so a page never waits on a worker.

Names: a *run* is what the user starts (Run), a *job* is the queue's entry that computes it, a *task* the worker
function the job calls (``pvnviz.workers.tasks``).
"""

from __future__ import annotations

import atexit
import time
import uuid
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from pvnviz.core.progress import overall_text, time_left
from pvnviz.figures.experiment import MODE_COLOR, MODE_LABEL
from pvnviz.workers.backend import make_backend
from pvnviz.workers.jobqueue import JobQueue
from pvnviz.workers.jobs import Job, JobView
from ui import remember, result_store
from ui.server import streamlit_internals

WAIT_POLL = 0.05  # seconds between two looks at a job a page waits for (``in_worker``)
MAX_POINTS = 300  # per loss curve: a canvas 1,000 px wide shows no more
CHART_TITLE = "PVN training (live)"


def session_id() -> str:
    """The queue's name for this browser session: Streamlit's session id and a token of its own state
    (``AppTest`` gives every session one id)."""
    token = st.session_state.setdefault("_queue_token", uuid.uuid4().hex[:8])
    return f"{streamlit_internals.session_id() or 'no-session'}/{token}"


def _session_alive(session: str) -> bool:
    """Whether the browser session behind a queue name is still connected (a closed tab is not)."""
    return streamlit_internals.session_connected(session.rsplit("/", 1)[0])


@st.cache_resource(show_spinner=False)
def job_queue() -> JobQueue:
    """The server's one queue; its workers start with the first job, and end with the server."""
    store = result_store()

    def on_done(job: Job, result: Any) -> None:
        if job.task == "live_experiment":  # a run and its replays, each under its own key
            from pvnviz.runs.live import replays_key

            if result.replays is not None:
                remember(store, replays_key(result.result), result.replays)
            result = result.result
        remember(store, job.key, result)
        if job.task in ("experiment", "live_experiment"):  # the dataset too: a later run that changes only later
            from pvnviz.runs.pipeline import dataset_config  # stages reuses it

            remember(store, ("dataset", dataset_config(result.config), result.seed), result.dataset)

    queue = JobQueue(make_backend, on_done=on_done, is_alive=_session_alive)
    atexit.register(queue.shutdown)
    return queue


def prepare_workers() -> None:
    """Start the run workers now if they are not yet running (``JobQueue.prepare``): the server does it when it
    starts, so that a first Run does not wait for them."""
    job_queue().prepare("run")


def describe(job_id: str) -> dict[str, Any] | None:
    """What a page shows of job ``job_id`` (``payload``), or None once the queue forgot it."""
    job = job_queue().view(job_id)
    return None if job is None else payload(job, waiting_text, fraction)


def _thin(values: tuple, keep: list[int]) -> list[float]:
    return [float(values[i]) for i in keep]


def chart_data(history: dict[str, list[tuple[int, float, float]]], title: str = CHART_TITLE) -> dict | None:
    """The loss chart's data: training (dotted) and validation (solid) KL per input, at most MAX_POINTS each;
    None before the first loss."""
    series = []
    for mode, rows in history.items():
        if not rows:
            continue
        steps, train, val = zip(*rows)
        stride = max(1, -(-len(steps) // MAX_POINTS))
        keep = sorted({*range(0, len(steps), stride), len(steps) - 1})
        x = _thin(steps, keep)
        color, label = MODE_COLOR[mode], MODE_LABEL[mode]
        series.append({"name": f"{label}: train", "color": color, "dash": "dot", "x": x, "y": _thin(train, keep)})
        series.append({"name": f"{label}: validation", "color": color, "dash": "solid", "x": x, "y": _thin(val, keep)})
    if not series:
        return None
    return {"title": title, "xTitle": "training step (log scale; step 0 at 1)", "yTitle": "KL(target ‖ PVN)",
            "series": series}  # fmt: skip


def payload(job: JobView, text: Callable[[JobView], str], fraction: Callable[[JobView], float]) -> dict[str, Any]:
    """What a page shows of ``job``: its state, the line of text and the bar's fraction, and its loss chart."""
    return {
        "id": job.id,
        "state": job.state,
        "active": job.active,
        "text": text(job) if job.active else "",
        "fraction": fraction(job),
        "chart": chart_data(job.history) if job.active else None,
    }


def submit(key: Hashable, task: str, kwargs: dict[str, Any], *, lane: str, label: str, estimate: float) -> JobView:
    return job_queue().submit(session_id(), key, task, kwargs, lane=lane, label=label, estimate=estimate)


def view(job_id: str | None) -> JobView | None:
    return None if job_id is None else job_queue().view(job_id, session_id())


def stop(job_id: str) -> None:
    job_queue().detach(job_id, session_id())


def waiting_text(job: JobView) -> str:
    """'Waiting for a worker: 2nd of 3 in line, starts in about 20 s' (or running: its progress)."""
    if job.state == "queued":
        return (
            f"Waiting for a worker: {_ordinal(job.position)} of {job.queued} in line, "
            f"starts in about {_seconds(job.eta)}"
        )
    report = job.progress[2]
    shared = f", shared by {job.waiters} sessions" if job.waiters > 1 else ""
    left = None if report.overall is None else time_left(job.elapsed, report.overall, job.eta)
    return f"Running in a worker ({job.elapsed:.0f} s{shared}): {overall_text(report, left)}"


def fraction(job: JobView) -> float:
    """The bar's share: the whole run's where its reports carry it (``Report.overall``), else the stage's."""
    done, total, report = job.progress
    if job.state == "queued":
        return 0.0
    if report.overall is not None:
        return min(max(report.overall, 0.0), 1.0)
    return min(done / max(total, 1), 1.0)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _seconds(s: float) -> str:
    return f"{max(s, 1):.0f} s" if s < 90 else f"{s / 60:.0f} min"


def prefetch(key: Hashable, task: str, kwargs: dict[str, Any], *, label: str, estimate: float = 1.0) -> None:
    """Start ``in_worker``'s job now without waiting (unless its result is cached): a page asks early for what
    it shows last, and draws the rest while a worker computes it; ``in_worker`` with the same key joins it."""
    store, lock = result_store()
    with lock:
        if key in store:
            return
    submit(key, task, kwargs, lane="quick", label=label, estimate=estimate)


def in_worker(key: Hashable, task: str, kwargs: dict[str, Any], *, label: str, estimate: float = 1.0) -> Any:
    """A short task the page waits for (the polytope's PVN): cached on ``key``, run in a quick worker.

    A progress bar shows the queue and the worker's progress. If the page reruns meanwhile, the wait ends
    and this session stops waiting (the job is cancelled unless another session waits on it too).
    Raises RuntimeError with the job's message if it failed.
    """
    store, lock = result_store()
    with lock:
        if key in store:
            store.move_to_end(key)
            return store[key]
    job = submit(key, task, kwargs, lane="quick", label=label, estimate=estimate)
    bar = st.progress(0.0, text=label)
    try:
        while job is not None and job.active:
            time.sleep(WAIT_POLL)
            job = view(job.id)
            if job is not None:
                bar.progress(fraction(job), text=f"{label} — {waiting_text(job)}")
    finally:
        if job is not None and job.active:  # the script was stopped (a rerun, a closed tab): stop waiting
            stop(job.id)
        bar.empty()
    with lock:
        if key in store:
            return store[key]
    raise RuntimeError(job.error if job is not None and job.error else f"{label} was stopped.")
