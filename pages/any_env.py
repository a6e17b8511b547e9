"""Any environment page: the PVN experiment of Section 6 (Algorithms 1-3) on any qualifying gymnasium environment."""

import streamlit as st

from ui import any_env, explain, require_navigation
from ui.experiment import show_experiment, sidebar_config
from ui.results import render_results

require_navigation()

# The run the page opens on (its environment, preset and seed: app.py's default seed, 10), made by
# `python -m pvnviz run gym:Pendulum-v1 --preset quick --seed 10 --out data/any-env-pendulum-quick`.
SHIPPED_RUNS = {"gym:Pendulum-v1": {"quick": "data/any-env-pendulum-quick"}}

st.title("Any environment: PVNs beyond CartPole and Swimmer")
st.caption(
    "Sections 4-6 on any gymnasium environment with a flat Box observation and a Discrete or Box action: random "
    "policies, PVNs trained on their returns (through fingerprints, and through flattened weights where the preset "
    "compares both, as Quick does), and gradient ascent through them. Pick an environment, press **Run "
    "with these settings**, and compare with the CartPole page."
)
explain.experiment()

gym_id = any_env.pick_environment()
if gym_id is None:
    any_env.stop()
any_env.show_spaces(gym_id)
any_env.show_comparison(gym_id)  # before the run panel, which stops the page while there is no result to draw

config = sidebar_config(gym_id.name, default_preset="quick")
seed = int(st.session_state.get("seed", 0))

ascent_note = (
    "Section 5, Algorithm 3. True mean return (Monte Carlo) of each starting policy along its ascent through each "
    "PVN, light lines per start, bold their mean; the green dotted line is the best policy the PVN trained on, "
    "played again on fresh episodes as the starts' chosen policies are: its dataset return, the best of many "
    "short measurements, is its luckiest. "
    "Starts that end above the line found policies better than any the PVN trained on, with no environment steps "
    "but Algorithm 3's checks. The same figure as CartPole's Fig. 4 (right), on this environment."
)
show_experiment(
    gym_id.name, config, seed, lambda result: render_results(result, ascent_note), shipped=SHIPPED_RUNS.get(gym_id.name)
)
