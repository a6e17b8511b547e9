"""PVN Lab: page config, navigation and the shared sidebar (global seed)."""

import streamlit as st

st.set_page_config(page_title="PVN Lab", page_icon=":material/explore:", layout="wide")

DEFAULT_SEED = 4

pages = [
    st.Page("pages/home.py", title="Start here", icon=":material/home:", default=True),
    st.Page(
        "pages/polytope.py", title="Value polytope (2-state MDP)", icon=":material/change_history:", url_path="polytope"
    ),
    st.Page("pages/cartpole.py", title="CartPole (Section 6.2)", icon=":material/sports_esports:", url_path="cartpole"),
    st.Page("pages/swimmer.py", title="Swimmer (Section 6.3)", icon=":material/pool:", url_path="swimmer"),
]
navigation = st.navigation(pages)

with st.sidebar:
    st.number_input(
        "Seed",
        min_value=0,
        max_value=2**31 - 1,
        value=DEFAULT_SEED,
        step=1,
        key="seed",
        help="One seed for every page's random draws: sampled policies, network initialisation, rollouts.",
        bind="query-params",
    )
    st.caption("Policy Evaluation Networks — Harb, Schaul, Precup, Bacon (ICML 2020).")

navigation.run()
