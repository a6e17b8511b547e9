"""Value polytope page: the 2-state MDP of Section 6.1 / Appendix A, exact and learned."""

import dataclasses
from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from pvnviz import mdp as mdp_lib
from pvnviz.configs import ConfigError, help_text
from pvnviz.figures import gif, polytope_training
from pvnviz.figures import polytope as figs
from pvnviz.figures import polytope_ascent as ascent_figs
from pvnviz.polytope import PolytopeConfig, exact_view, learned_view, training_key
from ui import chart, explain, gif_download, jobs, require_navigation, urlcheck
from ui.browser_player import play
from ui.errors import guarded

require_navigation()

PAPER = PolytopeConfig()
PAPER_SEED = 4  # app.py's DEFAULT_SEED: the seed the README's polytope numbers use


def setting_help(name: str) -> str:
    """The help text of a PolytopeConfig setting: the same words as the CLI's `settings polytope`."""
    return help_text(PolytopeConfig, name)


# Widget key -> its paper value. Keys are the URL's query parameters.
PAPER_STATE = {
    "gamma": PAPER.gamma,
    **{f"r{s}{a}": PAPER.rewards[2 * s + a] for s in range(2) for a in range(2)},
    **{f"p{s}{a}": PAPER.transitions[2 * s + a][0] for s in range(2) for a in range(2)},
    "d0": PAPER.d0[0],
    "start1": PAPER.ascent_start[0],
    "start2": PAPER.ascent_start[1],
    "num_policies": PAPER.num_policies,
    "pvn_lr": PAPER.learning_rate,
    "train_steps": PAPER.train_steps,
    "ascent_lr": PAPER.ascent_learning_rate,
    "ascent_steps": PAPER.ascent_steps,
}


def restore_paper() -> None:
    """One click back to Appendix A and B, the default seed and the last ascent step."""
    for key, value in PAPER_STATE.items():
        st.session_state[key] = value
    st.session_state["seed"] = PAPER_SEED
    st.query_params.pop("ascent", None)  # the player's frame: back to the last iterate


def draw_random_mdp() -> None:
    st.session_state["random_draws"] = st.session_state.get("random_draws", 0) + 1
    rng = np.random.default_rng([int(st.session_state.get("seed", 0)), st.session_state["random_draws"]])
    m = mdp_lib.random_mdp(rng, gamma=float(st.session_state.get("gamma", PAPER.gamma)))
    for s in range(2):
        for a in range(2):
            st.session_state[f"r{s}{a}"] = float(m.rewards[s, a])
            st.session_state[f"p{s}{a}"] = round(float(m.transitions[s, a, 0]), 2)


def pick_start() -> None:
    """Clicking the exact field sets the ascent's start policy."""
    points = st.session_state["field_chart"].selection.get("points", [])
    if points:
        st.session_state["start1"] = round(float(points[0]["x"]), 3)
        st.session_state["start2"] = round(float(points[0]["y"]), 3)


st.title("Value polytope: the 2-state MDP")
st.caption("Section 6.1 and Appendix A. Everything here is exact except what the PVN predicts.")
explain.polytope()

