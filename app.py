"""PVN Lab: page config, navigation and the shared sidebar (global seed)."""

import streamlit as st
from streamlit.errors import StreamlitAPIException

from pvnviz.polytope.survey import PAPER_SURVEY
from ui import look as ui_look
from ui import navigation as ui_navigation
from ui import urlcheck
from ui.errors import boundary
from ui.server import store

ui_navigation.page_config()  # title, the tab's icon (an image the app serves), wide layout
if not store.started():  # not served by the app's server (ui/server/app.py): no routes for Run, Stop, players
    st.error("PVN Lab runs only on its own server: start it with `make run` (or `make dev`), not `streamlit run`.")
    st.stop()

# The polytope page's seed (the other pages set their own below): the first of the paper-settings survey's
# seeds whose zero-shot learned ascent ends at the optimum, so a bare link shows Fig. 3's point; the page says
# how often that happens over 100 seeds (pvnviz/polytope/survey.py).
DEFAULT_SEED = PAPER_SURVEY.first_at_optimum
# Pages whose shipped runs use another seed: a bare link (no settings in the URL) opens them on it, so the
# sidebar shows the seed of what the page draws.
PAGE_SEEDS = {"cartpole": 0, "swimmer": 0}

navigation = ui_navigation.navigation()  # app.py's pages (ui/navigation.py), routed by st.navigation
urlcheck.snapshot(navigation.url_path)  # the link as opened, before any widget takes or drops its values
page_seed = PAGE_SEEDS.get(navigation.url_path, DEFAULT_SEED)
first_visit = f"visited_{navigation.url_path}"
if first_visit not in st.session_state:  # a page's first run in the session opens on its seed, or the link's
    st.session_state[first_visit] = True
    if urlcheck.link_int("seed", 0, ui_navigation.SEED_MAX, instead=str(page_seed)) is None:
        ui_navigation.set_by_code("seed", page_seed)
        try:  # a widget's first registration does not write a code-set value into the URL
            if navigation.url_path in PAGE_SEEDS:
                st.query_params["seed"] = str(page_seed)
        except StreamlitAPIException:  # already bound (an earlier page ran): the widget syncs the URL itself
            pass

with st.sidebar:
    st.number_input(
        "Seed",
        min_value=0,
        max_value=ui_navigation.SEED_MAX,
        value=ui_navigation.widget_default("seed", page_seed, "min"),  # none in a run where code set the seed
        step=1,
        key="seed",
        help="One seed for every page's random draws: sampled policies, network initialisation, rollouts.",
        bind="query-params",
    )
    st.toggle(
        "Projector mode",
        key="projector",
        help="Large text, widgets included, and large fonts, markers and lines in every figure, for a lecture hall.",
        bind="query-params",
    )
    st.radio(
        "Figure download format",
        ["PNG", "SVG"],
        horizontal=True,
        key="figure_format",
        bind="query-params",
        help="What the camera icon above each figure downloads.",
    )
    st.caption("Policy Evaluation Networks — Harb, Schaul, Precup, Bacon (ICML 2020).")
ui_look.apply(bool(st.session_state.get("projector")))  # projector mode scales the pages' text too

notice = st.container()  # above the page: what the link asked for that the page could not use
with boundary():  # an unexpected error: one st.error with an id, the traceback to the server's log
    navigation.run()  # a page that stops after an explained error calls urlcheck.stop(), which warns first
urlcheck.warn_ignored(navigation.url_path, notice)
