"""Gymnasium itself, the independent reference the environment tests compare against."""

from __future__ import annotations

import gymnasium
import numpy as np

from pvnviz.policies import PolicyArch, forward_numpy


def swimmer(**kwargs) -> gymnasium.Env:
    """``gymnasium.make("Swimmer-v5", **kwargs)``."""
    return gymnasium.make("Swimmer-v5", **kwargs)


def cartpole_episode_returns(
    arch: PolicyArch, params: np.ndarray, num_episodes: int, horizon: int, seed: int
) -> np.ndarray:
    """Returns (K, num_episodes) of softmax policies ``params`` (K, P) on ``CartPole-v1``, one step at a time."""
    env = gymnasium.make("CartPole-v1", max_episode_steps=horizon)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    returns = np.zeros((len(params), num_episodes))
    for k in range(len(params)):
        for e in range(num_episodes):
            obs, _ = env.reset()
            done = False
            while not done:
                probs = forward_numpy(arch, params[k : k + 1], obs[None, None])[0, 0]
                obs, reward, terminated, truncated, _ = env.step(int(rng.random() >= probs[0]))
                returns[k, e] += reward
                done = terminated or truncated
    env.close()
    return returns
