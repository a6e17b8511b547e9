"""Swimmer page: PVNs on MuJoCo continuous control, at paper scale (Section 6.3, Fig. 5)."""

import streamlit as st

from pvnviz.figures.starts import column_from_summary, starts_figure
from ui import explain, require_navigation
from ui.beyond import render_budget
from ui.components import chart
from ui.experiment import shipped_summaries, show_experiment, sidebar_config
from ui.results import render_results
from ui.settings import choose_preset, current_preset

require_navigation()

# OpenAI Spinning Up benchmark, Swimmer-v3 at 3M environment steps, PyTorch versions, mean over 10 seeds.
BASELINES = {"DDPG 143": 143.0, "PPO 117": 117.0, "TD3 91": 91.0, "VPG 52": 52.0, "SAC 43": 43.0}
BASELINE_STEPS = 3_000_000
SHIPPED_RUNS = {  # seed 0, by preset id; the page opens on the first, the paper's policy count at its budget
    "budget-2000x5": "data/swimmer-budget-2000x5",
    "budget-10000x1": "data/swimmer-budget-10000x1",
    "beyond": "data/swimmer-beyond",
}
BEYOND = "beyond"
# Fig. 5 at a glance: the shipped runs side by side (column label -> folder), zero-shot then beyond.
GLANCE = {
    "zero-shot<br>2000 x 5": "data/swimmer-budget-2000x5",
    "zero-shot<br>10,000 x 1": "data/swimmer-budget-10000x1",
    "beyond: 10,000 x 1<br>+ active rounds": "data/swimmer-beyond",
}


def starts_note(columns, ddpg: float) -> str:
    """What to look at in the glance figure, counted from the runs it shows."""
    above = [f"{int((c.fresh_returns > ddpg).sum())} of {len(c.fresh_returns)}" for c in columns]
    counts = "; ".join(f"{c.label.replace('<br>', ' ')}: {n}" for c, n in zip(columns, above))
    return (
        "**What to look at** (Fig. 5). Each dot is one start's chosen policy (Algorithm 3), re-measured on 10 "
        "fresh episodes; the bar is their mean, the green dotted line the best policy the PVN trained on, the "
        "dashed lines the Spinning Up baselines. The paper reports all five starts above them. Starts above "
        f"DDPG's {ddpg:.0f}: {counts}. Zero-shot, as the paper runs it at its 10 M-step budget, the ascent does "
        "not get there on these runs; checking the ascent and fine-tuning the PVN on the checks (Section 5's "
        "advice, applied during the ascent: the Beyond preset) does, for 25% more environment steps."
    )


st.title("Swimmer: zero-shot ascent on MuJoCo")
st.caption(
    "Section 6.3. Gymnasium's Swimmer-v5 on MuJoCo, batched in C: deterministic tanh MLP policies, "
    "undiscounted returns over 1000 steps. The page opens a shipped run of the paper's setting (Appendix B's 2000 "
    "policies, at the paper's budget of 10 M environment steps: 5 rollouts each; `data/swimmer-budget-2000x5`). The "
    "10,000 x 1 preset spends the same steps on more policies; **Beyond zero-shot** adds active rounds. The Run "
    "button trains the sidebar's settings live."
)
explain.experiment()

config = sidebar_config("swimmer", default_preset=next(iter(SHIPPED_RUNS)))
seed = int(st.session_state.get("seed", 0))
if current_preset("swimmer", next(iter(SHIPPED_RUNS))) != BEYOND:
    st.button(
        "Show Beyond zero-shot: the same dataset, best-policy starts, 10 active rounds",
        icon=":material/trending_up:",
        on_click=choose_preset,
        args=("swimmer", BEYOND),
        help="The shipped run of the Beyond preset (data/swimmer-beyond): the ascent checked and the PVN "
        "fine-tuned on its checks, within 25% of the dataset's environment steps.",
    )

