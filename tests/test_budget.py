"""The environment steps a run spends beyond its dataset (``pvnviz.runs.budget``), by hand: a CartPole return is
its episode's length, a Swimmer episode always runs the horizon; the cap and one round at its most."""

import dataclasses

import numpy as np

from pvnviz.core.ascent import AscentTrace
from pvnviz.runs.budget import StepBudget, env_steps
from pvnviz.runs.pipeline import ExperimentConfig


def test_env_steps_counts_cartpole_lengths_and_swimmer_horizons():
    assert env_steps("cartpole", np.array([[10.0, 20.0], [30.0, 5.5]]), 4, 100) == 4 * 65.5
    assert env_steps("swimmer", np.zeros((3, 5)), 2, 1000) == 30_000


def test_the_cap_and_one_round_at_its_most_by_hand():
    """40 ascent steps checked every 20 and at step 3: 4 checks a start (0, 3, 20, 40); with 1 perturbation pair,
    6 policies a start, 2 starts, 2 episodes of at most 100 steps each: one round costs at most 2400 steps."""
    config = dataclasses.replace(
        ExperimentConfig(), num_starts=2, ascent_steps=40, eval_every=20, early_checks=(3,), eval_episodes=2,
        horizon=100, rounds=2, round_perturbations=1, max_beyond_fraction=0.25,
    )  # fmt: skip
    budget = StepBudget(config, dataset_env_steps=20_000)
    assert (budget.checks_per_round, budget.policies_per_round, budget.round_at_most) == (4, 12, 2400)
    assert budget.cap == 5000
    trace = AscentTrace("fingerprint", np.array([0, 3, 20, 40]), np.full((4, 2), 10.0), np.zeros((41, 2)),
                        np.zeros((4, 2, 3)), 0.0, explore_env_steps=100)  # fmt: skip
    assert budget.spent(trace) == 4 * 2 * 10 * 2 + 100  # 8 checked policies, 2 episodes of 10 steps, and the pairs
    assert budget.allows_another_round(trace)  # 260 + 2400 <= 5000
    assert not StepBudget(config, dataset_env_steps=10_000).allows_another_round(trace)  # 260 + 2400 > 2500
    assert StepBudget(dataclasses.replace(config, max_beyond_fraction=0.0)).cap == float("inf")  # 0: no cap


def test_a_measured_round_is_counted_at_the_most_steps_a_policy_took_so_far():
    """Rounds of (steps, policies): (160, 8) is 20 steps a policy, (300, 12) 25: the next round's 12 policies
    count 25 each, 300 steps; never above the round at its most; uncounted rounds (0 policies) are skipped."""
    config = dataclasses.replace(
        ExperimentConfig(), num_starts=2, ascent_steps=40, eval_every=20, early_checks=(3,), eval_episodes=2,
        horizon=100, rounds=3, round_perturbations=1, max_beyond_fraction=0.25, round_budget="measured",
    )  # fmt: skip
    budget = StepBudget(config, dataset_env_steps=10_000)
    assert budget.next_round([(160, 8), (300, 12)]) == 12 * 25
    assert budget.next_round([(160, 8), (0, 0)]) == 12 * 20
    assert budget.next_round([(100_000, 8)]) == budget.round_at_most == 2400
    assert budget.next_round([]) == budget.next_round([(0, 0)]) == 2400
    trace = AscentTrace("fingerprint", np.array([0, 3, 20, 40]), np.full((4, 2), 10.0), np.zeros((41, 2)),
                        np.zeros((4, 2, 3)), 0.0, explore_env_steps=100)  # fmt: skip
    assert budget.allows_another_round(trace, [(160, 8)])  # 260 + 240 <= 2500
    assert not budget.allows_another_round(trace)  # counted at its most: 260 + 2400 > 2500
    at_most = StepBudget(dataclasses.replace(config, round_budget="at_most"), dataset_env_steps=10_000)
    assert at_most.next_round([(160, 8)]) == 2400  # the default ignores what rounds took
