"""Batched, vectorised CartPole: the environment of Section 6.2 of the paper.

"Policy Evaluation Networks" (Harb et al., 2020), Section 6.2, trains a
Policy Evaluation Network on CartPole: it needs the returns of many small
policies, each run for many episodes. This module simulates all of them at once
with numpy array operations; the only Python loop is the one over time steps.

The physics is exactly gymnasium's ``CartPole-v1`` (source:
``gymnasium/envs/classic_control/cartpole.py`` in gymnasium 1.4.0), with its
defaults:

* Constants: gravity 9.8, cart mass 1.0, pole mass 0.1, pole half-length 0.5,
  force magnitude 10.0, time step 0.02 s.
* "euler" kinematics integrator (positions are updated with the *old*
  velocities), same operation order, so results agree to the last bits.
* Reset: all four state variables uniform in [-0.05, 0.05), float64.
* Termination: ``|x| > 2.4`` or ``|theta| > 12 * 2 * pi / 360`` radians,
  checked on the float64 state after the step.
* Reward: 1.0 on every step, including the terminating one (not the
  Sutton-Barto reward).
* The state is kept in float64; the policy sees it cast to float32, which is
  what gymnasium returns as the observation.

Array layouts (K policies, B episodes per policy, T = horizon):

* state: ``(..., 4)`` float64, last axis = (cart position, cart velocity,
  pole angle, pole angular velocity); batched rollouts use ``(K, B, 4)``.
* action: ``(...)`` integer, 0 = push left, 1 = push right.
* policy observation: ``(K, B, 4)`` float32; the policy returns ``(K, B)``
  integer actions (it does its own sampling).
* returns: ``(K, B)`` float64 undiscounted returns.
* trajectories: states ``(K, B, T + 1, 4)``, actions / rewards / masks
  ``(K, B, T)``.

An episode that terminates keeps its final state frozen and earns no more
reward; an episode that never terminates is truncated after ``horizon`` steps.
By default the policy is called on the full (K, B) block every step (finished
episodes masked); ``rollout_returns(..., compact_episodes=True)`` instead drops
finished episodes per policy, so the policy sees (K, W, 4) with W <= B.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from pvnviz.core.progress import Report, Stage
from pvnviz.envs import replay
from pvnviz.envs.spec import EnvSpec, check_rollout_counts

# Physics constants, named as in gymnasium's CartPoleEnv.__init__.
GRAVITY = 9.8
CART_MASS = 1.0
POLE_MASS = 0.1
TOTAL_MASS = POLE_MASS + CART_MASS
POLE_HALF_LENGTH = 0.5  # gymnasium's "length" is half the pole's length
POLE_MASS_LENGTH = POLE_MASS * POLE_HALF_LENGTH
FORCE_MAGNITUDE = 10.0
TIME_STEP = 0.02  # seconds between state updates ("tau")

# Termination thresholds, computed exactly as gymnasium does.
THETA_THRESHOLD_RADIANS = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4

# Reset distribution bounds (uniform on each of the 4 state variables).
RESET_LOW = -0.05
RESET_HIGH = 0.05

STATE_SIZE = 4
# rollout_returns(compact_episodes=True) shrinks the block once every policy has
# at most this fraction of the block's columns still running.
COMPACTION_THRESHOLD = 0.75
ACTION_LEFT = 0
ACTION_RIGHT = 1

PolicyFunction = Callable[[np.ndarray], np.ndarray]
ProgressCallback = Callable[[int, int, Report], None]


class Trajectories(NamedTuple):
    """Full record of a batched rollout (K policies x B episodes x T steps).

    ``active[..., t]`` is True when step ``t`` was really taken (the episode
    had not terminated before it); ``done[..., t]`` is True when the episode
    has terminated at step ``t`` or earlier. The terminating step is therefore
    ``active & done``. Inactive steps have action -1 and reward 0, and their
    states repeat the frozen final state.
    """

    states: np.ndarray  # (K, B, T + 1, 4) float64
    actions: np.ndarray  # (K, B, T) int8, -1 where inactive
    rewards: np.ndarray  # (K, B, T) float64
    active: np.ndarray  # (K, B, T) bool
    done: np.ndarray  # (K, B, T) bool
    returns: np.ndarray  # (K, B) float64, rewards summed over time


def _accelerations(
    pole_angle: np.ndarray, pole_angular_velocity: np.ndarray, force: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Cart and pole accelerations; same operation order as gymnasium, so float64 results are identical."""
    cos_angle = np.cos(pole_angle)
    sin_angle = np.sin(pole_angle)
    temp = (force + POLE_MASS_LENGTH * np.square(pole_angular_velocity) * sin_angle) / TOTAL_MASS
    angular_acceleration = (GRAVITY * sin_angle - cos_angle * temp) / (
        POLE_HALF_LENGTH * (4.0 / 3.0 - POLE_MASS * np.square(cos_angle) / TOTAL_MASS)
    )
    cart_acceleration = temp - POLE_MASS_LENGTH * angular_acceleration * cos_angle / TOTAL_MASS
    return cart_acceleration, angular_acceleration


