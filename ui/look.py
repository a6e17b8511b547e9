"""The page's own CSS over Streamlit's theme, for every page: metrics, page links and buttons that wrap rather
than end in an ellipsis, and projector mode (the sidebar's toggle) scaling the pages' text, widgets included, as
``pvnviz.figures.theme.projector`` scales the figures."""

from __future__ import annotations

import streamlit as st

# Widget text grows less than the figures (pvnviz.figures.theme.PROJECTOR_SCALE): the sidebar and columns keep
# their width.
PROJECTOR_TEXT = 1.3

# Streamlit cuts a metric's label and value, a sidebar page link and a button's label to one line with an ellipsis
# (a metric's markdown container has the class stMarkdownEllipsis): they wrap instead.
BASE_CSS = """
:is([data-testid='stMetricLabel'], [data-testid='stMetricValue'], [data-testid='stSidebarNavLink'])
  :is(.stMarkdownEllipsis, .stMarkdownEllipsis p),
[data-testid='stSidebarNavLink'] span[label], [data-testid^='stBaseButton'] :is(div, p) {
  white-space: normal; overflow: visible; text-overflow: clip; overflow-wrap: anywhere;
}
[data-testid='stMetricLabel'], [data-testid='stSidebarNavLink'] { height: auto; min-height: 1.5rem; }
"""
# Streamlit sizes its text in rem: a larger root font scales labels, inputs, buttons, captions and markdown.
PROJECTOR_CSS = f"html {{ font-size: {100 * PROJECTOR_TEXT:.0f}%; }}"


def apply(projector: bool) -> None:
    """The CSS for this page run (an st.html of style tags only: it takes no space on the page)."""
    css = BASE_CSS + (PROJECTOR_CSS if projector else "")
    st.html(f"<style>{css}</style>")
