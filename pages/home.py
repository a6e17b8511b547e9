"""Home page: the paper's idea in a few paragraphs and where to start."""

import streamlit as st

from ui import explain, require_navigation

require_navigation()

st.title("PVN Lab")
st.markdown(
    """
**Policy Evaluation Networks** (Harb, Schaul, Precup & Bacon, ICML 2020) flip the usual
value function around. Instead of estimating the value of *one* policy in *many* states,
a PVN estimates the value of *many* policies from the start-state distribution: its input
is a policy, its output the policy's expected return (Section 3). It is trained by plain
supervised learning on a dataset of random policies and their Monte Carlo returns,
predicting a histogram of returns with a KL loss.

**Fingerprints** (Section 4). Feeding a neural-network policy to a PVN as its flattened
weights scales badly and throws away the layer structure. Instead, the PVN learns a
small set of *probing states*; the policy's outputs at those states (its action
probabilities, or its actions) are the fingerprint the PVN reads. Probes and PVN are
trained together.

**Zero-shot gradient ascent** (Section 5). A trained PVN is differentiable in its input,
so gradient ascent on the PVN's estimate improves a policy *without any new data*. The
paper shows this finds policies far better than any in the training set.
"""
)
explain.home()
st.subheader("Where to start")
st.page_link(
    "pages/polytope.py",
    label="Value polytope — the 2-state MDP, exact against learned (Section 6.1)",
    icon=":material/change_history:",
)
st.page_link(
    "pages/cartpole.py",
    label="CartPole — random policies, fingerprints against flattened weights, zero-shot ascent (Section 6.2)",
    icon=":material/sports_esports:",
)
st.page_link(
    "pages/swimmer.py",
    label="Swimmer — MuJoCo at paper scale, ascent against Spinning Up DDPG, TD3 and SAC scores (Section 6.3)",
    icon=":material/pool:",
)
st.markdown(
    "Each page opens on the paper's settings (Appendix B) with results at once: CartPole and Swimmer open "
    "shipped runs, and live training starts from their Run button (with a Stop button). The seed in the "
    "sidebar drives every random draw. Every page's controls live in the URL, so copying the address "
    "shares exactly what you see; each page can reset itself to the paper's settings. Each run downloads "
    "as a zip that the page can open again, each animation as a GIF; the sidebar's projector mode "
    "enlarges every figure for a lecture hall."
)