def _force(action: np.ndarray) -> np.ndarray:
    """+10 N for action 1 (push right), -10 N otherwise, as gymnasium does."""
    return (np.asarray(action) == ACTION_RIGHT) * (2.0 * FORCE_MAGNITUDE) - FORCE_MAGNITUDE


def _euler_step(
    cart_position: np.ndarray,
    cart_velocity: np.ndarray,
    pole_angle: np.ndarray,
    pole_angular_velocity: np.ndarray,
    force: np.ndarray,
    where: np.ndarray | bool = True,
) -> None:
    """gymnasium's "euler" integrator, the only copy of CartPole's update: in place, only ``where`` it is True.

    Accelerations come from the old state; positions advance with the old velocities, then the velocities.
    """
    cart_acceleration, angular_acceleration = _accelerations(pole_angle, pole_angular_velocity, force)
    np.add(cart_position, TIME_STEP * cart_velocity, out=cart_position, where=where)
    np.add(pole_angle, TIME_STEP * pole_angular_velocity, out=pole_angle, where=where)
    np.add(cart_velocity, TIME_STEP * cart_acceleration, out=cart_velocity, where=where)
    np.add(pole_angular_velocity, TIME_STEP * angular_acceleration, out=pole_angular_velocity, where=where)


def step_physics(state: np.ndarray, action: np.ndarray) -> np.ndarray:
    """Return the next state after one Euler step, exactly gymnasium's formula.

    ``state`` has shape (..., 4) float64 and ``action`` shape (...) with values
    in {0, 1} (1 pushes right, anything else pushes left, as in gymnasium).
    The input is not modified.
    """
    variables = np.array(np.moveaxis(np.asarray(state, dtype=np.float64), -1, 0), order="C", copy=True)
    _euler_step(*variables, _force(action))
    return np.moveaxis(variables, 0, -1)


def _is_terminal(cart_position: np.ndarray, pole_angle: np.ndarray) -> np.ndarray:
    return (
        (cart_position < -X_THRESHOLD)
        | (cart_position > X_THRESHOLD)
        | (pole_angle < -THETA_THRESHOLD_RADIANS)
        | (pole_angle > THETA_THRESHOLD_RADIANS)
    )


def is_terminal(state: np.ndarray) -> np.ndarray:
    """Boolean array (...): True where the cart left the track or the pole fell (state (..., 4))."""
    state = np.asarray(state)
    return _is_terminal(state[..., 0], state[..., 2])


