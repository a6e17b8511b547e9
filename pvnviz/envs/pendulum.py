"""Batched, vectorised Pendulum: gymnasium's ``Pendulum-v1`` as a step function over K policies x B episodes,
for the PVN pipeline's returns of many policies (Section 6 and Algorithm 1 of the paper, on another environment).

The physics is exactly gymnasium's (``gymnasium/envs/classic_control/pendulum.py``, gymnasium 1.4.0), equal to
it bit for bit (``tests/test_classic_envs.py``):

* m = l = 1, dt = 0.05 s, gravity ``g`` (the constructor keyword, default 10.0), torque clipped to [-2, 2],
  angular speed clipped to [-8, 8] after the update, the angle updated with the new speed (semi-implicit Euler).
* Reward ``-(angle_normalize(theta)**2 + 0.1 thdot**2 + 0.001 u**2)`` from the state *before* the step; the
  squares are NumPy scalars' (``pvnviz.envs.scalar_square``), ``u**2`` in float32 as the action space's dtype.
* Reset: ``(theta, thdot)`` uniform in [-pi, pi) x [-1, 1), float64. Never terminates: every episode runs the
  rollout's whole horizon (gymnasium's ``max_episode_steps`` is 200).

Array layouts (K policies, B episodes): state ``(..., 2)`` float64 (theta, thdot); actions ``(K, B, 1)`` reals,
taken as float32; observations ``(K, B, 3)`` float32 ``(cos theta, sin theta, thdot)``; a replay's frame is the
state ``(K, B, 2)``.
"""

from __future__ import annotations

import numpy as np

from pvnviz.envs.rollout import State
from pvnviz.envs.scalar_square import square_f32, square_f64

MAX_SPEED = 8
MAX_TORQUE = 2.0
DT = 0.05
DEFAULT_GRAVITY = 10.0
MASS = 1.0
LENGTH = 1.0
RESET_HIGH = np.array([np.pi, 1.0])
STATE_SIZE = 2
OBSERVATION_SIZE = 3
OBSERVATION_HIGH = np.array([1.0, 1.0, MAX_SPEED], dtype=np.float32)
DEFAULT_HORIZON = 200  # gymnasium's max_episode_steps


def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Initial states (*shape, 2) float64, the draws of ``shape`` successive gymnasium resets from ``rng``:
    theta uniform in [-pi, pi), thdot in [-1, 1)."""
    return rng.uniform(low=-RESET_HIGH, high=RESET_HIGH, size=(*tuple(shape), STATE_SIZE))


def angle_normalize(x: np.ndarray) -> np.ndarray:
    """gymnasium's ``angle_normalize``: the angle in [-pi, pi)."""
    return ((x + np.pi) % (2 * np.pi)) - np.pi


def observe(rows: np.ndarray, out: np.ndarray) -> None:
    """gymnasium's ``_get_obs`` into ``out`` (..., 3) float32."""
    out[..., 0] = np.cos(rows[0])
    out[..., 1] = np.sin(rows[0])
    out[..., 2] = rows[1]


class Pendulum:
    """Pendulum-v1 as a batched step function (``pvnviz.envs.rollout.Dynamics``): 2 rows (2, K, B) of float64."""

    name = "Pendulum"
    state_size = STATE_SIZE
    discrete = False
    action_shape: tuple[int, ...] = (1,)

    def __init__(self, g: float = DEFAULT_GRAVITY):
        if isinstance(g, bool) or not isinstance(g, int | float) or not np.isfinite(g):
            raise ValueError(f"g must be a finite number, got {g!r}.")
        self.g = g

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        rows = np.array(np.moveaxis(np.asarray(initial_states, dtype=np.float64), -1, 0), order="C", copy=True)
        shape = rows.shape[1:]
        state = State(rows, np.empty((*shape, OBSERVATION_SIZE), np.float32), np.zeros(shape), np.zeros(shape, bool))
        observe(rows, state.obs)
        return state

    def step(self, state: State, actions: np.ndarray) -> State:
        """One step of every episode: reward minus the cost of the state and the clipped torque."""
        th, thdot = state.physics
        g, m, l, dt = self.g, MASS, LENGTH, DT  # noqa: E741 (gymnasium's names)
        u = np.clip(np.asarray(actions, dtype=np.float32), -MAX_TORQUE, MAX_TORQUE)[..., 0]
        angle_sq, thdot_sq = square_f64(np.stack([angle_normalize(th), thdot]))  # one call: fewer NumPy calls
        costs = angle_sq + 0.1 * thdot_sq + 0.001 * square_f32(u)
        newthdot = thdot + (3 * g / (2 * l) * np.sin(th) + 3.0 / (m * l**2) * u) * dt
        newthdot = np.clip(newthdot, -MAX_SPEED, MAX_SPEED)
        newth = th + newthdot * dt
        running = ~state.done
        np.copyto(th, newth, where=running)
        np.copyto(thdot, newthdot, where=running)
        np.copyto(state.reward, np.where(running, -costs, 0.0))
        observe(state.physics, state.obs)
        return state

    def frame(self, state: State) -> np.ndarray:
        """The state (K, B, 2): angle and angular velocity, what a replay draws."""
        return np.moveaxis(state.physics, 0, -1)
