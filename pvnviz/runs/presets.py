"""The named settings of every experiment: Appendix B's tables as presets, and this project's budgets.

``PRESETS[env][name]()`` builds an ``ExperimentConfig``; the CLI's ``--preset``, the pages' preset box
and the shipped runs under ``data/`` use these names. ``paper`` is Appendix B exactly (Section 6.2 for
CartPole, 6.3 for Swimmer); ``budget-*`` name what they spend; ``beyond`` adds this project's active
rounds (README, "Beyond zero-shot"); ``quick`` runs live in under a minute.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pvnviz.runs.pipeline import ExperimentConfig

# Section 6.3 and Appendix B exactly: 2000 deterministic MLP [30] policies x 500 rollouts (10^9 env
# steps, about 8 hours of collection on 2 cores here; not run in this project), 51 bins, 5000 training
# steps, ascent Adam lr 0.002 for 1000 steps, no training-set limit.
SWIMMER_PAPER = ExperimentConfig(
    env="swimmer",
    policy_hidden=(30,),
    num_policies=2000,
    num_episodes=500,
    horizon=1000,
    return_limit=None,
    num_bins=51,
    train_steps=5000,
    inputs=("fingerprint",),
    ascent_steps=1000,
    ascent_learning_rate=0.002,
    eval_every=50,
    eval_episodes=5,
    log_every=50,
    fresh_episodes=10,
)

# CartPole beyond zero-shot (README, "Beyond zero-shot"): the paper's dataset (1000 policies x 100
# episodes, limit 30), a faster ascent in active rounds of 200 steps checked only at each round's two
# ends (20 episodes each), the checks added to the PVN's data, round after round until the next round
# could take the checks past 25% of the dataset's env steps (24-25%, about 30 rounds). Fewer checks a
# round buy more rounds: on dev seeds 100-119, 98.3 (lowest 88.2) against 92.9 (lowest 71.6) checked
# every 50 steps; on test seeds 300-319, 98.0 (lowest 84.9).
CARTPOLE_BEYOND = ExperimentConfig(
    ascent_learning_rate=0.003,
    ascent_steps=200,
    eval_every=200,
    eval_episodes=20,
    rounds=60,
    max_beyond_fraction=0.25,
)

PRESETS: dict[str, dict[str, Callable[[], ExperimentConfig]]] = {
    "cartpole": {
        "paper": lambda: ExperimentConfig(),
        "paper-linear": lambda: ExperimentConfig(policy_hidden=(), ascent_steps=100),
        "beyond": lambda: CARTPOLE_BEYOND,
        # Linear policies keep the checks every 50 steps (at most 30 rounds) they were chosen and tested with.
        "beyond-linear": lambda: dataclasses.replace(
            CARTPOLE_BEYOND, policy_hidden=(), ascent_learning_rate=0.1, eval_every=50, rounds=30
        ),
        "quick": lambda: ExperimentConfig(
            num_policies=300, num_episodes=30, train_steps=1500, ascent_steps=200, eval_episodes=30
        ),
    },
    "swimmer": {
        "paper": lambda: SWIMMER_PAPER,
        # Appendix B's 2000 policies with 5 rollouts each (10 M env steps, the paper's budget scaled down).
        "budget-2000x5": lambda: dataclasses.replace(SWIMMER_PAPER, num_episodes=5),
        # The same 10 M environment steps spent on 5x more policies, one rollout each:
        # with deterministic policies a second rollout adds little (README, Swimmer results).
        "budget-10000x1": lambda: dataclasses.replace(SWIMMER_PAPER, num_policies=10000, num_episodes=1),
        # budget-10000x1, ascents starting from the dataset's 5 best policies, 10 active rounds of 1000 steps
        # checked at steps 10, 25, 50, 100 and every 200: checks cost 25% of the dataset, the cap
        # (README, "Beyond zero-shot").
        "beyond": lambda: dataclasses.replace(
            SWIMMER_PAPER,
            num_policies=10000,
            num_episodes=1,
            start_from="dataset",
            rounds=10,
            eval_every=200,
            early_checks=(10, 25, 50, 100),
            max_beyond_fraction=0.25,
        ),
        "quick": lambda: dataclasses.replace(
            SWIMMER_PAPER,
            num_policies=300,
            num_episodes=1,  # one rollout, as in the paper-wide preset: under a minute on 2 shared cores
            train_steps=2000,
            ascent_steps=300,
            eval_every=50,
            eval_episodes=2,
        ),
    },
}
