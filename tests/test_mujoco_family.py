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


def check_parity(env_id: str, kwargs: dict, horizon: int, seed: int) -> rollout.Trajectories:
    """Our batch of K x B episodes against gymnasium's, every step; returns our record."""
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
    return traj


def test_hopper_fast_subset_matches_gymnasium():
    traj = check_parity("Hopper-v5", {"terminate_when_unhealthy": False}, horizon=50, seed=1)
    assert traj.active.all()


CASES = [  # (id, kwargs, horizon, expect early terminations)
    ("Hopper-v5", {}, 200, True),
    ("Hopper-v5", {"terminate_when_unhealthy": False, "ctrl_cost_weight": 0.01}, 200, False),
    ("HalfCheetah-v5", {}, 200, False),
    ("Walker2d-v5", {}, 200, True),
    ("Walker2d-v5", {"terminate_when_unhealthy": False, "reset_noise_scale": 0.05}, 200, False),
    ("InvertedPendulum-v5", {}, 200, True),
    ("InvertedPendulum-v5", {"reset_noise_scale": 0.1, "frame_skip": 1}, 200, True),
    ("InvertedDoublePendulum-v5", {}, 200, True),
    ("InvertedDoublePendulum-v5", {"healthy_reward": 5.0}, 200, True),
    ("Reacher-v5", {}, 200, False),
    ("Reacher-v5", {"reward_dist_weight": 0.5, "reward_control_weight": 2.0}, 200, False),
    ("Ant-v5", {}, 200, True),
    ("Ant-v5", {"include_cfrc_ext_in_observation": False, "healthy_z_range": [0.3, 0.9]}, 200, True),
    ("Ant-v5", {"include_cfrc_ext_in_observation": False, "contact_cost_weight": 0.0, "main_body": "torso"}, 200, True),
]


