"""Value polytope page: the 2-state MDP of Section 6.1 / Appendix A, exact and learned.

The view controls (the MDP, the ascent) and every exact view live in the browser (``ui.polytope_instrument``);
the server trains the PVN in a worker when the MDP or the training settings change, and draws its training.
"""

import dataclasses

import numpy as np
import streamlit as st

from pvnviz.core.config_fields import ConfigError, help_text
from pvnviz.figures import gif, polytope_training
from pvnviz.polytope import mdp as mdp_lib
from pvnviz.polytope.experiment import PolytopeConfig, exact_view, learned_view, training_key
from pvnviz.polytope.survey import PAPER_SURVEY
from ui import explain, gif_download, polytope_runs, require_navigation, urlcheck
from ui import polytope_instrument as instrument
from ui import polytope_rounds as rounds_view
from ui.components import chart
from ui.navigation import widget_default
from ui.server import queue as jobs

require_navigation()

PAPER = PolytopeConfig()
PAPER_SEED = PAPER_SURVEY.first_at_optimum  # app.py's DEFAULT_SEED: the seed the README's polytope numbers use
# The PVN's training settings: compute controls, Streamlit widgets kept in the URL (key -> paper value).
PAPER_TRAINING = {"num_policies": PAPER.num_policies, "pvn_lr": PAPER.learning_rate, "train_steps": PAPER.train_steps}


def setting_help(name: str) -> str:
    """The help text of a PolytopeConfig setting: the same words as the CLI's `settings polytope`."""
    return help_text(PolytopeConfig, name)


def restore_paper() -> None:
    """One click back to Appendix A and B, the default seed and the last ascent step."""
    instrument.set_controls({c.key: c.paper for c in instrument.CONTROLS})
    for key, value in PAPER_TRAINING.items():
        st.session_state[key] = value
    st.session_state["seed"] = PAPER_SEED
    st.query_params.pop(instrument.FRAME, None)  # the ascent step shown: back to the last iterate


def draw_random_mdp() -> None:
    st.session_state["random_draws"] = st.session_state.get("random_draws", 0) + 1
    rng = np.random.default_rng([int(st.session_state.get("seed", 0)), st.session_state["random_draws"]])
    m = mdp_lib.random_mdp(rng, gamma=float(st.session_state.get("gamma", PAPER.gamma)))
    drawn = {}
    for s in range(2):
        for a in range(2):
            drawn[f"r{s}{a}"] = float(m.rewards[s, a])
            drawn[f"p{s}{a}"] = round(float(m.transitions[s, a, 0]), 2)
    instrument.set_controls(drawn)


st.title("Value polytope: the 2-state MDP")
st.caption("Section 6.1 and Appendix A. Everything here is exact except what the PVN predicts.")
explain.polytope()
instrument.init_state()  # the view controls' values: the link's, else the paper's

chosen: dict[str, float] = {}  # widget key -> the value its widget returned this run
with st.sidebar:
    st.header("Polytope settings")
    c1, c2 = st.columns(2)
    c1.button(
        "Paper settings", on_click=restore_paper, help=f"Reset every control to Appendix A and B, seed {PAPER_SEED}."
    )
    c2.button("Random MDP", on_click=draw_random_mdp, help="Draw rewards and transitions (seeded).")
    st.caption("The MDP and the ascent are set beside the figures, which follow every move.")
    polytope_runs.picker()  # a saved run: its settings and seed become the page's
    with st.expander("PVN training (Appendix B)", expanded=True):
        chosen["num_policies"] = st.slider(
            "Sampled policies (half train, half test)",
            4,
            400,
            step=2,
            value=widget_default("num_policies", PAPER_TRAINING["num_policies"], None),
            key="num_policies",
            help=setting_help("num_policies"),
            bind="query-params",
        )
        chosen["pvn_lr"] = st.number_input(
            "PVN learning rate (RMSProp)",
            0.0001,
            1.0,
            step=0.001,
            format="%.4f",
            value=widget_default("pvn_lr", PAPER_TRAINING["pvn_lr"], "min"),
            key="pvn_lr",
            help=setting_help("learning_rate"),
            bind="query-params",
        )
        chosen["train_steps"] = st.slider(
            "Training steps",
            100,
            50000,
            step=100,
            value=widget_default("train_steps", PAPER_TRAINING["train_steps"], None),
            key="train_steps",
            help=setting_help("train_steps"),
            bind="query-params",
        )

seed = int(st.session_state.get("seed", 0))  # app.py's sidebar widget, shared by every page
try:
    config = instrument.config_of(
        dataclasses.replace(
            PAPER,
            num_policies=int(chosen["num_policies"]),
            num_train=int(chosen["num_policies"]) // 2,
            learning_rate=float(chosen["pvn_lr"]),
            train_steps=int(chosen["train_steps"]),
        ),
        instrument.current(),
    )
