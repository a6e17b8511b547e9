"""Streamlit helpers shared by the pages (UI only; no math here).

``computed`` runs a long ``pvnviz`` call once per (function, config, seed), drawing a
progress bar through the core's ``on_progress`` callback while it runs; later reruns
and other sessions get the stored result at once. (``st.cache_data`` cannot be used
for this: a cached function may not draw into a progress bar made outside it.)
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import streamlit as st

from pvnviz.core.progress import Report
from ui.navigation import require_navigation  # noqa: F401  (pages call it first)

MAX_RESULTS = 48
MAX_RESULT_BYTES = 1024 * 2**20  # the shared cache's bound on the arrays it holds (approximate, see ``nbytes``)
PROGRESS_INTERVAL = 0.1  # seconds between two redraws of a progress bar


@st.cache_resource
def result_store() -> tuple[OrderedDict, threading.Lock]:
    """The server's shared result cache and its lock: ``computed``'s results, finished jobs, datasets."""
    return OrderedDict(), threading.Lock()


def computed(fn: Callable[..., Any], *args: Any, label: str, **live: Any) -> Any:
    """fn(*args, on_progress, **live) memoised on (fn, args), with a progress bar on a miss.

    ``live`` holds extra callbacks (e.g. ``on_metrics`` for a growing loss chart); they
    are passed through but are not part of the key.
    """
    store, lock = result_store()
    key = (fn.__module__, fn.__qualname__, args)
    with lock:
        if key in store:
            store.move_to_end(key)
            return store[key]
    bar = st.progress(0.0, text=label)
    shown = [0.0]  # when the bar was last redrawn

    def on_progress(done: int, total: int, report: Report) -> None:
        now = time.perf_counter()
        if now - shown[0] < PROGRESS_INTERVAL and done < total:
            return  # a message per update would cost a short job more than its work (the polytope's PVN: 50)
        shown[0] = now
        bar.progress(min(done / max(total, 1), 1.0), text=f"{label} — {report}")

    try:
        result = fn(*args, on_progress, **live)
    finally:
        bar.empty()
    remember((store, lock), key, result)
    return result


_PER_RESULT: dict[int, dict[Any, Made]] = {}  # id(result) -> {key: its value}, while the result lives
_PER_RESULT_LOCK = threading.Lock()


class Made:
    """A value shared by every session, made once under its own lock (``per_result``, the players' animations):
    sessions asking for it at once wait for the first instead of making it too (every tab that waited on a shared
    run reruns when it ends). If making it raises, the next caller tries again."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = False
        self.value: Any = None

    def get(self, make: Callable[[], Any]) -> Any:
        """The value, made by ``make()`` if no caller made it yet."""
        with self.lock:
            if not self.done:
                self.value, self.done = make(), True
            return self.value


def per_result(result: object, key: Any, make: Callable[[], Any]) -> Any:
    """``make()`` once per result object and ``key``, for every session and rerun that shows this result.

    A result in the shared cache is one object for all the sessions showing it (a class on one preset), and a
    page's rerun (a widget, a run's end) draws the same figures again: their plotly JSON is made once, and
    forgotten with the result (a ``weakref.finalize`` on it, so an object id is never reused for another
    result's entries). Sessions that ask at once (every tab that waited on a shared run reruns when it ends)
    wait for the one making it instead of making it too; if ``make`` raises, the next caller tries again.
    Callers must not change what they get.
    """
    ident = id(result)
    with _PER_RESULT_LOCK:
        table = _PER_RESULT.get(ident)
        if table is None:
            table = _PER_RESULT[ident] = {}
            weakref.finalize(result, _PER_RESULT.pop, ident, None)
        made = table.setdefault(key, Made())
    return made.get(make)


def remember(cache: tuple[OrderedDict, threading.Lock], key: Any, value: Any) -> None:
    """Store ``value`` in the shared cache, dropping the oldest entries past MAX_RESULTS or MAX_RESULT_BYTES."""
    store, lock = cache
    with lock:
        store[key] = value
        store.move_to_end(key)
        sizes = {k: nbytes(v) for k, v in store.items()}
        total = sum(sizes.values())
        while len(store) > 1 and (len(store) > MAX_RESULTS or total > MAX_RESULT_BYTES):
            old, _ = store.popitem(last=False)
            total -= sizes[old]


def nbytes(value: Any, depth: int = 0) -> int:
    """About how many bytes of arrays ``value`` holds: numpy arrays and torch tensors, through dataclasses,
    dicts, lists and modules (a few levels deep: a run's replays hold their arrays 6 levels down, in a dict of
    Replay of Panel of Part); everything else counts as nothing."""
    if hasattr(value, "nbytes") and isinstance(value.nbytes, int):
        return value.nbytes
    if depth > 6:
        return 0
    if hasattr(value, "state_dict") and callable(value.state_dict):
        return sum(t.numel() * t.element_size() for t in value.state_dict().values())
    if hasattr(value, "__dataclass_fields__"):
        return sum(nbytes(getattr(value, f, None), depth + 1) for f in value.__dataclass_fields__)
    if isinstance(value, dict):
        return sum(nbytes(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(nbytes(v, depth + 1) for v in value[:1000])
    return 0


def chart_config(name: str) -> dict[str, Any]:
    """The plotly.js config of every figure: the modebar's camera downloads the figure client-side in the
    sidebar's format (PNG or SVG), named ``name``, and the modebar shows no plotly logo."""
    image = st.session_state.get("figure_format", "PNG").lower()
    options = dict(format=image, filename=name, scale=2 if image == "png" else 1)
    return {"toImageButtonOptions": options, "displaylogo": False}


def gif_download(label: str, make: Callable[[], bytes], file_name: str, **kwargs: Any) -> None:
    """Two download buttons, GIF and MP4, whose animation is drawn only when clicked (``make`` runs then)."""
    from pvnviz.figures import gif

    left, right = st.columns(2)
    left.download_button(label, data=make, file_name=file_name, mime="image/gif", on_click="ignore", **kwargs)
    key = kwargs.pop("key", None)
    right.download_button(
        label.replace("(GIF)", "(MP4)"),
        data=lambda: gif.to_mp4(make()),
        file_name=file_name.rsplit(".", 1)[0] + ".mp4",
        mime="video/mp4",
        on_click="ignore",
        key=None if key is None else f"{key}_mp4",
        **kwargs,
    )


def what_to_look_at(text: str) -> None:
    """The short caption under a figure."""
    st.markdown(f"**What to look at.** {text}")
