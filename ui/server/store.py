"""The server's one in-memory store: what its routes (``ui.server.routes``) answer, and what the pages put there.

It holds, all bounded:

- **progress**: each watched job's progress as the page reads it (a name holding a random token -> JSON bytes,
  and whether the job has ended). A watcher thread looks at the watched jobs every ``REFRESH`` seconds through
  ``describe(job_id)`` and rewrites what changed; a read may wait (``until_final``) until its job ends;
- **stops**: per progress name, each session's Stop token -> what its Stop does (that session stops waiting);
- **runs**: a page's Run token -> what its Run does (queue a job, return the page's answer); one token per owner
  (a session's panel); the newest ``MAX_RUNS`` kept;
- **handed over**: a job a Run queued with no script run, until that session's next script run takes it
  (``hand_over`` / ``take_over``); the newest ``MAX_HANDED`` kept;
- **animations**: the players' animations by name, plain and gzipped, at most ``MAX_ANIMATION_BYTES``, least
  recently used first out.

``start`` makes the process's store (the server's lifespan does, ``ui.server.app``; tests do it with a fixture),
``current`` returns it, ``started`` says whether there is one (``app.py`` refuses to run without it), ``stop`` ends
it. No Streamlit here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

REFRESH = 0.25  # seconds between two looks at the watched jobs
KEEP_ENDED = 120.0  # seconds an ended job's progress stays readable (a page that reruns late still reads its end)
MAX_WATCHED = 4096  # progress names kept at most (the oldest go first)
MAX_RUNS = 4096  # Run tokens kept at most (the oldest go first): a session that never clicks holds one
MAX_HANDED = 4096  # jobs handed over to a session's next script run, kept at most
MAX_ANIMATION_BYTES = 64 * 1024 * 1024  # the players' animations: 100-500 kB each, so hundreds of them
GONE = {"state": "gone", "active": False, "text": "", "fraction": 0.0, "chart": None}  # a job the queue forgot

Describe = Callable[[str], "dict[str, Any] | None"]  # job id -> its progress as the page shows it, None if forgotten


class _Watched:
    """One watched job's progress: its name, its JSON now, and when it ended (monotonic s; None while active)."""

    __slots__ = ("job_id", "name", "body", "ended")

    def __init__(self, job_id: str, name: str) -> None:
        self.job_id, self.name, self.body, self.ended = job_id, name, b"", None


