"""Tests of pvnviz.envs.swimmer (through the one rollout loop, pvnviz.envs.rollout): parity with gymnasium's
Swimmer-v5, resets, determinism, validation."""

from __future__ import annotations

import numpy as np
import pytest

from gym_reference import swimmer as make_gymnasium_swimmer
from pvnviz.bench import swimmer as bench_swimmer
from pvnviz.bench.swimmer import RandomMLPPolicies
from pvnviz.core.progress import Stage
from pvnviz.envs import rollout, swimmer
from pvnviz.envs.replay import body_frames

SPEC = swimmer.batched_env()


def rollout_trajectories(policy_fn, initial_states, *, horizon):
    return rollout.record(swimmer.DYNAMICS, policy_fn, initial_states, horizon)

TOLERANCE = 1e-6
HORIZON = 1000


def linear_policy_weights(seed: int, scale: float = 3.0) -> np.ndarray:
    """A fixed random linear policy (2, 8); with scale 3 the rotors hit their joint limits often."""
    return np.random.default_rng(1000 + seed).normal(size=(swimmer.ACTION_SIZE, swimmer.OBSERVATION_SIZE)) * scale


def act(weights: np.ndarray, observation: np.ndarray) -> np.ndarray:
    """tanh(W @ obs), computed the same way for gymnasium and for our batched policy."""
    return np.tanh(weights @ observation)


def batched_policy(weights: np.ndarray):
    """Policy over (K, B, 8) observations, episode (k, b) using weights[k, b], with act()'s exact arithmetic."""

    def policy(observations: np.ndarray) -> np.ndarray:
        actions = np.empty((*observations.shape[:-1], swimmer.ACTION_SIZE))
        for index in np.ndindex(*observations.shape[:-1]):
            actions[index] = act(weights[index], observations[index])
        return actions

    return policy


def gymnasium_episode(weights: np.ndarray, seed: int, horizon: int = HORIZON) -> dict:
    """One gymnasium Swimmer-v5 episode under the linear policy; records everything."""
    env = make_gymnasium_swimmer()
    observation, _ = env.reset(seed=seed)
    data = env.unwrapped.data
    state = np.concatenate([[data.time], data.qpos, data.qvel])
    observations, rewards, limit_steps, total = [observation], [], 0, 0.0
    for _ in range(horizon):
        observation, reward, terminated, truncated, _ = env.step(act(weights, observation))
        observations.append(observation)
        rewards.append(reward)
        total += reward
        limit_steps += int(data.nefc > 0)  # a joint limit constraint is active
        assert not terminated
    assert truncated == (horizon == HORIZON)  # gymnasium's TimeLimit ends the episode at 1000 steps
    env.close()
    return {
        "state": state,
        "observations": np.array(observations),
        "rewards": np.array(rewards),
        "return": total,
        "limit_steps": limit_steps,
    }


