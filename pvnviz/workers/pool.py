"""Worker processes for the app's live runs: a local process pool, or a Ray cluster, behind one interface.

The Streamlit server only routes and draws; every live run of Algorithms 1-3 (and the polytope's PVN)
executes in a worker process (``pvnviz.workers.tasks``). A backend has *lanes*: ``"run"`` for the Run button's
experiments (one worker per core, so runs never share a core) and ``"quick"`` for the short tasks a page
waits on (the 2-state MDP's PVN, under a second), which would otherwise wait behind a whole run.

The interface, used by ``pvnviz.workers.jobqueue`` from one thread:

- ``free(lane)``: how many tasks of that lane could start now;
- ``start(job_id, lane, task, kwargs)``: begin one;
- ``cancel(job_id)``: stop it; its ``cancelled`` event follows within ``KILL_AFTER`` seconds, because a
  task that does not stop at its next progress report has its process killed (and a new one started);
- ``poll(timeout)``: the events since the last call, as ``(job_id, kind, payload)`` with kind one of
  ``progress`` (``(done, total, report)``, the task's ``pvnviz.core.progress.Report`` itself, pickled),
  ``metrics``, ``done``, ``failed``, ``cancelled``;
- ``shutdown()``: end every worker.

``LocalPool`` (this module) runs ``python -m pvnviz.workers.pool`` processes, one torch thread each, with an
address-space limit and ``PR_SET_PDEATHSIG`` so none outlives the server. ``pvnviz.workers.ray_pool.RayPool``
runs the same tasks on a Ray cluster. ``pvnviz.workers.backend.make_backend`` picks one from the environment
(``PVN_RAY_ADDRESS``, ``PVN_WORKERS``).
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol

LANES = ("run", "quick")
MAX_START_FAILURES = 3  # workers of a lane dying before "ready" this many times in a row: the lane is broken
KILL_AFTER = 0.5  # seconds a stopped task has to end by itself before its process is killed
RAY_ADDRESS_ENV = "PVN_RAY_ADDRESS"  # HOST:PORT or "auto": live runs go to that Ray cluster
WORKERS_ENV = "PVN_WORKERS"  # local run workers (default: one per core)
WORKER_MEMORY_ENV = "PVN_WORKER_MEMORY_MB"  # address-space cap per local worker

log = logging.getLogger("pvnlab.workers")

Event = tuple[str, str, Any]  # (job_id, kind, payload)


class Backend(Protocol):
    name: str

    def free(self, lane: str) -> int: ...
    def capacity(self, lane: str) -> int: ...
    def start(self, job_id: str, lane: str, task: str, kwargs: dict[str, Any]) -> None: ...
    def cancel(self, job_id: str) -> None: ...
    def poll(self, timeout: float) -> list[Event]: ...
    def shutdown(self) -> None: ...


def failure_message(err: BaseException) -> str:
    """What a page shows for a failed task: the message of an input error, else a line naming the kind."""
    if isinstance(err, MemoryError):
        return "the run ran out of memory in its worker; choose fewer policies, episodes or steps."
    if isinstance(err, ValueError | RuntimeError):
        return str(err)
    return f"the run failed in its worker ({type(err).__name__}); the server log has the details."


# ---------------------------------------------------------------------------------------------- the worker


def _die_with_parent(parent: int) -> None:
    """Linux: SIGKILL this process when the server dies, so no worker outlives it (also if it died already)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the server died before the line above: nobody would signal us
        os._exit(0)