except (ConfigError, ValueError) as err:
    st.error(f"These settings do not make a valid MDP: {err}")
    urlcheck.stop()
instrument.write_url()
key = training_key(config)  # everything but the ascent: what the polytope and the PVN depend on


@st.cache_data(max_entries=64, show_spinner=False)
def cached_exact(config: PolytopeConfig, seed: int):
    return exact_view(config, seed)


@st.cache_resource(max_entries=32, show_spinner=False)
def training_figs(config: PolytopeConfig, seed: int, _exact, _trained, _learned):
    loss = polytope_training.polytope_loss_figure(_trained)
    return loss, polytope_training.predictions_figure(_exact, _trained, _learned)


try:  # in a quick worker process: the server only draws
    trained = jobs.in_worker(
        ("polytope_pvn", key, seed),
        "polytope_pvn",
        {"config": key, "seed": seed},
        label="Training the PVN (Appendix B settings)",
    )
except RuntimeError as err:
    st.error(f"The PVN could not be trained: {err}")
    urlcheck.stop()
exact = cached_exact(key, seed)
paper_learned = learned_view(key, trained)
instrument.draw(
    key,
    seed,
    exact,
    trained,
    paper_learned,
    texts={
        "polytope": "<b>What to look at</b> (Fig. 2a-b). Each dot is a policy placed at its values (V(s1), V(s2)); "
        "colour is J = d0·V. The corners are the deterministic policies and the star the optimum. The outline is "
        "the image of the policy square's four sides. Green and purple dots are the PVN's train and test "
        "policies. Move any MDP control: the exact views follow at once; the PVN retrains when you let go.",
        "fields": "<b>What to look at</b> (Fig. 3a-b). Arrows show dJ/dπ on the policy square, exact on the left "
        "and through the trained PVN on the right, drawn at one common scale. The learned field is close in the "
        "middle and drifts near the edges, where few training policies lie. <i>Click the exact field to start "
        "the ascent there.</i>",
        "ascent": "<b>What to look at</b> (Fig. 3c). Step through both ascents (◀ ▶ or the arrow keys, Space "
        "plays): blue follows the exact gradient, orange the PVN's. The ringed iterate is the same step on the "
        "policy square, at its exact values in the polytope, and on the J curve. Where the dotted PVN estimate Ĵ "
        "and the solid orange line part, the PVN is wrong. <b>How often it arrives:</b> with the paper's settings, "
        f"{PAPER_SURVEY.sentence()}; this page opens on seed {PAPER_SEED}, the first where it does. On the other "
        "seeds the orange path stalls where 20 training policies leave the PVN's gradient wrong near an edge: "
        "Section 5's answer is to check the ascent's policies and keep the best.",
    },
)
ascent_exact = cached_exact(config, seed)
gif_download(
    "Download both ascents (GIF)",
    lambda: gif.ascent_gif(ascent_exact, learned_view(config, trained)),
    "polytope-ascent.gif",
)

st.subheader("Beyond the paper: active rounds")
c1, c2 = st.columns(2)
beyond = c1.toggle(
    "Active rounds (beyond)",
    value=widget_default(rounds_view.MODE, False, None),
    key=rounds_view.MODE,
    help="Algorithm 3's checks fed back into the PVN, round by round (`pvnviz run polytope --preset beyond`).",
    bind="query-params",
)
check_kind = c2.selectbox(
    "Checks",
    list(rounds_view.CHECKS),
    index=widget_default(rounds_view.CHECKS_KEY, 0, None),
    key=rounds_view.CHECKS_KEY,
    help="How a check measures a policy's J: exact (the closed form, which Monte Carlo converges to here), or "
    "the mean discounted return of that many episodes from each state.",
    bind="query-params",
    disabled=not beyond,
)
if beyond:
    try:
        rounds_config = rounds_view.rounds_config(config, check_kind)
    except ConfigError as err:
        st.warning(f"No active rounds with these settings: {err}")
    else:
        rounds_view.show(rounds_config, seed, trained, ascent_exact, check_kind)
loss_fig, predictions_fig = training_figs(key, seed, exact, trained, paper_learned)
c1, c2 = st.columns(2)
chart(loss_fig, "pvn-loss", c1)
c1.markdown(
    "**What to look at** (Fig. 2c). Mean squared error of the predicted values on the train and "
    f"the held-out test policies; training took {trained.seconds:.2f} s. The test curve falling with "
    "the train curve is the PVN generalising to policies it never saw."
)
chart(predictions_fig, "pvn-predictions", c2)
c2.markdown(
    "**What to look at** (Appendix A figure). Each segment joins a policy's exact values (●) to the "
    "PVN's prediction (×). Short segments on the purple test policies mean good generalisation."
)
