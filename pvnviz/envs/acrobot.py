"""Batched, vectorised Acrobot: gymnasium's ``Acrobot-v1`` as a step function over K policies x B episodes, for
the PVN pipeline's returns of many policies (Section 6 and Algorithm 1 of the paper, on another environment).

The physics is exactly gymnasium's (``gymnasium/envs/classic_control/acrobot.py``, gymnasium 1.4.0), with its
defaults, and equal to it bit for bit (``tests/test_classic_envs.py``):

* Two links of length 1 and mass 1, centres of mass at 0.5, moments of inertia 1, g = 9.8; the "book" dynamics.
* Action 0, 1, 2: torque -1, 0, +1 on the joint between the links (a Python list index, as gymnasium's).
* One step is one ``rk4`` step of dt = 0.2 s on the 5-vector ``(theta1, theta2, dtheta1, dtheta2, torque)``,
  the same operations in the same order; then ``wrap`` of both angles into [-pi, pi] and ``bound`` of the
  velocities to +-4 pi and +-9 pi. Squares of scalars are the C library's ``pow`` (``pvnviz.envs.scalar_square``).
* Reset: the 4 state variables uniform in [-0.1, 0.1), rounded to float32 (gymnasium's state is float32 until
  the first step); the first observation's cosines and sines are then float32 arithmetic, as gymnasium's.
* Terminated when ``-cos(theta1) - cos(theta2 + theta1) > 1`` (the tip above the goal line); reward -1 per step,
  0 on the terminating step. Truncation is the rollout's horizon (gymnasium's ``max_episode_steps`` is 500).

Array layouts (K policies, B episodes): state ``(..., 4)`` float64 (theta1, theta2, dtheta1, dtheta2); actions
``(K, B)`` integers; observations ``(K, B, 6)`` float32 ``(cos theta1, sin theta1, cos theta2, sin theta2,
dtheta1, dtheta2)``; a replay's frame is the state ``(K, B, 4)``.
"""

from __future__ import annotations

from math import pi

import numpy as np

from pvnviz.envs.rollout import State
from pvnviz.envs.scalar_square import square_f64

# gymnasium's AcrobotEnv class attributes.
DT = 0.2
LINK_LENGTH_1 = 1.0
LINK_LENGTH_2 = 1.0
LINK_MASS_1 = 1.0
LINK_MASS_2 = 1.0
LINK_COM_POS_1 = 0.5
LINK_COM_POS_2 = 0.5
LINK_MOI = 1.0
MAX_VEL_1 = 4 * pi
MAX_VEL_2 = 9 * pi
AVAIL_TORQUE = np.array([-1.0, 0.0, +1])
GRAVITY = 9.8
RESET_LOW, RESET_HIGH = -0.1, 0.1
STATE_SIZE = 4
OBSERVATION_SIZE = 6
NUM_ACTIONS = 3
OBSERVATION_HIGH = np.array([1.0, 1.0, 1.0, 1.0, MAX_VEL_1, MAX_VEL_2], dtype=np.float32)
DEFAULT_HORIZON = 500  # gymnasium's max_episode_steps


def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Initial states (*shape, 4) float64, the draws of ``shape`` successive gymnasium resets from ``rng``:
    uniform in [-0.1, 0.1), rounded to float32 as gymnasium's state is."""
    draws = rng.uniform(RESET_LOW, RESET_HIGH, size=(*tuple(shape), STATE_SIZE))
    return draws.astype(np.float32).astype(np.float64)


def _dsdt(theta1, theta2, dtheta1, dtheta2, a):
    """gymnasium's ``AcrobotEnv._dsdt`` ("book"), term for term; each argument an array (or the torque array)."""
    m1 = LINK_MASS_1
    m2 = LINK_MASS_2
    l1 = LINK_LENGTH_1
    lc1 = LINK_COM_POS_1
    lc2 = LINK_COM_POS_2
    I1 = LINK_MOI  # noqa: N806 (gymnasium's names)
    I2 = LINK_MOI  # noqa: N806
    g = GRAVITY
    cos2, sin2 = np.cos(theta2), np.sin(theta2)
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * cos2) + I1 + I2
    d2 = m2 * (lc2**2 + l1 * lc2 * cos2) + I2
    dtheta2_sq, dtheta1_sq, d2_sq = square_f64(np.stack([dtheta2, dtheta1, d2]))  # one call: fewer NumPy calls
    phi2 = m2 * lc2 * g * np.cos(theta1 + theta2 - pi / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * dtheta2_sq * sin2
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin2
        + (m1 * lc1 + m2 * l1) * g * np.cos(theta1 - pi / 2)
        + phi2
    )
    ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1_sq * sin2 - phi2) / (m2 * lc2**2 + I2 - d2_sq / d1)
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return dtheta1, dtheta2, ddtheta1, ddtheta2


