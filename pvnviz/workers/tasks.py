"""What a worker process runs for the app: the paper's long computations, named, cancellable, reporting.

The app's live work is three calls of the compute package: a whole experiment (Algorithms 1-3 of
Sections 4-5, ``pvnviz.runs.pipeline.run_experiment``), the 2-state MDP's PVN (Section 6.1, Fig. 2,
``pvnviz.polytope.experiment.train_polytope_pvn``) and the replays of each start before and after its ascent
(Section 5, ``pvnviz.envs.registry.replay_pairs``). A worker receives a task's *name* from ``TASKS`` (never a
callable or code from a visitor) and its keyword arguments, and runs it with an ``on_progress`` (a whole
run: with ``Hooks(on_progress, on_metrics)``, its live losses too) that

- forwards progress and live losses through ``emit``, at most every ``PROGRESS_INTERVAL`` seconds (the
  last report of a stage always goes), so a fast loop does not flood the server, and
- raises ``pvnviz.core.progress.Cancelled`` once ``cancelled()`` is true, so a stopped run ends at its next
  report; a worker that does not report in time is killed by its backend (``pvnviz.workers.pool``).

This module imports nothing heavy: the task's module is imported in the worker when the task runs.
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Callable
from typing import Any

from pvnviz.core.progress import Cancelled, Hooks

PROGRESS_INTERVAL = 0.1  # seconds between two progress messages of one task

TASKS: dict[str, str] = {
    "experiment": "pvnviz.runs.pipeline:run_experiment",  # (config, seed, dataset=None) -> ExperimentResult
    "polytope_pvn": "pvnviz.polytope.experiment:train_polytope_pvn",  # (config, seed) -> TrainedPolytopePVN
    # (env, arch, pairs, horizon, seed, factory) -> {(mode, start): Replay}
    "replays": "pvnviz.envs.registry:replay_pairs",
}

Emit = Callable[[str, Any], None]  # (kind, payload): "progress" (done, total, info) or "metrics" [rows]


class UnknownTask(ValueError):
    """A task name that is not in ``TASKS``."""


def resolve(name: str) -> Callable[..., Any]:
    """The function behind a task name; UnknownTask for anything not listed in ``TASKS``."""
    if name not in TASKS:
        raise UnknownTask(f"unknown task {name!r}; tasks are {', '.join(TASKS)}.")
    module, _, attr = TASKS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


class Reporter:
    """The ``on_progress`` / ``on_metrics`` pair a task runs with: throttled, and where Stop takes effect."""

    def __init__(self, emit: Emit, cancelled: Callable[[], bool], interval: float = PROGRESS_INTERVAL):
        self.emit, self.cancelled, self.interval = emit, cancelled, interval
        self._sent = 0.0
        self._rows: list[tuple[str, int, float, float]] = []

    def _check(self, where: str) -> None:
        if self.cancelled():
            raise Cancelled(where)

    def on_progress(self, done: int, total: int, info: str) -> None:
        self._check(info)
        now = time.monotonic()
        if now - self._sent >= self.interval or done >= total:
            self._sent = now
            self.flush()
            self.emit("progress", (int(done), int(total), str(info)))

    def on_metrics(self, mode: str, step: int, train: float, val: float) -> None:
        self._check(f"{mode} PVN at step {step}")
        self._rows.append((str(mode), int(step), float(train), float(val)))
        if time.monotonic() - self._sent >= self.interval:
            self._sent = time.monotonic()
            self.flush()

    def flush(self) -> None:
        if self._rows:
            rows, self._rows = self._rows, []
            self.emit("metrics", rows)


def run_task(name: str, kwargs: dict[str, Any], emit: Emit, cancelled: Callable[[], bool]) -> Any:
    """Run task ``name`` with ``kwargs``, reporting through ``emit``; raises Cancelled when stopped."""
    fn = resolve(name)
    reporter = Reporter(emit, cancelled)
    if "hooks" in inspect.signature(fn).parameters:  # a whole run: progress and the PVN's losses
        extra: dict[str, Any] = {"hooks": Hooks(reporter.on_progress, reporter.on_metrics)}
    else:
        extra = {"on_progress": reporter.on_progress}
    result = fn(**kwargs, **extra)
    reporter.flush()
    return result