def lower_priority(nice: int) -> None:
    """Run below everything else on the machine at ``nice``, also on Linux with autogroup scheduling.

    With ``kernel.sched_autogroup_enabled`` (the default of most distributions) the scheduler first shares the CPU
    between sessions, and a process's nice only orders it within its own session: a nice-19 worker in the
    server's session still takes half of the CPU from a browser in another session, and a new visitor's page
    waits on the workers that train. So the worker leaves the
    server's session (``setsid``; it ignores the terminal's Ctrl-C anyway and dies with its parent) and sets its
    new session's group to the same nice (``/proc/self/autogroup``; raising a nice needs no privilege).
    """
    os.nice(nice)
    try:
        os.setsid()
    except OSError:  # already a session leader
        pass
    try:
        with open("/proc/self/autogroup", "w") as group:
            group.write(str(nice))
    except OSError:  # no autogroup scheduling here (another OS, or a kernel without it): the nice above is all
        pass


def _limit_memory(megabytes: int) -> None:
    if megabytes > 0:
        import resource

        limit = megabytes * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


# Imported before "ready", so that no task pays them. A run's first use also imports torch._dynamo (torch.optim.Adam's
# first step: sympy and 800 more modules) and gymnasium (the environments): warmed here, a worker's first Quick
# CartPole run takes as long as its next ones.
WARM = {
    "run": (
        "torch",
        "torch._dynamo",
        "gymnasium",
        "pvnviz.runs.pipeline",
        "pvnviz.runs.live",
        "pvnviz.envs.cartpole",
        "pvnviz.envs.replay",
        "pvnviz.envs.swimmer",
    ),
    "quick": ("pvnviz.polytope.experiment",),
}
# Below the server: pages stay responsive while every core computes. A run worker's session at nice 5 weighs 335
# against a browser's or the server's 1024, so it keeps about a quarter of a core they want. At nice 19 (weight 15) it
# would keep 1.5%, at nice 10 (weight 110) a tenth: then a class's tabs on one seed, their clicks, polls and the pages
# opened beside them, hold back their shared run. At nice 0 the runs are faster still, but a new visitor's page waits
# on them.
NICE = {"run": 5, "quick": 2}


def worker_main(conn: Connection, memory_mb: int, warm: tuple[str, ...] = (), nice: int = 0, parent: int = 0) -> None:
    """A local worker's loop: receive ("run", seq, job_id, task, kwargs), run it, send its events back.

    The server stops a job by sending ("cancel", seq) on the same pipe; the task sees it at its next progress
    report (a non-blocking look at the pipe), and a cancel for a job already over is dropped.
    """
    _die_with_parent(parent or os.getppid())
    os.environ["OMP_NUM_THREADS"] = "1"  # one core per worker: torch reads it when it is first imported
    import importlib
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the server's terminal ends the server, which ends us
    _limit_memory(memory_mb)
    lower_priority(nice)
    for module in warm:  # the first task does not pay the imports
        try:
            importlib.import_module(module)
        except ImportError as err:  # e.g. MuJoCo missing: CartPole still runs; a Swimmer task fails with its reason
            print(f"worker {os.getpid()}: {module} not imported in advance: {err}", file=sys.stderr, flush=True)
    from pvnviz.core.progress import Cancelled
    from pvnviz.workers.tasks import run_task

    _send(conn, ("ready", os.getpid(), None))
    while True:
        message = _recv(conn)
        if message[0] == "cancel":
            continue  # for a job that ended before the request arrived
        if message[0] != "run":
            return
        _, seq, job_id, task, kwargs = message

        def emit(kind: str, payload: Any, job_id: str = job_id) -> None:
            _send(conn, (job_id, kind, payload))

        try:
            result = run_task(task, kwargs, emit, lambda seq=seq: _cancel_requested(conn, seq))
            _send(conn, (job_id, "done", result))
        except Cancelled:
            _send(conn, (job_id, "cancelled", None))
        except Exception as err:  # noqa: BLE001 - every failure becomes one message; the log has the rest
            log.error("task %s (%s) failed:\n%s", job_id, task, traceback.format_exc())
            _send(conn, (job_id, "failed", failure_message(err)))


def _send(conn: Connection, message: Any) -> None:
    """Plain pickle, not multiprocessing's: torch would pass tensors as shared-memory handles through a
    resource sharer that only processes made by multiprocessing can reach."""
    conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _recv(conn: Connection) -> Any:
    return pickle.loads(conn.recv_bytes())


