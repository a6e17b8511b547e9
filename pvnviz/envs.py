"""The environments of Section 6 behind one interface, for datasets, PVNs and ascent.

An ``EnvSpec`` says what a policy for the environment looks like (observation and
action sizes, discrete or continuous), how to collect returns for K policies x B
episodes in lockstep (``rollout_returns``), and how to name and bound the state
dimensions for the probe-state figures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvnviz.progress import ProgressFn


def check_rollout_counts(num_policies: int, num_episodes: int, horizon: int) -> None:
    """ValueError, saying what to change, unless every count is at least 1."""
    for name, value, example in (
        ("horizon", horizon, "e.g. 100 for CartPole, 1000 for Swimmer"),
        ("num_policies", num_policies, "a positive number of policies"),
        ("num_episodes", num_episodes, "a positive number of episodes per policy"),
    ):
        if int(value) < 1:
            raise ValueError(f"{name} must be at least 1, got {value}; pass {example}.")


@dataclass(frozen=True)
class EnvSpec:
    """What the PVN pipeline needs to know about one environment."""

    name: str
    obs_dim: int
    act_dim: int
    discrete: bool
    state_labels: tuple[str, ...]
    state_bounds: tuple[tuple[float, float] | None, ...]  # termination bounds, where there are any
    rollout_returns: Callable[..., np.ndarray]  # (policy_fn, *, num_policies, num_episodes, horizon, rng, on_progress)
    visited_states: Callable[[np.random.Generator, int], np.ndarray]  # (rng, n) -> (n, obs_dim)


def _cartpole() -> EnvSpec:
    from pvnviz import cartpole

    def rollout(policy_fn, *, num_policies, num_episodes, horizon, rng, on_progress: ProgressFn | None = None):
        return cartpole.rollout_returns(
            policy_fn,
            num_policies=num_policies,
            num_episodes=num_episodes,
            horizon=horizon,
            rng=rng,
            on_progress=on_progress,
            compact_episodes=True,
        )

    def visited(rng: np.random.Generator, n: int) -> np.ndarray:
        """States visited by uniformly random actions, from n episodes of up to 100 steps."""
        starts = cartpole.reset_states(rng, (1, n))
        traj = cartpole.rollout_trajectories(lambda obs: rng.integers(0, 2, size=obs.shape[:-1]), starts, horizon=100)
        lengths = traj.active[0].sum(-1)  # (n,)
        pick = (rng.random(n) * lengths).astype(int)
        return traj.states[0, np.arange(n), pick].astype(np.float32)

    theta = cartpole.THETA_THRESHOLD_RADIANS
    return EnvSpec(
        name="cartpole",
        obs_dim=4,
        act_dim=2,
        discrete=True,
        state_labels=("cart position", "cart velocity", "pole angle", "pole angular velocity"),
        state_bounds=((-cartpole.X_THRESHOLD, cartpole.X_THRESHOLD), None, (-theta, theta), None),
        rollout_returns=rollout,
        visited_states=visited,
    )


def _swimmer() -> EnvSpec:
    from pvnviz import swimmer

    return swimmer.env_spec()


ENVIRONMENTS: dict[str, Callable[[], EnvSpec]] = {"cartpole": _cartpole, "swimmer": _swimmer}


def get_env(name: str) -> EnvSpec:
    """The EnvSpec of an environment by name ("cartpole" or "swimmer")."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; choose one of: {', '.join(ENVIRONMENTS)}.")
    return ENVIRONMENTS[name]()
