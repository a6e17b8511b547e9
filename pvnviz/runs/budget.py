"""The environment steps a run spends beyond its dataset (Algorithm 3's checks, Section 5; Appendix C's budget).

The dataset (Algorithm 1) costs ``num_policies x num_episodes`` episodes. Algorithm 3 then measures every
``eval_every``-th iterate by Monte Carlo to choose the best, and this project's active rounds measure more (the
checks of every round, and ``round_perturbations`` antithetic pairs around each start's best). ``StepBudget`` holds
the cap on all of that, ``max_beyond_fraction`` of the dataset's steps (0: no cap), and decides whether one more
round fits. ``round_budget`` says how it counts that round: ``at_most``, every check and perturbation running the
whole horizon (the cap is never passed), or ``measured``, each policy at the highest mean steps per measured
policy of any round so far (where episodes end early, the steps left buy more rounds; a round whose policies run
longer than any before can pass the cap). The
pipeline (``pvnviz.runs.pipeline``), the size estimates (``pvnviz.runs.sizing``) and the tests all ask it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pvnviz.core.ascent import AscentTrace, check_steps
from pvnviz.envs.registry import get_env


def env_steps(env_name: str, mean_returns: np.ndarray, num_episodes: int, horizon: int) -> int:
    """Environment steps spent measuring policies with these mean returns over ``num_episodes`` each."""
    return get_env(env_name).episode_steps(mean_returns, horizon, episodes_per_return=num_episodes)


@dataclass(frozen=True)
class StepBudget:
    """The cap on the environment steps spent beyond the dataset, and what one round of Algorithm 3 costs."""

    # An ExperimentConfig, not imported: pvnviz.runs.config checks its limits with sizing, which asks StepBudget.
    config: Any
    dataset_env_steps: int = 0

    @property
    def cap(self) -> float:
        """``max_beyond_fraction`` of the dataset's environment steps; infinite when the fraction is 0."""
        fraction = self.config.max_beyond_fraction
        return fraction * self.dataset_env_steps if fraction > 0 else math.inf

    @property
    def checks_per_round(self) -> int:
        """The iterates Algorithm 3 measures on each path in one round (``check_steps``)."""
        c = self.config
        return len(check_steps(c.ascent_steps, c.eval_every, tuple(c.early_checks)))

    @property
    def policies_per_round(self) -> int:
        """Policies measured in one round: every start's checks and its perturbation pairs."""
        return self.config.num_starts * (self.checks_per_round + 2 * self.config.round_perturbations)

    @property
    def round_at_most(self) -> int:
        """One round's environment steps at their most: every measured episode running the whole horizon."""
        return self.policies_per_round * self.config.eval_episodes * self.config.horizon

    def checks_spent(self, trace: AscentTrace) -> int:
        """Environment steps a trace's checks took: as their rollouts counted them, or (a trace saved without the
        count) as the environment reads them off the mean returns (``BatchedEnv.episode_steps``)."""
        if trace.check_env_steps is not None:
            return int(trace.check_env_steps)
        c = self.config
        return env_steps(c.env_name, trace.true_returns, c.eval_episodes, c.horizon)

    def spent(self, trace: AscentTrace) -> int:
        """Environment steps a trace spent: its checks' episodes and its perturbations' (counted apart)."""
        return self.checks_spent(trace) + trace.explore_env_steps

    def next_round(self, rounds_so_far: Sequence[tuple[int, int]] = ()) -> float:
        """The environment steps one more round is counted at: ``round_at_most``, or with ``round_budget``
        "measured" and ``rounds_so_far`` given (each round's (env steps spent, policies measured)), every policy of
        the round at the highest mean steps per policy of those rounds (never above ``round_at_most``)."""
        counted = [(steps, policies) for steps, policies in rounds_so_far if policies > 0]
        if self.config.round_budget != "measured" or not counted:
            return float(self.round_at_most)
        per_policy = max(steps / policies for steps, policies in counted)
        return min(per_policy * self.policies_per_round, float(self.round_at_most))

    def allows_another_round(self, trace: AscentTrace, rounds_so_far: Sequence[tuple[int, int]] = ()) -> bool:
        """Whether one more round, counted as ``next_round`` counts it, keeps the spending within the cap."""
        return self.spent(trace) + self.next_round(rounds_so_far) <= self.cap
