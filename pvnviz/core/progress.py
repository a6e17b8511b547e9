"""Progress reporting for long work, without any UI import.

Long computations accept ``on_progress(done, total, report)``: ``report`` is a ``Report``, the stage of the
work as a ``Stage`` value and a line of detail, so a consumer reads ``report.stage`` and never parses text
(``str(report)`` is the line a page shows). The Streamlit pages pass a callback that moves an ``st.progress``
bar, the CLI one that draws a terminal bar per stage, and a worker one that forwards the reports (pickled)
to the server. A live run's reports also carry the whole run's share done (``RunProgress``), so its page draws
one bar from 0 to 1 over all its stages, with the time left (``time_left``). A whole run (Algorithms 1-3,
``pvnviz.runs.pipeline``) takes one ``Hooks`` value: its progress,
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
    """What one progress call says: its ``stage`` (a value) and a line of ``detail`` for people.

    ``overall`` is the whole run's share done, in [0, 1], where the work knows its stages ahead
    (``RunProgress``); None where a report speaks for its stage alone.
    """

    stage: Stage
    detail: str = ""
    overall: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "stage", Stage(self.stage))  # a label that is no stage fails here, not in a bar

    def __str__(self) -> str:
        return f"{self.stage.value}: {self.detail}" if self.detail else self.stage.value


ProgressFn = Callable[[int, int, Report], None]


@dataclass(frozen=True)
class Segment:
    """One planned part of a run: the stages its reports carry, its expected cost (any unit, e.g. seconds),
    and how many times its reports run from 0 to their total within it (a stage done in passes)."""

    stages: frozenset[Stage]
    weight: float
    passes: int = 1


class RunProgress:
    """Maps a run's per-stage reports ``(done, total, report)`` to one overall share in [0, 1] that never
    decreases, over a plan of ``Segment``s in the order the run goes through them.

    A report whose stage is the current segment's stays in it (a ``done`` that falls back starts the segment's
    next pass); another stage moves to the next segment that has it, counting every segment passed over as done.
    A stage no later segment has (unplanned work) leaves the share where it is. ``finish`` sets it to 1.
    """

    def __init__(self, plan: list[Segment]):
        if not plan:
            raise ValueError("a run's plan needs at least one segment")
        total = sum(max(s.weight, 0.0) for s in plan)
        # a plan whose costs are all zero counts each segment alike
        self._weights = [max(s.weight, 0.0) / total if total > 0 else 1 / len(plan) for s in plan]
        self._plan = plan
        self._index = -1  # before the first segment
        self._pass, self._last = 0, 0.0
        self.fraction = 0.0

    @property
    def stage_number(self) -> int:
        """The current segment's position, 1-based (0 before the first report)."""
        return self._index + 1

    @property
    def stages(self) -> int:
        return len(self._plan)

    def update(self, done: int, total: int, stage: Stage) -> float:
        """The overall share after this report."""
        share = min(max(done / total, 0.0), 1.0) if total > 0 else 1.0
        if self._index < 0 or stage not in self._plan[self._index].stages:
            later = [i for i in range(self._index + 1, len(self._plan)) if stage in self._plan[i].stages]
            if not later:
                return self.fraction
            self._index, self._pass, self._last = later[0], 0, 0.0
        elif share < self._last:  # the stage began again: the segment's next pass
            self._pass += 1
        self._last = share
        segment = self._plan[self._index]
        within = min((min(self._pass, segment.passes - 1) + share) / segment.passes, 1.0)
        now = sum(self._weights[: self._index]) + self._weights[self._index] * within
        self.fraction = min(max(self.fraction, now), 1.0)
        return self.fraction

    def finish(self) -> float:
        self.fraction = 1.0
        return self.fraction

    def wrap(self, inner: ProgressFn) -> ProgressFn:
        """An ``on_progress`` that passes each report to ``inner`` with its ``overall`` share set."""

        def on_progress(done: int, total: int, report: Report) -> None:
            overall = self.update(done, total, report.stage)
            inner(done, total, Report(report.stage, report.detail, overall))

        return on_progress


MIN_PACE_SHARE = 0.05  # the share of a run done, and the seconds it ran, before its pace predicts the rest
MIN_PACE_SECONDS = 2.0


def time_left(elapsed: float, fraction: float, estimate: float | None = None) -> float | None:
    """Seconds a run still needs: from its pace so far once it is past ``MIN_PACE_SHARE`` of its work and
    ``MIN_PACE_SECONDS`` in, before that the ``estimate`` of what remains (None: unknown)."""
    if fraction >= 1.0:
        return 0.0
    if fraction >= MIN_PACE_SHARE and elapsed >= MIN_PACE_SECONDS:
        return elapsed * (1.0 - fraction) / fraction
    return estimate


def overall_text(report: Report, left: float | None) -> str:
    """'train PVN: fingerprint val 0.412 · 37% of the run, about 20 s left' for a report with an overall share."""
    if report.overall is None:
        return str(report)
    tail = f"{100 * report.overall:.0f}% of the run"
    if left is not None:
        tail += f", {_about(left)}"
    return f"{report} · {tail}"


def _about(seconds: float) -> str:
    if seconds < 1.5:
        return "about a second left"
    if seconds < 90:
        return f"about {seconds:.0f} s left"
    return f"about {seconds / 60:.0f} min left"


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