chosen: dict[str, float] = {}  # widget key -> the value its widget returned this run
with st.sidebar:
    st.header("Polytope settings")
    c1, c2 = st.columns(2)
    c1.button("Paper settings", on_click=restore_paper, help="Reset every control to Appendix A and B, seed 4.")
    c2.button("Random MDP", on_click=draw_random_mdp, help="Draw rewards and transitions (seeded).")
    with st.expander("MDP (Appendix A)", expanded=True):
        chosen["gamma"] = st.slider(
            "Discount γ",
            0.0,
            0.99,
            step=0.01,
            value=PAPER_STATE["gamma"],
            key="gamma",
            help=setting_help("gamma"),
            bind="query-params",
        )
        chosen["d0"] = st.slider(
            "d0(s1)",
            0.0,
            1.0,
            step=0.05,
            value=PAPER_STATE["d0"],
            key="d0",
            help="Start probability of s1; d0(s2) = 1 − d0(s1).",
            bind="query-params",
        )
        st.markdown("Rewards r(s, a)")
        rc = st.columns(2)
        for s in range(2):
            for a in range(2):
                chosen[f"r{s}{a}"] = rc[a].number_input(
                    f"r(s{s + 1}, a{a + 1})",
                    -2.0,
                    2.0,
                    step=0.05,
                    value=PAPER_STATE[f"r{s}{a}"],
                    key=f"r{s}{a}",
                    bind="query-params",
                )
        st.markdown("Transitions P(s1 | s, a); P(s2 | s, a) = 1 − P(s1 | s, a)")
        pc = st.columns(2)
        for s in range(2):
            for a in range(2):
                chosen[f"p{s}{a}"] = pc[a].number_input(
                    f"P(s1 | s{s + 1}, a{a + 1})",
                    0.0,
                    1.0,
                    step=0.01,
                    value=PAPER_STATE[f"p{s}{a}"],
                    key=f"p{s}{a}",
                    bind="query-params",
                )
    with st.expander("PVN training (Appendix B)", expanded=True):
        chosen["num_policies"] = st.slider(
            "Sampled policies (half train, half test)",
            4,
            400,
            step=2,
            value=PAPER_STATE["num_policies"],
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
            value=PAPER_STATE["pvn_lr"],
            key="pvn_lr",
            help=setting_help("learning_rate"),
            bind="query-params",
        )
        chosen["train_steps"] = st.slider(
            "Training steps",
            100,
            50000,
            step=100,
            value=PAPER_STATE["train_steps"],
            key="train_steps",
            help=setting_help("train_steps"),
            bind="query-params",
        )

ss = st.session_state
seed = int(ss.get("seed", 0))  # app.py's sidebar widget, shared by every page
try:
    mdp_config = dataclasses.replace(
        PAPER,
        gamma=float(chosen["gamma"]),
        rewards=tuple(float(chosen[f"r{s}{a}"]) for s in range(2) for a in range(2)),
        transitions=tuple(
            (float(chosen[f"p{s}{a}"]), 1.0 - float(chosen[f"p{s}{a}"])) for s in range(2) for a in range(2)
        ),
        d0=(float(chosen["d0"]), 1.0 - float(chosen["d0"])),
        num_policies=int(chosen["num_policies"]),
        num_train=int(chosen["num_policies"]) // 2,
        learning_rate=float(chosen["pvn_lr"]),
        train_steps=int(chosen["train_steps"]),
    )
except (ConfigError, ValueError) as err:
    st.error(f"These settings do not make a valid MDP: {err}")
    urlcheck.stop()
key = training_key(mdp_config)  # everything but the ascent: what the polytope and the PVN depend on


@st.cache_data(max_entries=64, show_spinner=False)
def cached_exact(config: PolytopeConfig, seed: int):
    return exact_view(config, seed)


# Figures are cached by the inputs they are drawn from (underscored arguments are not hashed: they are
# functions of the hashed ones), so a rerun re-sends a figure without rebuilding it.
@st.cache_resource(max_entries=32, show_spinner=False)
def polytope_fig(config: PolytopeConfig, seed: int, trained_too: bool, _trained=None):
    return figs.polytope_figure(cached_exact(config, seed), _trained if trained_too else None)


def session_figure(slot: str, signature: object, build: Callable[[], go.Figure]) -> go.Figure:
    """A figure this session keeps and updates in place while ``signature`` (what it is drawn from) holds.

    Per session, so updating it in place never races another session; a new signature rebuilds it.
    """
    held = ss.get(slot)
    if held is None or held[0] != signature:
        held = ss[slot] = (signature, build())
    return held[1]


@st.cache_resource(max_entries=32, show_spinner=False)
def training_figs(config: PolytopeConfig, seed: int, _exact, _trained, _learned):
    loss = polytope_training.polytope_loss_figure(_trained)
    return loss, polytope_training.predictions_figure(_exact, _trained, _learned)


exact = cached_exact(key, seed)
st.metric(
    "Optimal policy [P(a1|s1), P(a1|s2)] and its J", f"{exact.optimal_policy.tolist()}  →  J = {exact.optimal_J:.4f}"
)

top_left, top_right = st.columns(2)
polytope_slot = top_left.empty()
top_right.markdown(
    "**What to look at** (Fig. 2a-b). Each dot is a policy placed at its values "
    "(V(s1), V(s2)); colour is J = d0·V. The corners are the deterministic policies and the "
    "star the optimum. The outline is the image of the policy square's four sides. Green and "
    "purple dots are the PVN's train and test policies."
)
chart(polytope_fig(key, seed, False), "value-polytope", polytope_slot, key="polytope_exact")  # the exact view first
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
chart(polytope_fig(key, seed, True, trained), "value-polytope", polytope_slot, key="polytope_learned")


