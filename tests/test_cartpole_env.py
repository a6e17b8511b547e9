"""Tests for pvnviz.envs.cartpole (through the one rollout loop, pvnviz.envs.rollout), with gymnasium's
CartPole-v1 as the independent reference."""

from __future__ import annotations

import functools
import math

import gymnasium
import numpy as np
import pytest
from scipy import stats

from pvnviz.envs import cartpole, rollout
from pvnviz.envs.cartpole import is_terminal, reset_states, step_physics

SPEC = cartpole.batched_env()


def rollout_returns(policy_fn, *, num_policies, num_episodes, horizon, rng, compact_episodes=True):
    """Returns (K, B) from gymnasium's reset distribution: the app's path (``BatchedEnv.rollout_returns``, which
    drops finished episodes), or the same loop on the full block."""
    if compact_episodes:
        return SPEC.rollout_returns(
            policy_fn, num_policies=num_policies, num_episodes=num_episodes, horizon=horizon, rng=rng
        )
    return rollout.rollout(cartpole.DYNAMICS, policy_fn, reset_states(rng, (num_policies, num_episodes)), horizon)


def rollout_trajectories(policy_fn, initial_states, *, horizon, on_progress=None):
    return rollout.record(cartpole.DYNAMICS, policy_fn, initial_states, horizon, on_progress=on_progress)


def make_gym_env(horizon: int):
    return gymnasium.make("CartPole-v1", max_episode_steps=horizon)


def gym_episode(env, initial_state: np.ndarray, actions) -> tuple[list, list, list, list]:
    """Run gymnasium from a given state with a fixed action sequence until it ends.

    Returns the float32 observations, the float64 internal states, rewards and terminated flags.
    """
    env.reset(seed=0)
    env.unwrapped.state = np.array(initial_state, dtype=np.float64)
    observations, states, rewards, terminations = [], [], [], []
    for action in actions:
        observation, reward, terminated, truncated, _ = env.step(int(action))
        observations.append(observation)
        states.append(np.array(env.unwrapped.state))
        rewards.append(reward)
        terminations.append(terminated)
        if terminated or truncated:
            break
    return observations, states, rewards, terminations


def replay_policy(action_table: np.ndarray):
    """policy_fn that plays action_table[..., t] at step t (and checks what it is given)."""
    step = {"t": 0}

    def policy(observation: np.ndarray) -> np.ndarray:
        assert observation.dtype == np.float32
        assert observation.shape == (*action_table.shape[:2], 4)
        actions = action_table[..., step["t"]]
        step["t"] += 1
        return actions

    return policy


def linear_softmax_policy(weights, rng: np.random.Generator):
    """Two-action softmax policy: P(push right | obs) = sigmoid(obs . weights)."""
    weights = np.asarray(weights, dtype=np.float64)

    def policy(observation: np.ndarray) -> np.ndarray:
        probability_right = 1.0 / (1.0 + np.exp(-(observation.astype(np.float64) @ weights)))
        return (rng.random(np.shape(probability_right)) < probability_right).astype(np.int64)

    return policy


INITIAL_STATES = np.array(
    [
        [0.0, 0.0, 0.0, 0.0],
        [0.01, -0.02, 0.03, -0.04],
        [-0.049, 0.049, -0.049, 0.049],
        [0.5, 1.0, 0.1, -0.5],
        [-2.3, -0.5, 0.0, 0.0],  # close to the left edge of the track
        [0.0, 0.0, 0.2, 0.3],  # pole almost at the 12 degree threshold
        [1.0, -1.0, -0.15, 1.5],
    ]
)


def action_patterns(horizon: int) -> np.ndarray:
    rng = np.random.default_rng(20200207)
    return np.stack(
        [
            rng.integers(0, 2, size=horizon),  # random actions
            rng.integers(0, 2, size=horizon),  # other random actions
            np.zeros(horizon, dtype=np.int64),  # always left: terminates quickly
            np.ones(horizon, dtype=np.int64),  # always right: terminates quickly
            np.arange(horizon) % 2,  # alternating
        ]
    )