def _cancel_requested(conn: Connection, seq: int) -> bool:
    """Whether ("cancel", seq) has come: the only message a server sends to a busy worker."""
    while conn.poll():
        if _recv(conn) == ("cancel", seq):
            return True
    return False


# ---------------------------------------------------------------------------------------------- the pool


@dataclass
class _Worker:
    lane: str
    process: Any  # None: killed, to be replaced at the next poll
    conn: Connection | None
    ready: bool = False
    job: str | None = None
    seq: int = 0  # the running job's number on this worker (what a cancel names)
    kill_at: float | None = None  # when a cancelled job's process is killed if it has not ended
    started: float = field(default_factory=time.monotonic)


def _extra_paths() -> list[str]:
    """The server's import folders beyond its Python's own: a worker imports what the server can (e.g. the module
    of an environment the server registered, whose factory a task names)."""
    own = tuple(filter(None, {sys.prefix, sys.base_prefix, sys.exec_prefix}))
    return [p for p in sys.path if p and os.path.isdir(p) and not os.path.abspath(p).startswith(own)]


def default_workers() -> int:
    text = os.environ.get(WORKERS_ENV, "")
    return max(int(text), 1) if text.isdigit() else max(os.cpu_count() or 1, 1)


def default_memory_mb(num_workers: int) -> int:
    """Each worker's address-space cap: ``PVN_WORKER_MEMORY_MB``, else 70% of RAM shared by the workers."""
    text = os.environ.get(WORKER_MEMORY_ENV, "")
    if text.isdigit():
        return int(text)
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(int(0.7 * total / 2**20 / (num_workers + 1)), 2048)