def test_single_episode_matches_gymnasium_over_1000_steps():
    weights = linear_policy_weights(3)
    reference = gymnasium_episode(weights, seed=3)  # the rollout engine drifts on this one
    assert reference["limit_steps"] > 100  # the warm-started constraint solver is exercised
    initial = reference["state"].reshape(1, 1, swimmer.STATE_SIZE)
    trajectories = rollout_trajectories(batched_policy(weights[None, None]), initial, horizon=HORIZON)
    np.testing.assert_allclose(trajectories.observations[0, 0], reference["observations"], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(trajectories.rewards[0, 0], reference["rewards"], rtol=0, atol=TOLERANCE)
    assert abs(trajectories.returns[0, 0] - reference["return"]) < TOLERANCE


def test_batch_of_policies_and_episodes_matches_gymnasium():
    num_policies, num_episodes = 3, 2
    weights = np.stack([np.stack([linear_policy_weights(k)] * num_episodes) for k in range(num_policies)])
    seeds = np.arange(num_policies * num_episodes).reshape(num_policies, num_episodes) + 2
    references = [[gymnasium_episode(weights[k, b], int(seeds[k, b])) for b in range(num_episodes)] for k in range(3)]
    initial = np.array([[reference["state"] for reference in row] for row in references])
    trajectories = rollout_trajectories(batched_policy(weights), initial, horizon=HORIZON)
    returns = SPEC.rollout_returns_from_states(batched_policy(weights), initial, horizon=HORIZON)
    for k in range(num_policies):
        for b in range(num_episodes):
            reference = references[k][b]
            np.testing.assert_allclose(trajectories.observations[k, b], reference["observations"], atol=TOLERANCE)
            np.testing.assert_allclose(trajectories.rewards[k, b], reference["rewards"], rtol=0, atol=TOLERANCE)
            assert abs(trajectories.returns[k, b] - reference["return"]) < TOLERANCE
            assert abs(returns[k, b] - reference["return"]) < TOLERANCE
    assert sum(reference["limit_steps"] for row in references for reference in row) > 1000


def test_rollout_engine_is_exact_only_without_joint_limits():
    """mujoco.rollout restarts the solver warm start each call: exact until a joint limit is hit."""
    weights = linear_policy_weights(1, scale=0.3)
    reference = gymnasium_episode(weights, seed=3, horizon=300)
    assert reference["limit_steps"] == 0
    initial = reference["state"].reshape(1, 1, swimmer.STATE_SIZE)
    _, records = bench_swimmer.simulate(
        batched_policy(weights[None, None]), initial, 300, engine="rollout", record=True
    )
    np.testing.assert_allclose(records.rewards[0, 0], reference["rewards"], rtol=0, atol=TOLERANCE)


def test_rollout_engine_drifts_once_joint_limits_are_hit():
    """Why "batch" is the default: with limits active the cold-started solver changes the episode."""
    weights = linear_policy_weights(3)
    reference = gymnasium_episode(weights, seed=3)
    initial = reference["state"].reshape(1, 1, swimmer.STATE_SIZE)
    _, records = bench_swimmer.simulate(
        batched_policy(weights[None, None]), initial, HORIZON, engine="rollout", record=True
    )
    assert np.abs(records.observations[0, 0] - reference["observations"]).max() > TOLERANCE, (
        "mujoco.rollout now matches gymnasium with joint limits active: the rollout engine may be exact now"
    )


def test_reset_states_draw_exactly_like_gymnasium():
    env = make_gymnasium_swimmer()
    env.reset(seed=123)
    data = env.unwrapped.data
    gym_states = [np.concatenate([[data.time], data.qpos, data.qvel])]
    for _ in range(3):  # later resets continue the same generator
        env.reset()
        gym_states.append(np.concatenate([[data.time], data.qpos, data.qvel]))
    ours = swimmer.reset_states(np.random.default_rng(123), (4,))
    np.testing.assert_array_equal(ours, np.array(gym_states))
    np.testing.assert_array_equal(swimmer.observations_from_states(ours[-1]), env.unwrapped._get_obs())


def test_reset_states_lie_within_noise_bounds():
    states = swimmer.reset_states(np.random.default_rng(0), (50, 20))
    assert states.shape == (50, 20, swimmer.STATE_SIZE)
    model = swimmer.load_model()
    qpos, qvel = states[..., swimmer.QPOS_SLICE], states[..., swimmer.QVEL_SLICE]
    assert np.all(np.abs(qpos - model.qpos0) <= swimmer.RESET_NOISE_SCALE)
    assert np.all(np.abs(qvel) <= swimmer.RESET_NOISE_SCALE)
    assert np.all(states[..., 0] == 0.0)
    assert qpos.std() > 0.05 and qvel.std() > 0.05  # uniform on [-0.1, 0.1]: std 0.0577


def test_returns_are_deterministic_and_match_trajectories():
    policies = RandomMLPPolicies.init(np.random.default_rng(7), 4)
    first = SPEC.rollout_returns(
        policies, num_policies=4, num_episodes=3, horizon=200, rng=np.random.default_rng(11)
    )
    second = SPEC.rollout_returns(
        policies, num_policies=4, num_episodes=3, horizon=200, rng=np.random.default_rng(11), nthread=1
    )
    np.testing.assert_array_equal(first, second)
    initial = swimmer.reset_states(np.random.default_rng(11), (4, 3))
    trajectories = rollout_trajectories(policies, initial, horizon=200)
    np.testing.assert_array_equal(trajectories.returns, first)
    np.testing.assert_allclose(trajectories.rewards.sum(axis=-1), first, rtol=0, atol=1e-9)


def test_trajectory_record_shapes_and_bodies():
    policies = RandomMLPPolicies.init(np.random.default_rng(3), 2)
    initial = swimmer.reset_states(np.random.default_rng(4), (2, 1))
    horizon = 20
    trajectories = rollout_trajectories(policies, initial, horizon=horizon)
    qpos = trajectories.frames  # the swimmer's frames are its joint positions
    bodies, segments = body_frames(qpos, swimmer.load_model(), swimmer.BODY_NAMES)
    assert trajectories.observations.shape == (2, 1, horizon + 1, 8)
    assert qpos.shape == (2, 1, horizon + 1, 5)
    assert trajectories.actions.shape == (2, 1, horizon, 2)
    assert trajectories.rewards.shape == (2, 1, horizon)
    assert bodies.shape == (2, 1, horizon + 1, 3, 3)
    assert segments.shape == (2, 1, horizon + 1, 3, 2, 3)
    np.testing.assert_array_equal(qpos[:, :, 0], initial[..., swimmer.QPOS_SLICE])
    np.testing.assert_allclose(trajectories.observations[..., :3], qpos[..., 2:])
    # the torso's frame origin is the slider position (qpos[0], qpos[1])
    np.testing.assert_allclose(bodies[..., 0, :2], qpos[..., :2], atol=1e-12)
    lengths = np.linalg.norm(np.diff(segments, axis=-2)[..., 0, :], axis=-1)
    np.testing.assert_allclose(lengths, 1.0)  # each capsule is 1 unit long
    # consecutive links meet: back end of one capsule = front end of the next
    ends = segments
    np.testing.assert_allclose(ends[..., :-1, 1, :], ends[..., 1:, 0, :], atol=1e-9)


def test_on_progress_reports_until_done():
    calls = []
    policies = RandomMLPPolicies.init(np.random.default_rng(0), 1)
    SPEC.rollout_returns(
        policies,
        num_policies=1,
        num_episodes=2,
        horizon=30,
        rng=np.random.default_rng(0),
        on_progress=lambda *a: calls.append(a),
    )
    assert calls and calls[-1][:2] == (30, 30)
    assert all(report.stage is Stage.ROLLOUTS and report.detail.startswith("Swimmer") for _, _, report in calls)


def test_invalid_arguments_raise_value_error():
    policies = RandomMLPPolicies.init(np.random.default_rng(0), 2)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="horizon"):
        SPEC.rollout_returns(policies, num_policies=2, num_episodes=1, horizon=0, rng=rng)
    with pytest.raises(ValueError, match="num_policies"):
        SPEC.rollout_returns(policies, num_policies=0, num_episodes=1, horizon=10, rng=rng)
    with pytest.raises(ValueError, match="num_episodes"):
        SPEC.rollout_returns(policies, num_policies=2, num_episodes=0, horizon=10, rng=rng)
    with pytest.raises(ValueError, match="engine"):
        bench_swimmer.simulate(policies, swimmer.reset_states(rng, (2, 1)), 10, engine="python")
    with pytest.raises(ValueError, match="shape"):
        SPEC.rollout_returns(
            lambda obs: np.zeros(obs.shape[:-1]), num_policies=2, num_episodes=1, horizon=10, rng=rng
        )
    with pytest.raises(ValueError, match="non-finite"):
        SPEC.rollout_returns(
            lambda obs: np.full((*obs.shape[:-1], 2), np.nan), num_policies=2, num_episodes=1, horizon=10, rng=rng
        )
    with pytest.raises(ValueError, match="initial_states"):
        rollout_trajectories(policies, np.zeros((2, 1, 10)), horizon=10)


def test_model_is_gymnasiums_with_collision_detection_off():
    import mujoco

    raw = mujoco.MjModel.from_xml_path(str(swimmer.model_path()))
    assert not swimmer.can_collide(raw)  # so skipping collision detection changes nothing
    model = swimmer.load_model()
    assert model.opt.disableflags == raw.opt.disableflags | int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    assert model.opt.integrator == raw.opt.integrator == int(mujoco.mjtIntegrator.mjINT_RK4)
    assert swimmer.env_dt() == raw.opt.timestep * swimmer.FRAME_SKIP == 0.04
