"""Batched, vectorised MountainCar: gymnasium's ``MountainCar-v0`` and ``MountainCarContinuous-v0`` as step
functions over K policies x B episodes, for the PVN pipeline's returns of many policies (Section 6 and
Algorithm 1 of the paper, on other environments).

The physics is exactly gymnasium's (``mountain_car.py`` and ``continuous_mountain_car.py`` in
``gymnasium/envs/classic_control``, gymnasium 1.4.0), equal to it bit for bit (``tests/test_classic_envs.py``):

* Both: positions in [-1.2, 0.6], speeds in [-0.07, 0.07], gravity term ``-0.0025 cos(3 x)`` (``math.cos``);
  the car stops at the left wall; reset ``(U(-0.6, -0.4), 0)`` (one draw per episode), float64; terminated
  when ``position >= goal_position`` and ``velocity >= goal_velocity`` (the ``goal_velocity`` keyword,
  default 0). Truncation is the rollout's horizon (gymnasium's ``max_episode_steps``: 200 and 999).
* MountainCar-v0: actions 0, 1, 2 push with ``(action - 1) * 0.001``; goal 0.5; reward -1 per step, the
  terminating one too. The state stays float64; the observation is it cast to float32.
* MountainCarContinuous-v0: a 1-vector action, clipped to [-1, 1] and times ``power`` 0.0015; goal 0.45;
  reward ``-0.1 a**2`` on the raw action, plus 100 on the terminating step. gymnasium stores the state as float32
  after every step, so from the second step on its arithmetic is float32, with Python floats (the clips to the
  bounds, a clipped force) entering as NumPy's weak scalars: :class:`MountainCarContinuous` reproduces each
  operation's type. Actions are taken as the action space's float32.

Array layouts (K policies, B episodes): state ``(..., 2)`` (position, velocity); actions ``(K, B)`` integers
(MountainCar-v0) or ``(K, B, 1)`` reals (continuous); observations ``(K, B, 2)`` float32; a replay's frame is
the state ``(K, B, 2)``.
"""

from __future__ import annotations

import numpy as np

from pvnviz.envs.rollout import State

MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GRAVITY = 0.0025
FORCE = 0.001  # MountainCar-v0
POWER = 0.0015  # MountainCarContinuous-v0
GOAL_POSITION = 0.5  # MountainCar-v0
CONTINUOUS_GOAL_POSITION = 0.45  # MountainCarContinuous-v0
MIN_ACTION, MAX_ACTION = -1.0, 1.0
RESET_LOW, RESET_HIGH = -0.6, -0.4
STATE_SIZE = 2
NUM_ACTIONS = 3
OBSERVATION_LOW = np.array([MIN_POSITION, -MAX_SPEED], dtype=np.float32)
OBSERVATION_HIGH = np.array([MAX_POSITION, MAX_SPEED], dtype=np.float32)
DEFAULT_HORIZON = 200  # gymnasium's max_episode_steps for MountainCar-v0
CONTINUOUS_DEFAULT_HORIZON = 999


def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Initial states (*shape, 2) float64, the draws of ``shape`` successive gymnasium resets from ``rng``:
    position uniform in [-0.6, -0.4), velocity 0."""
    positions = rng.uniform(RESET_LOW, RESET_HIGH, size=tuple(shape))
    return np.stack([positions, np.zeros_like(positions)], axis=-1)


def _check_goal_velocity(goal_velocity: float) -> float:
    if isinstance(goal_velocity, bool) or not isinstance(goal_velocity, int | float) or not np.isfinite(goal_velocity):
        raise ValueError(f"goal_velocity must be a finite number, got {goal_velocity!r}.")
    return goal_velocity


def _stacked(rows: np.ndarray, obs: np.ndarray) -> None:
    obs[..., 0] = rows[0]
    obs[..., 1] = rows[1]


class _Rows:
    """What the two MountainCars share: the state as 2 rows (2, K, B), frames and compaction."""

    state_size = STATE_SIZE

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        rows = np.array(np.moveaxis(np.asarray(initial_states, dtype=np.float64), -1, 0), order="C", copy=True)
        shape = rows.shape[1:]
        state = State(rows, np.empty((*shape, STATE_SIZE), np.float32), np.zeros(shape), np.zeros(shape, bool))
        _stacked(rows, state.obs)
        return state

    def frame(self, state: State) -> np.ndarray:
        """The state (K, B, 2): position and velocity, what a replay draws."""
        return np.moveaxis(state.physics, 0, -1)

    def select(self, rows: np.ndarray, order: np.ndarray) -> np.ndarray:
        """The rows of the episodes kept by compaction: ``order`` (K, W) is each new column's old column."""
        return np.take_along_axis(rows, order[None], axis=2)


