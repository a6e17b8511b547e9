"""The app's live runs on a Ray cluster: ``pvnviz.workers.pool``' interface over Ray tasks.

With ``PVN_RAY_ADDRESS=HOST:PORT`` (or ``auto``) the server joins that cluster as a driver, and each live
run (``pvnviz.workers.tasks``) becomes a Ray task of one CPU (quick tasks take none, so a page never waits behind
the runs); a course that outgrows one machine adds nodes with ``ray start``. ``PVN_RAY_ADDRESS=local``
starts a Ray on this machine instead (one CPU per core, no dashboard, a bounded object store).

Progress and live losses go from the task to one small actor (``_Sink``, no CPU), which the server drains
on each poll. Stop is ``ray.cancel(force=True)``: the task's worker process is killed at once. Ray is
imported only here.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from pvnviz.workers.pool import Event, failure_message

log = logging.getLogger("pvnlab.workers")

OBJECT_STORE_BYTES = 256 * 2**20  # a local Ray's shared memory: results are small next to it
CAPACITY_SECONDS = 5.0  # how often the cluster's CPU count is read again (nodes join and leave)


def _ray():
    import ray

    return ray


def _sink_class():
    ray = _ray()

    @ray.remote(num_cpus=0)
    class _Sink:
        """Collects the tasks' progress and live losses until the server drains them."""

        def __init__(self) -> None:
            self.events: list[Event] = []

        def push(self, job_id: str, kind: str, payload: Any) -> None:
            self.events.append((job_id, kind, payload))

        def drain(self) -> list[Event]:
            events, self.events = self.events, []
            return events

    return _Sink


def _run_remote(job_id: str, task: str, kwargs: dict[str, Any], sink: Any) -> Any:
    """The body of a live run's Ray task: one torch thread, progress to the sink."""
    import torch

    from pvnviz.workers.tasks import run_task

    torch.set_num_threads(1)

    def emit(kind: str, payload: Any) -> None:
        sink.push.remote(job_id, kind, payload)

    return run_task(task, kwargs, emit, lambda: False)  # Stop kills the task's process (ray.cancel)


class RayPool:
    """Live runs as Ray tasks on the cluster at ``address`` ("auto", "HOST:PORT", or "local")."""

    name = "ray"

    def __init__(self, address: str, num_cpus: int | None = None):
        from pvnviz.workers.ray_cluster import connect_cluster  # the token handled as for the CLI (docs: README, Ray)

        ray = _ray()
        self.started = connect_cluster(None if address == "local" else address, num_cpus=num_cpus or os.cpu_count())
        self._remote = ray.remote(max_retries=0)(_run_remote)
        self._sink = _sink_class().remote()
        self._refs: dict[str, Any] = {}  # job id -> ObjectRef
        self._lanes: dict[str, str] = {}
        self._cpus, self._cpus_read = 0, 0.0
        self._events: list[Event] = []

    def capacity(self, lane: str) -> int:
        if lane == "quick":
            return 2
        if time.monotonic() - self._cpus_read > CAPACITY_SECONDS:
            self._cpus = int(_ray().cluster_resources().get("CPU", 0))
            self._cpus_read = time.monotonic()
        return self._cpus

    def free(self, lane: str) -> int:
        return self.capacity(lane) - sum(v == lane for v in self._lanes.values())

    def start(self, job_id: str, lane: str, task: str, kwargs: dict[str, Any]) -> None:
        options = {"num_cpus": 1 if lane == "run" else 0, "name": f"pvn-{task}-{job_id}"}
        self._refs[job_id] = self._remote.options(**options).remote(job_id, task, kwargs, self._sink)
        self._lanes[job_id] = lane

    def cancel(self, job_id: str) -> None:
        ref = self._refs.pop(job_id, None)
        self._lanes.pop(job_id, None)
        if ref is not None:
            _ray().cancel(ref, force=True)
            self._events.append((job_id, "cancelled", None))

    def poll(self, timeout: float) -> list[Event]:
        ray = _ray()
        events, self._events = self._events, []
        events += ray.get(self._sink.drain.remote())
        if self._refs:
            refs = {ref: job_id for job_id, ref in self._refs.items()}
            ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
            for ref in ready:
                events.append(self._finished(refs[ref], ref))
        else:
            time.sleep(timeout)
        return events

    def _finished(self, job_id: str, ref: Any) -> Event:
        ray = _ray()
        self._refs.pop(job_id, None)
        self._lanes.pop(job_id, None)
        try:
            return (job_id, "done", ray.get(ref))
        except ray.exceptions.RayTaskError as err:
            cause = err.cause if isinstance(err.cause, BaseException) else err
            log.error("task %s failed on Ray: %s", job_id, err)
            return (job_id, "failed", failure_message(cause))
        except ray.exceptions.RayError as err:  # the worker or its node died
            log.error("task %s was lost on Ray: %s", job_id, err)
            return (job_id, "failed", "the run's Ray worker died (its node left, or out of memory); run it again.")

    def shutdown(self) -> None:
        ray = _ray()
        for job_id in list(self._refs):
            self.cancel(job_id)
        if self.started and ray.is_initialized():
            ray.shutdown()