class LocalPool:
    """``num_workers`` run workers and ``num_quick`` quick workers, spawned processes on this machine."""

    name = "local"

    def __init__(self, num_workers: int | None = None, *, num_quick: int = 1, memory_mb: int | None = None):
        self.num_workers = num_workers or default_workers()
        self.memory_mb = default_memory_mb(self.num_workers) if memory_mb is None else memory_mb
        self._counts = {"run": self.num_workers, "quick": num_quick}
        self._workers: list[_Worker] = []
        self._events: list[Event] = []
        self._dead: list[Any] = []  # killed processes, reaped at the next polls
        self._start_failures = {lane: 0 for lane in LANES}
        self.broken: dict[str, str] = {}  # lane -> why its workers cannot start (the queue fails its jobs)

    def _ensure(self, lane: str) -> None:
        """Start a lane's workers when it is first used (a page that needs only the quick lane waits for one)."""
        if not any(w.lane == lane for w in self._workers):
            self._workers += [self._spawn(lane) for _ in range(self._counts[lane])]

    def _spawn(self, lane: str) -> _Worker:
        """A fresh ``python -m pvnviz.workers.pool`` on one end of a socket pair (not multiprocessing's spawn, which
        re-runs the parent's ``__main__``: in a Streamlit server, whatever page script is running)."""
        parent, child = socket.socketpair()
        command = [sys.executable, "-m", "pvnviz.workers.pool", str(child.fileno()), str(self.memory_mb), lane]
        command += [str(NICE[lane]), str(os.getpid())]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [PACKAGE_PARENT, *_extra_paths(), os.environ.get("PYTHONPATH")])
            ),
        }
        process = subprocess.Popen(command, pass_fds=[child.fileno()], stdin=subprocess.DEVNULL, env=env)
        child.close()
        return _Worker(lane, process, Connection(parent.detach()))

    def capacity(self, lane: str) -> int:
        return self._counts[lane]

    def free(self, lane: str) -> int:
        self._ensure(lane)
        return sum(w.lane == lane and w.ready and w.job is None and w.process is not None for w in self._workers)

    def pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process is not None]

    def start(self, job_id: str, lane: str, task: str, kwargs: dict[str, Any]) -> None:
        worker = next(w for w in self._workers if w.lane == lane and w.ready and w.job is None and w.process)
        worker.job, worker.seq = job_id, worker.seq + 1
        try:
            _send(worker.conn, ("run", worker.seq, job_id, task, kwargs))
        except OSError:  # it died since the last poll: replaced; the queue fails the job
            self._replace(worker, "failed", None)
            raise

    def cancel(self, job_id: str) -> None:
        for w in self._workers:
            if w.job == job_id and w.kill_at is None:
                try:
                    _send(w.conn, ("cancel", w.seq))
                except OSError:  # the worker died: the next poll reports it
                    pass
                w.kill_at = time.monotonic() + KILL_AFTER

    def poll(self, timeout: float) -> list[Event]:
        self._respawn()
        conns = {w.conn: w for w in self._workers if w.process is not None}
        for conn in wait(list(conns), timeout=timeout):
            self._receive(conns[conn])
        self._enforce_kills()
        events, self._events = self._events, []
        return events

    def _receive(self, worker: _Worker) -> None:
        while True:
            try:
                if not worker.conn.poll():
                    return
                job_id, kind, payload = _recv(worker.conn)
            except (EOFError, OSError):  # the process died: killed, or out of memory outside Python
                died = "the worker process died (out of memory?); choose smaller settings."
                if not worker.ready:  # it died starting: a few times in a row and the lane is broken
                    self._start_failures[worker.lane] += 1
                    if self._start_failures[worker.lane] >= MAX_START_FAILURES:
                        self.broken[worker.lane] = f"the {worker.lane} workers cannot start; the server log says why."
                self._replace(worker, "cancelled" if worker.kill_at else "failed", died)
                return
            if job_id == "ready":
                took = time.monotonic() - worker.started
                log.info("%s worker %s ready %.1f s after its start", worker.lane, kind, took)  # before it takes jobs
                worker.ready = True
                self._start_failures[worker.lane] = 0
                continue
            if kind in ("done", "failed", "cancelled"):
                if worker.job != job_id:
                    continue  # an answer from a job already reported as cancelled
                worker.job, worker.kill_at = None, None
            self._events.append((job_id, kind, payload))

    def _enforce_kills(self) -> None:
        now = time.monotonic()
        for w in list(self._workers):
            if w.kill_at is not None and now >= w.kill_at and w.job is not None and w.process is not None:
                self._replace(w, "cancelled", None)

    def _replace(self, worker: _Worker, kind: str, payload: Any) -> None:
        """Kill ``worker``, reporting its job as ``kind`` at once; a fresh one starts at the next ``poll``."""
        if worker.job is not None:
            self._events.append((worker.job, kind, payload))
        worker.process.kill()
        worker.conn.close()
        self._dead.append(worker.process)
        self._workers[self._workers.index(worker)] = _Worker(worker.lane, None, None)  # a place to fill

    def _respawn(self) -> None:
        self._dead = [p for p in self._dead if p.poll() is None]  # reaped once they have exited; never waited on
        for i, w in enumerate(self._workers):
            if w.process is None and w.lane not in self.broken:
                self._workers[i] = self._spawn(w.lane)

    def shutdown(self) -> None:
        live = [w for w in self._workers if w.process is not None]
        for w in live:
            w.process.kill()
        for w in live:
            _reap(w.process)
            w.conn.close()
        for process in self._dead:
            _reap(process)
        self._workers, self._dead = [], []


PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # where ``pvnviz`` is importable


def _reap(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:  # killed but not yet gone (a large process under swapping): its exit reaps it
        log.warning("worker %s still exiting after 5 s", process.pid)


if __name__ == "__main__":  # a local worker, started by LocalPool._spawn: FD MEMORY_MB LANE NICE PARENT_PID
    fd, memory_mb, lane, nice, parent = sys.argv[1:6]
    worker_main(Connection(int(fd)), int(memory_mb), WARM[lane], int(nice), int(parent))