@pytest.mark.parametrize("env_id,kwargs,horizon,ends_early", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_gymnasium_step_by_step(env_id, kwargs, horizon, ends_early):
    traj = check_parity(env_id, kwargs, horizon, seed=7)
    lengths = traj.active.sum(-1)
    if env_id == "Ant-v5" and not kwargs:  # the contact forces (obs[27:], from mj_rnePostConstraint) are compared
        assert np.count_nonzero(traj.observations[..., 27:]) > 100
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
    with pytest.raises(ValueError, match="main_body"):
        mujoco_family.batched_env(("Ant-v5", {"main_body": "head"}))
    with pytest.raises(ValueError, match="frame_skip"):
        mujoco_family.batched_env(("Reacher-v5", {"frame_skip": 0}))
    assert set(mujoco_family.IDS) == {
        "Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Ant-v5", "InvertedPendulum-v5", "InvertedDoublePendulum-v5",
        "Reacher-v5",
    }


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
    every = [(env_id, {}) for env_id in mujoco_family.IDS] + [("Ant-v5", {"include_cfrc_ext_in_observation": False})]
    for env_id, kwargs in every:
        ours, reference = mujoco_family.batched_env((env_id, kwargs)), gymnasium.make(env_id, **kwargs)
        assert ours.observation_space.shape == reference.observation_space.shape
        assert ours.action_space == reference.action_space
        assert len(ours.state_labels) == len(ours.state_bounds) == ours.obs_dim


@pytest.mark.parametrize("env_id", ["Hopper-v5", "HalfCheetah-v5", "Reacher-v5", "InvertedDoublePendulum-v5"])
def test_reset_states_are_successive_gymnasium_resets(env_id):
    env = gymnasium.make(env_id).unwrapped
    env.reset(seed=5)
    expected = [np.concatenate([[env.data.time], env.data.qpos, env.data.qvel])]
    for _ in range(5):  # later resets continue the same generator (Reacher: its rejection loop included)
        env.reset()
        expected.append(np.concatenate([[env.data.time], env.data.qpos, env.data.qvel]))
    ours = mujoco_family.batched_env(env_id).reset_states(np.random.default_rng(5), (2, 3))
    np.testing.assert_array_equal(ours.reshape(6, -1), np.array(expected))


def test_visited_states_and_replay():
    from pvnviz.core.policies import PolicyArch, glorot_params

    env = mujoco_family.batched_env("InvertedPendulum-v5")  # actions in [-3, 3]: the replay maps tanh outputs
    visited = env.visited_states(np.random.default_rng(0), 7)
    assert visited.shape == (7, 4) and np.isfinite(visited).all()
    arch = PolicyArch(env.obs_dim, env.act_dim, (8,), discrete=False)
    replay = env.replay(arch, glorot_params(arch, 2, np.random.default_rng(1)), 40, 3)
    assert len(replay.panels) == 2 and all(1 <= panel.frames <= 41 for panel in replay.panels)


def test_returns_do_not_depend_on_threads_and_match_the_record():
    env = mujoco_family.batched_env("Ant-v5")  # the persistent batch, contact forces per episode

    def policy(obs: np.ndarray) -> np.ndarray:
        return np.tanh(obs[..., :8] * 3.0)

    states = env.reset_states(np.random.default_rng(3), (2, 2))
    one = env.rollout_counted_from_states(policy, states, horizon=60, nthread=1)
    two = env.rollout_counted_from_states(policy, states, horizon=60, nthread=2)
    np.testing.assert_array_equal(one.returns, two.returns)
    traj = rollout.record(env.dynamics, policy, states, 60)
    np.testing.assert_array_equal(np.cumsum(traj.rewards, axis=-1)[..., -1], one.returns)  # summed step by step
    assert one.env_steps == traj.active.sum()


def test_gym_names_reach_this_family():
    from pvnviz.envs import families
    from pvnviz.envs.gym_id import parse_env_name

    gym_id = parse_env_name("gym:InvertedPendulum-v5?reset_noise_scale=0.05")
    assert families.family_name(gym_id) == "mujoco_family"
    env = families.batched_env(gym_id)  # actions in [-3, 3]: policies' tanh outputs are mapped there
    returns = env.rollout_returns(
        lambda obs: np.ones((*obs.shape[:-1], 1)), num_policies=1, num_episodes=2, horizon=50,
        rng=np.random.default_rng(0),
    )
    ours = mujoco_family.batched_env(("InvertedPendulum-v5", {"reset_noise_scale": 0.05}))
    full_push = ours.rollout_returns(
        lambda obs: np.full((*obs.shape[:-1], 1), 3.0), num_policies=1, num_episodes=2, horizon=50,
        rng=np.random.default_rng(0),
    )
    np.testing.assert_array_equal(returns, full_push)
    assert returns.max() < 50  # pushed hard one way, the pole falls


class LinearPolicies:
    """Deterministic ``tanh(W_k obs)`` per policy k; records the compactions the rollout tells it of."""

    def __init__(self, num_policies: int, obs_dim: int, act_dim: int, seed: int):
        self.weights = np.random.default_rng(seed).normal(size=(num_policies, act_dim, obs_dim)) * 0.5
        self.widths: list[int] = []

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return np.tanh(np.einsum("kao,kbo->kba", self.weights, obs))

    def compact(self, order: np.ndarray) -> None:
        self.widths.append(order.shape[1])


@pytest.mark.parametrize("env_id", ["Hopper-v5", "Ant-v5", "InvertedDoublePendulum-v5"])
def test_dropping_finished_episodes_changes_no_return(env_id):
    env = mujoco_family.batched_env(env_id)
    states = env.reset_states(np.random.default_rng(4), (2, 8))
    policy = LinearPolicies(2, env.obs_dim, env.act_dim, seed=5)
    traj = rollout.record(env.dynamics, policy, states, 150)
    counted = env.rollout_counted_from_states(policy, states, horizon=150)  # drops finished episodes (select)
    assert policy.widths and min(policy.widths) < 8  # the block was cut
    np.testing.assert_array_equal(counted.returns, np.cumsum(traj.rewards, axis=-1)[..., -1])
    assert counted.env_steps == traj.active.sum()


LONG = [  # (id, kwargs): every task over gymnasium's whole 1000-step horizon, where its episodes last that long
    ("Hopper-v5", {"terminate_when_unhealthy": False}),
    ("HalfCheetah-v5", {}),
    ("Walker2d-v5", {"terminate_when_unhealthy": False}),
    ("InvertedPendulum-v5", {}),
    ("InvertedDoublePendulum-v5", {}),
    ("Reacher-v5", {}),
    ("Ant-v5", {"terminate_when_unhealthy": False}),
]


@pytest.mark.slow
@pytest.mark.parametrize("env_id,kwargs", LONG, ids=[c[0] for c in LONG])
def test_linear_policies_match_gymnasium_over_1000_steps(env_id, kwargs):
    """Deterministic ``high * tanh(W obs)`` policies (joint limits and contacts held for long stretches), computed
    one episode at a time on both sides, so the actions agree whenever the observations do."""
    env = mujoco_family.batched_env((env_id, kwargs))
    high = env.action_space.high.astype(np.float64)
    weights = np.random.default_rng(11).normal(size=(K, B, env.act_dim, env.obs_dim))

    def act(w: np.ndarray, obs: np.ndarray) -> np.ndarray:
        return high * np.tanh(w @ obs)

    class Policy:  # follows its episodes when the rollout drops finished ones (compact)
        columns = weights

        def __call__(self, obs: np.ndarray) -> np.ndarray:
            return np.array([[act(w, o) for w, o in zip(ws, row)] for ws, row in zip(self.columns, obs)])

        def compact(self, order: np.ndarray) -> None:
            self.columns = np.take_along_axis(self.columns, order[..., None, None], axis=1)

    policy = Policy()
    reference = gymnasium.make(env_id, **kwargs).unwrapped
    states, returns, lengths = [], np.zeros((K, B)), np.zeros((K, B), int)
    for k, b in np.ndindex(K, B):
        obs, _ = reference.reset(seed=100 + k * B + b)
        states.append(np.concatenate([[reference.data.time], reference.data.qpos, reference.data.qvel]))
        for t in range(1000):
            obs, reward, terminated, _, _ = reference.step(act(weights[k, b], obs))
            returns[k, b] += reward
            lengths[k, b] = t + 1
            if terminated:
                break
    counted = env.rollout_counted_from_states(policy, np.array(states).reshape(K, B, -1), horizon=1000)
    np.testing.assert_array_equal(counted.returns, returns)
    assert counted.env_steps == lengths.sum()
