"""CartPole page: live PVN training and zero-shot ascent (Section 6.2, Fig. 4)."""

import numpy as np
import streamlit as st

from pvnviz.figures import gif
from pvnviz.figures.replay import cartpole_replay, cartpole_steps
from pvnviz.presets import PRESETS
from pvnviz.replay import cartpole_episodes
from ui import explain, gif_download, require_navigation, what_to_look_at
from ui.experiment import obtain_result, sidebar_config
from ui.player import animate
from ui.results import policy_pair, render_results

require_navigation()

PRESET_NAMES = {
    "quick": "Quick",
    "paper": "Paper (MLP [30])",
    "paper-linear": "Paper (linear)",
    "beyond": "Beyond zero-shot (MLP [30])",
    "beyond-linear": "Beyond zero-shot (linear)",
}
# Shipped runs (seed 0), made by `python -m pvnviz run cartpole --preset P --seed 0 --out data/cartpole-P`:
# the page opens on them at once; other settings train live from the Run button.
SHIPPED_RUNS = {
    PRESET_NAMES["paper"]: "data/cartpole-paper",
    PRESET_NAMES["quick"]: "data/cartpole-quick",
    PRESET_NAMES["beyond"]: "data/cartpole-beyond",
}

st.title("CartPole: PVNs, fingerprints and zero-shot ascent")
st.caption(
    "Section 6.2 and Fig. 4. Gymnasium's CartPole physics, batched: every policy's episodes run in lockstep. "
    "A PVN trained only on poor random policies guides gradient ascent to far better ones."
)
explain.experiment()

config = sidebar_config(
    "cartpole", {PRESET_NAMES[k]: v for k, v in PRESETS["cartpole"].items()}, default_preset=PRESET_NAMES["paper"]
)
seed = int(st.session_state.get("seed", 0))
result = obtain_result("cartpole", config, seed, shipped=SHIPPED_RUNS)

paper_note = (
    "Fig. 4 (right). True mean return (Monte Carlo) of each starting policy along its ascent through the PVN, "
    "light lines per start, bold their mean; the red dashed line is the training-set limit and the green dotted "
    "line the best policy the PVN trained on. The paper reports that with MLP policies only the fingerprint PVN "
    "climbs far past the limit, while flattened weights go nowhere; with linear policies both work."
)


def replay(result, trace, start: int) -> None:
    states = cartpole_episodes(result.config.arch(), policy_pair(trace, start), result.config.horizon, seed)
    labels = ["before ascent", "after ascent (best seen)"]
    steps = np.isfinite(states[:, :, 0]).sum(1) - 1
    panels = {f"{lab}: {steps[i]} steps": states[i] for i, lab in enumerate(labels)}
    animate("cartpole_replay", cartpole_steps(panels), lambda t: cartpole_replay(panels, frame=t))
    gif_download("Download this replay (GIF)", lambda: gif.cartpole_gif(panels), "cartpole-replay.gif")
    what_to_look_at(
        "The same start state and random stream for both policies. Press ▶: the starting policy "
        "drops the pole or leaves the track early; the ascended one balances much longer."
    )


render_results(result, paper_note, replay=replay)
