"""Tests of pvnviz.envs.mujoco_family: every batched MuJoCo task equals gymnasium's own ``-v5``, step by step and
bit for bit (observations, rewards, terminations), K policies x B episodes in one batch.

The reference episodes start from gymnasium's own ``reset(seed=...)``; their ``[time, qpos, qvel]`` is the batch's
initial state, and ``reset_states`` is checked to draw the same states from the same seed. Both sides are given
the same float64 actions, drawn beyond the actuators' bounds so that MuJoCo's clamping is exercised too.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from pvnviz.envs import mujoco_family, rollout

K, B = 2, 3


def gymnasium_episodes(env_id: str, kwargs: dict, seeds: np.ndarray, actions: np.ndarray) -> dict:
    """Episodes of ``gymnasium.make(env_id, **kwargs)`` from ``reset(seed=s)`` for each of ``seeds`` (n,), under
    ``actions`` (n, T, nu), each until it terminates or T steps: initial states, observations, rewards, ends."""
    n, horizon = actions.shape[:2]
    env = gymnasium.make(env_id, **kwargs).unwrapped  # gymnasium's own step, without the checking wrappers
    out = {"states": [], "obs": [], "rewards": np.zeros((n, horizon)), "terminated": np.zeros((n, horizon), bool)}
    out["lengths"] = np.full(n, horizon)
    for e in range(n):
        obs, _ = env.reset(seed=int(seeds[e]))
        data = env.data
        out["states"].append(np.concatenate([[data.time], data.qpos, data.qvel]))
        observations = [obs]
        for t in range(horizon):
            obs, reward, terminated, truncated, _ = env.step(actions[e, t])
            observations.append(obs)
            out["rewards"][e, t], out["terminated"][e, t] = reward, terminated
            if terminated:
                out["lengths"][e] = t + 1
                break
        out["obs"].append(np.array(observations))
    env.close()
    out["states"] = np.array(out["states"])
    return out


def replayed(actions: np.ndarray):
    """A policy over (K, B, obs) that returns the t-th of ``actions`` (K, B, T, nu) at its t-th call."""
    calls = iter(range(actions.shape[2]))

    def policy(obs: np.ndarray) -> np.ndarray:
        return actions[:, :, next(calls)]

    return policy


def check_parity(env_id: str, kwargs: dict, horizon: int, seed: int) -> np.ndarray:
    """Our batch of K x B episodes against gymnasium's, every step; returns the episodes' lengths (K, B)."""
    env = mujoco_family.batched_env((env_id, kwargs))
    high = env.action_space.high.astype(np.float64)
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1.2, 1.2, size=(K, B, horizon, env.act_dim)) * high
    seeds = seed * 100 + np.arange(K * B)
    reference = gymnasium_episodes(env_id, kwargs, seeds, actions.reshape(K * B, horizon, -1))
    initial = reference["states"].reshape(K, B, -1)
    traj = rollout.record(env.dynamics, replayed(actions), initial, horizon)
    lengths = reference["lengths"].reshape(K, B)
    for k, b in np.ndindex(K, B):
        e, n = k * B + b, lengths[k, b]
        np.testing.assert_array_equal(traj.observations[k, b, : n + 1], reference["obs"][e])
        np.testing.assert_array_equal(traj.rewards[k, b, :n], reference["rewards"][e, :n])
        ended = traj.active[k, b] & traj.done[k, b]  # the step each episode ended at
        np.testing.assert_array_equal(ended[:n], reference["terminated"][e, :n])
        assert traj.active[k, b].sum() == n
        assert np.all(traj.rewards[k, b, n:] == 0.0)  # a finished episode earns nothing more
        np.testing.assert_array_equal(traj.observations[k, b, n:], traj.observations[k, b, n : n + 1].repeat(
            horizon + 1 - n, axis=0))
    # reset_states draws gymnasium's reset: seeds' first states from default_rng(seed)
    for e in (0, K * B - 1):
        ours = env.reset_states(np.random.default_rng(int(seeds[e])), (1,))[0]
        np.testing.assert_array_equal(ours, reference["states"][e])
    return lengths


def test_hopper_fast_subset_matches_gymnasium():
    lengths = check_parity("Hopper-v5", {"terminate_when_unhealthy": False}, horizon=50, seed=1)
    assert np.all(lengths == 50)


CASES = [  # (id, kwargs, horizon, expect early terminations)
    ("Hopper-v5", {}, 200, True),
    ("Hopper-v5", {"terminate_when_unhealthy": False, "ctrl_cost_weight": 0.01}, 200, False),
    ("HalfCheetah-v5", {}, 200, False),
    ("Walker2d-v5", {}, 200, True),
    ("Walker2d-v5", {"terminate_when_unhealthy": False, "reset_noise_scale": 0.05}, 200, False),
]


@pytest.mark.slow
@pytest.mark.parametrize("env_id,kwargs,horizon,ends_early", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_gymnasium_step_by_step(env_id, kwargs, horizon, ends_early):
    lengths = check_parity(env_id, kwargs, horizon, seed=7)
    if ends_early:
        assert lengths.min() < horizon and len(np.unique(lengths)) > 1  # episodes ended at different steps
    else:
        assert np.all(lengths == horizon)


def test_unknown_and_refused_keywords_raise_value_error():
    with pytest.raises(ValueError, match="accepts: .*ctrl_cost_weight"):
        mujoco_family.batched_env(("Hopper-v5", {"ctrl_weight": 1.0}))
    with pytest.raises(ValueError, match="xml_file"):
        mujoco_family.batched_env(("Hopper-v5", {"xml_file": "walker2d.xml"}))
    with pytest.raises(ValueError, match="MuJoCo family"):
        mujoco_family.batched_env("Swimmer-v5")
    with pytest.raises(ValueError, match="terminate_when_unhealthy"):
        mujoco_family.batched_env(("Hopper-v5", {"terminate_when_unhealthy": "yes"}))


def test_spec_fields_follow_the_keywords():
    hopper = mujoco_family.batched_env("Hopper-v5")
    assert (hopper.obs_dim, hopper.act_dim, hopper.fixed_length) == (11, 3, False)
    assert hopper.state_bounds[1] == (-0.2, 0.2) and hopper.state_bounds[0] is None  # angle; z has no top
    assert len(hopper.state_labels) == 11
    full = mujoco_family.batched_env(
        ("Hopper-v5", {"exclude_current_positions_from_observation": False, "terminate_when_unhealthy": False})
    )
    assert (full.obs_dim, full.fixed_length) == (12, True)
    assert full.state_bounds[2] == (-0.2, 0.2)
    cheetah = mujoco_family.batched_env("HalfCheetah-v5")
    assert (cheetah.obs_dim, cheetah.act_dim, cheetah.fixed_length) == (17, 6, True)
