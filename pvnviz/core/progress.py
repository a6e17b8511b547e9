"""Progress reporting for long work, without any UI import.

Long computations accept ``on_progress(done, total, info)``; the Streamlit pages pass
a callback that moves an ``st.progress`` bar, the CLI one that draws a terminal bar. A whole
run (Algorithms 1-3, ``pvnviz.runs.pipeline``) takes one ``Hooks`` value: its progress, and the
PVN's losses as Algorithm 2 records them (the pages' live loss chart).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

ProgressFn = Callable[[int, int, str], None]
MetricsFn = Callable[[str, int, float, float], None]  # (input_mode, step, train_loss, val_loss)


def no_progress(done: int, total: int, info: str) -> None:
    """The default callback: report nothing."""


@dataclass(frozen=True)
class Hooks:
    """What a run reports as it goes: progress (``on_progress``) and the PVN's recorded losses (``on_metrics``)."""

    on_progress: ProgressFn = no_progress
    on_metrics: MetricsFn | None = None


NO_HOOKS = Hooks()


class Cancelled(Exception):
    """Raised from inside an ``on_progress`` callback to stop long work; the core lets it propagate."""


def cancellable(cancel: Callable[[], bool], inner: ProgressFn = no_progress) -> ProgressFn:
    """An ``on_progress`` that calls ``inner`` and raises Cancelled as soon as ``cancel()`` is true.

    Every long loop of the core reports progress at least every few hundred milliseconds, so a
    job stops within about a second of the request without the core knowing about jobs.
    """

    def on_progress(done: int, total: int, info: str) -> None:
        if cancel():
            raise Cancelled(info)
        inner(done, total, info)

    return on_progress


class TerminalProgress:
    """Terminal progress on stderr through tqdm: one bar per stage (the text before ``:`` in ``info``)."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self._bar = None
        self._stage = ""
        self.drawn = False  # whether any bar was started (its line may be cut by an error)

    def __call__(self, done: int, total: int, info: str) -> None:
        from tqdm import tqdm

        stage, _, detail = info.partition(":")
        if self._bar is None or stage != self._stage or self._bar.total != total:
            self.close()
            self.drawn = True  # before the bar: a signal may arrive while tqdm draws its first line
            self._bar = tqdm(total=total, desc=stage[:40], file=self.stream, mininterval=0.2)
            self._stage = stage
        self._bar.n = min(done, total)
        self._bar.set_postfix_str(detail.strip()[:60], refresh=False)
        self._bar.refresh()
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar, self._stage = None, ""

