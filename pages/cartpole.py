"""CartPole page: live PVN training and zero-shot ascent (Section 6.2, Fig. 4)."""

import streamlit as st

from ui import explain, require_navigation
from ui.beyond import render_budget
from ui.experiment import show_experiment, sidebar_config
from ui.results import render_results

require_navigation()

# Shipped runs (seed 0) by preset id, made by `python -m pvnviz run cartpole --preset P --seed 0 --out data/cartpole-P`:
# the page opens on them at once; other settings train live from the Run button.
SHIPPED_RUNS = {"paper": "data/cartpole-paper", "quick": "data/cartpole-quick", "beyond": "data/cartpole-beyond"}

st.title("CartPole: PVNs, fingerprints and zero-shot ascent")
st.caption(
    "Section 6.2 and Fig. 4. Gymnasium's CartPole physics, batched: every policy's episodes run in lockstep. "
    "A PVN trained only on poor random policies guides gradient ascent to far better ones."
)
explain.experiment()

config = sidebar_config("cartpole", default_preset="paper")
seed = int(st.session_state.get("seed", 0))

paper_note = (
    "Fig. 4 (right). True mean return (Monte Carlo) of each starting policy along its ascent through the PVN, "
    "light lines per start, bold their mean; the red dashed line is the training-set limit and the green dotted "
    "line the best policy the PVN trained on. The paper reports that with MLP policies only the fingerprint PVN "
    "climbs far past the limit, while flattened weights go nowhere; with linear policies both work."
)
show_experiment("cartpole", config, seed, lambda result: render_results(result, paper_note), shipped=SHIPPED_RUNS)

render_budget(
    "cartpole-compare.jsonl",
    "Each point is one method's final policy on one seed (10-14), re-measured on 100 fresh episodes, against "
    "the environment steps it spent (Section 6.2's dataset plus Algorithm 3's checks for the PVN; rollouts "
    "for ARS, Mania et al. 2018, given the larger PVN budget). The paper's zero-shot PVN (`paper`) beats the "
    "best random policy it trained on; with active rounds (`beyond`) it reaches about 100, a little above ARS "
    "with state normalisation (V2-t, about 97) on the same budget. Made by "
    "`python -m pvnviz.cli.compare --seed 10 11 12 13 14`.",
    env_title="CartPole",
    y_range=(0, 105),
)