class MountainCar(_Rows):
    """MountainCar-v0 as a batched step function (``pvnviz.envs.rollout.Dynamics``); float64 rows (2, K, B)."""

    name = "MountainCar"
    discrete = True
    action_shape: tuple[int, ...] = ()

    def __init__(self, goal_velocity: float = 0):
        self.goal_velocity = _check_goal_velocity(goal_velocity)

    def step(self, state: State, actions: np.ndarray) -> State:
        """One step of every running episode; reward -1 for every step taken, the terminating one too."""
        actions = np.asarray(actions)
        if actions.size and (actions.min() < 0 or actions.max() >= NUM_ACTIONS):
            raise ValueError(
                f"MountainCar actions must be 0, 1 or 2; got values from {actions.min()} to {actions.max()}."
            )
        rows, running = state.physics, ~state.done
        position, velocity = rows
        velocity = velocity + ((actions - 1) * FORCE + np.cos(3 * position) * (-GRAVITY))
        velocity = np.clip(velocity, -MAX_SPEED, MAX_SPEED)
        position = np.clip(position + velocity, MIN_POSITION, MAX_POSITION)
        velocity = np.where((position == MIN_POSITION) & (velocity < 0), 0.0, velocity)
        np.copyto(rows[0], position, where=running)
        np.copyto(rows[1], velocity, where=running)
        terminal = (rows[0] >= GOAL_POSITION) & (rows[1] >= self.goal_velocity)
        np.copyto(state.reward, np.where(running, -1.0, 0.0))
        state.done |= terminal
        _stacked(rows, state.obs)
        return state


class MountainCarContinuous(_Rows):
    """MountainCarContinuous-v0 as a batched step function (``pvnviz.envs.rollout.Dynamics``).

    The rows (2, K, B) are float64 from a reset and float32 after the first step, as gymnasium's state is; each
    step's arithmetic follows the rows' dtype (:meth:`_first_step` in float64, :meth:`_later_step` in float32).
    """

    name = "MountainCarContinuous"
    discrete = False
    action_shape: tuple[int, ...] = (1,)

    def __init__(self, goal_velocity: float = 0):
        self.goal_velocity = _check_goal_velocity(goal_velocity)

    def step(self, state: State, actions: np.ndarray) -> State:
        """One step of every running episode; reward ``-0.1 a**2``, plus 100 on the step that reaches the goal."""
        action = np.asarray(actions, dtype=np.float32)[..., 0]  # the action space's dtype
        rows, running = state.physics, ~state.done
        force_is_python = (action < MIN_ACTION) | (action > MAX_ACTION)  # max/min returned the Python bound
        if rows.dtype == np.float64:
            position, velocity, terminal = self._first_step(rows, action, force_is_python)
            rows = state.physics = rows.astype(np.float32)
        else:
            position, velocity, terminal = self._later_step(rows, action, force_is_python)
        np.copyto(rows[0], position, where=running, casting="same_kind")
        np.copyto(rows[1], velocity, where=running, casting="same_kind")
        terminal &= running
        raw = action.astype(np.float64)
        np.copyto(state.reward, np.where(running, np.where(terminal, 100.0, 0.0) - (raw * raw) * 0.1, 0.0))
        state.done |= terminal
        _stacked(rows, state.obs)
        return state

    def _first_step(self, rows, action, force_is_python):
        """From gymnasium's float64 reset state: float64 arithmetic (the unclipped force term is float32)."""
        position, velocity = rows
        cos_term = 0.0025 * np.cos(3 * position)
        force32 = action * POWER  # np.float32 times a Python float: float32
        clipped = np.clip(action.astype(np.float64), MIN_ACTION, MAX_ACTION)
        term = np.where(force_is_python, clipped * POWER - cos_term, (force32 - cos_term.astype(np.float32)))
        velocity = velocity + term
        velocity = np.clip(velocity, -MAX_SPEED, MAX_SPEED)
        position = np.clip(position + velocity, MIN_POSITION, MAX_POSITION)
        velocity = np.where((position == MIN_POSITION) & (velocity < 0), 0.0, velocity)
        terminal = (position >= CONTINUOUS_GOAL_POSITION) & (velocity >= self.goal_velocity)
        return position, velocity, terminal

    def _later_step(self, rows, action, force_is_python):
        """From gymnasium's float32 state: float32 arithmetic, Python floats rounded to float32 on the way in;
        the goal's comparisons in the type each value has at that point."""
        f32 = np.float32
        position, velocity = rows
        cos_term = 0.0025 * np.cos((3 * position).astype(np.float64))  # math.cos of the float32 product
        force32 = action * POWER
        clipped = np.clip(action.astype(np.float64), MIN_ACTION, MAX_ACTION)
        term = np.where(
            force_is_python, (clipped * POWER - cos_term).astype(f32), force32 - cos_term.astype(f32)
        )
        velocity = velocity + term
        velocity_is_python = (velocity > f32(MAX_SPEED)) | (velocity < f32(-MAX_SPEED))
        velocity = np.clip(velocity, f32(-MAX_SPEED), f32(MAX_SPEED))
        position = np.clip(position + velocity, f32(MIN_POSITION), f32(MAX_POSITION))
        stopped = (position == f32(MIN_POSITION)) & (velocity < 0)
        velocity = np.where(stopped, f32(0.0), velocity)
        python_velocity = np.where(velocity > 0, MAX_SPEED, -MAX_SPEED)
        fast_enough = np.where(
            stopped,
            0 >= self.goal_velocity,
            np.where(velocity_is_python, python_velocity >= self.goal_velocity, velocity >= f32(self.goal_velocity)),
        )
        terminal = (position >= f32(CONTINUOUS_GOAL_POSITION)) & fast_enough
        return position, velocity, terminal
