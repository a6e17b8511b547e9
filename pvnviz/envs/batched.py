"""What the PVN pipeline needs of an environment (Section 6): the ``BatchedEnv`` interface and its checks.

It imports only ``pvnviz.envs.scene``, ``pvnviz.envs.rollout`` and ``pvnviz.core.progress``: the environments
(``pvnviz.envs.cartpole``, ``pvnviz.envs.swimmer``) build their ``BatchedEnv`` from it, and
``pvnviz.envs.registry`` is the registry above them, so no environment imports the registry.
An ``BatchedEnv`` says what a policy for the environment looks like (observation and action sizes,
discrete or continuous), what its physics is (``dynamics``, a batched step function), how to collect
returns for K policies x B episodes in lockstep over it (``rollout_returns``), how to name and bound the
state dimensions for the probe-state figures, and what a replay of its episodes draws (``replay``, a
``pvnviz.envs.scene.Replay``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from pvnviz.core.progress import ProgressFn
from pvnviz.envs.rollout import Counted, Dynamics, check_counts, rollout_counted
from pvnviz.envs.scene import Replay

if TYPE_CHECKING:  # a type only: this leaf module does not import gymnasium
    from gymnasium import spaces


STEP_COUNTS = ("horizon", "return", "measured")  # BatchedEnv.step_count


class PolicyFunction(Protocol):
    def __call__(self, observations: np.ndarray, /) -> np.ndarray: ...  # (K, B, obs) -> actions (K, B[, act])


@dataclass(frozen=True)
class BatchedEnv:
    """What the PVN pipeline needs to know about one environment."""

    name: str
    obs_dim: int
    act_dim: int
    discrete: bool
    state_labels: tuple[str, ...]
    state_bounds: tuple[tuple[float, float] | None, ...]  # termination bounds, where there are any
    dynamics: Dynamics  # the batched step function (pvnviz.envs.rollout): the environment's only physics
    visited_states: Callable[[np.random.Generator, int], np.ndarray]  # (rng, n) -> (n, obs_dim)
    reset_states: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]  # (rng, (K, B)) -> (K, B, state)
    observation_space: spaces.Box  # of one observation
    action_space: spaces.Discrete | spaces.Box  # of one action
    bounds_label: str  # what state_bounds are, in words, for the probe figures' captions
    steps_per_second: float  # measured rate of one core (pvnviz.runs.sizing's estimates)
    bytes_per_episode: int  # memory of one running episode in a batch (pvnviz.runs.sizing)
    fixed_length: bool  # every episode runs the whole horizon (else episodes may end early)
    # (arch, params (K, P), horizon, seed) -> one episode per policy from one start, to draw (pvnviz.envs.scene);
    # None: the pages show no replay
    replay: Callable[[Any, np.ndarray, int, int], Replay] | None = None
    # How ``episode_steps`` counts the steps behind returns (STEP_COUNTS): "horizon" (every episode runs the whole
    # horizon), "return" (reward 1 per step, so a return is its episode's length), or "measured" (only the rollout
    # knows: ``rollout_counted`` counts them, and ``episode_steps`` gives the most the episodes could have taken).
    # "" derives it from ``fixed_length``: "horizon" if fixed, else "return" (CartPole's reward).
    step_count: str = ""
    family: str = ""  # which batched family steps it: "built-in", "classic control", "MuJoCo", "gymnasium vector"

    def __post_init__(self) -> None:
        """The spaces must say what ``obs_dim``, ``act_dim`` and ``discrete`` say: a new environment's mistake is
        named when it is built, not deep inside a rollout."""
        if not self.step_count:
            object.__setattr__(self, "step_count", "horizon" if self.fixed_length else "return")
        if self.step_count not in STEP_COUNTS:
            raise ValueError(
                f"{self.name}: step_count must be one of {', '.join(STEP_COUNTS)}; got {self.step_count!r}."
            )
        obs_shape = tuple(getattr(self.observation_space, "shape", ()) or ())
        if obs_shape != (self.obs_dim,):
            raise ValueError(f"{self.name}: observation_space has shape {obs_shape}; obs_dim says ({self.obs_dim},).")
        if self.discrete:
            fits = getattr(self.action_space, "n", None) == self.act_dim
        else:
            fits = tuple(getattr(self.action_space, "shape", ()) or ()) == (self.act_dim,)
        if not fits:
            kind = f"Discrete({self.act_dim})" if self.discrete else f"a Box of shape ({self.act_dim},)"
            raise ValueError(
                f"{self.name}: action_space is {self.action_space}; discrete={self.discrete} and "
                f"act_dim={self.act_dim} say {kind}."
            )

    def rollout_returns(
        self,
        policy_fn: PolicyFunction,
        *,
        num_policies: int,
        num_episodes: int,
        horizon: int,
        rng: np.random.Generator,
        on_progress: ProgressFn | None = None,
        nthread: int | None = None,
    ) -> np.ndarray:
        """Undiscounted returns (K, B) of K policies x B episodes from the reset distribution (drawn from ``rng``)."""
        return self.rollout_counted(
            policy_fn,
            num_policies=num_policies,
            num_episodes=num_episodes,
            horizon=horizon,
            rng=rng,
            on_progress=on_progress,
            nthread=nthread,
        ).returns

    def rollout_counted(
        self,
        policy_fn: PolicyFunction,
        *,
        num_policies: int,
        num_episodes: int,
        horizon: int,
        rng: np.random.Generator,
        on_progress: ProgressFn | None = None,
        nthread: int | None = None,
    ) -> Counted:
        """``rollout_returns``'s returns (K, B) and the environment steps the episodes really took."""
        check_counts(num_policies, num_episodes, horizon)
        states = self.reset_states(rng, (int(num_policies), int(num_episodes)))
        return self.rollout_counted_from_states(
            policy_fn, states, horizon=horizon, on_progress=on_progress, nthread=nthread
        )

    def rollout_returns_from_states(
        self,
        policy_fn: PolicyFunction,
        states: np.ndarray,
        *,
        horizon: int,
        on_progress: ProgressFn | None = None,
        nthread: int | None = None,
    ) -> np.ndarray:
        """Undiscounted returns (K, B) from given states (K, B, state), through ``pvnviz.envs.rollout.rollout``.

        ``nthread`` where the physics has threads. Finished episodes are dropped from the block where the step
        function can (``select``), so the policy may then see (K, W, obs_dim) with W <= B.
        """
        return self.rollout_counted_from_states(
            policy_fn, states, horizon=horizon, on_progress=on_progress, nthread=nthread
        ).returns

    def rollout_counted_from_states(
        self,
        policy_fn: PolicyFunction,
        states: np.ndarray,
        *,
        horizon: int,
        on_progress: ProgressFn | None = None,
        nthread: int | None = None,
    ) -> Counted:
        """``rollout_returns_from_states``'s returns (K, B) and the environment steps the episodes really took
        (``pvnviz.envs.rollout.rollout_counted``)."""
        compact = hasattr(self.dynamics, "select")
        return rollout_counted(
            self.dynamics, policy_fn, states, horizon, on_progress=on_progress, compact=compact, nthread=nthread
        )

    def episode_steps(self, returns: np.ndarray, horizon: int, episodes_per_return: int = 1) -> int:
        """Environment steps that episodes with these returns took (what Algorithm 1 and 3 spend).

        ``episodes_per_return`` > 1: each entry is the mean return of that many episodes (Algorithm 3's checks).
        For ``step_count`` "measured" the returns do not tell: this is the most the episodes could have taken
        (every one the whole horizon); the exact count is ``rollout_counted``'s.
        """
        if self.step_count == "return":
            return int(round(float(np.sum(returns)) * episodes_per_return))
        return int(np.size(returns) * episodes_per_return * horizon)
