"""The app's pages and their navigation, through Streamlit's public API only.

``app.py`` calls ``navigation()``; every page starts with ``require_navigation()``. Streamlit
treats an app with a ``pages/`` folder as a folder-based multipage app until the entry script
has called ``st.navigation`` once in the server process, so on a fresh server a shared link to a
page would run that page alone, without app.py's sidebar. ``st.navigation`` is documented to
switch the app to its own page list for good; ``require_navigation`` calls it with app.py's
pages and reruns, and the rerun goes through app.py, which routes to the same page.
"""

from __future__ import annotations

import streamlit as st

_FROM_APP = "_page_run_from_app"  # session-state mark: app.py routed this run to the page
CURRENT_PAGE = "_current_page"  # the URL path of the page this run draws (set by app.py)


def app_pages() -> list[st.Page]:
    """The app's pages, in sidebar order; the URL path of each is its page's name. Their icons are emoji: Streamlit
    makes a page's icon the tab's favicon, and fetches a Material icon's from fonts.gstatic.com (nothing may be
    fetched from outside the app's own server)."""
    return [
        st.Page("pages/home.py", title="Start here", icon="🏠", default=True),
        st.Page(
            "pages/polytope.py",
            title="Value polytope (2-state MDP)",
            icon="🔺",
            url_path="polytope",
        ),
        st.Page(
            "pages/cartpole.py", title="CartPole (Section 6.2)", icon="🛒", url_path="cartpole"
        ),
        st.Page("pages/swimmer.py", title="Swimmer (Section 6.3)", icon="🏊", url_path="swimmer"),
    ]


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
    st.navigation(app_pages(), position="hidden")
    st.rerun()
