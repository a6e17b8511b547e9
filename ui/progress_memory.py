"""The live runs' progress as the pages read it, kept in memory, so that a class can share one server.

``ui.job_progress.ProgressFiles`` puts each progress file's content here as it writes the file; under ``make run``
the middleware ``ui.asgi.ProgressReads`` answers the pages' reads from here, not through Streamlit's static files,
and a read that asks to wait (``until_final``) is held until the job has ended, so its page learns the end at once
instead of at its next read. A page's Stop goes the same way (``allow_stop``, ``stop``): the middleware takes it
without a server rerun, so it takes effect at once however busy the server's script threads are; and so does a
page's Run (``allow_start``, ``take_start``), which needs no script run either: the middleware queues the job and
answers with its progress file, which the page then follows. No Streamlit here: ``ui/asgi.py`` imports it before
Streamlit's runtime exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

# "jobs/<folder>/<file>" (a path under static/) -> (the file's content, whether it is final: the job has ended), for
# every ProgressFiles of this process; set and removed by their writer threads, read by the server's event loop
_SERVED: dict[str, tuple[bytes, bool]] = {}
# path -> the reads held until its content is final or gone: (their event loop, the future that releases them)
_WAITING: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future]]] = {}
# path -> {a session's stop token: what its Stop does (that session stops waiting on the job)}; gone with the path
_STOPS: dict[str, dict[str, Callable[[], None]]] = {}
# a page's start token -> (its owner: a session's panel, what its Run does: queue the job, return the page's answer)
_STARTS: OrderedDict[str, tuple[Hashable, Callable[[], bytes]]] = OrderedDict()
_START_OF: dict[Hashable, str] = {}  # owner -> its one token: a panel's new token replaces its last one
START_PATH = "jobs/start"  # under static/: a page's Run is a POST here with run=<token>
MAX_STARTS = 4096  # tokens kept at most (the oldest go first): a session that never clicks holds one, not more
_LOCK = threading.Lock()
_ENABLED = threading.Event()


def keep(path: str, content: bytes, final: bool = False) -> None:
    """``content`` is what the progress file at ``path`` holds now; ``final``: the job has ended (held reads go)."""
    with _LOCK:
        _SERVED[path] = (content, final)
        released = _WAITING.pop(path, []) if final else []
    _release(released)


def forget(path: str) -> None:
    """The progress file at ``path`` is gone (held reads go)."""
    with _LOCK:
        _SERVED.pop(path, None)
        _STOPS.pop(path, None)
        released = _WAITING.pop(path, [])
    _release(released)


def allow_stop(path: str, token: str, action: Callable[[], None]) -> None:
    """A POST to the progress file at ``path`` with ``stop=<token>`` runs ``action`` (one session's Stop), until
    the path is forgotten. Only a kept path takes stops."""
    with _LOCK:
        if path in _SERVED:
            _STOPS.setdefault(path, {})[token] = action


def take_stop(path: str, token: str) -> Callable[[], None] | None:
    """The Stop of ``token`` at ``path``, taken once; None if there is none (a wrong token, or the path is gone)."""
    with _LOCK:
        return _STOPS.get(path, {}).pop(token, None)


def stop(path: str, token: str) -> bool:
    """Run the Stop of ``token`` at ``path``, once; False if there is none."""
    action = take_stop(path, token)
    if action is not None:
        action()
    return action is not None


def enable_starts() -> None:
    """A middleware takes the pages' Runs (``ui.asgi.ProgressReads``): pages draw their Run in the browser."""
    _ENABLED.set()


def starts_enabled() -> bool:
    return _ENABLED.is_set()


def allow_start(owner: Hashable, token: str, action: Callable[[], bytes]) -> None:
    """A POST to ``static/jobs/start`` with ``run=<token>`` runs ``action`` (one session's Run, with the settings
    its page showed when the token was given) and answers with what it returns, once. ``owner`` (a session's panel)
    has one token at a time: this one replaces its last."""
    with _LOCK:
        _revoke(owner)
        _STARTS[token] = (owner, action)
        _START_OF[owner] = token
        while len(_STARTS) > MAX_STARTS:
            _, (gone, _) = _STARTS.popitem(last=False)
            _START_OF.pop(gone, None)


def revoke_start(owner: Hashable) -> None:
    """``owner``'s token takes no Run any more (its page now draws Run disabled)."""
    with _LOCK:
        _revoke(owner)


def _revoke(owner: Hashable) -> None:  # with _LOCK held
    token = _START_OF.pop(owner, None)
    if token is not None:
        _STARTS.pop(token, None)


def take_start(token: str) -> Callable[[], bytes] | None:
    """The Run of ``token``, taken once; None if there is none (a wrong token, an old one, or one already used)."""
    with _LOCK:
        entry = _STARTS.pop(token, None)
        if entry is None:
            return None
        _START_OF.pop(entry[0], None)
        return entry[1]


def serving(path: str) -> bytes | None:
    """The content of the progress file at ``path`` under ``static/`` (``jobs/<folder>/<file>``) if this process
    writes it, else None."""
    kept = _SERVED.get(path)
    return None if kept is None else kept[0]


def paths() -> list[str]:
    """Every path kept (a copy)."""
    return list(_SERVED)


async def until_final(path: str, timeout: float) -> None:
    """Wait until the content at ``path`` is final or gone, at most ``timeout`` seconds (at once if it is already
    final, gone or unknown)."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    entry = (loop, future)
    with _LOCK:
        kept = _SERVED.get(path)
        if kept is None or kept[1]:
            return
        _WAITING.setdefault(path, []).append(entry)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(future, timeout)
    finally:
        with _LOCK:
            reads = _WAITING.get(path, [])
            if entry in reads:
                reads.remove(entry)
                if not reads:
                    del _WAITING[path]


def held() -> int:
    """How many reads are held now (for tests)."""
    with _LOCK:
        return sum(map(len, _WAITING.values()))


def _release(reads: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]]) -> None:
    for loop, future in reads:
        with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: nobody waits there any more
            loop.call_soon_threadsafe(_settle, future)


def _settle(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)
