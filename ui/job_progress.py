"""A live run's progress in the browser, without server reruns, so that a class can share one server.

The job panel is not a fragment the server reruns: every rerun costs the server and the watching tab's browser
(Streamlit re-renders the page's elements on every run), and with a class watching their runs the browsers and
the server together would starve a new visitor's page. Instead:

* ``ProgressFiles``, one per server, writes each watched job's progress (the queue's place or the worker's
  report, and Algorithm 2's live losses, Section 4) as a small JSON file under the app's ``static/`` folder,
  which Streamlit serves (``[server] enableStaticServing``), within ``WRITE_EVERY`` seconds of a change; the
  file name holds a random token, so only a page the server gave it to can read it;
* ``show`` draws the component ``components/job_progress.js``: the text, a progress bar and the loss chart
  on a canvas, read from that file about every ``POLL_MS`` ms, and under ``make run`` the Run button too. It sets
  its trigger ``state`` when the job has ended (done, failed, cancelled, or forgotten by the queue): the page
  reruns its job panel and results then (waiting in line and running look the same to the panel: its Stop button
  serves both); ``stop`` after a Stop, and ``run`` when the middleware could not take a Run
  (``ui.run_panel``).

Served by ``make run``, the reads are answered from memory (``ui.progress_memory``, through
``ui.asgi.ProgressReads``), cheaper in the server's CPU than a read through Streamlit's static files, on its one
event loop (a class of 30 watching their runs reads 30 times a second). The files stay for ``streamlit run
app.py``, which has no middleware. There each read also waits: the middleware holds it until the job ends, at most
a second (``ui.asgi.HOLD``), and the page reads again as soon as it is answered, so a run's end shows at once
instead of up to a second later (``ui.progress_memory.until_final``).
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from pvnviz.figures.experiment import MODE_COLOR, MODE_LABEL
from pvnviz.workers.jobs import JobView
from ui import progress_memory
from ui.components import COMPONENTS_DIR, static_url

MAX_POINTS = 300  # per curve: a canvas 1,000 px wide shows no more
WRITE_EVERY = 0.25  # seconds between two looks at the watched jobs
# how often a page reads its job's file: a class's tabs all poll the one server, and each read costs the browser
# and the server CPU, so once a second, not more; under `make run` a read waits for the end (ui.asgi.HOLD)
POLL_MS = 1000
KEEP_ENDED = 120.0  # seconds an ended job's file stays (a page that reruns late still reads its end)
CHART_TITLE = "PVN training (live)"

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


class ProgressFiles:
    """The server's writer of its watched jobs' progress files, in ``<static>/jobs/<pid>-<token>/``.

    ``view(job_id)`` is the queue's look at a job (None once it is forgotten); ``text`` and ``fraction`` format
    it as the pages do. A daemon thread rewrites a file when its content changes; a file is written to a
    temporary name and renamed, so a browser never reads half of one; its content is kept in ``ui.progress_memory``
    too, for ``make run``'s reads (not read under ``streamlit run``). Folders of servers that are gone are removed
    at start, this server's own at exit.
    """

    def __init__(
        self,
        static: Path,
        view: Callable[[str], JobView | None],
        text: Callable[[JobView], str],
        fraction: Callable[[JobView], float],
    ):
        self._view, self._text, self._fraction = view, text, fraction
        root = static / "jobs"
        _remove_dead_servers(root)
        self.folder = root / f"{os.getpid()}-{secrets.token_hex(4)}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, tuple[str, str, float | None]] = {}  # job id -> (file name, last text, ended at)
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pvn-job-progress", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def watch(self, job: JobView) -> tuple[str, dict[str, Any]]:
        """The file name of ``job``'s progress (relative to ``static/``), written now, and its content."""
        with self._lock:
            if job.id not in self._files:
                self._files[job.id] = (f"{job.id}-{secrets.token_urlsafe(12)}.json", "", None)
            content = payload(job, self._text, self._fraction)
            self._write(job.id, content)
            return self._path(self._files[job.id][0]), content

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            for name, _, _ in self._files.values():
                progress_memory.forget(self._path(name))
        shutil.rmtree(self.folder, ignore_errors=True)

    def _path(self, name: str) -> str:
        return f"jobs/{self.folder.name}/{name}"

    def _loop(self) -> None:
        while not self._closed.wait(WRITE_EVERY):
            with self._lock:
                for job_id in list(self._files):
                    self._refresh(job_id)

    def _refresh(self, job_id: str) -> None:
        name, _, ended = self._files[job_id]
        if ended is not None:
            if time.monotonic() - ended > KEEP_ENDED:
                progress_memory.forget(self._path(name))
                (self.folder / name).unlink(missing_ok=True)
                del self._files[job_id]
            return
        job = self._view(job_id)
        if job is None:  # forgotten by the queue: a page that still asks reruns and finds no job
            content = {"id": job_id, "state": "gone", "active": False, "text": "", "fraction": 0.0, "chart": None}
        else:
            content = payload(job, self._text, self._fraction)
        self._write(job_id, content)

    def _write(self, job_id: str, content: dict[str, Any]) -> None:
        name, last, _ = self._files[job_id]
        text = json.dumps(content, separators=(",", ":"), allow_nan=False)
        ended = None if content["active"] else time.monotonic()
        if text != last and not self._closed.is_set():
            tmp = self.folder / f".{name}.tmp"
            try:
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, self.folder / name)
            except OSError:  # a full disk or a removed folder: the page keeps the last progress it read from disk
                return
            finally:  # memory gets the new progress either way, once the file has it if it can
                progress_memory.keep(self._path(name), text.encode(), final=ended is not None)
        self._files[job_id] = (name, text, ended)