columns = [column_from_summary(label, s) for label, s in shipped_summaries("swimmer", GLANCE).items()]
glance = starts_figure(columns, BASELINES, "Fig. 5 at a glance: each start's chosen policy, run by run")
chart(glance, "swimmer-starts")
st.markdown(starts_note(columns, BASELINES["DDPG 143"]))


def paper_note(config) -> str:
    """What to look at in the ascent figure (Fig. 5), for this run's starts and rounds."""
    return (
        "Fig. 5. True return of each starting policy along its ascent through the fingerprint PVN (light), their "
        "mean (bold). Grey dashed lines are reference scores from the OpenAI Spinning Up benchmark (Swimmer-v3 at "
        "3M steps, PyTorch, mean of 10 seeds; TF1 versions: DDPG 139, TRPO 92, PPO 76, VPG 76, TD3 60, SAC 43), the "
        "source the paper took its DDPG, SAC and TD3 lines from. The paper reports every start ending above its "
        "baselines, the best near 250. Green dotted: the best mean return of any policy the PVN trained on. "
        + (
            f"Beyond zero-shot: the {config.num_starts} starts are the dataset's best policies. "
            if config.start_from == "dataset"
            else ""
        )
        + (
            f"After each of {config.rounds} rounds of {config.ascent_steps} steps the PVN is fine-tuned on the "
            "checks made so far (their environment steps are counted in the summary)."
            if config.rounds > 1
            else "The ascent uses no new environment data; the true returns plotted here are measured only to judge it."
        )
    )


def draw(result) -> None:
    """The dataset's spread within and between policies, then every figure of the run."""
    dataset = result.dataset
    rollouts = result.config.num_episodes
    within = float(dataset.returns.std(axis=1).mean())
    between = float(dataset.mean_returns.std())
    cols = st.columns(3 if rollouts > 1 else 2)
    cols[0].metric(
        "Environment steps in the dataset",
        f"{dataset.num_env_steps / 1e6:.1f} M",
        delta=f"{dataset.num_env_steps / BASELINE_STEPS:.1f}× the baselines' 3 M",
        delta_color="off",
    )
    cols[-1].metric("Spread between policies (std of means)", f"{between:.1f}")
    if rollouts > 1:
        cols[1].metric("Spread within a policy (std over rollouts)", f"{within:.1f}")
        st.markdown(
            f"**Why {rollouts} rollouts per policy serve** (the paper used 500). A Swimmer policy here is "
            "deterministic, so a policy's returns differ only through the uniform ±0.1 reset noise: their spread "
            f"within one policy ({within:.1f}) is small next to the spread between policies ({between:.1f}) that "
            "the PVN must learn. More rollouts sharpen each histogram a little but cost environment steps linearly."
        )
    else:
        st.markdown(
            "**One rollout per policy** (the paper used 500). A Swimmer policy here is deterministic, so its "
            "returns differ only through the uniform ±0.1 reset noise. How small that spread is cannot be read from "
            "this run (one rollout has no spread); the Appendix B preset's shipped run (5 rollouts per policy) "
            "measures it."
        )
    render_results(result, paper_note(result.config), baselines=BASELINES, baseline_source="Spinning Up baselines")


show_experiment("swimmer", config, seed, draw, shipped=SHIPPED_RUNS)

render_budget(
    "swimmer-compare.jsonl",
    "Each point is one method's final policy on one seed (40, 41), re-measured on 10 fresh episodes, against the "
    "environment steps it spent (the 10 M-step dataset plus Algorithm 3's checks for the PVN; rollouts for ARS, "
    "Mania et al. 2018, given the larger PVN budget; PVN points are the mean of 5 starts). Zero-shot from random "
    "starts the PVN stays below the best random policy it trained on; with dataset starts and active rounds "
    "(`beyond`) its starts end above that policy on average and its best start near 290-320, but ARS, with all "
    "its steps spent on one policy, climbs to 340-360. Made by "
    "`python -m pvnviz.cli.compare --env swimmer --seed 40 41`.",
    env_title="Swimmer",
    y_range=None,
)
