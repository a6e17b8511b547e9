"""Explain in place: the equations each page computes, Algorithms 1-3 and Fig. 1 (UI only; no math here).

The equations are the paper's (Sections 2-5); the pseudo-code follows Algorithms 1-3 of the paper
(Algorithm 1 in Appendix C), shortened, with this app's names for the settings.
"""

from __future__ import annotations

import functools

import streamlit as st

from pvnviz.figures.diagram import pvn_diagram
from ui.components import chart

EXACT_J = r"J(\pi) = d_0^\top \,(I - \gamma P_\pi)^{-1}\, r_\pi"
J_HAT = (
    r"\hat J(\theta) = \sum_{i=0}^{m-1} \psi_i(\theta)\,\mathrm{midpoint}_i, \qquad "
    r"\mathrm{midpoint}_i = G_{\min} + \tfrac{h}{2} + i h, \quad h = \tfrac{G_{\max} - G_{\min}}{m}"
)
KL_LOSS = (
    r"\min_{\omega,\,S}\; \mathbb{E}_\theta\left[ D_{\mathrm{KL}}\big(\hat P_\theta \,\|\, "
    r"\psi(\pi_\theta(\cdot \mid S);\, \omega)\big) \right]"
)
FINGERPRINT = r"\mathrm{fingerprint}(\theta) = \big[\pi_\theta(\cdot \mid s_1), \ldots, \pi_\theta(\cdot \mid s_n)\big]"
ASCENT = r"\theta_{t+1} = \theta_t + \eta_t\, \nabla_\theta\, \hat J(\theta_t) \quad \text{(no new environment data)}"

ALGORITHMS = {
    "Algorithm 1: collect the dataset (Appendix C)": """\
D = {}
for policy i = 1..K:                       # "Policies K"; all K advance in lockstep here
    θ_i = Glorot initialisation
    R = {}
    for rollout b = 1..B:                  # "Rollouts per policy B"
        R = R ∪ { Monte Carlo return G_MC of π_θi }
    D = D ∪ { (θ_i, R) }
return D        # then: drop policies above the training-set limit; histogram R into m bins""",
    "Algorithm 2: train the PVN with fingerprinting": """\
initialise PVN weights ω, probing states S = [s_1..s_n], learning rate α
for step s = 1..S_train:                   # "Training steps"
    sample a batch {(π_θi, R_i)} from D    # "Batch size"
    L(ω, S) = KL( hist(R_B) || ψ(π_θB(·|S); ω) )
    ω = ω - adam(α, ∇_ω L)
    S = S - adam(α, ∇_S L)                 # only if "Train the probing states" is on""",
    "Algorithm 3: gradient ascent through the trained PVN": """\
Θ = {}
for ascent policy i = 1..A:                # "Starting policies A"
    θ_i = Glorot initialisation
    D = {}
    for ascent step j = 1..T:              # "Ascent steps T"
        θ_i = θ_i + β ∇_θ Ĵ(θ_i)           # Adam here, "Ascent learning rate"
        sample a Monte Carlo return G_MC of π_θi   # every k steps, only to judge the ascent
        D = D ∪ { (θ_i, G_MC) }
    Θ = Θ ∪ { (argmax_θ D, max D) }
return argmax_θ Θ""",
}


def _algorithms() -> None:
    for title, code in ALGORITHMS.items():
        st.markdown(f"**{title}**")
        st.text(code)  # preformatted; st.code would load Streamlit's 1.5 MB syntax highlighter (~0.6 s of CPU)


def diagram() -> None:
    """Fig. 1, drawn."""
    chart(_diagram(), "pvn-fig1", key="explain_fig1")


@functools.cache
def _diagram() -> dict:
    """Fig. 1 as plotly JSON, built once per server (it never changes; every page run drew it anew)."""
    return pvn_diagram().to_plotly_json()


def polytope() -> None:
    """The polytope page: exact J, the PVN it learns, and the ascent."""
    with st.expander("What this page computes (equations)"):
        st.markdown("**Exact performance** of a policy π of the 2-state MDP (Section 2, Eq. 1), as a matrix inverse:")
        st.latex(EXACT_J)
        st.markdown(
            "with $P_\\pi[s, s'] = \\sum_a \\pi(a|s) P(s'|s, a)$, $r_\\pi[s] = \\sum_a \\pi(a|s) r(s, a)$ and the "
            "start distribution $d_0$. Each policy's value vector $V_\\pi = (I - \\gamma P_\\pi)^{-1} r_\\pi$ is "
            "one point of the polytope. The PVN learns the map from the policy to that value, and gradient ascent "
            "climbs the PVN instead of the true J (Section 5):"
        )
        st.latex(ASCENT)
        st.markdown(
            "On this page the PVN regresses the exact values (squared error) of 20 policies; the environment pages "
            "use the histogram and KL loss of Section 3."
        )


def experiment() -> None:
    """The CartPole and Swimmer pages: PVN, fingerprint, KL loss, ascent, Algorithms 1-3, Fig. 1."""
    with st.expander("What this page computes (equations, Algorithms 1-3, Fig. 1)"):
        diagram()
        st.markdown(
            "**Fingerprint** (Section 4): the policy's outputs at $n$ probing states, which the PVN reads instead "
            "of the policy's weights (action probabilities for CartPole, actions for Swimmer):"
        )
        st.latex(FINGERPRINT)
        st.markdown(
            "**PVN estimate** (Section 3): a softmax $\\psi(\\theta)$ over $m$ return bins, read as the "
            "probability-weighted sum of the bins' midpoints:"
        )
        st.latex(J_HAT)
        st.markdown(
            "**Loss** (Sections 3-4): KL divergence from the histogram $\\hat P_\\theta$ of each policy's Monte "
            "Carlo returns to the PVN's prediction, minimised over the PVN weights $\\omega$ and the probing "
            "states $S$:"
        )
        st.latex(KL_LOSS)
        st.markdown("**Zero-shot ascent** (Section 5):")
        st.latex(ASCENT)
        _algorithms()


def home() -> None:
    """The home page: Fig. 1 and every equation in one place."""
    diagram()
    with st.expander("The equations and Algorithms 1-3"):
        st.latex(EXACT_J)
        st.latex(FINGERPRINT)
        st.latex(J_HAT)
        st.latex(KL_LOSS)
        st.latex(ASCENT)
        _algorithms()