def _remove_dead_servers(root: Path) -> None:
    """Remove the progress folders of servers that no longer run (named ``<pid>-<token>``)."""
    if not root.is_dir():
        return
    for folder in root.iterdir():
        pid = folder.name.split("-", 1)[0]
        if folder.is_dir() and not folder.is_symlink() and pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def follow(files: ProgressFiles, job: JobView, stop: Callable[[], None], token: str | None = None) -> dict[str, Any]:
    """What a page needs to follow ``job``: its progress file's URL and content now, and its Stop's URL, whose
    ``token`` (new if None) runs ``stop`` in the server's middleware (``ui.progress_memory.allow_stop``)."""
    name, content = files.watch(job)
    token = token or secrets.token_urlsafe(16)
    progress_memory.allow_stop(name, token, stop)
    url = static_url(name)
    return {"url": url, "stopUrl": f"{url}?stop={token}", "payload": content, "stopToken": token}


def show(
    files: ProgressFiles,
    job: JobView | None,
    key: str,
    on_state: Callable[[], None],
    stop: Callable[[], None],
    on_stop: Callable[[], None],
    run: dict[str, Any] | None = None,
    on_run: Callable[[], None] | None = None,
) -> None:
    """Draw ``job``'s progress panel under ``key``, with its Stop button; with ``run``, the Run button too (and no
    progress while ``job`` is None).

    ``on_state`` runs when the browser reports a new job state. ``stop`` is what this session's Stop does (it
    stops waiting on the job): under ``make run`` the browser's click runs it in the server's middleware, with a
    token only this session's page gets (``ui.progress_memory.allow_stop``), and needs no script run; then, and
    also where there is no middleware (``streamlit run app.py``), ``on_stop`` runs in the rerun the click asks for.

    ``run`` = {label, help, disabled, startUrl}: under ``make run`` the click POSTs ``startUrl``, which the
    middleware takes (``ui.progress_memory.allow_start``) with no script run, and the page follows the job it
    answers with; refused or unreachable, ``on_run`` runs in the rerun the click then asks for.
    """
    data: dict[str, Any] = {"url": None, "stopUrl": None, "pollMs": POLL_MS, "payload": None, "run": run}
    if job is not None:
        token = st.session_state.get(f"{key}-stop")
        if token is None or token[0] != job.id:  # one token per session and job, the same on every rerun
            token = st.session_state[f"{key}-stop"] = (job.id, secrets.token_urlsafe(16))
        followed = follow(files, job, stop, token[1])
        del followed["stopToken"]
        data.update(followed)
    _progress(
        key=key,
        data=data,
        on_state_change=on_state,
        on_stop_change=on_stop,
        on_run_change=on_run or (lambda: None),
        width="stretch",
        height="content",
    )
