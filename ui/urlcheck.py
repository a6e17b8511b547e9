"""Links that carry a value no widget can take are not dropped silently.

Streamlit's ``bind="query-params"`` ignores a URL value a widget cannot hold (a word in a number
box, a number above the widget's maximum, an option not in the list) and shows the default.
``snapshot`` keeps the URL as it was when a page opened in this session; after the page has drawn
its widgets, ``warn_ignored`` shows one warning naming every parameter that was not taken and the
value used instead. A value the page reads another way (an old preset label) is marked ``taken_as``.

A value the page reads itself (a step, a frame, a view's index) is parsed here, by ``whole`` and ``number``,
which take ASCII digits only: ``str.isdigit`` is true for "²" and "①", which ``int`` then refuses. ``link_int``
reads one such value; one it cannot use is removed from the URL and named in the same warning.
"""

from __future__ import annotations

import math
import re
from typing import Any, NoReturn

import streamlit as st
from streamlit.errors import StreamlitAPIException

from ui.navigation import CURRENT_PAGE

_SNAPSHOT = "_url_at_open"
_PENDING = "_url_check_pending"
_REFUSED = "_url_refused"  # key -> the message naming a link value that ``link_int`` could not use
_HIDDEN = {"embed", "embed_options"}  # Streamlit's own parameters
_WHOLE = re.compile(r"[+-]?[0-9]{1,30}")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?")
MAX_SHOWN = 40  # characters of a link value a message repeats


def snapshot(page: str) -> None:
    """In app.py, before any widget: the URL of this page's first run in the session (later runs: nothing)."""
    opened = st.session_state.setdefault(_SNAPSHOT, {})
    if page not in opened:
        opened[page] = {k: st.query_params.get_all(k)[-1] for k in st.query_params.keys() if k not in _HIDDEN}
        st.session_state[_PENDING] = page
        _drop_non_finite(opened[page])


def _drop_non_finite(url: dict[str, str]) -> None:
    """Remove ``inf`` and ``nan`` link values before any widget reads them, then rerun.

    Streamlit 1.67's integer number_input raises OverflowError (an exception on the page) when a link
    holds ``inf`` for it: its URL seeding catches ValueError only. No widget here takes inf or nan, so
    they are deleted from ``st.query_params``; that updates the run's query string, and ``st.rerun()``
    seeds the widgets from it. The snapshot keeps the values, so ``warn_ignored`` still names them.
    """
    bad = [key for key, text in url.items() if _non_finite(text)]
    for key in bad:
        del st.query_params[key]
    if bad:
        st.rerun()


def _non_finite(text: str) -> bool:
    try:
        return not math.isfinite(float(text))
    except (ValueError, OverflowError):
        return False


def whole(text: str | None) -> int | None:
    """``text`` as a whole number when it is one written in ASCII digits (an optional sign, at most 30 digits)."""
    if text is None or not _WHOLE.fullmatch(text):
        return None
    return int(text)


def number(text: str | None) -> float | None:
    """``text`` as a finite number when it is one written in ASCII (digits, a point, an exponent), else None."""
    if text is None or len(text) > 60 or not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _shown(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


def _opened_with() -> dict[str, str]:
    """The link this page was opened with in this session (``snapshot``)."""
    return st.session_state.get(_SNAPSHOT, {}).get(st.session_state.get(CURRENT_PAGE, ""), {})


def put(key: str, value: str | None) -> None:
    """The URL's ``key`` set to ``value`` (None: left out), written only where the URL the browser sent with this
    rerun differs. A rerun begun before an earlier rerun's URL reached the browser starts from the older URL, and
    any write sends the whole of it: so pages write their views on every rerun, through here."""
    if value is None:
        if key in st.query_params:
            del st.query_params[key]
    elif st.query_params.get(key) != value:
        st.query_params[key] = value


def link_int(key: str, lo: int, hi: int, instead: str) -> int | None:
    """The URL's ``key`` as a whole number from ``lo`` to ``hi``; None when it is absent or not such a number.

    A value it cannot use leaves the URL; when it is the link's (the page was opened with it), the page's warning
    names it and says what is shown ``instead`` (e.g. "the last step"). A value written there since (a range that
    shrank) is dropped silently: the page moved past it."""
    text = st.query_params.get(key)
    if text is None:
        return None
    value = whole(text)
    if value is not None and lo <= value <= hi:
        return value
    if _opened_with().get(key) == text:
        reason = "not a whole number" if value is None else f"not a whole number from {lo} to {hi}"
        st.session_state.setdefault(_REFUSED, {})[key] = (
            f"`{key}={_shown(text)}` cannot be used here ({reason}), so **{key}** is {instead} instead."
        )
    try:
        st.query_params.pop(key, None)
    except StreamlitAPIException:  # bound to a widget (the seed): the widget corrects the URL itself
        pass
    return None


def _taken(text: str, value: Any) -> bool:
    """Whether the widget's value is what the URL said."""
    if isinstance(value, bool):
        return text.strip().lower() == str(value).lower()
    if isinstance(value, (int, float)):
        try:
            number = float(text)
        except ValueError:
            return False
        return math.isfinite(number) and math.isclose(number, float(value), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(value, (list, tuple)):
        return text in [str(v) for v in value]
    return text == ("" if value is None else str(value))


def ignored(url: dict[str, str], state: Any) -> list[str]:
    """Messages for the URL's parameters that a widget holds differently (``state``: the session state)."""
    messages = []
    for key, text in url.items():
        if key not in state:
            continue  # not a widget of this page
        value = state[key]
        if not _taken(text, value):
            messages.append(f"`{key}={_shown(text)}` cannot be used here, so **{key}** is {value!r} instead.")
    return messages


def taken_as(key: str, text: str, value: str) -> None:
    """The page took the link's ``key=text`` as ``value`` (a preset's old label as its id): not reported."""
    url = _opened_with()
    if url.get(key) == text:
        url[key] = value


def stop() -> NoReturn:
    """``st.stop()`` after an explained error: the link's warning first (app.py draws it only after a whole page)."""
    warn_ignored(st.session_state.get(CURRENT_PAGE, ""))
    st.stop()
    raise AssertionError("st.stop() returned")  # st.stop() raises; for type checkers


def warn_ignored(page: str, container: Any = None) -> None:
    """After a page: a warning (in ``container``, at the top) for the link's values no widget took and those
    ``link_int`` could not use, once."""
    refused: dict[str, str] = st.session_state.pop(_REFUSED, {})
    messages = list(refused.values())
    if st.session_state.get(_PENDING) == page:
        del st.session_state[_PENDING]
        url = st.session_state.get(_SNAPSHOT, {}).get(page, {})
        messages += ignored({k: v for k, v in url.items() if k not in refused}, st.session_state)
    if messages:
        target = st if container is None else container
        target.warning("This link holds values the page cannot use:\n\n- " + "\n- ".join(messages))
