"""The polytope page's active rounds (Section 5, Algorithm 3's checks; ``pvnviz.polytope.rounds``): computed in a
quick worker, played in the browser (``ui.browser_player``, no rerun per frame), with what to look at.

UI only: the rounds are ``pvnviz.polytope.rounds.active_rounds`` (the worker task ``polytope_rounds``), their
frames ``pvnviz.figures.polytope_rounds.rounds_animation``.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from pvnviz.figures import polytope_rounds
from pvnviz.polytope.experiment import ExactView, PolytopeConfig, TrainedPolytopePVN
from pvnviz.polytope.rounds import PolytopeRounds, PolytopeRoundsConfig
from ui.browser_player import play
from ui.server import queue as jobs

MODE, CHECKS_KEY = "beyond", "beyond_checks"  # the page's widget keys (and URL parameters) of the mode
CHECKS = {"exact": 0, "100 episodes": 100, "10 episodes": 10}
"""The page's Checks box: option -> ``check_episodes``."""
# docs/results.md, "Polytope beyond zero-shot" (re-derived by tests/test_polytope_rounds.py): option -> ends within
# 0.05 of J* on seeds 0-23 and on seeds 100-199 (zero-shot: 8 of 24 and 38 of 100), 19 checks a seed
RATES = {"exact": (23, 100), "100 episodes": (23, 94), "10 episodes": (13, 67)}
STALLED_SEED = 3  # with the paper's settings, a seed whose zero-shot ascent stalls and whose rounds arrive
ZERO_SHOT = (8, 38)  # the same table: the zero-shot ascent's near-optimal ends on seeds 0-23 and 100-199


def rounds_config(config: PolytopeConfig, kind: str) -> PolytopeRoundsConfig:
    """The active rounds the page runs on ``config`` (the page's MDP, PVN and ascent) with checks ``kind`` (an option
    of ``CHECKS``); every other rounds setting the ``beyond`` preset's. ConfigError if they cannot run there."""
    return PolytopeRoundsConfig(
        **{f.name: getattr(config, f.name) for f in dataclasses.fields(PolytopeConfig)}, check_episodes=CHECKS[kind]
    )


def show(
    rounds_config: PolytopeRoundsConfig,
    seed: int,
    trained: TrainedPolytopePVN,
    exact: ExactView,
    check_kind: str,
    *,
    key: str = "rounds",
) -> None:
    """The active rounds of ``seed`` (computed in a quick worker) played in the browser, and what to look at."""
    try:
        rounds = jobs.in_worker(
            ("polytope_rounds", rounds_config, seed),
            "polytope_rounds",
            {"config": rounds_config, "trained": trained, "seed": seed},
            label="Active rounds: checking, fine-tuning, ascending",
        )
    except RuntimeError as err:
        st.error(f"The active rounds could not be run: {err}")
        return
    budget = rounds_config.max_checks
    frames = polytope_rounds.num_frames(rounds)
    play(
        key,
        None,
        frames,
        start=frames - 1,
        label="round",
        reset_on=(rounds_config, seed),
        prebuilt=lambda projector: polytope_rounds.rounds_animation(rounds, exact, budget, seed, projector),
        names={"rounds": "polytope-active-rounds"},
    )
    st.markdown(rounds_text(rounds, budget, check_kind))


def rounds_text(rounds: PolytopeRounds, budget: int, check_kind: str) -> str:
    """The rounds' "what to look at": Section 5 / Algorithm 3, this seed's answer, and docs/results.md's rates."""
    rates = "; ".join(f"{kind} checks {a} of 24 and {b} of 100" for kind, (a, b) in RATES.items())
    where = "on the polytope" if check_kind == "exact" else "off the polytope by their sampling error"
    return (
        "**What to look at** (Section 5, Algorithm 3: check the ascent's policies and keep the best). Round 1 is "
        "the zero-shot ascent above (grey, dashed, in every frame: it stays as it is); its last iterate is checked "
        "(a blue dot: the policy's J measured, not predicted). Each later round checks a pair of random "
        "perturbations of the best check so far, fine-tunes the PVN on its training policies plus every check, and "
        "ascends again from the best check: watch the orange field turn where the checks are and the path bend "
        f"toward the star (with the paper's settings the zero-shot ascent of seed {STALLED_SEED} stalls near the "
        f"P(a1|s1) = 0 edge, far below J*: set the seed to {STALLED_SEED} to watch the rounds bend it). The "
        f"ringed check is Algorithm 3's answer: here its exact J is {rounds.best_exact_J:.3f} "
        f"(J* = {rounds.optimal_J:.3f}) after {rounds.checks_spent} checks of a budget of {budget}.\n\n"
        "**How often it arrives** (docs/results.md, within 0.05 of J*, 19 checks a seed): the zero-shot ascent on "
        f"{ZERO_SHOT[0]} of seeds 0-23 and {ZERO_SHOT[1]} of seeds 100-199; with the rounds, {rates}. "
        f"**What noise costs:** with {check_kind} checks the blue dots in the polytope sit at their measured "
        f"values, {where}. A sampled best is often a lucky estimate and the fine-tune fits the noise: with 10 "
        "episodes a state, on a few seeds whose zero-shot ascent was near-optimal the rounds choose a worse "
        "policy; with 100 episodes they did not on any seed here."
    )