def _wrap(x: np.ndarray, m: float, big_m: float) -> np.ndarray:
    """gymnasium's ``wrap``: subtract ``big_m - m`` while above ``big_m``, then add it while below ``m`` (an
    infinite angle, where gymnasium would loop for ever, is left as it is)."""
    diff = big_m - m
    finite = np.isfinite(x)
    while (above := (x > big_m) & finite).any():
        x = np.where(above, x - diff, x)
    while (below := (x < m) & finite).any():
        x = np.where(below, x + diff, x)
    return x


def step_physics(rows: np.ndarray, torque: np.ndarray) -> np.ndarray:
    """The next state rows (4, ...) float64 after one gymnasium step with ``torque`` (...): ``rk4`` over
    [0, dt], then ``wrap`` and ``bound``. The input is not modified."""
    dt = DT - 0
    dt2 = dt / 2.0
    y0 = tuple(rows)
    k1 = _dsdt(*y0, torque)
    k2 = _dsdt(*(y + dt2 * k for y, k in zip(y0, k1, strict=True)), torque + dt2 * 0.0)
    k3 = _dsdt(*(y + dt2 * k for y, k in zip(y0, k2, strict=True)), torque + dt2 * 0.0)
    k4 = _dsdt(*(y + dt * k for y, k in zip(y0, k3, strict=True)), torque + dt * 0.0)
    ns = [y + dt / 6.0 * (a + 2 * b + 2 * c + d) for y, a, b, c, d in zip(y0, k1, k2, k3, k4, strict=True)]
    ns[0] = _wrap(ns[0], -pi, pi)
    ns[1] = _wrap(ns[1], -pi, pi)
    ns[2] = np.minimum(np.maximum(ns[2], -MAX_VEL_1), MAX_VEL_1)
    ns[3] = np.minimum(np.maximum(ns[3], -MAX_VEL_2), MAX_VEL_2)
    return np.stack(ns)


def is_terminal(rows: np.ndarray) -> np.ndarray:
    """The tip above the goal line: ``-cos(theta1) - cos(theta2 + theta1) > 1`` on state rows (4, ...)."""
    return -np.cos(rows[0]) - np.cos(rows[1] + rows[0]) > 1.0


def observe(rows: np.ndarray, out: np.ndarray) -> None:
    """gymnasium's ``_get_ob`` into ``out`` (..., 6) float32: cosines and sines in the rows' own dtype, then cast."""
    for i, value in enumerate((np.cos(rows[0]), np.sin(rows[0]), np.cos(rows[1]), np.sin(rows[1]), rows[2], rows[3])):
        out[..., i] = value


class Acrobot:
    """Acrobot-v1 as a batched step function (``pvnviz.envs.rollout.Dynamics``): 4 rows (4, K, B) of float64;
    an ended episode keeps its state (``where=`` masks) and earns no reward."""

    name = "Acrobot"
    state_size = STATE_SIZE
    discrete = True
    action_shape: tuple[int, ...] = ()

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        state32 = np.moveaxis(np.asarray(initial_states, dtype=np.float32), -1, 0)  # gymnasium's float32 reset
        rows = np.array(state32, dtype=np.float64, order="C")
        shape = rows.shape[1:]
        state = State(rows, np.empty((*shape, OBSERVATION_SIZE), np.float32), np.zeros(shape), np.zeros(shape, bool))
        observe(state32, state.obs)
        return state

    def step(self, state: State, actions: np.ndarray) -> State:
        """One rk4 step of every running episode; reward -1, or 0 on the step that reaches the goal."""
        rows, running = state.physics, ~state.done
        np.copyto(rows, step_physics(rows, AVAIL_TORQUE[np.asarray(actions)]), where=running)
        terminal = is_terminal(rows)
        np.copyto(state.reward, np.where(running & ~terminal, -1.0, 0.0))
        state.done |= terminal
        observe(rows, state.obs)
        return state

    def frame(self, state: State) -> np.ndarray:
        """The state (K, B, 4): the two angles and their velocities, what a replay draws."""
        return np.moveaxis(state.physics, 0, -1)

    def select(self, rows: np.ndarray, order: np.ndarray) -> np.ndarray:
        """The rows of the episodes kept by compaction: ``order`` (K, W) is each new column's old column."""
        return np.take_along_axis(rows, order[None], axis=2)


DYNAMICS = Acrobot()
