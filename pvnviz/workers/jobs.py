"""One job of the app's queue (``pvnviz.workers.jobqueue``): the queue's own record of a live run and who waits for
it, and the copy a page reads (a server a class can share; no paper math here)."""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from pvnviz.core.progress import Report, Stage

ACTIVE = ("queued", "running")


@dataclass
class Job:
    """One computation and who waits for it (the queue's own record; pages read ``JobView`` copies)."""

    id: str
    key: Hashable
    task: str
    kwargs: dict[str, Any]
    lane: str
    label: str
    estimate: float  # seconds, before the queue's correction from finished jobs
    owner: str  # the session that asked first: the one-running-job-per-session rule counts it there
    waiters: dict[str, float] = field(default_factory=dict)  # session -> when it last looked (monotonic)
    state: str = "queued"  # queued, running, done, failed, cancelled
    progress: tuple[int, int, Report] = (0, 1, Report(Stage.WAITING))  # (done, total, report): the last report
    history: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)
    error: str = ""
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None
    finished: float | None = None
    cancel_sent: bool = False


@dataclass(frozen=True)
class JobView:
    """What a page shows of a job: its state, progress, live losses, and where it stands in the queue."""

    id: str
    key: Hashable
    label: str
    state: str
    progress: tuple[int, int, Report]
    history: dict[str, list[tuple[int, float, float]]]
    error: str
    elapsed: float  # seconds since it started (0 while queued)
    position: int  # 1 = next to start; 0 once running
    queued: int  # jobs waiting in its lane
    eta: float  # estimated seconds until it starts (queued) or ends (running)
    waiters: int

    @property
    def active(self) -> bool:
        return self.state in ACTIVE
