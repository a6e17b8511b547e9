"""Tests of pvnviz.envs.rollout, the one time loop over every environment's step function, against plain
per-episode Python loops over a small hand-made environment (and CartPole's and the Swimmer's own tests)."""

from __future__ import annotations

import numpy as np
import pytest

from pvnviz.core.progress import Stage
from pvnviz.envs import cartpole, rollout
from pvnviz.envs.rollout import State


class Countdown:
    """Each episode starts with n steps to go (its state); a step earns 1 + action and counts down to 0."""

    name, state_size, discrete, action_shape = "Countdown", 1, True, ()

    def __init__(self):
        self.closed = 0

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        shape = initial_states.shape[:-1]
        left = initial_states[..., 0].copy()
        return State(left, left[..., None].copy(), np.zeros(shape), left <= 0)

    def step(self, state: State, actions: np.ndarray) -> State:
        running = ~state.done
        state.reward[:] = np.where(running, 1.0 + actions, 0.0)
        state.physics[running] -= 1
        state.done |= state.physics <= 0
        state.obs[..., 0] = state.physics
        return state

    def frame(self, state: State) -> np.ndarray:
        return state.physics[..., None].copy()

    def select(self, left: np.ndarray, order: np.ndarray) -> np.ndarray:
        return np.take_along_axis(left, order, axis=1)

    def close(self, state: State) -> None:
        self.closed += 1


def reference_episode(steps: int, policy, horizon: int) -> tuple[float, list[int]]:
    """One episode, one step at a time, as a plain loop: its return and its actions."""
    total, actions, left = 0.0, [], steps
    for _ in range(horizon):
        if left <= 0:
            break
        action = policy(left)
        actions.append(action)
        total += 1 + action
        left -= 1
    return total, actions


def parity_policy(obs: np.ndarray) -> np.ndarray:
    """Action 1 when the steps left are odd: depends only on each episode's own observation."""
    return (obs[..., 0].astype(np.int64) % 2).astype(np.int64)


STEPS = np.array([[[3], [0], [7], [1]], [[5], [5], [2], [9]]], dtype=np.float64)  # (K=2, B=4, 1)


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("horizon", [1, 4, 20])
def test_returns_equal_plain_loops(horizon, compact):
    env = Countdown()
    ours = rollout.rollout(env, parity_policy, STEPS, horizon, compact=compact)
    expected = [[reference_episode(int(n), lambda left: int(left) % 2, horizon)[0] for n in row[:, 0]] for row in STEPS]
    np.testing.assert_array_equal(ours, expected)
    assert env.closed == 1


def test_compaction_shrinks_the_block_and_tells_the_policy():
    steps = np.array([[[1], [1], [1], [1], [6], [1], [1], [1]], [[2], [1], [1], [1], [1], [1], [1], [8]]], float)
    widths, orders = [], []

    def policy(obs):
        widths.append(obs.shape[1])
        return parity_policy(obs)

    policy.compact = orders.append
    returns = rollout.rollout(Countdown(), policy, steps, 10, compact=True)
    assert widths[0] == 8 and min(widths) == 1  # one column per policy once the others ended
    # after step 1: policy 0 runs only episode 4, policy 1 episodes 0 and 7; running columns first, then the rest
    np.testing.assert_array_equal(orders[0], [[4, 0], [0, 7]])
    np.testing.assert_array_equal(orders[1], [[0], [1]])  # after step 2: one column each, of the cut block
    expected = [[reference_episode(int(n), lambda left: int(left) % 2, 10)[0] for n in row[:, 0]] for row in steps]
    np.testing.assert_array_equal(returns, expected)


