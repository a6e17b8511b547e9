"""Augmented Random Search (Mania, Guy & Recht, 2018), the random-search baseline at equal budget.

Each iteration draws N directions delta (N, P), measures theta +/- nu * delta, and steps
theta += alpha / (b * sigma_R) * sum over the top-b directions of (r+ - r-) delta, where the
top b are ranked by max(r+, r-) and sigma_R is the std of the 2b returns used (V1-t; b = N
is V1). V2 also normalises the policy's input by the running mean and std of every state
seen so far. All 2N perturbed policies (K = 2N) roll out as one batch in the batched
environment, and every environment step is counted.

Layout: theta (P,) in the flat policy layout of ``pvnviz.core.policies``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvnviz.core.policies import PolicyArch, sampling_policy
from pvnviz.envs.batched import BatchedEnv

Objective = Callable[[np.ndarray], tuple[np.ndarray, int]]  # params (K, P) -> (returns (K,), env steps spent)


@dataclass(frozen=True)
class ARSResult:
    theta: np.ndarray  # (P,) the final parameters
    env_steps: np.ndarray  # (I,) cumulative environment steps after each iteration
    mean_returns: np.ndarray  # (I,) mean of the 2N perturbed returns of each iteration
    obs_mean: np.ndarray | None = None  # V2: state normalisation at the end
    obs_std: np.ndarray | None = None


def ars(
    objective: Objective,
    theta: np.ndarray,
    iterations: int,
    num_directions: int,
    top: int,
    step_size: float,
    noise: float,
    rng: np.random.Generator,
    max_env_steps: int | None = None,
) -> ARSResult:
    """ARS V1 / V1-t on any batched objective (V2's normalisation lives inside the objective)."""
    if not 1 <= top <= num_directions:
        raise ValueError(f"top must be in [1, num_directions={num_directions}]; got {top}.")
    theta = np.array(theta, dtype=np.float64)
    spent, steps_log, means = 0, [], []
    for _ in range(iterations):
        delta = rng.standard_normal((num_directions, theta.size))
        candidates = np.concatenate([theta + noise * delta, theta - noise * delta])
        returns, used = objective(candidates)
        spent += int(used)
        r_plus, r_minus = returns[:num_directions], returns[num_directions:]
        best = np.argsort(-np.maximum(r_plus, r_minus))[:top]
        sigma = np.concatenate([r_plus[best], r_minus[best]]).std()
        if sigma > 0:
            theta = theta + step_size / (top * sigma) * ((r_plus[best] - r_minus[best]) @ delta[best])
        steps_log.append(spent)
        means.append(float(returns.mean()))
        if max_env_steps is not None and spent >= max_env_steps:
            break
    return ARSResult(theta, np.array(steps_log), np.array(means))


class EnvObjective:
    """Mean return over ``episodes`` of each policy (K, P) in the batched env; V2 normalises states."""

    def __init__(
        self,
        env: BatchedEnv,
        arch: PolicyArch,
        episodes: int,
        horizon: int,
        rng: np.random.Generator,
        normalise: bool = False,
    ):
        self.env, self.arch, self.episodes, self.horizon, self.rng = env, arch, episodes, horizon, rng
        self.normalise = normalise
        self.count, self.total, self.squares = 0, np.zeros(arch.obs_dim), np.zeros(arch.obs_dim)

    def stats(self) -> tuple[np.ndarray, np.ndarray]:
        if self.count < 2:
            return np.zeros(self.arch.obs_dim), np.ones(self.arch.obs_dim)
        mean = self.total / self.count
        return mean, np.sqrt(np.maximum(self.squares / self.count - mean**2, 1e-8))

    def policy(self, params: np.ndarray, update: bool = True):
        inner = sampling_policy(self.arch, params.astype(np.float32), self.rng)
        if not self.normalise:
            return inner
        mean, std = self.stats()

        def policy_fn(obs: np.ndarray) -> np.ndarray:
            if update:
                flat = obs.reshape(-1, obs.shape[-1])
                self.count += len(flat)
                self.total += flat.sum(0)
                self.squares += (flat.astype(np.float64) ** 2).sum(0)
            return inner(((obs - mean) / std).astype(np.float32))

        return policy_fn

    def __call__(self, params: np.ndarray) -> tuple[np.ndarray, int]:
        counted = self.env.rollout_counted(  # the steps the episodes really took
            self.policy(params),
            num_policies=len(params),
            num_episodes=self.episodes,
            horizon=self.horizon,
            rng=self.rng,
        )
        return counted.returns.mean(axis=1), int(counted.env_steps)
