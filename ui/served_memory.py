"""The players' animations as ``make run`` serves them: by URL, from memory, so that a new visitor's page stays
small with the queue full (UI only, no math here).

Inside a page's script run, a page's players' animations (``ui.browser_player``) would make up most of what that
run sends every visitor, and every tab that waits on a shared run at its end, though a player parses its animation
only when the reader scrolls near it. Under ``make run`` a player gets a URL instead (``put``), and fetches the
animation when it is near; ``ui.asgi.ProgressReads`` answers that GET from here (``get``). ``streamlit run
app.py`` has no middleware (``enabled`` is False): there the animations go inline.

Names hold a random token: a session's uploaded run is not readable by another that guesses an id. The store is
bounded by bytes (``MAX_BYTES``), least recently used first; a page whose animation is gone asks its server for
it again (``ui.browser_player``). No Streamlit here: ``ui/asgi.py`` imports it before Streamlit's runtime exists.
"""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict
from collections.abc import Callable

MAX_BYTES = 64 * 1024 * 1024  # the players' animations kept for reads: 100-500 kB each, so hundreds of them
PREFIX = "anim/"  # their paths under static/: anim/<player key>-<build number>-<token>.json

_BODIES: OrderedDict[str, tuple[bytes, bytes]] = OrderedDict()  # path -> (the JSON, gzipped)
_LOCK = threading.Lock()
_state = {"bytes": 0, "enabled": False}


def enable() -> None:
    """The middleware that answers reads from here is in this process (``ui.asgi.ProgressReads``)."""
    _state["enabled"] = True


def enabled() -> bool:
    return _state["enabled"]


def put(path: str, body: Callable[[], bytes]) -> None:
    """Serve ``body()`` at ``path`` (``anim/...``), gzipped too (JSON of numbers: a fifth of its size), until
    ``MAX_BYTES`` of newer or more recently read bodies push it out; a path already kept is only marked as used
    (``body`` is not called)."""
    with _LOCK:
        if path in _BODIES:
            _BODIES.move_to_end(path)
            return
    plain = body()
    kept = (plain, gzip.compress(plain, compresslevel=6))
    with _LOCK:
        if path not in _BODIES:
            _BODIES[path] = kept
            _state["bytes"] += sum(map(len, kept))
        while _state["bytes"] > MAX_BYTES and len(_BODIES) > 1:
            _, old = _BODIES.popitem(last=False)
            _state["bytes"] -= sum(map(len, old))


def get(path: str, gzipped: bool = False) -> bytes | None:
    """The body at ``path`` (gzipped if asked), or None (never kept, or pushed out)."""
    with _LOCK:
        kept = _BODIES.get(path)
        if kept is None:
            return None
        _BODIES.move_to_end(path)
        return kept[gzipped]


def kept_bytes() -> int:
    with _LOCK:
        return _state["bytes"]
