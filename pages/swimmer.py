"""Swimmer page: PVNs on MuJoCo continuous control, at paper scale (Section 6.3, Fig. 5)."""

import streamlit as st

from pvnviz.experiment import PRESETS
from pvnviz.figures.experiment import swimmer_replay
from pvnviz.replay import swimmer_episodes
from ui import require_navigation, what_to_look_at
from ui.experiment import obtain_result, policy_pair, render_results, sidebar_config

require_navigation()

SHIPPED_RUN = "data/swimmer-beyond"  # also shipped: data/swimmer-wide (zero-shot), data/swimmer-paper (2000 x 5)
PRESET_NAMES = {  # the first fills the controls: the shipped run's budget, not the hours-long paper preset
    "budget-10000x1": "10 M steps: 10,000 policies x 1 rollout",
    "budget-2000x5": "10 M steps: 2000 policies x 5 rollouts",
    "beyond": "Beyond zero-shot: 10,000 x 1 and 3 active rounds",
    "paper": "Paper (Appendix B: 2000 x 500 rollouts, 10^9 steps, hours)",
    "quick": "Quick (live, under a minute)",
}
# OpenAI Spinning Up benchmark, Swimmer-v3 at 3M environment steps, PyTorch versions, mean over 10 seeds.
BASELINES = {"DDPG 143": 143.0, "PPO 117": 117.0, "TD3 91": 91.0, "VPG 52": 52.0, "SAC 43": 43.0}
BASELINE_STEPS = 3_000_000

st.title("Swimmer: zero-shot ascent on MuJoCo")
st.caption(
    "Section 6.3. Gymnasium's Swimmer-v5 on MuJoCo, batched in C: deterministic tanh MLP policies, "
    "undiscounted returns over 1000 steps. The page opens a shipped paper-scale run (`data/swimmer-beyond`: the "
    "paper's 10 M environment steps on 10,000 policies x 1 rollout, then 3 active rounds; type `data/swimmer-wide` "
    "for the zero-shot ascent on the same dataset, `data/swimmer-paper` for 2000 x 5); the button trains live."
)

config = sidebar_config("swimmer", {v: PRESETS["swimmer"][k] for k, v in PRESET_NAMES.items()})
seed = int(st.session_state.get("seed", 0))
result = obtain_result("swimmer", config, seed, default_run=SHIPPED_RUN)

dataset = result.dataset
within = float(dataset.returns.std(axis=1).mean())
between = float(dataset.mean_returns.std())
cols = st.columns(3)
cols[0].metric(
    "Environment steps in the dataset",
    f"{dataset.num_env_steps / 1e6:.1f} M",
    delta=f"{dataset.num_env_steps / BASELINE_STEPS:.1f}× the baselines' 3 M",
    delta_color="off",
)
cols[1].metric("Spread within a policy (std over rollouts)", f"{within:.1f}")
cols[2].metric("Spread between policies (std of means)", f"{between:.1f}")
st.markdown(
    f"**Why {result.config.num_episodes} rollouts per policy serve** (the paper used 500). A Swimmer policy here is "
    "deterministic, so a policy's returns differ only through the uniform ±0.1 reset noise: their spread within one "
    f"policy ({within:.1f}) is small next to the spread between policies ({between:.1f}) that the PVN must learn. "
    "More rollouts sharpen each histogram a little but cost environment steps linearly."
)

paper_note = (
    "Fig. 5. True return of each starting policy along its ascent through the fingerprint PVN (light), their mean "
    "(bold). Grey dashed lines are reference scores from the OpenAI Spinning Up benchmark (Swimmer-v3 at 3M steps, "
    "PyTorch, mean of 10 seeds; TF1 versions: DDPG 139, TRPO 92, PPO 76, VPG 76, TD3 60, SAC 43), the source the "
    "paper took its DDPG, SAC and TD3 lines from. The paper reports every start ending above its baselines, the "
    "best near 250. Green dotted: the best mean return of any policy the PVN trained on. The ascent uses no new "
    "environment data; the true returns plotted here are measured only to judge it."
)


def replay(result, trace, start: int) -> None:
    segments, returns, distance = swimmer_episodes(
        result.config.arch(), policy_pair(trace, start), result.config.horizon, seed
    )
    labels = [
        f"before ascent: return {returns[0]:.0f}, travelled {distance[0]:+.2f} m",
        f"after ascent (best seen): return {returns[1]:.0f}, travelled {distance[1]:+.2f} m",
    ]
    st.plotly_chart(swimmer_replay(dict(zip(labels, segments))))
    what_to_look_at(
        "MuJoCo body positions of the three links, seen from above, from the same start state; the blue line is "
        f"the path of the front link. Press ▶: over the episode the start policy travels {distance[0]:+.2f} m and "
        f"the ascended one {distance[1]:+.2f} m (forward is to the right; a return sums the forward velocity)."
    )


render_results(result, paper_note, baselines=BASELINES, baseline_source="Spinning Up baselines", replay=replay)
