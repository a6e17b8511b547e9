"""A live run's progress in the browser, without server reruns, so that a class can share one server.

The job panel is not a fragment the server reruns: every rerun costs the server and the watching tab's browser
(Streamlit re-renders the page's elements on every run), and with a class watching their runs the browsers and
the server together would starve a new visitor's page. Instead ``show`` draws the component
``components/job_progress.js``: the Run button, and for a job the text, a progress bar and the loss chart on a
canvas, read about every ``POLL_MS`` ms from the server's progress route (``ui.server.routes``; the server's store
keeps each watched job's progress, ``ui.server.store``). Each read may wait until the job ends, at most a second,
so a run's end shows at once. The component sets its trigger ``state`` when the job has ended (done, failed,
cancelled, or forgotten by the queue): the page reruns its job panel and results then; ``stop`` after a Stop, and
``run`` when the server could not take a Run (``ui.run_panel``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import streamlit as st

from pvnviz.workers.jobs import JobView
from ui.components import COMPONENTS_DIR
from ui.server import routes, store

# how often a page reads its job's progress: a class's tabs all poll the one server, and each read costs the
# browser and the server CPU, so once a second, not more; a read waits for the end (ui.server.routes.HOLD)
POLL_MS = 1000

_progress = st.components.v2.component(
    "pvn_job_progress",
    js=(COMPONENTS_DIR / "job_progress.js").read_text(encoding="utf-8"),
    # Fixed sizes and containment: a poll's new text, bar and chart redraw only the panel, never lay out the page
    # again (a page's layout and paint cost a tab tens of ms per change with the figures below it), and the bar
    # moves on the compositor (a transform, not its width).
    css="""
.pvn-job-head { display: flex; align-items: center; gap: 0.75rem; margin: 0 0 0.4rem 0; }
.pvn-job-stop { flex: none; font-family: var(--st-font); font-size: 1rem; line-height: 1.6; padding: 0.25rem 0.75rem;
  color: var(--st-text-color); background: var(--st-background-color); border: 1px solid var(--st-border-color);
  border-radius: var(--st-base-radius, 0.5rem); cursor: pointer; }
.pvn-job-stop:hover:enabled { border-color: var(--st-primary-color); color: var(--st-primary-color); }
.pvn-job-stop:disabled { opacity: 0.6; cursor: default; }
.pvn-job-run { font-family: var(--st-font); font-size: 1rem; line-height: 1.6; padding: 0.25rem 0.75rem;
  margin: 0; color: #fff; background: var(--st-primary-color); border: 1px solid var(--st-primary-color);
  border-radius: var(--st-base-radius, 0.5rem); cursor: pointer; }
.pvn-job-run:hover:enabled { filter: brightness(0.9); }
.pvn-job-run:disabled { opacity: 0.4; cursor: not-allowed; }
.pvn-job-run:not([hidden]) + div { margin-top: 1rem; }
.pvn-job-run[hidden], .pvn-job-progress > div[hidden] { display: none; }
.pvn-job-text { flex: 1; min-width: 0; margin: 0; height: 1.6em; line-height: 1.6em; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; contain: strict; font-family: var(--st-font);
  color: var(--st-text-color); }
.pvn-job-track { height: 0.5rem; border-radius: 0.25rem; background: var(--st-secondary-background-color);
  overflow: hidden; margin-bottom: 0.5rem; contain: strict; }
.pvn-job-bar { height: 100%; width: 100%; transform-origin: left; transform: scaleX(0);
  background: var(--st-primary-color); }
.pvn-loss-chart { width: 100%; height: 300px; display: block; contain: strict; color: var(--st-text-color); }
""",
)


def follow(job: JobView, stop: Callable[[], None], token: str | None = None) -> dict[str, Any]:
    """What a page needs to follow ``job``: its progress's URL and content now, and its Stop's URL, whose
    ``token`` (new if None) runs ``stop`` in the server's Stop route (``ui.server.store.Store.allow_stop``)."""
    kept = store.current()
    name, content = kept.watch(job.id)
    token = token or secrets.token_urlsafe(16)
    kept.allow_stop(name, token, stop)
    stop_url = f"{routes.url(f'stop/{name}')}?token={token}"
    return {"url": routes.url(f"progress/{name}"), "stopUrl": stop_url, "payload": content, "stopToken": token}


def show(
    job: JobView | None,
    key: str,
    on_state: Callable[[], None],
    stop: Callable[[], None],
    on_stop: Callable[[], None],
    run: dict[str, Any],
    on_run: Callable[[], None],
) -> None:
    """Draw the Run button and, for ``job`` (None: no job), its progress panel with its Stop button, under ``key``.

    ``on_state`` runs when the browser reports a new job state. ``stop`` is what this session's Stop does (it
    stops waiting on the job): the browser's click runs it in the server's Stop route, with a token only this
    session's page gets, and needs no script run; ``on_stop`` then runs in the rerun the click asks for.

    ``run`` = {label, help, disabled, startUrl, settings, adopted}: the click POSTs ``startUrl`` (the server's
    Run route) with no script run, and the page follows the job it answers with; refused or unreachable,
    ``on_run`` runs in the rerun the click then asks for.
    """
    data: dict[str, Any] = {"url": None, "stopUrl": None, "pollMs": POLL_MS, "payload": None, "run": run}
    if job is not None:
        token = st.session_state.get(f"{key}-stop")
        if token is None or token[0] != job.id:  # one token per session and job, the same on every rerun
            token = st.session_state[f"{key}-stop"] = (job.id, secrets.token_urlsafe(16))
        followed = follow(job, stop, token[1])
        del followed["stopToken"]
        data.update(followed)
    _progress(
        key=key,
        data=data,
        on_state_change=on_state,
        on_stop_change=on_stop,
        on_run_change=on_run,
        width="stretch",
        height="content",
    )