@pytest.mark.parametrize("horizon", [1, 150])
def test_trajectories_match_gymnasium_step_by_step(horizon):
    patterns = action_patterns(horizon)  # (K, T)
    num_policies, num_episodes = len(patterns), len(INITIAL_STATES)
    initial = np.broadcast_to(INITIAL_STATES, (num_policies, num_episodes, 4)).copy()
    table = np.broadcast_to(patterns[:, None, :], (num_policies, num_episodes, horizon)).copy()
    ours = rollout_trajectories(replay_policy(table), initial, horizon=horizon)

    assert ours.frames.shape == (num_policies, num_episodes, horizon + 1, 4)
    assert ours.actions.shape == ours.rewards.shape == ours.active.shape == ours.done.shape
    env = make_gym_env(horizon)
    terminated_somewhere = 0
    for k in range(num_policies):
        for b in range(num_episodes):
            observations, states, rewards, terminations = gym_episode(env, initial[k, b], patterns[k])
            length = len(rewards)
            our_states = ours.frames[k, b, 1 : length + 1]
            np.testing.assert_allclose(our_states.astype(np.float32), observations, rtol=0, atol=1e-6)
            np.testing.assert_allclose(our_states, states, rtol=0, atol=1e-10)
            np.testing.assert_array_equal(ours.rewards[k, b, :length], rewards)
            np.testing.assert_array_equal(ours.active[k, b, :length], True)
            np.testing.assert_array_equal(ours.actions[k, b, :length], patterns[k, :length])
            terminated_at = np.flatnonzero(ours.active[k, b] & ours.done[k, b])
            if terminations[-1]:
                terminated_somewhere += 1
                assert list(terminated_at) == [length - 1]
                # After termination: frozen state, no reward, inactive, still done.
                assert not ours.active[k, b, length:].any()
                assert ours.rewards[k, b, length:].sum() == 0.0
                assert ours.done[k, b, length - 1 :].all()
                frozen = ours.frames[k, b, length:]
                np.testing.assert_array_equal(frozen, np.broadcast_to(frozen[0], frozen.shape))
            else:
                assert length == horizon and terminated_at.size == 0
            assert ours.returns[k, b] == sum(rewards)
    env.close()
    if horizon > 100:
        assert terminated_somewhere >= num_policies * num_episodes // 2  # the test really covers termination


def test_step_physics_matches_gymnasium_single_steps():
    rng = np.random.default_rng(7)
    states = rng.uniform(-1.0, 1.0, size=(40, 4)) * [2.0, 2.0, 0.2, 2.0]
    actions = rng.integers(0, 2, size=40)
    states_before = states.copy()
    ours = step_physics(states, actions)
    np.testing.assert_array_equal(states, states_before)  # pure function
    env = gymnasium.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    for state, action, our_next in zip(states, actions, ours, strict=True):
        env.state = state.copy()
        _, _, terminated, _, _ = env.step(int(action))
        np.testing.assert_allclose(our_next, env.state, rtol=0, atol=1e-12)
        assert bool(is_terminal(our_next)) == terminated
        env.steps_beyond_terminated = None
    # Broadcasting over extra leading axes gives the same numbers.
    np.testing.assert_array_equal(step_physics(states.reshape(4, 10, 4), actions.reshape(4, 10)).reshape(40, 4), ours)


def test_constants_and_thresholds_match_gymnasium():
    env = gymnasium.make("CartPole-v1").unwrapped
    assert cartpole.GRAVITY == env.gravity
    assert cartpole.CART_MASS == env.masscart
    assert cartpole.POLE_MASS == env.masspole
    assert cartpole.TOTAL_MASS == env.total_mass
    assert cartpole.POLE_HALF_LENGTH == env.length
    assert cartpole.POLE_MASS_LENGTH == env.polemass_length
    assert cartpole.FORCE_MAGNITUDE == env.force_mag
    assert cartpole.TIME_STEP == env.tau
    assert env.kinematics_integrator == "euler"
    assert cartpole.X_THRESHOLD == env.x_threshold
    assert cartpole.THETA_THRESHOLD_RADIANS == env.theta_threshold_radians == 12 * 2 * math.pi / 360
    edge = cartpole.THETA_THRESHOLD_RADIANS
    assert not is_terminal(np.array([2.4, 0.0, edge, 0.0]))  # strict inequalities, as gymnasium
    assert is_terminal(np.array([np.nextafter(2.4, 3.0), 0.0, 0.0, 0.0]))
    assert is_terminal(np.array([0.0, 0.0, -np.nextafter(edge, 1.0), 0.0]))


