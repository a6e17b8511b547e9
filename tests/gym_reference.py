"""Gymnasium itself, the independent reference the environment tests compare against."""

from __future__ import annotations

import gymnasium
import numpy as np

from pvnviz.bench.core import gymnasium_cartpole_loop
from pvnviz.core.policies import PolicyArch


def swimmer(**kwargs) -> gymnasium.Env:
    """``gymnasium.make("Swimmer-v5", **kwargs)``."""
    return gymnasium.make("Swimmer-v5", **kwargs)


def cartpole_episode_returns(
    arch: PolicyArch, params: np.ndarray, num_episodes: int, horizon: int, seed: int
) -> np.ndarray:
    """Returns (K, num_episodes) of softmax policies ``params`` (K, P) on ``CartPole-v1``, one step at a time.

    The same plain gymnasium loop that ``python -m pvnviz.bench cartpole`` times as its baseline.
    """
    return gymnasium_cartpole_loop(params, arch, num_episodes, horizon, seed)[0]


def swimmer_episode_returns(arch: PolicyArch, params: np.ndarray, num_episodes: int, seed: int) -> np.ndarray:
    """Returns (K, num_episodes) of deterministic tanh policies ``params`` (K, P) on ``Swimmer-v5``, one step at a
    time; episode e of every policy starts from ``reset(seed=seed + e)``."""
    from pvnviz.core.policies import forward_numpy

    env = swimmer()
    returns = np.zeros((len(params), num_episodes))
    for k in range(len(params)):
        for e in range(num_episodes):
            obs, _ = env.reset(seed=seed + e)
            done = False
            while not done:
                action = forward_numpy(arch, params[k : k + 1], obs[None, None])[0, 0]
                obs, reward, terminated, truncated, _ = env.step(action)
                returns[k, e] += reward
                done = terminated or truncated
    env.close()
    return returns
