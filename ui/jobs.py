"""Background jobs owned by one browser session: start from a Run button, poll, stop (UI only; no math here).

A job runs ``fn(on_progress=..., **kwargs)`` in a daemon thread. Its ``on_progress`` records the
latest (done, total, info) and raises ``pvnviz.progress.Cancelled`` once Stop was pressed, so the
core stops at its next progress report (well under a second) without knowing about jobs. The page
polls the job from an ``st.fragment(run_every=...)`` and keeps drawing the last finished result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pvnviz.progress import Cancelled, cancellable


@dataclass
class Job:
    """One background computation and what the page shows about it."""

    label: str
    key: Any = None
    progress: tuple[int, int, str] = (0, 1, "starting")
    history: dict[str, list] = field(default_factory=dict)  # live PVN losses per input: [(step, train, val)]
    result: Any = None
    error: str = ""
    cancelled: bool = False
    started: float = field(default_factory=time.perf_counter)
    finished: float | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Ask the job to stop; it raises Cancelled at its next progress report."""
        self._stop.set()

    def on_metrics(self, mode: str, step: int, train: float, val: float) -> None:
        """Record live losses; like on_progress, a place where a requested stop takes effect."""
        if self._stop.is_set():
            raise Cancelled(f"{mode} PVN at step {step}")
        self.history.setdefault(mode, []).append((step, train, val))

    def _record(self, done: int, total: int, info: str) -> None:
        self.progress = (done, total, info)

    def start(self, fn: Callable[..., Any], **kwargs: Any) -> Job:
        def body() -> None:
            try:
                self.result = fn(on_progress=cancellable(self._stop.is_set, self._record), job=self, **kwargs)
            except Cancelled:
                self.cancelled = True
            except (ValueError, RuntimeError, MemoryError) as err:  # bad settings: shown with st.error
                self.error = str(err)
            finally:
                self.finished = time.perf_counter()

        self._thread = threading.Thread(target=body, name=f"pvn-job-{self.label}", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (tests and the CLI); True if it ended."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running
