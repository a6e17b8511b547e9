"""Benchmark: batched numpy CartPole (pvnviz.cartpole) vs a Python loop over gymnasium.

Both sides run the same K random MLP policies (4 -> 30 -> 2, ReLU, softmax over
the two actions, Glorot-uniform weights, zero biases; the policy class of
Section 6.2 of "Policy Evaluation Networks"). Rates count real environment
steps (the sum of episode lengths) and include the policy evaluation.

* ours: ``rollout_returns`` on the whole K x B block, all in lockstep, once
  with the full block every step and once with ``compact_episodes=True``.
* gymnasium: ``gymnasium.make("CartPole-v1", max_episode_steps=horizon)``,
  one episode at a time, every policy x ``baseline_episodes`` episodes.

Usage: ``python -m pvnviz.bench_cartpole [--policies K] [--episodes B]
[--horizon T] [--baseline-episodes N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import NamedTuple

import numpy as np

from pvnviz.cartpole import STATE_SIZE, rollout_returns

HIDDEN_SIZE = 30
NUM_ACTIONS = 2


class MLPPolicies(NamedTuple):
    """Weights of K policies: logits = relu(obs W1 + b1) W2 + b2 (float32)."""

    W1: np.ndarray  # (K, 4, 30)
    b1: np.ndarray  # (K, 30)
    W2: np.ndarray  # (K, 30, 2)
    b2: np.ndarray  # (K, 2)


def make_mlp_policies(num_policies: int, rng: np.random.Generator, hidden_size: int = HIDDEN_SIZE) -> MLPPolicies:
    """K random MLPs, Glorot-uniform weights U(+-sqrt(6 / (fan_in + fan_out))), zero biases."""
    limit1 = np.sqrt(6.0 / (STATE_SIZE + hidden_size))
    limit2 = np.sqrt(6.0 / (hidden_size + NUM_ACTIONS))
    return MLPPolicies(
        W1=rng.uniform(-limit1, limit1, (num_policies, STATE_SIZE, hidden_size)).astype(np.float32),
        b1=np.zeros((num_policies, hidden_size), dtype=np.float32),
        W2=rng.uniform(-limit2, limit2, (num_policies, hidden_size, NUM_ACTIONS)).astype(np.float32),
        b2=np.zeros((num_policies, NUM_ACTIONS), dtype=np.float32),
    )


def batched_mlp_policy(policies: MLPPolicies, rng: np.random.Generator):
    """policy_fn for rollout_returns: (K, W, 4) float32 observations -> (K, W) sampled actions.

    With two actions, softmax(logits)[1] = sigmoid(logit_1 - logit_0), so the
    second layer is reduced to one row of logit differences. The hidden layer
    is computed as (K, 30, W) = W1^T (K, 30, 4) @ obs^T (K, 4, W), which is
    faster than (K, W, 30) here. Buffers are reused while W stays the same.
    """
    weights1_transposed = policies.W1.transpose(0, 2, 1).copy()  # (K, 30, 4)
    bias1 = policies.b1[:, :, None]  # (K, 30, 1)
    logit_difference_weights = (policies.W2[:, :, 1] - policies.W2[:, :, 0])[:, None, :].copy()  # (K, 1, 30)
    logit_difference_bias = (policies.b2[:, 1] - policies.b2[:, 0])[:, None]  # (K, 1)
    buffers: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}

    def policy(observation: np.ndarray) -> np.ndarray:
        num_policies, num_columns, _ = observation.shape
        if observation.shape not in buffers:
            buffers.clear()
            buffers[observation.shape] = (
                np.empty((num_policies, weights1_transposed.shape[1], num_columns), dtype=np.float32),
                np.empty((num_policies, 1, num_columns), dtype=np.float32),
            )
        hidden, logit_difference = buffers[observation.shape]
        np.matmul(weights1_transposed, observation.transpose(0, 2, 1), out=hidden)
        np.add(hidden, bias1, out=hidden)
        np.maximum(hidden, 0.0, out=hidden)
        np.matmul(logit_difference_weights, hidden, out=logit_difference)
        probability_right = 1.0 / (1.0 + np.exp(-(logit_difference[:, 0, :] + logit_difference_bias)))
        return rng.random(probability_right.shape, dtype=np.float32) < probability_right

    return policy


def single_mlp_action(policies: MLPPolicies, index: int, observation: np.ndarray, rng: np.random.Generator) -> int:
    """Sample one action of policy ``index`` for one observation (4,): the same softmax policy."""
    hidden = np.maximum(observation @ policies.W1[index] + policies.b1[index], 0.0)
    logits = hidden @ policies.W2[index] + policies.b2[index]
    probabilities = np.exp(logits - logits.max())
    probabilities /= probabilities.sum()
    return int(rng.random() < probabilities[1])


def gymnasium_returns(
    policies: MLPPolicies, num_episodes: int, horizon: int, rng: np.random.Generator, seed: int
) -> np.ndarray:
    """Returns (K, num_episodes) from a plain Python loop over gymnasium's CartPole-v1."""
    import gymnasium

    env = gymnasium.make("CartPole-v1", max_episode_steps=horizon)
    num_policies = policies.W1.shape[0]
    returns = np.zeros((num_policies, num_episodes))
    env.reset(seed=seed)
    for index in range(num_policies):
        for episode in range(num_episodes):
            observation, _ = env.reset()
            while True:
                action = single_mlp_action(policies, index, observation, rng)
                observation, reward, terminated, truncated, _ = env.step(action)
                returns[index, episode] += reward
                if terminated or truncated:
                    break
    env.close()
    return returns


