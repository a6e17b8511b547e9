"""Batched, vectorised CartPole: the environment of Section 6.2 of the paper.

"Policy Evaluation Networks" (Harb et al., 2020), Section 6.2, trains a
Policy Evaluation Network on CartPole: it needs the returns of many small
policies, each run for many episodes. This module is CartPole's batched step
function (:class:`CartPole`, Brax-style ``step(state, actions) -> state`` on all
K x B episodes at once with numpy array operations); ``pvnviz.envs.rollout`` is
the time loop over it, the same for every environment.

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
* a replay's frame: the state ``(K, B, 4)``.

An episode that terminates keeps its final state frozen and earns no more
reward; an episode that never terminates is truncated after ``horizon`` steps.
The environment's rollouts drop finished episodes per policy (``CartPole.select``,
``pvnviz.envs.rollout``'s ``compact``), so the policy sees (K, W, 4) with W <= B.
"""

from __future__ import annotations

import math

import numpy as np

from pvnviz.envs import replay
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.rollout import State, record

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
ACTION_LEFT = 0
ACTION_RIGHT = 1


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


class CartPole:
    """CartPole-v1 as a batched step function (``pvnviz.envs.rollout.Dynamics``) over K policies x B episodes.

    The physics is four contiguous (K, B) float64 rows (twice as fast to step as (K, B, 4)); an ended episode
    is frozen by ``where=`` masks, so the arithmetic of the running ones is exactly gymnasium's.
    """

    name = "CartPole"
    state_size = STATE_SIZE
    discrete = True
    action_shape: tuple[int, ...] = ()

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        rows = np.array(np.moveaxis(initial_states, -1, 0), dtype=np.float64, order="C", copy=True)
        shape = rows.shape[1:]
        state = State(rows, np.empty((*shape, STATE_SIZE), dtype=np.float32), np.zeros(shape), np.zeros(shape, bool))
        np.copyto(state.obs, np.moveaxis(rows, 0, -1), casting="same_kind")
        return state

    def step(self, state: State, actions: np.ndarray) -> State:
        """One Euler step of every running episode; reward 1 for every step taken, the terminating one too."""
        rows, running = state.physics, ~state.done
        _euler_step(*rows, _force(actions), where=running)
        np.copyto(state.reward, running)
        state.done |= _is_terminal(rows[0], rows[2])
        np.copyto(state.obs, np.moveaxis(rows, 0, -1), casting="same_kind")  # gymnasium's float32 observation
        return state

    def frame(self, state: State) -> np.ndarray:
        """The full float64 state (K, B, 4): what a replay draws."""
        return np.moveaxis(state.physics, 0, -1)

    def select(self, rows: np.ndarray, order: np.ndarray) -> np.ndarray:
        """The rows of the episodes kept by compaction: ``order`` (K, W) is each new column's old column."""
        return np.take_along_axis(rows, order[None], axis=2)


DYNAMICS = CartPole()


def batched_env() -> BatchedEnv:
    """CartPole as a ``BatchedEnv`` (gymnasium's CartPole-v1 physics; stochastic softmax policies, 2 actions)."""
    import gymnasium

    def visited(rng: np.random.Generator, n: int) -> np.ndarray:
        """States visited by uniformly random actions, from n episodes of up to 100 steps."""
        starts = reset_states(rng, (1, n))
        traj = record(DYNAMICS, lambda obs: rng.integers(0, 2, size=obs.shape[:-1]), starts, 100)
        lengths = traj.active[0].sum(-1)  # (n,)
        pick = (rng.random(n) * lengths).astype(int)
        return traj.frames[0, np.arange(n), pick].astype(np.float32)

    theta = THETA_THRESHOLD_RADIANS
    high = np.array([X_THRESHOLD * 2, np.finfo(np.float32).max, theta * 2, np.finfo(np.float32).max], np.float32)
    return BatchedEnv(
        name="cartpole",
        obs_dim=4,
        act_dim=2,
        discrete=True,
        state_labels=("cart position", "cart velocity", "pole angle", "pole angular velocity"),
        state_bounds=((-X_THRESHOLD, X_THRESHOLD), None, (-theta, theta), None),
        dynamics=DYNAMICS,
        visited_states=visited,
        reset_states=reset_states,
        observation_space=gymnasium.spaces.Box(-high, high, dtype=np.float32),
        action_space=gymnasium.spaces.Discrete(2),
        bounds_label="termination bounds",
        steps_per_second=12e6,  # horizon steps of random policies, whose episodes end early
        bytes_per_episode=450,
        fixed_length=False,
        replay=replay.cart_and_pole(DYNAMICS, reset_states, X_THRESHOLD),
    )