class Store:
    """Jobs' progress, Stop and Run tokens, handed-over jobs and animations, for one server process.

    Every method is thread-safe: the pages' script threads write, the server's event loop reads, the watcher
    thread refreshes. ``describe`` gives a job's progress dict (``ui.job_progress.payload``'s keys)."""

    def __init__(self, describe: Describe) -> None:
        self._describe = describe
        self._lock = threading.Lock()
        self._by_job: OrderedDict[str, _Watched] = OrderedDict()  # job id -> its progress
        self._by_name: dict[str, _Watched] = {}
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future]]] = {}
        self._stops: dict[str, dict[str, Callable[[], None]]] = {}  # progress name -> {token: stop}
        self._runs: OrderedDict[str, tuple[Hashable, Callable[[], bytes]]] = OrderedDict()
        self._run_of: dict[Hashable, str] = {}  # owner -> its one Run token
        self._handed: OrderedDict[Hashable, Any] = OrderedDict()
        self._animations: OrderedDict[str, tuple[bytes, bytes]] = OrderedDict()  # name -> (JSON, gzipped)
        self._animation_bytes = 0
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._watch_loop, name="pvn-progress", daemon=True)
        self._thread.start()

    # progress -------------------------------------------------------------------------------------------------

    def watch(self, job_id: str) -> tuple[str, dict[str, Any]]:
        """Keep ``job_id``'s progress readable: its name (the same for every caller) and its progress now."""
        content = self._describe(job_id) or {"id": job_id, **GONE}
        with self._lock:
            watched = self._by_job.get(job_id)
            if watched is None:
                watched = self._by_job[job_id] = _Watched(job_id, f"{job_id}-{secrets.token_urlsafe(12)}")
                self._by_name[watched.name] = watched
                while len(self._by_job) > MAX_WATCHED:
                    _, old = self._by_job.popitem(last=False)
                    self._forget(old)
        self._keep(watched, content)
        return watched.name, content

    def progress(self, name: str) -> bytes | None:
        """The progress JSON at ``name``, or None (never watched, or forgotten)."""
        with self._lock:
            watched = self._by_name.get(name)
            return None if watched is None else watched.body

    async def until_final(self, name: str, timeout: float) -> None:
        """Wait until the job at ``name`` has ended or is forgotten, at most ``timeout`` s (at once if it has
        ended, or if ``name`` is unknown)."""
        loop = asyncio.get_running_loop()
        entry = (loop, loop.create_future())
        with self._lock:
            watched = self._by_name.get(name)
            if watched is None or watched.ended is not None:
                return
            self._waiting.setdefault(name, []).append(entry)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(entry[1], timeout)
        finally:
            with self._lock:
                reads = self._waiting.get(name, [])
                if entry in reads:
                    reads.remove(entry)
                    if not reads:
                        del self._waiting[name]

    def held(self) -> int:
        """How many reads wait now."""
        with self._lock:
            return sum(map(len, self._waiting.values()))

    # Stop and Run ---------------------------------------------------------------------------------------------

    def allow_stop(self, name: str, token: str, action: Callable[[], None]) -> None:
        """A Stop at progress ``name`` with ``token`` runs ``action``, once, while ``name`` is kept."""
        with self._lock:
            if name in self._by_name:
                self._stops.setdefault(name, {})[token] = action

    def take_stop(self, name: str, token: str) -> Callable[[], None] | None:
        """The Stop of ``token`` at ``name``, taken once; None for a wrong, used or expired one."""
        with self._lock:
            return self._stops.get(name, {}).pop(token, None)

    def allow_run(self, owner: Hashable, token: str, action: Callable[[], bytes]) -> None:
        """A Run with ``token`` runs ``action`` once and answers with what it returns. ``owner`` (a session's
        panel) has one token at a time: this one replaces its last."""
        with self._lock:
            self._revoke(owner)
            self._runs[token] = (owner, action)
            self._run_of[owner] = token
            while len(self._runs) > MAX_RUNS:
                _, (gone, _) = self._runs.popitem(last=False)
                self._run_of.pop(gone, None)

    def revoke_run(self, owner: Hashable) -> None:
        """``owner``'s token takes no Run any more."""
        with self._lock:
            self._revoke(owner)

    def take_run(self, token: str) -> Callable[[], bytes] | None:
        """The Run of ``token``, taken once; None for a wrong, used or replaced one."""
        with self._lock:
            entry = self._runs.pop(token, None)
            if entry is None:
                return None
            self._run_of.pop(entry[0], None)
            return entry[1]

    def hand_over(self, owner: Hashable, value: Any) -> Any:
        """Keep ``value`` (a job a Run queued) for ``owner``'s next ``take_over``; returns what it replaces."""
        with self._lock:
            earlier = self._handed.pop(owner, None)
            self._handed[owner] = value
            while len(self._handed) > MAX_HANDED:
                self._handed.popitem(last=False)
            return earlier

    def take_over(self, owner: Hashable) -> Any:
        """What was handed over to ``owner``, once; None if nothing."""
        with self._lock:
            return self._handed.pop(owner, None)

    # animations -----------------------------------------------------------------------------------------------

    def put_animation(self, name: str, body: Callable[[], bytes]) -> None:
        """Serve ``body()`` at ``name`` until newer or more recently read animations push it out; a name already
        kept is only marked as used (``body`` is not called)."""
        with self._lock:
            if name in self._animations:
                self._animations.move_to_end(name)
                return
        plain = body()
        kept = (plain, gzip.compress(plain, compresslevel=6))  # JSON of numbers: a fifth of its size
        with self._lock:
            if name not in self._animations:
                self._animations[name] = kept
                self._animation_bytes += sum(map(len, kept))
            while self._animation_bytes > MAX_ANIMATION_BYTES and len(self._animations) > 1:
                _, old = self._animations.popitem(last=False)
                self._animation_bytes -= sum(map(len, old))

    def animation(self, name: str, gzipped: bool = False) -> bytes | None:
        """The animation at ``name`` (gzipped if asked), or None (never kept, or pushed out)."""
        with self._lock:
            kept = self._animations.get(name)
            if kept is None:
                return None
            self._animations.move_to_end(name)
            return kept[gzipped]

    def animation_bytes(self) -> int:
        with self._lock:
            return self._animation_bytes

    def drop_animation(self, name: str) -> None:
        """Forget the animation at ``name`` (as if pushed out)."""
        with self._lock:
            kept = self._animations.pop(name, None)
            if kept is not None:
                self._animation_bytes -= sum(map(len, kept))

    # the watcher ----------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the watcher and release every held read."""
        self._closed.set()
        with self._lock:
            released = [r for reads in self._waiting.values() for r in reads]
            self._waiting.clear()
        _release(released)

    def _watch_loop(self) -> None:
        while not self._closed.wait(REFRESH):
            with self._lock:
                watched = list(self._by_job.values())
            for entry in watched:
                if entry.ended is None:
                    self._keep(entry, self._describe(entry.job_id) or {"id": entry.job_id, **GONE})
                elif time.monotonic() - entry.ended > KEEP_ENDED:
                    with self._lock:
                        if self._by_job.get(entry.job_id) is entry:
                            del self._by_job[entry.job_id]
                            self._forget(entry)

    def _keep(self, watched: _Watched, content: dict[str, Any]) -> None:
        body = json.dumps(content, separators=(",", ":"), allow_nan=False).encode()
        with self._lock:
            if watched.ended is not None or self._by_name.get(watched.name) is not watched:
                return  # an end is final; a forgotten name stays forgotten
            watched.body = body
            released = []
            if not content["active"]:
                watched.ended = time.monotonic()
                released = self._waiting.pop(watched.name, [])
        _release(released)

    def _forget(self, watched: _Watched) -> None:  # with the lock held
        self._by_name.pop(watched.name, None)
        self._stops.pop(watched.name, None)
        _release(self._waiting.pop(watched.name, []))

    def _revoke(self, owner: Hashable) -> None:  # with the lock held
        token = self._run_of.pop(owner, None)
        if token is not None:
            self._runs.pop(token, None)


def _release(reads: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]]) -> None:
    for loop, future in reads:
        with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: nobody waits there any more
            loop.call_soon_threadsafe(_settle, future)


def _settle(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


_CURRENT: list[Store] = []  # the process's store, once started


def start(describe: Describe) -> Store:
    """Make the process's store (closing any earlier one) and return it."""
    stop()
    _CURRENT.append(Store(describe))
    return _CURRENT[0]


def started() -> bool:
    """Whether the process's store is started (not under ``streamlit run app.py``)."""
    return bool(_CURRENT)


def current() -> Store:
    """The process's store; RuntimeError if nothing started it."""
    if not _CURRENT:
        raise RuntimeError("the app's store is not started: serve the app with `make run` (ui.server.app)")
    return _CURRENT[0]


def stop() -> None:
    """Close and forget the process's store, if any."""
    while _CURRENT:
        _CURRENT.pop().close()
