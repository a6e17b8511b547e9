"""Progress reporting for long work, without any UI import.

Long computations accept ``on_progress(done, total, info)``; the Streamlit pages pass
a callback that moves an ``st.progress`` bar, the CLI one that draws a terminal bar.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

ProgressFn = Callable[[int, int, str], None]


def no_progress(done: int, total: int, info: str) -> None:
    """The default callback: report nothing."""


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
    """A one-line terminal progress bar (stderr), one bar per stage name."""

    def __init__(self, stream=sys.stderr, width: int = 30):
        self.stream, self.width = stream, width
        self._last = 0.0
        self._stage = ""

    def __call__(self, done: int, total: int, info: str) -> None:
        stage = info.split(":")[0]
        now = time.perf_counter()
        finished = done >= total
        if stage == self._stage and not finished and now - self._last < 0.2:
            return
        if stage != self._stage and self._stage:
            self.stream.write("\n")
        self._stage, self._last = stage, now
        filled = int(self.width * done / max(total, 1))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}] {done}/{total} {info[:60]:<60}")
        if finished:
            self.stream.write("\n")
            self._stage = ""
        self.stream.flush()