@st.fragment
@guarded
def ascent_section() -> None:
    """The ascent's controls and figures: moving them reruns only this part of the page."""
    controls = st.columns(4)
    start1 = controls[0].slider(
        "Start P(a1 | s1)",
        0.0,
        1.0,
        step=0.01,
        value=PAPER_STATE["start1"],
        key="start1",
        bind="query-params",
        help=setting_help("ascent_start") + " You can also click the exact field.",
    )
    start2 = controls[1].slider(
        "Start P(a1 | s2)", 0.0, 1.0, step=0.01, value=PAPER_STATE["start2"], key="start2", bind="query-params"
    )
    ascent_lr = controls[2].number_input(
        "Ascent step size (SGD)",
        0.001,
        5.0,
        step=0.01,
        value=PAPER_STATE["ascent_lr"],
        key="ascent_lr",
        help=setting_help("ascent_learning_rate"),
        bind="query-params",
    )
    ascent_steps = controls[3].slider(
        "Ascent steps",
        1,
        500,
        value=PAPER_STATE["ascent_steps"],
        key="ascent_steps",
        help=setting_help("ascent_steps"),
        bind="query-params",
    )
    try:
        config = dataclasses.replace(
            mdp_config,
            ascent_start=(float(start1), float(start2)),
            ascent_learning_rate=float(ascent_lr),
            ascent_steps=int(ascent_steps),
        )
    except (ConfigError, ValueError) as err:
        st.error(f"Please change an ascent setting: {err}")
        return
    ascent_exact = cached_exact(config, seed)
    learned = learned_view(config, trained)

    held: dict[str, go.Figure] = {}  # built only when the animation is (once per config, for every session)

    def frame(t: int) -> dict[str, go.Figure]:  # the same iterate ringed in both figures
        if not held:
            held["square"] = ascent_figs.ascent_frame(ascent_exact, learned, t)
            held["returns"] = figs.ascent_returns_figure(ascent_exact, learned, highlight=t)
        ascent_figs.move_ascent_frame(held["square"], ascent_exact, learned, t)
        ascent_figs.move_returns_highlight(held["returns"], ascent_exact, learned, t)
        return held

    play(
        "ascent",
        frame,
        config.ascent_steps + 1,
        start=config.ascent_steps,
        label="ascent step",
        reset_on=(config, seed),
        widths={"square": 3, "returns": 2},
        names={"square": "ascent-square", "returns": "ascent-returns"},
    )
    gif_download("Download both ascents (GIF)", lambda: gif.ascent_gif(ascent_exact, learned), "polytope-ascent.gif")
    st.markdown(
        "**What to look at** (Fig. 3c). Step through both ascents (◀ ▶ or the arrow keys, Space plays): blue "
        "follows the exact gradient, orange the PVN's. The ringed iterate is the same step on the policy square, "
        "at its exact values in the polytope, and on the J curve. Where the dotted PVN estimate Ĵ and the solid "
        f"orange line part, the PVN is wrong. Learned ascent ends at J = {learned.ascent.exact_J[-1]:.3f}, exact "
        f"ascent at {ascent_exact.ascent.exact_J[-1]:.3f}, optimum {ascent_exact.optimal_J:.3f}."
    )


paper_learned = learned_view(key, trained)
st.subheader("Gradient ascent (Fig. 3)")
# Arrows only (they depend on the MDP and the PVN, not on the ascent), outside the ascent's fragment: moving an
# ascent control never re-sends them; a click on the exact field reruns the page with the new start.
fields = session_figure("_fig_fields", (key, seed), lambda: figs.fields_figure(exact, paper_learned, paths=False))
chart(fields, "gradient-fields", key="field_chart", on_select=pick_start, selection_mode="points")
st.markdown(
    "**What to look at** (Fig. 3a-b). Arrows show dJ/dπ on the policy square, exact on the left and "
    "through the trained PVN on the right, drawn at one common scale. The learned field is close "
    "in the middle and drifts near the edges, where few training policies lie. "
    "*Click the exact field to start the ascent there*; the paths are drawn below."
)
ascent_section()
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
