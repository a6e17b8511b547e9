"""The app's pages and their navigation, through Streamlit's public API only.

``app.py`` calls ``navigation()``; every page starts with ``require_navigation()``. Streamlit
treats an app with a ``pages/`` folder as a folder-based multipage app until the entry script
has called ``st.navigation`` once in the server process, so on a fresh server a shared link to a
page would run that page alone, without app.py's sidebar. ``st.navigation`` is documented to
switch the app to its own page list for good; ``require_navigation`` calls it with app.py's
pages and reruns, and the rerun goes through app.py, which routes to the same page.

The sidebar's page icons are Material icons (Streamlit draws them from its own bundled font; emoji need an emoji
font the visitor may not have). The tab's icon is ``app_icon()``, an image made here: a Material icon as the
tab's icon would be fetched from fonts.gstatic.com, and the app fetches nothing from outside its own server.

The sidebar's seed (app.py) is one widget shared by every page, its default the page's own seed. Code that
sets a widget with a default of its own (a page's first visit, a reset button) calls ``set_by_code``, and the
widget takes ``widget_default``: it is not given a default in that run, as Streamlit warns when a widget gets both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st
from PIL import Image

_FROM_APP = "_page_run_from_app"  # session-state mark: app.py routed this run to the page
CURRENT_PAGE = "_current_page"  # the URL path of the page this run draws (set by app.py)


def app_pages() -> list[st.Page]:
    """The app's pages, in sidebar order; the URL path of each is its page's name."""
    return [
        st.Page("pages/home.py", title="Start here", icon=":material/home:", default=True),
        st.Page(
            "pages/polytope.py",
            title="Value polytope (2-state MDP)",
            icon=":material/change_history:",
            url_path="polytope",
        ),
        st.Page(
            "pages/cartpole.py",
            title="CartPole (Section 6.2)",
            icon=":material/shopping_cart:",
            url_path="cartpole",
        ),
        st.Page("pages/swimmer.py", title="Swimmer (Section 6.3)", icon=":material/pool:", url_path="swimmer"),
        st.Page("pages/any_env.py", title="Any environment", icon=":material/explore:", url_path="any_env"),
    ]


def app_icon(size: int = 64) -> Image.Image:
    """The tab's icon, ``size`` x ``size`` RGB: a light triangle (the value polytope of Fig. 2) on the app's blue."""
    y, x = np.mgrid[0:size, 0:size] / (size - 1)
    inside = (y >= 0.18) & (y <= 0.82) & (np.abs(x - 0.5) <= (y - 0.18) * 0.62)
    image = np.empty((size, size, 3), dtype=np.uint8)
    image[:] = (31, 119, 180)
    image[inside] = (245, 245, 245)
    return Image.fromarray(image)


def page_config() -> None:
    """``st.set_page_config`` of every page: the title, ``app_icon()`` as the tab's icon, the wide layout. Called
    before ``st.navigation``, so that the browser keeps this icon rather than fetch the page's Material icon."""
    st.set_page_config(page_title="PVN Lab", page_icon=app_icon(), layout="wide")


SEED_MAX = 2**31 - 1  # the sidebar's seed widget (app.py): its largest value
_SET_BY_CODE = "_widgets_set_by_code"  # session-state mark: the widget keys code set in this run (``set_by_code``)


def set_by_code(key: str, value: Any) -> None:
    """Set the widget ``key``'s value from code (before the widget is drawn, or in a callback); the widget then
    takes ``widget_default(key, ...)`` as its ``value``. A widget that holds ``value`` already is left alone (and
    so is its URL parameter)."""
    if key in st.session_state and st.session_state[key] == value:
        return
    st.session_state[key] = value
    st.session_state.setdefault(_SET_BY_CODE, set()).add(key)


def widget_default(key: str, default: Any, unset: Any) -> Any:
    """A widget's ``value`` argument: ``default``, or ``unset`` (the widget's "no default", e.g. "min" for a
    number box, None for a slider) in a run where code set its value, so that it is not given both."""
    marked = st.session_state.get(_SET_BY_CODE, set())
    if key in marked:
        marked.discard(key)
        return unset
    return default


def navigation() -> st.Page:
    """app.py's ``st.navigation`` over ``app_pages()``: the page this run should draw."""
    page = st.navigation(app_pages())
    st.session_state[_FROM_APP] = True
    st.session_state[CURRENT_PAGE] = page.url_path
    return page


def require_navigation() -> None:
    """Hand a page that Streamlit ran alone (a fresh server's first request) over to app.py.

    Does nothing when app.py routed this run here (the mark it left is taken).
    """
    if st.session_state.pop(_FROM_APP, False):
        return
    page_config()  # before st.navigation, as in app.py: else the browser takes the page's icon as the tab's
    st.navigation(app_pages(), position="hidden")
    st.rerun()