def test_record_keeps_every_step_and_marks_the_ended_ones():
    horizon = 8
    traj = rollout.record(Countdown(), parity_policy, STEPS, horizon)
    for k in range(2):
        for b in range(4):
            n = int(STEPS[k, b, 0])
            total, actions = reference_episode(n, lambda left: int(left) % 2, horizon)
            taken = len(actions)
            assert traj.returns[k, b] == total
            np.testing.assert_array_equal(traj.actions[k, b, :taken], actions)
            assert (traj.actions[k, b, taken:] == -1).all()  # no action after the end
            assert traj.active[k, b].sum() == taken and traj.active[k, b, :taken].all()
            np.testing.assert_array_equal(traj.rewards[k, b, :taken], 1 + np.array(actions))
            assert traj.rewards[k, b, taken:].sum() == 0
            np.testing.assert_array_equal(traj.done[k, b], np.arange(horizon) >= n - 1 if n else True)
            expected_frames = np.maximum(n - np.arange(horizon + 1), 0)
            np.testing.assert_array_equal(traj.frames[k, b, :, 0], expected_frames)  # frozen after the end, too
            np.testing.assert_array_equal(traj.observations[k, b, :, 0], expected_frames)


def test_the_loop_stops_once_every_episode_ended_and_says_so():
    calls, reports = [], []

    def policy(obs):
        calls.append(1)
        return parity_policy(obs)

    rollout.rollout(Countdown(), policy, STEPS, 100, on_progress=lambda *a: reports.append(a))
    assert len(calls) == 9  # the longest episode: 9 steps
    assert reports[-1][:2] == (100, 100) and "ended by step 9" in reports[-1][2].detail
    assert {report.stage for _, _, report in reports} == {Stage.ROLLOUTS}
    assert all(done <= total == 100 for done, total, _ in reports)


class Torque(Countdown):
    """The same countdown with a continuous action of two numbers; reward: their sum."""

    name, discrete, action_shape = "Torque", False, (2,)

    def step(self, state: State, actions: np.ndarray) -> State:
        state = super().step(state, np.zeros(state.done.shape, dtype=np.int64))
        state.reward += np.where(state.reward > 0, actions.sum(-1), 0.0)
        return state


def test_actions_are_checked_against_the_action_space():
    with pytest.raises(ValueError, match=r"integer actions of shape \(2, 4\)"):
        rollout.rollout(Countdown(), lambda obs: np.zeros((2, 4)), STEPS, 5)
    with pytest.raises(ValueError, match=r"real actions of shape \(2, 4, 2\)"):
        rollout.rollout(Torque(), lambda obs: np.zeros((2, 4)), STEPS, 5)
    with pytest.raises(ValueError, match="non-finite"):
        rollout.rollout(Torque(), lambda obs: np.full((2, 4, 2), np.inf), STEPS, 5)
    with pytest.raises(ValueError, match="initial_states must have shape"):
        rollout.rollout(Countdown(), parity_policy, STEPS[..., 0], 5)
    with pytest.raises(ValueError, match="horizon must be at least 1"):
        rollout.rollout(Countdown(), parity_policy, STEPS, 0)
    env = Torque()
    with pytest.raises(ValueError):
        rollout.rollout(env, lambda obs: np.full((2, 4, 2), np.nan), STEPS, 5)
    assert env.closed == 1  # the physics is released after an error too
    returns = rollout.rollout(Torque(), lambda obs: np.full((*obs.shape[:-1], 2), 0.25), STEPS, 20)
    np.testing.assert_array_equal(returns, STEPS[..., 0] * 1.5)


def test_cartpole_is_a_step_function_over_the_batch():
    """One ``CartPole.step`` equals gymnasium's formula (``step_physics``) on every running episode."""
    states = cartpole.reset_states(np.random.default_rng(0), (3, 5))
    states[0, 0, 2] = 0.25  # beyond the angle bound: ends at its first step
    actions = np.random.default_rng(1).integers(0, 2, size=(3, 5))
    state = cartpole.DYNAMICS.reset(states)
    state = cartpole.DYNAMICS.step(state, actions)
    np.testing.assert_array_equal(cartpole.DYNAMICS.frame(state), cartpole.step_physics(states, actions))
    np.testing.assert_array_equal(state.obs, cartpole.step_physics(states, actions).astype(np.float32))
    assert state.done[0, 0] and state.done.sum() == 1 and (state.reward == 1).all()
    frozen = cartpole.DYNAMICS.frame(state)[0, 0].copy()
    state = cartpole.DYNAMICS.step(state, actions)
    np.testing.assert_array_equal(cartpole.DYNAMICS.frame(state)[0, 0], frozen)
    assert state.reward[0, 0] == 0 and state.reward.sum() == 14
