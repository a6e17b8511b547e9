"""Progress reporting for long work, without any UI import.

Long computations accept ``on_progress(done, total, report)``: ``report`` is a ``Report``, the stage of the
work as a ``Stage`` value and a line of detail, so a consumer reads ``report.stage`` and never parses text
(``str(report)`` is the line a page shows). The Streamlit pages pass a callback that moves an ``st.progress``
bar, the CLI one that draws a terminal bar per stage, and a worker one that forwards the reports (pickled)
to the server. A whole run (Algorithms 1-3, ``pvnviz.runs.pipeline``) takes one ``Hooks`` value: its progress,
and the PVN's losses as Algorithm 2 records them (the pages' live loss chart).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class Stage(StrEnum):
    """The stages long work reports; each value is the label its progress bar shows."""

    WAITING = "waiting for a worker"  # a job in the server's queue (pvnviz.workers.jobqueue)
    STARTING = "starting in a worker"
    ROLLOUTS = "rollouts"  # a batch of episodes in an environment (pvnviz.envs)
    COLLECTING = "collecting"  # Algorithm 1 in chunks (pvnviz.runs.collection)
    TRAIN_PVN = "train PVN"  # Algorithm 2 (pvnviz.core.ensemble)
    ASCENT = "ascent"  # Algorithm 3's gradient ascent on J_hat (pvnviz.core.ascent)
    REPLAYS = "replays"  # each start's episodes before and after its ascent (pvnviz.envs.replay)
    TRAIN_POLYTOPE_PVN = "train polytope PVN"  # the 2-state MDP's PVN (pvnviz.polytope.experiment)


@dataclass(frozen=True)
class Report:
    """What one progress call says: its ``stage`` (a value) and a line of ``detail`` for people."""

    stage: Stage
    detail: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "stage", Stage(self.stage))  # a label that is no stage fails here, not in a bar

    def __str__(self) -> str:
        return f"{self.stage.value}: {self.detail}" if self.detail else self.stage.value


ProgressFn = Callable[[int, int, Report], None]
MetricsFn = Callable[[str, int, float, float], None]  # (input_mode, step, train_loss, val_loss)


def no_progress(done: int, total: int, report: Report) -> None:
    """The default callback: report nothing."""


@dataclass(frozen=True)
class Hooks:
    """What a run reports as it goes: progress (``on_progress``) and the PVN's recorded losses (``on_metrics``)."""

    on_progress: ProgressFn = no_progress
    on_metrics: MetricsFn | None = None


NO_HOOKS = Hooks()


class Cancelled(Exception):
    """Raised from inside an ``on_progress`` callback to stop long work; the core lets it propagate.

    Its argument says where the work stopped: the ``Report`` it was making (or a line of text).
    """


def cancellable(cancel: Callable[[], bool], inner: ProgressFn = no_progress) -> ProgressFn:
    """An ``on_progress`` that calls ``inner`` and raises Cancelled as soon as ``cancel()`` is true.

    Every long loop of the core reports progress at least every few hundred milliseconds, so a
    job stops within about a second of the request without the core knowing about jobs.
    """

    def on_progress(done: int, total: int, report: Report) -> None:
        if cancel():
            raise Cancelled(report)
        inner(done, total, report)

    return on_progress


class TerminalProgress:
    """Terminal progress on stderr through tqdm: one bar per stage.

    A new bar starts when the report's ``stage`` differs from the bar's (the detail's text never
    matters), when the total changes, and after a bar reached its total.
    """

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self._bar = None
        self._stage: Stage | None = None
        self.drawn = False  # whether any bar was started (its line may be cut by an error)

    def __call__(self, done: int, total: int, report: Report) -> None:
        from tqdm import tqdm

        if self._bar is None or report.stage is not self._stage or self._bar.total != total:
            self.close()
            self.drawn = True  # before the bar: a signal may arrive while tqdm draws its first line
            self._bar = tqdm(total=total, desc=report.stage.value[:40], file=self.stream, mininterval=0.2)
            self._stage = report.stage
        self._bar.n = min(done, total)
        self._bar.set_postfix_str(report.detail.strip()[:60], refresh=False)
        self._bar.refresh()
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar, self._stage = None, None
