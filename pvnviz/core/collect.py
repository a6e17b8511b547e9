"""Algorithm 1 (Appendix C): random policies and the Monte Carlo returns of their episodes.

Policy k of a collection draws everything it needs from its own stream, ``SeedSequence(entropy,
spawn_key=(k,))``: its Glorot weights, then its B initial states, then (softmax policies) the seeds of
its episodes' action samplers. No random number belongs to a batch, so policies [start, stop) give the
same data whether they are collected alone or with any others; ``pvnviz.runs.collection`` splits a
dataset into chunks on that, and runs, stores and resumes them.

Softmax policies (CartPole) sample an action at every step. Each episode carries its own 64-bit LCG
(Knuth's MMIX constants; an action uses the top 53 bits as a uniform in [0, 1)), advanced once per step
for the whole (K, W) block in three array operations, and reordered with the episodes when the rollout
drops finished ones (``compact``). A policy's forward pass on a block one column wide is padded to two
columns, because BLAS's matrix-vector kernel rounds differently from its matrix-matrix one.

Layouts: params (n, P) float32, one row per policy; returns (n, B) float64, undiscounted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from pvnviz.core.policies import PolicyArch, forward_numpy, glorot_params, sampling_policy
from pvnviz.core.progress import ProgressFn

LCG_MULTIPLIER = np.uint64(6364136223846793005)
LCG_INCREMENT = np.uint64(1442695040888963407)


class Episodes(Protocol):
    """What Algorithm 1 needs of an environment: its reset distribution and its batched rollout.

    ``pvnviz.envs.batched.BatchedEnv`` is one; the collection is given it and knows nothing else of it.
    """

    def reset_states(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Initial states (*shape, state) drawn from ``rng``."""
        ...

    def rollout_returns_from_states(
        self,
        policy_fn: Callable[[np.ndarray], np.ndarray],
        states: np.ndarray,
        *,
        horizon: int,
        on_progress: ProgressFn | None = None,
        nthread: int | None = None,
    ) -> np.ndarray:
        """Undiscounted returns (K, B) of K policies x B episodes from ``states`` (K, B, state)."""
        ...


def policy_streams(entropy: int, start: int, stop: int) -> list[np.random.Generator]:
    """One generator per policy k in [start, stop), independent of how the policies are split."""
    return [np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(k,))) for k in range(start, stop)]


class EpisodeSampler:
    """Softmax action sampling with one LCG stream per episode: the ``policy_fn`` of softmax policies."""

    def __init__(self, arch: PolicyArch, params: np.ndarray, seeds: np.ndarray):
        self.arch, self.params = arch, np.asarray(params, dtype=np.float32)
        self.state = np.array(seeds, dtype=np.uint64)  # (K, B): one stream per episode

    def compact(self, order: np.ndarray) -> None:
        """Reorder the streams as the rollout reorders the episodes (``order`` (K, W) indexes the columns)."""
        self.state = np.take_along_axis(self.state, order, axis=1)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        if obs.shape[1] == 1:  # keep BLAS on its matrix-matrix kernel, whose rounding does not depend on width
            probs = forward_numpy(self.arch, self.params, np.concatenate([obs, obs], axis=1))[:, :1]
        else:
            probs = forward_numpy(self.arch, self.params, obs)
        np.multiply(self.state, LCG_MULTIPLIER, out=self.state)
        np.add(self.state, LCG_INCREMENT, out=self.state)
        uniform = (self.state >> np.uint64(11)) * (1.0 / 2**53)
        if self.arch.act_dim == 2:
            return (uniform >= probs[..., 0]).astype(np.int64)
        return (uniform[..., None] > np.cumsum(probs, axis=-1)[..., :-1]).sum(-1)


def collect_counted(
    env: Any,
    arch: PolicyArch,
    entropy: int,
    start: int,
    stop: int,
    num_episodes: int,
    horizon: int,
    on_progress: ProgressFn | None = None,
    nthread: int | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """``collect_returns``'s (params, returns) and the environment steps the episodes really took, from an
    environment that counts them (``pvnviz.envs.batched.BatchedEnv.rollout_counted_from_states``)."""
    counted: list[int] = []

    class Counting:  # the environment, its rollout counted
        reset_states = staticmethod(env.reset_states)

        @staticmethod
        def rollout_returns_from_states(policy_fn, states, **kwargs):
            result = env.rollout_counted_from_states(policy_fn, states, **kwargs)
            counted.append(result.env_steps)
            return result.returns

    params, returns = collect_returns(
        Counting(), arch, entropy, start, stop, num_episodes, horizon, on_progress, nthread
    )
    return params, returns, sum(counted)


def collect_returns(
    env: Episodes,
    arch: PolicyArch,
    entropy: int,
    start: int,
    stop: int,
    num_episodes: int,
    horizon: int,
    on_progress: ProgressFn | None = None,
    nthread: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 for policies [start, stop) of the collection ``entropy``: (params (n, P), returns (n, B)).

    Every policy is Glorot-initialised from its own stream and run for B = ``num_episodes`` episodes of at
    most ``horizon`` steps, all n x B episodes stepping as one batch (``nthread`` physics threads where the
    environment has them).
    """
    streams = policy_streams(entropy, start, stop)
    params = np.concatenate([glorot_params(arch, 1, rng) for rng in streams])  # (n, P)
    states = np.concatenate([env.reset_states(rng, (1, num_episodes)) for rng in streams])  # (n, B, state)
    if arch.discrete:  # stochastic softmax policies: one seeded stream per episode
        seeds = np.stack([rng.bit_generator.random_raw(num_episodes) for rng in streams])  # (n, B)
        policy = EpisodeSampler(arch, params, seeds)
    else:  # deterministic tanh policies: no random draws
        policy = sampling_policy(arch, params, np.random.default_rng(0))
    returns = env.rollout_returns_from_states(policy, states, horizon=horizon, on_progress=on_progress, nthread=nthread)
    return params, returns