def bench_cartpole(
    num_policies: int = 1000,
    num_episodes: int = 100,
    horizon: int = 100,
    baseline_episodes: int = 2,
    seed: int = 0,
    on_progress=None,
    verbose: bool = True,
) -> dict:
    """Time our batched rollouts against gymnasium on the same random MLP policies.

    Returns a dict with ``ours_steps_per_second``, ``gymnasium_steps_per_second``,
    their ``speedup``, ``ours_seconds`` (wall time for the full K x B dataset,
    including the policy evaluation) and the mean returns of both; the
    ``compact_*`` keys are the same for ``rollout_returns(compact_episodes=True)``.
    """
    if baseline_episodes < 1:
        raise ValueError(f"baseline_episodes must be at least 1, got {baseline_episodes}.")
    rng = np.random.default_rng(seed)
    policies = make_mlp_policies(num_policies, rng)

    timings = {}
    for compact in (False, True):
        policy = batched_mlp_policy(policies, np.random.default_rng(seed + 1))
        start = time.perf_counter()
        returns = rollout_returns(
            policy, num_policies, num_episodes, horizon, np.random.default_rng(seed + 2), on_progress, compact
        )
        timings[compact] = (time.perf_counter() - start, returns)
    ours_seconds, ours = timings[False]
    compact_seconds, compact_returns = timings[True]
    ours_steps = float(ours.sum())  # reward is 1 per step, so the returns count the steps
    compact_steps = float(compact_returns.sum())

    start = time.perf_counter()
    baseline = gymnasium_returns(policies, baseline_episodes, horizon, np.random.default_rng(seed + 3), seed + 4)
    gymnasium_seconds = time.perf_counter() - start
    gymnasium_steps = float(baseline.sum())

    result = {
        "num_policies": num_policies,
        "num_episodes": num_episodes,
        "horizon": horizon,
        "ours_seconds": ours_seconds,
        "ours_env_steps": ours_steps,
        "ours_steps_per_second": ours_steps / ours_seconds,
        "ours_mean_return": float(ours.mean()),
        "compact_seconds": compact_seconds,
        "compact_steps_per_second": compact_steps / compact_seconds,
        "compact_mean_return": float(compact_returns.mean()),
        "gymnasium_episodes": num_policies * baseline_episodes,
        "gymnasium_seconds": gymnasium_seconds,
        "gymnasium_env_steps": gymnasium_steps,
        "gymnasium_steps_per_second": gymnasium_steps / gymnasium_seconds,
        "gymnasium_mean_return": float(baseline.mean()),
    }
    result["speedup"] = result["ours_steps_per_second"] / result["gymnasium_steps_per_second"]
    result["compact_speedup"] = result["compact_steps_per_second"] / result["gymnasium_steps_per_second"]
    # What the whole K x B dataset would take with the gymnasium loop at its measured rate.
    result["gymnasium_seconds_full_dataset_estimate"] = ours_steps / result["gymnasium_steps_per_second"]
    if verbose:
        print(format_report(result))
    return result


def format_report(result: dict) -> str:
    """A readable multi-line summary of a bench_cartpole result."""
    k, b, t = result["num_policies"], result["num_episodes"], result["horizon"]
    return "\n".join(
        [
            f"CartPole-v1, {k} random MLP policies (4-30-2) x {b} episodes, horizon {t}",
            f"  ours (batched numpy): {result['ours_seconds']:.2f} s for the full dataset, "
            f"{result['ours_env_steps']:,.0f} env steps, {result['ours_steps_per_second']:,.0f} steps/s, "
            f"mean return {result['ours_mean_return']:.2f}",
            f"  ours, compact_episodes=True: {result['compact_seconds']:.2f} s, "
            f"{result['compact_steps_per_second']:,.0f} steps/s, mean return {result['compact_mean_return']:.2f}",
            f"  gymnasium (Python loop): {result['gymnasium_episodes']} episodes in "
            f"{result['gymnasium_seconds']:.2f} s, {result['gymnasium_env_steps']:,.0f} env steps, "
            f"{result['gymnasium_steps_per_second']:,.0f} steps/s, mean return {result['gymnasium_mean_return']:.2f}",
            f"  speedup: {result['speedup']:.1f}x full block, {result['compact_speedup']:.1f}x compacted "
            f"(gymnasium would need about "
            f"{result['gymnasium_seconds_full_dataset_estimate']:.0f} s for the full dataset)",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pvnviz.bench_cartpole", description=__doc__.splitlines()[0])
    parser.add_argument("--policies", type=int, default=1000, help="number of random MLP policies K")
    parser.add_argument("--episodes", type=int, default=100, help="episodes per policy B (ours)")
    parser.add_argument("--horizon", type=int, default=100, help="truncation length of every episode")
    parser.add_argument("--baseline-episodes", type=int, default=2, help="gymnasium episodes per policy")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    args = parser.parse_args(argv)
    try:
        bench_cartpole(args.policies, args.episodes, args.horizon, args.baseline_episodes, args.seed)
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
