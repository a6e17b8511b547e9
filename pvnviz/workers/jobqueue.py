"""A fair queue of the app's live runs, shared by every browser session of one server.

A class presses Run at once; this queue decides who computes when, on the workers of ``pvnviz.workers.pool``:

- identical requests (one ``key``: same task, settings and seed) share one job, and every session that
  asked for it sees its progress;
- a session has at most one running job per lane; jobs start in the order they were asked for, as
  workers free up, and a waiting job knows its position and an estimated start;
- Stop detaches the session that pressed it; a job nobody waits for any more (every waiting tab stopped,
  or closed: its session gone and silent for ``grace`` seconds) is cancelled, and its worker freed
  within a second (``pvnviz.workers.pool.KILL_AFTER``);
- a finished job's result goes to ``on_done(job, result)`` (the app's bounded result cache) and is not
  kept here.

One dispatcher thread owns the backend: it starts it on the first job, applies its events, reaps
jobs nobody waits for, and starts queued jobs. Pages call ``submit``, ``find``, ``view`` and ``detach``,
which only touch this object's state under its lock, so a page never waits on a worker.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from pvnviz.core.progress import Report, Stage
from pvnviz.workers.jobs import ACTIVE, Job, JobView
from pvnviz.workers.pool import LANES, Backend

log = logging.getLogger("pvnlab.jobqueue")

POLL_SECONDS = 0.05  # the dispatcher's tick: how soon a Stop or a free worker is acted on
IDLE_POLL_SECONDS = 0.5  # its tick with no job waiting or running (a new job wakes it through ``poll``'s end)


class JobQueue:
    """The server's queue; ``backend_factory`` is called once, in the dispatcher thread, on the first job."""

    def __init__(
        self,
        backend_factory: Callable[[], Backend],
        *,
        on_done: Callable[[Job, Any], None] | None = None,
        is_alive: Callable[[str], bool] | None = None,
        grace: float = 10.0,
        keep_finished: float = 600.0,
    ):
        self._factory, self._on_done, self._is_alive = backend_factory, on_done, is_alive
        self.grace, self.keep_finished = grace, keep_finished
        self._jobs: dict[str, Job] = {}  # in the order asked for
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._capacity = {lane: 1 for lane in LANES}  # the backend's, as the dispatcher last read it
        self._thread: threading.Thread | None = None
        self._closed = False
        self._prepare: set[str] = set()  # lanes whose workers the dispatcher starts before their first job
        self._prepared: set[str] = set()  # every lane ever asked for by ``prepare``
        self.backend: Backend | None = None
        self.backend_error = ""
        # measured / estimated seconds per lane, a moving average over finished jobs; it starts at what a worker
        # of a 2-core laptop measured for the CartPole Quick preset (about twice sizing's estimate)
        self._ratio = {lane: 2.0 for lane in LANES}

    # ------------------------------------------------------------------------------------------ pages

    def submit(
        self,
        session: str,
        key: Hashable,
        task: str,
        kwargs: dict[str, Any],
        *,
        lane: str = "run",
        label: str = "",
        estimate: float = 10.0,
    ) -> JobView:
        """Ask for ``task(**kwargs)``; joins the active job with the same ``key`` if there is one."""
        if lane not in LANES:
            raise ValueError(f"lane must be one of {LANES}, got {lane!r}.")
        with self._lock:
            if self._closed:
                raise RuntimeError("the job queue is shut down.")
            job = self._find(key)
            if job is None:
                job = Job(f"j{next(self._ids)}", key, task, kwargs, lane, label or task, float(estimate), session)
                self._jobs[job.id] = job
                self._start_thread()
            job.waiters[session] = time.monotonic()
            return self._view(job)

    def prepare(self, lane: str = "run") -> None:
        """Start ``lane``'s workers now, before its first job (a page where Run is one click away): the first
        Run then finds them ready instead of waiting for their start (torch's import, about 2 s of a core each,
        far longer on a machine already busy with pages). Cheap to call again."""
        if lane not in LANES:
            raise ValueError(f"lane must be one of {LANES}, got {lane!r}.")
        with self._lock:
            if self._closed or lane in self._prepared:
                return
            self._prepared.add(lane)
            self._prepare.add(lane)
            self._start_thread()

    def find(self, key: Hashable) -> JobView | None:
        """The active job computing ``key``, if any (a page whose settings match can wait on it too)."""
        with self._lock:
            job = self._find(key)
            return None if job is None else self._view(job)

    def attach(self, job_id: str, session: str) -> JobView | None:
        """Wait on an active job too; None if it is no longer active."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state not in ACTIVE or job.cancel_sent:
                return None
            job.waiters[session] = time.monotonic()
            return self._view(job)

    def view(self, job_id: str, session: str | None = None) -> JobView | None:
        """The job as a page shows it; a waiting session's call also counts as it still looking."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            if session in job.waiters:
                job.waiters[session] = time.monotonic()
            return self._view(job)

    def waits(self, job_id: str, session: str) -> bool:
        """Whether ``session`` still waits on the job (False once it stopped waiting, or the job is forgotten)."""
        with self._lock:
            job = self._jobs.get(job_id)
            return job is not None and session in job.waiters

    def detach(self, job_id: str, session: str) -> None:
        """``session`` stops waiting (its Stop button); the job is cancelled if nobody else waits."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                job.waiters.pop(session, None)
                self._hand_over(job)
                if not job.waiters and job.state in ACTIVE:
                    self._cancel(job)

    def jobs(self) -> list[JobView]:
        with self._lock:
            return [self._view(j) for j in self._jobs.values()]

    def shutdown(self) -> None:
        """Cancel everything and end the workers (tests, server exit)."""
        with self._lock:
            self._closed = True
            for job in self._jobs.values():
                job.waiters.clear()  # nobody waits: the dispatcher cancels what runs, and ends when none does
                if job.state in ACTIVE:
                    self._cancel(job)
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self.backend is not None:
            self.backend.shutdown()
            self.backend = None

    # ------------------------------------------------------------------------------------------ state

    def _find(self, key: Hashable) -> Job | None:
        """The active job computing ``key``; not one being cancelled (a new waiter would get "cancelled")."""
        return next((j for j in self._jobs.values() if j.key == key and j.state in ACTIVE and not j.cancel_sent), None)

    def _cancel(self, job: Job) -> None:
        if job.state == "queued":
            self._finish(job, "cancelled")
        # a running job is cancelled by the dispatcher (it owns the backend); its state follows the event

    def _finish(self, job: Job, state: str, error: str = "") -> None:
        job.state, job.error, job.finished = state, error, time.monotonic()
        job.kwargs = {}  # the settings and any dataset sent: not kept for the finished job's remaining minutes
        ran = f"ran {job.finished - job.started:.1f} s" if job.started is not None else "never started"
        log.info("job %s (%s) %s: waited %.1f s, %s, %d sessions waiting", job.id, job.label, state,
                 (job.started or job.finished) - job.submitted, ran, len(job.waiters))  # fmt: skip
        if state == "done" and job.started is not None and job.estimate > 0:
            ratio = (job.finished - job.started) / job.estimate
            self._ratio[job.lane] = 0.7 * self._ratio[job.lane] + 0.3 * min(max(ratio, 0.05), 20.0)

    def _seconds(self, job: Job) -> float:
        return job.estimate * self._ratio[job.lane]

    def _view(self, job: Job) -> JobView:
        now = time.monotonic()
        queued = [j for j in self._jobs.values() if j.lane == job.lane and j.state == "queued"]
        position = queued.index(job) + 1 if job in queued else 0
        return JobView(
            job.id,
            job.key,
            job.label,
            job.state,
            job.progress,
            {mode: list(rows) for mode, rows in job.history.items()},
            job.error,
            now - job.started if job.started is not None else 0.0,
            position,
            len(queued),
            self._eta(job, now),
            len(job.waiters),
        )

    def _remaining(self, job: Job, now: float) -> float:
        """Seconds a running job still needs, from its corrected estimate (a stage's progress says too little:
        a run's stages differ in length), and at least one while it runs."""
        return max(self._seconds(job) - (now - (job.started or now)), 1.0)

    def _eta(self, job: Job, now: float) -> float:
        if job.state == "running":
            return self._remaining(job, now)
        if job.state != "queued":
            return 0.0
        capacity = self._capacity[job.lane]
        running = [j for j in self._jobs.values() if j.lane == job.lane and j.state == "running"]
        slots = sorted(self._remaining(j, now) for j in running)
        slots = ([0.0] * max(capacity - len(slots), 0) + slots)[: max(capacity, 1)] or [0.0]
        for ahead in self._jobs.values():
            if ahead is job:
                return min(slots)
            if ahead.lane == job.lane and ahead.state == "queued":
                slots.sort()
                slots[0] += self._seconds(ahead)
        return min(slots)

    # ------------------------------------------------------------------------------------------ dispatcher

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="pvn-job-queue", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        try:
            backend = self._factory()
        except Exception as err:  # noqa: BLE001 - e.g. a Ray cluster that cannot be reached: every job says so
            log.exception("the workers could not start")
            with self._lock:
                self.backend_error = f"the workers could not start: {err}"
                for job in self._jobs.values():
                    if job.state in ACTIVE:
                        self._finish(job, "failed", self.backend_error)
                self._thread = None  # the next job tries again (the cluster may be back)
            return
        with self._lock:
            self.backend, self.backend_error = backend, ""
        while not self._closed or self._has_running():
            try:
                self._tick(backend)
            except Exception:  # noqa: BLE001 - one bad tick must not stop the queue (or kill the workers with it)
                log.exception("the job queue's dispatcher")
                time.sleep(POLL_SECONDS)

    def _tick(self, backend: Backend) -> None:
        """One round: events in, reaping, then the backend calls decided under the lock made outside it."""
        with self._lock:
            busy = any(j.state in ACTIVE for j in self._jobs.values())
        events = backend.poll(POLL_SECONDS if busy else IDLE_POLL_SECONDS)  # idle: blocked, not spinning
        self._capacity = {lane: backend.capacity(lane) for lane in LANES}  # read by pages' views, lock-free
        broken = getattr(backend, "broken", {})
        with self._lock:
            for job_id, kind, payload in events:
                self._apply(job_id, kind, payload)
            cancels = self._reap(time.monotonic())
            for job in self._jobs.values():
                if job.state == "queued" and job.lane in broken:
                    self._finish(job, "failed", broken[job.lane])
            lanes = {lane for lane in LANES if any(j.lane == lane and j.state == "queued" for j in self._jobs.values())}
            warm, self._prepare = self._prepare - lanes, set()
        for lane in warm:  # a backend starts a lane's workers when first asked what is free
            backend.free(lane)
        free = {lane: backend.free(lane) for lane in lanes}
        with self._lock:
            starts = self._dispatch(free)
        for job_id in cancels:
            backend.cancel(job_id)
        for job in starts:
            try:
                backend.start(job.id, job.lane, job.task, job.kwargs)
            except Exception as err:  # noqa: BLE001 - e.g. the worker died between poll and start
                log.exception("starting %s failed", job.id)
                with self._lock:
                    self._finish(job, "failed", f"the run could not start in a worker ({type(err).__name__}).")

    def _has_running(self) -> bool:
        with self._lock:
            return any(j.state == "running" for j in self._jobs.values())

    def _apply(self, job_id: str, kind: str, payload: Any) -> None:
        job = self._jobs.get(job_id)
        if job is None or job.state != "running":
            return
        if kind == "progress":
            job.progress = payload
        elif kind == "metrics":
            for mode, step, train, val in payload:
                job.history.setdefault(mode, []).append((step, train, val))
        elif kind == "done":
            self._finish(job, "done")
            if self._on_done is not None:
                try:
                    self._on_done(job, payload)
                except Exception:  # noqa: BLE001 - a cache that fails to store must not stop the queue
                    log.exception("storing the result of %s failed", job.id)
        elif kind in ("failed", "cancelled"):
            self._finish(job, kind, payload if kind == "failed" else "")

    def _reap(self, now: float) -> list[str]:
        """Drop waiters gone for ``grace``; the running jobs left with nobody, to cancel (outside the lock)."""
        cancels = []
        for job in list(self._jobs.values()):
            if job.state in ACTIVE:
                gone = [s for s, seen in job.waiters.items() if now - seen > self.grace and not self._alive(s)]
                for session in gone:
                    del job.waiters[session]
                self._hand_over(job)
                if not job.waiters:
                    self._cancel(job)
                    if job.state == "running" and not job.cancel_sent:
                        job.cancel_sent = True
                        cancels.append(job.id)
            elif job.finished is not None and now - job.finished > self.keep_finished:
                del self._jobs[job.id]
        return cancels

    @staticmethod
    def _hand_over(job: Job) -> None:
        """A job whose owner left belongs to a session still waiting on it (the one-running-job rule)."""
        if job.waiters and job.owner not in job.waiters:
            job.owner = next(iter(job.waiters))

    def _alive(self, session: str) -> bool:
        try:
            return self._is_alive is not None and self._is_alive(session)
        except Exception:  # noqa: BLE001 - no runtime (tests): the heartbeat alone decides
            return False

    def _dispatch(self, free: dict[str, int]) -> list[Job]:
        """The queued jobs to start now, in order, at most one running per session and lane; marked running."""
        if self._closed:
            return []
        starts = []
        for lane, slots in free.items():
            running_owners = {j.owner for j in self._jobs.values() if j.lane == lane and j.state == "running"}
            for job in self._jobs.values():
                if slots <= 0:
                    break
                if job.lane != lane or job.state != "queued" or job.owner in running_owners:
                    continue
                job.state, job.started = "running", time.monotonic()
                job.progress = (0, 1, Report(Stage.STARTING))
                starts.append(job)
                running_owners.add(job.owner)
                slots -= 1
        return starts