def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Draw initial states of shape (*shape, 4), float64, uniform in [-0.05, 0.05)."""
    return rng.uniform(RESET_LOW, RESET_HIGH, size=(*tuple(shape), STATE_SIZE))


class _Episodes:
    """The running episodes: the state as four contiguous (K, B) float64 rows (twice as fast to step as (K, B, 4)),
    returns, which are alive, and which episode sits in which column (``slot_episode``, moved by compaction)."""

    def __init__(self, initial_states: np.ndarray):
        batch_shape = initial_states.shape[:-1]
        self.final_returns = np.zeros(batch_shape)
        self.slot_episode = np.broadcast_to(np.arange(batch_shape[-1]), batch_shape).copy()
        self.state = np.array(np.moveaxis(initial_states, -1, 0), dtype=np.float64, order="C", copy=True)
        self.view = np.moveaxis(self.state, 0, -1)  # (K, B, 4) on the same memory
        self.returns = np.zeros(batch_shape)
        self.alive = np.ones(batch_shape, dtype=bool)
        self.observation = np.empty((*batch_shape, STATE_SIZE), dtype=np.float32)

    def act(self, policy_fn: PolicyFunction) -> np.ndarray:
        """The policies' integer actions for gymnasium's float32 observation of every column."""
        np.copyto(self.observation, self.view, casting="same_kind")
        actions = np.asarray(policy_fn(self.observation))
        if actions.shape != self.alive.shape or actions.dtype.kind not in "biu":
            raise ValueError(
                f"policy_fn must return integer actions of shape {self.alive.shape}, got "
                f"{actions.dtype} array of shape {actions.shape}; sample the actions inside the policy."
            )
        return actions

    def step(self, actions: np.ndarray) -> None:
        """One Euler step of every running episode (the ended ones stay frozen, masked with ``where=``, so the
        arithmetic of the running ones is exactly gymnasium's); reward 1 for every step taken, the last too."""
        _euler_step(*self.state, _force(actions), where=self.alive)
        self.returns += self.alive

    def compact(self, policy_fn: PolicyFunction) -> None:
        """When every policy has at most ``COMPACTION_THRESHOLD`` of its columns running, move each policy's
        running episodes to the front and cut the block to the widest policy's count."""
        width = int(np.count_nonzero(self.alive, axis=1).max())
        if width > COMPACTION_THRESHOLD * self.alive.shape[1]:
            return
        np.put_along_axis(self.final_returns, self.slot_episode, self.returns, axis=1)  # finished ones are final
        order = np.argsort(~self.alive, axis=1, kind="stable")[:, :width]  # running columns first
        self.state = np.take_along_axis(self.state, order[None], axis=2)
        self.returns, self.alive, self.slot_episode = (
            np.take_along_axis(array, order, axis=1) for array in (self.returns, self.alive, self.slot_episode)
        )
        self.view = np.moveaxis(self.state, 0, -1)
        self.observation = np.empty(self.view.shape, dtype=np.float32)
        if hasattr(policy_fn, "compact"):  # a policy with per-episode state follows its episodes
            policy_fn.compact(order)


class _Recording:
    """Every step of every episode, for ``rollout_trajectories`` (no compaction then)."""

    def __init__(self, run: _Episodes, horizon: int):
        shape = run.alive.shape
        self.states = np.empty((*shape, horizon + 1, STATE_SIZE))
        self.states[..., 0, :] = run.view
        self.actions = np.full((*shape, horizon), -1, dtype=np.int8)
        self.active = np.zeros((*shape, horizon), dtype=bool)
        self.done = np.zeros((*shape, horizon), dtype=bool)

    def took(self, step: int, run: _Episodes, actions: np.ndarray) -> None:
        self.active[..., step] = run.alive
        self.actions[..., step][run.alive] = actions[run.alive]
        self.states[..., step + 1, :] = run.view

    def trajectories(self, steps_run: int, run: _Episodes) -> Trajectories:
        self.states[..., steps_run + 1 :, :] = run.view[..., None, :]
        self.done[..., steps_run:] = True  # the loop only stops early once every episode is done
        return Trajectories(self.states, self.actions, self.active.astype(float), self.active, self.done, run.returns)


def _simulate(
    policy_fn: PolicyFunction,
    initial_states: np.ndarray,
    horizon: int,
    record: bool,
    on_progress: ProgressCallback | None,
    compact: bool = False,
) -> tuple[np.ndarray, Trajectories | None]:
    """Shared time loop: all episodes advance in lockstep until all are done.

    With ``compact`` (returns only), the running episodes are packed to the front of their block whenever few
    still run (``_Episodes.compact``); with ``record`` every step is kept (``_Recording``).
    """
    run = _Episodes(initial_states)
    recording = _Recording(run, horizon) if record else None
    total_episodes, progress_every, steps_run = run.alive.size, max(1, horizon // 20), 0
    for step in range(horizon):
        actions = run.act(policy_fn)
        run.step(actions)
        if recording is not None:
            recording.took(step, run, actions)
        run.alive &= ~_is_terminal(run.state[0], run.state[2])
        if recording is not None:
            recording.done[..., step] = ~run.alive
        steps_run = step + 1
        still_running = bool(run.alive.any())
        if on_progress is not None and (steps_run % progress_every == 0 or not still_running):
            running = int(np.count_nonzero(run.alive))
            detail = f"CartPole step {steps_run}, {running}/{total_episodes} running"
            on_progress(steps_run, horizon, Report(Stage.ROLLOUTS, detail))
        if not still_running:
            break
        if compact:
            run.compact(policy_fn)
    if on_progress is not None and steps_run < horizon:
        detail = f"CartPole, all {total_episodes} episodes ended by step {steps_run}"
        on_progress(horizon, horizon, Report(Stage.ROLLOUTS, detail))
    if recording is None:
        np.put_along_axis(run.final_returns, run.slot_episode, run.returns, axis=1)
        return run.final_returns, None
    return run.returns, recording.trajectories(steps_run, run)


def rollout_returns(
    policy_fn: PolicyFunction,
    *,
    num_policies: int,
    num_episodes: int,
    horizon: int,
    rng: np.random.Generator,
    on_progress: ProgressCallback | None = None,
    compact_episodes: bool = False,
) -> np.ndarray:
    """Undiscounted returns (K, B) float64 of K policies x B episodes each.

    Initial states are drawn from ``rng`` (gymnasium's reset distribution);
    ``policy_fn`` maps float32 observations (K, B, 4) to integer actions
    (K, B). Episodes end on termination or after ``horizon`` steps.
    ``on_progress(done_steps, total_steps, info)`` is called every few steps.

    ``compact_episodes=True`` drops finished episodes from the block as they
    terminate, so ``policy_fn`` is then called with (K, W, 4) observations,
    W <= B shrinking over time, and must return (K, W) actions (treat axis 1
    as a plain batch axis, e.g. sample with ``rng.random(obs.shape[:-1])``).
    Row k is still policy k. Same return distribution, less work when many
    episodes end early (random policies: about 2x faster).
    """
    check_rollout_counts(num_policies, num_episodes, horizon)
    initial_states = reset_states(rng, (int(num_policies), int(num_episodes)))
    return _simulate(policy_fn, initial_states, int(horizon), False, on_progress, bool(compact_episodes))[0]


def rollout_returns_from_states(
    policy_fn: PolicyFunction,
    initial_states: np.ndarray,
    *,
    horizon: int,
    on_progress: ProgressCallback | None = None,
    compact_episodes: bool = False,
) -> np.ndarray:
    """Like :func:`rollout_returns`, from given initial states (K, B, 4); returns (K, B) float64.

    With ``compact_episodes``, a ``policy_fn`` that has a ``compact(order)`` method is told
    which columns survive each compaction (``order`` (K, W): old column of each new one).
    """
    initial_states = _check_initial_states(initial_states)
    check_rollout_counts(initial_states.shape[0], initial_states.shape[1], horizon)
    returns, _ = _simulate(policy_fn, initial_states, int(horizon), False, on_progress, bool(compact_episodes))
    return returns


def _check_initial_states(initial_states: np.ndarray) -> np.ndarray:
    initial_states = np.asarray(initial_states, dtype=np.float64)
    if initial_states.ndim != 3 or initial_states.shape[-1] != STATE_SIZE:
        raise ValueError(
            f"initial_states must have shape (num_policies, num_episodes, 4), got {initial_states.shape}; "
            "use reset_states(rng, (K, B)) to make them."
        )
    return initial_states


def rollout_trajectories(
    policy_fn: PolicyFunction,
    initial_states: np.ndarray,
    *,
    horizon: int,
    on_progress: ProgressCallback | None = None,
) -> Trajectories:
    """Roll out from given initial states (K, B, 4) and record everything.

    Returns a :class:`Trajectories` with states (K, B, T + 1, 4), actions,
    rewards, ``active`` / ``done`` masks (K, B, T) and returns (K, B).
    """
    initial_states = _check_initial_states(initial_states)
    check_rollout_counts(initial_states.shape[0], initial_states.shape[1], horizon)
    _, trajectories = _simulate(policy_fn, initial_states, int(horizon), True, on_progress)
    assert trajectories is not None
    return trajectories


def env_spec():
    """CartPole as an ``EnvSpec`` (gymnasium's CartPole-v1 physics; stochastic softmax policies, 2 actions)."""
    import gymnasium

    def visited(rng: np.random.Generator, n: int) -> np.ndarray:
        """States visited by uniformly random actions, from n episodes of up to 100 steps."""
        starts = reset_states(rng, (1, n))
        traj = rollout_trajectories(lambda obs: rng.integers(0, 2, size=obs.shape[:-1]), starts, horizon=100)
        lengths = traj.active[0].sum(-1)  # (n,)
        pick = (rng.random(n) * lengths).astype(int)
        return traj.states[0, np.arange(n), pick].astype(np.float32)

    def from_states(policy_fn, states, *, horizon, on_progress=None, nthread=None):
        return rollout_returns_from_states(
            policy_fn, states, horizon=horizon, on_progress=on_progress, compact_episodes=True
        )

    theta = THETA_THRESHOLD_RADIANS
    high = np.array([X_THRESHOLD * 2, np.finfo(np.float32).max, theta * 2, np.finfo(np.float32).max], np.float32)
    return EnvSpec(
        name="cartpole",
        obs_dim=4,
        act_dim=2,
        discrete=True,
        state_labels=("cart position", "cart velocity", "pole angle", "pole angular velocity"),
        state_bounds=((-X_THRESHOLD, X_THRESHOLD), None, (-theta, theta), None),
        rollout_returns=functools.partial(rollout_returns, compact_episodes=True),
        visited_states=visited,
        reset_states=reset_states,
        rollout_returns_from_states=from_states,
        observation_space=gymnasium.spaces.Box(-high, high, dtype=np.float32),
        action_space=gymnasium.spaces.Discrete(2),
        bounds_label="termination bounds",
        steps_per_second=12e6,  # horizon steps of random policies, whose episodes end early
        bytes_per_episode=450,
        fixed_length=False,
        replay=replay.cart_and_pole(reset_states, rollout_trajectories, X_THRESHOLD),
    )
