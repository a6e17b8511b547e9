"""What a worker process runs for the app: the paper's long computations, named, cancellable, reporting.

The app's live work is three calls of the compute package: a whole experiment (Algorithms 1-3 of
Sections 4-5, ``pvnviz.runs.pipeline.run_experiment``; the app's Run makes its replays too in the same task,
``pvnviz.runs.live.run_live``), the 2-state MDP's PVN (Section 6.1, Fig. 2,
``pvnviz.polytope.experiment.train_polytope_pvn``) and the replays of each start before and after its ascent
(Section 5, ``pvnviz.envs.registry.replay_pairs``). A worker receives a task's *name* from ``TASKS`` (never a
callable or code from a visitor) and its keyword arguments, and runs it with an ``on_progress`` (a whole
run: with ``Hooks(on_progress, on_metrics)``, its live losses too) that

- forwards progress and live losses through ``emit``, at most every ``PROGRESS_INTERVAL`` seconds, so a fast
  loop does not flood the server; the first and the last report of each stage always go (a stage is the
  report's ``Stage`` value: a report held back is sent once the next stage begins, or the task ends), and
- raises ``pvnviz.core.progress.Cancelled`` once ``cancelled()`` is true, so a stopped run ends at its next
  report; a worker that does not report in time is killed by its backend (``pvnviz.workers.pool``).

This module imports nothing heavy: the task's module is imported in the worker when the task runs. An environment
reaches a worker by its name only (a config's ``env_name``): a ``gym:ID?key=value`` name is built there from the
name itself (``pvnviz.envs.registry.get_env``), keywords and all.
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Callable
from typing import Any

from pvnviz.core.progress import Cancelled, Hooks, Report, Stage

PROGRESS_INTERVAL = 0.1  # seconds between two progress messages of one task

TASKS: dict[str, str] = {
    "experiment": "pvnviz.runs.pipeline:run_experiment",  # (config, seed, dataset=None) -> ExperimentResult
    # the app's Run: the same, then each start's replay before and after its ascent -> LiveRun(result, replays)
    "live_experiment": "pvnviz.runs.live:run_live",
    "polytope_pvn": "pvnviz.polytope.experiment:train_polytope_pvn",  # (config, seed) -> TrainedPolytopePVN
    # (config: PolytopeRoundsConfig, trained, seed) -> PolytopeRounds: the polytope's active rounds (Algorithm 3)
    "polytope_rounds": "pvnviz.polytope.rounds:active_rounds",
    # (env, arch, pairs, horizon, seed, factory) -> {(mode, start): Replay}
    "replays": "pvnviz.envs.registry:replay_pairs",
}

Emit = Callable[[str, Any], None]  # (kind, payload): "progress" (done, total, Report) or "metrics" [rows]


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
        self._sent = 0.0  # when the last progress report went
        self._rows_sent = 0.0  # when the last losses went: a clock of their own, or the losses (reported at the
        # same steps, just before) would hold back every progress report of the training stage
        self._rows: list[tuple[str, int, float, float]] = []
        self._stage: Stage | None = None  # the stage of the last report
        self._held: tuple[int, int, Report] | None = None  # the last report, if the throttle kept it back

    def _check(self, where: Report | str) -> None:
        if self.cancelled():
            raise Cancelled(where)

    def on_progress(self, done: int, total: int, report: Report) -> None:
        self._check(report)
        message = (int(done), int(total), report)
        first = report.stage is not self._stage
        if first and self._held is not None:  # the previous stage's last report, before the new stage's first
            self._send(self._held)
        self._stage = report.stage
        if first or done >= total or time.monotonic() - self._sent >= self.interval:
            self._send(message)
        else:
            self._held = message

    def _send(self, message: tuple[int, int, Report]) -> None:
        self._sent, self._held = time.monotonic(), None
        self.flush()
        self.emit("progress", message)

    def on_metrics(self, input_mode: str, step: int, train: float, val: float) -> None:
        self._check(f"{input_mode} PVN at step {step}")
        self._rows.append((str(input_mode), int(step), float(train), float(val)))
        if time.monotonic() - self._rows_sent >= self.interval:
            self.flush()

    def flush(self) -> None:
        if self._rows:
            rows, self._rows = self._rows, []
            self._rows_sent = time.monotonic()
            self.emit("metrics", rows)

    def finish(self) -> None:
        """At the task's end: the report and losses still held back."""
        if self._held is not None:
            self._send(self._held)
        self.flush()


def run_task(name: str, kwargs: dict[str, Any], emit: Emit, cancelled: Callable[[], bool]) -> Any:
    """Run task ``name`` with ``kwargs``, reporting through ``emit``; raises Cancelled when stopped."""
    fn = resolve(name)
    reporter = Reporter(emit, cancelled)
    if "hooks" in inspect.signature(fn).parameters:  # a whole run: progress and the PVN's losses
        extra: dict[str, Any] = {"hooks": Hooks(reporter.on_progress, reporter.on_metrics)}
    else:
        extra = {"on_progress": reporter.on_progress}
    result = fn(**kwargs, **extra)
    reporter.finish()
    return result