def test_reset_states_are_uniform_in_gymnasium_range():
    states = reset_states(np.random.default_rng(12345), (50, 60))
    assert states.shape == (50, 60, 4) and states.dtype == np.float64
    assert states.min() >= -0.05 and states.max() <= 0.05
    for variable in range(4):
        samples = states[..., variable].ravel()
        p_value = stats.kstest(samples, "uniform", args=(-0.05, 0.1)).pvalue
        assert p_value > 0.01, f"state variable {variable} is not uniform on [-0.05, 0.05] (p={p_value:.2g})"
    # A narrower or shifted distribution must be rejected by the same test.
    assert stats.kstest(states[..., 0].ravel() * 0.9, "uniform", args=(-0.05, 0.1)).pvalue < 0.01


def test_reset_states_equal_gymnasium_resets_with_same_seed():
    # gymnasium seeds a PCG64 Generator and draws uniform(-0.05, 0.05, size=4) per reset.
    env = gymnasium.make("CartPole-v1")
    gym_states = [env.reset(seed=99)[0]] + [env.reset()[0] for _ in range(9)]
    ours = reset_states(np.random.default_rng(99), (10,))
    np.testing.assert_array_equal(ours.astype(np.float32), gym_states)


@functools.cache
def gym_returns(weights: tuple, num_episodes: int, horizon: int, seed: int) -> np.ndarray:
    env = make_gym_env(horizon)
    policy = linear_softmax_policy(weights, np.random.default_rng(seed + 1))
    returns = np.zeros(num_episodes)
    observation, _ = env.reset(seed=seed)
    for episode in range(num_episodes):
        if episode:
            observation, _ = env.reset()
        while True:
            action = int(policy(observation))
            observation, reward, terminated, truncated, _ = env.step(action)
            returns[episode] += reward
            if terminated or truncated:
                break
    env.close()
    return returns


@pytest.mark.parametrize("compact", [False, True], ids=["full block", "compacted"])
@pytest.mark.parametrize(
    "name, weights",
    [
        ("uniform random", (0.0, 0.0, 0.0, 0.0)),
        ("mediocre linear", (0.0, 0.0, 2.0, 0.5)),
        ("good linear", (0.0, 0.0, 5.0, 1.0)),
    ],
)
def test_return_distribution_matches_gymnasium(name, weights, compact):
    num_episodes, horizon = 400, 100
    reference = gym_returns(weights, num_episodes, horizon, seed=2024)
    # Different seeds than gymnasium: the two samples are independent.
    policy = linear_softmax_policy(weights, np.random.default_rng(77))
    # 4 policies x 100 episodes (all the same policy) exercises the batch layout.
    ours = rollout_returns(
        policy,
        num_policies=4,
        num_episodes=num_episodes // 4,
        horizon=horizon,
        rng=np.random.default_rng(78),
        compact_episodes=compact,
    )
    ours = ours.ravel()
    assert ours.min() >= 1 and ours.max() <= horizon
    p_value = stats.ks_2samp(ours, reference).pvalue
    assert p_value > 0.01, f"{name}: return distributions differ (KS p={p_value:.3g})"
    standard_error = math.sqrt(ours.var() / len(ours) + reference.var() / len(reference))
    assert abs(ours.mean() - reference.mean()) < 4 * standard_error + 0.5, (
        f"{name}: mean return {ours.mean():.2f} vs gymnasium {reference.mean():.2f}"
    )


def test_return_distribution_test_has_power():
    # Sanity check of the statistical test itself: a different policy is detected.
    random_policy = gym_returns((0.0, 0.0, 0.0, 0.0), 300, 100, seed=5)
    policy = linear_softmax_policy([0.0, 0.0, 2.0, 0.5], np.random.default_rng(1))
    mediocre = rollout_returns(policy, num_policies=1, num_episodes=300, horizon=100, rng=np.random.default_rng(2))
    assert stats.ks_2samp(mediocre.ravel(), random_policy).pvalue < 0.01


def test_same_seed_gives_identical_returns():
    def run(seed: int) -> np.ndarray:
        policy = linear_softmax_policy([0.0, 0.0, 2.0, 0.5], np.random.default_rng(seed))
        return rollout_returns(
            policy, num_policies=6, num_episodes=20, horizon=100, rng=np.random.default_rng(seed + 1)
        )

    first, second = run(3), run(3)
    assert first.shape == (6, 20) and first.dtype == np.float64
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, run(4))


@pytest.mark.parametrize(
    "num_policies, num_episodes, horizon, message",
    [
        (3, 4, 0, "horizon"),
        (3, 4, -5, "horizon"),
        (0, 4, 100, "num_policies"),
        (3, 0, 100, "num_episodes"),
    ],
)
def test_invalid_arguments_raise_clear_errors(num_policies, num_episodes, horizon, message):
    def policy(observation):
        return np.zeros(observation.shape[:-1], dtype=np.int64)

    with pytest.raises(ValueError, match=f"{message} must be at least"):
        rollout_returns(
            policy, num_policies=num_policies, num_episodes=num_episodes, horizon=horizon, rng=np.random.default_rng(0)
        )


def test_bad_policy_output_and_initial_states_raise():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="integer actions of shape"):
        rollout_returns(lambda obs: np.full(obs.shape[:-1], 0.7), num_policies=2, num_episodes=3, horizon=10, rng=rng)
    with pytest.raises(ValueError, match="integer actions of shape"):
        rollout_returns(lambda obs: np.zeros(3, dtype=np.int64), num_policies=2, num_episodes=3, horizon=10, rng=rng)
    with pytest.raises(ValueError, match="initial_states must have shape"):
        rollout_trajectories(lambda obs: np.zeros(obs.shape[:-1], dtype=np.int64), np.zeros((3, 4)), horizon=10)
    with pytest.raises(ValueError, match="horizon must be at least"):
        rollout_trajectories(lambda obs: np.zeros(obs.shape[:-1], dtype=np.int64), np.zeros((1, 3, 4)), horizon=0)


def test_always_left_terminates_early_like_gymnasium():
    horizon = 100
    initial = reset_states(np.random.default_rng(31), (2, 15))
    calls = []

    def always_left(observation):
        calls.append(observation.shape)
        return np.zeros(observation.shape[:-1], dtype=np.int64)

    progress = []
    ours = rollout_trajectories(always_left, initial, horizon=horizon, on_progress=lambda *args: progress.append(args))
    returns = ours.returns
    assert returns.max() < 20  # every episode ends well before the horizon
    assert len(calls) == returns.max()  # the loop stopped as soon as all episodes were done
    assert progress[-1][:2] == (horizon, horizon)
    assert all(0 < done <= total == horizon for done, total, _ in progress)

    env = make_gym_env(horizon)
    for k in range(2):
        for b in range(15):
            _, _, rewards, terminations = gym_episode(env, initial[k, b], np.zeros(horizon, dtype=np.int64))
            assert terminations[-1]
            assert returns[k, b] == len(rewards) == sum(rewards)
    env.close()

    # rollout_returns gives the same returns from the same reset draws.
    same = rollout_returns(always_left, num_policies=2, num_episodes=15, horizon=horizon, rng=np.random.default_rng(31))
    np.testing.assert_array_equal(same, returns)


def test_compacted_rollouts_give_the_same_returns_per_policy():
    """Deterministic per-row policies: dropping finished episodes must not change any return."""
    num_episodes, horizon = 40, 100
    # Random linear bang-bang controllers: mean returns from about 9 to 97; the one
    # perfect controller of this draw (row 5) is left out, else no column could be dropped.
    weights = np.delete(np.random.default_rng(1).normal(size=(12, 4)), 5, axis=0)
    num_policies = len(weights)
    widths = []

    def deterministic_policy(observation: np.ndarray) -> np.ndarray:
        widths.append(observation.shape[1])
        assert observation.shape[0] == num_policies and observation.dtype == np.float32
        return (np.einsum("kbi,ki->kb", observation.astype(np.float64), weights) > 0).astype(np.int64)

    full = rollout_returns(
        deterministic_policy,
        num_policies=num_policies,
        num_episodes=num_episodes,
        horizon=horizon,
        rng=np.random.default_rng(9),
        compact_episodes=False,
    )
    assert set(widths) == {num_episodes}
    widths.clear()
    compact = rollout_returns(
        deterministic_policy,
        num_policies=num_policies,
        num_episodes=num_episodes,
        horizon=horizon,
        rng=np.random.default_rng(9),
        compact_episodes=True,
    )
    assert min(widths) < num_episodes  # the block really shrank
    assert widths == sorted(widths, reverse=True)
    np.testing.assert_array_equal(compact, full)
    assert len(np.unique(full.mean(axis=1))) > 3  # the rows really differ
