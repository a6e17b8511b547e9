"""Gymnasium's MuJoCo ``-v5`` tasks as tables: what ``pvnviz.envs.mujoco_family`` steps in one batch (Section 6).

Here: the table (:class:`Task`), what every task shares, and the locomotion tasks (Hopper, Walker2d, HalfCheetah,
Ant); the control tasks (the pendulums, Reacher) are in ``pvnviz.envs.mujoco_control``.

Each :class:`Task` is one gymnasium 1.4.0 environment, transcribed from its source (``gymnasium/envs/mujoco/
*_v5.py``) with the same floating-point operations in the same order, so that a batch of episodes gives the very
numbers of ``gymnasium.make(id)``, bit for bit: the constructor's keyword arguments and defaults (``defaults``),
the observation (``observe``), the reward and termination (``reward``), the reset draws (``reset``, one episode
at a time from the generator, as successive ``env.reset()`` calls draw) and the names and healthy ranges of the
observation's entries (``labels``, ``bounds``). ``p`` is always the resolved keyword arguments (a dict).

A task reads the episodes through :class:`Rows`: live ``(N, ...)`` views of the batch's ``MjData`` fields. As
after gymnasium's ``mj_step``, the derived fields (``xpos``, ``site_xpos``, ``qfrc_constraint``) are those the
last substep computed (for RK4, at its last stage), and ``cfrc_ext`` is what ``mj_rnePostConstraint`` computes
from them. Scalar ``x ** 2`` in gymnasium is C ``pow``, not ``x * x`` (they differ in the last bit now and then):
:func:`scalar_square` repeats it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

INF = float("inf")


@dataclass
class Rows:
    """The batch's episodes as live arrays (N episodes): state, and the derived fields a task asks for."""

    model: Any  # mujoco.MjModel
    qpos: np.ndarray  # (N, nq)
    qvel: np.ndarray  # (N, nv)
    xpos: np.ndarray | None = None  # (N, nbody, 3)
    site_xpos: np.ndarray | None = None  # (N, nsite, 3)
    qfrc_constraint: np.ndarray | None = None  # (N, nv)
    cfrc_ext: np.ndarray | None = None  # (N, nbody, 6), from mj_rnePostConstraint after each step; 0 after reset


@dataclass(frozen=True)
class Task:
    """One gymnasium MuJoCo ``-v5`` environment: see the module docstring."""

    id: str
    xml_file: str
    horizon: int  # gymnasium's max_episode_steps
    defaults: Mapping[str, Any]  # every constructor keyword this family accepts, with gymnasium's default
    observe: Callable[[Rows, dict], np.ndarray]  # (N, obs) float64
    before: Callable[[Rows, dict], np.ndarray | None]  # what the reward needs of the state before the step
    reward: Callable[[Rows, dict, Any, np.ndarray, float], tuple[np.ndarray, np.ndarray]]  # reward, terminated
    reset: Callable[[np.random.Generator, Any, dict], tuple[np.ndarray, np.ndarray]]  # one episode's qpos, qvel
    labels: Callable[[Any, dict], tuple[str, ...]]
    bounds: Callable[[Any, dict], tuple[tuple[float, float] | None, ...]]
    terminates: Callable[[dict], bool]  # episodes can end before the horizon under these keywords
    derived: frozenset[str] = field(default_factory=frozenset)  # MjData outputs read: xpos, site_xpos, ...
    contact_forces: Callable[[dict], bool] = lambda p: False  # needs cfrc_ext (mj_rnePostConstraint)
    bounds_label: str = "healthy ranges (termination)"


def scalar_square(x: np.ndarray) -> np.ndarray:
    """``x ** 2`` of each element as a NumPy float64 scalar computes it: C ``pow(x, 2.0)``, not ``x * x``."""
    return np.fromiter((math.pow(v, 2.0) for v in x.tolist()), dtype=np.float64, count=x.size).reshape(x.shape)


def control_cost(weight: float, actions: np.ndarray) -> np.ndarray:
    """``weight * np.sum(np.square(action))`` per episode (N,)."""
    return weight * np.sum(np.square(actions), axis=1)


def qpos_names(model: Any) -> list[str]:
    """A name per ``qpos`` entry: the joint's, with x/y/z/qw/qx/qy/qz for a free joint's seven."""
    names = []
    for j in range(model.njnt):
        name = model.joint(j).name or f"joint {j}"
        kind = int(model.jnt_type[j])
        if kind == 0:  # mjJNT_FREE
            names += [f"{name} {s}" for s in ("x", "y", "z", "qw", "qx", "qy", "qz")]
        elif kind == 1:  # mjJNT_BALL
            names += [f"{name} {s}" for s in ("qw", "qx", "qy", "qz")]
        else:
            names.append(name)
    return names


def qvel_names(model: Any) -> list[str]:
    """A name per ``qvel`` entry: the joint's, with vx/vy/vz/wx/wy/wz for a free joint's six."""
    names = []
    for j in range(model.njnt):
        name = model.joint(j).name or f"joint {j}"
        kind = int(model.jnt_type[j])
        if kind == 0:
            names += [f"{name} {s}" for s in ("vx", "vy", "vz", "wx", "wy", "wz")]
        elif kind == 1:
            names += [f"{name} {s}" for s in ("wx", "wy", "wz")]
        else:
            names.append(f"{name} velocity")
    return names


def _range_or_none(low: float, high: float) -> tuple[float, float] | None:
    return (float(low), float(high)) if math.isfinite(low) and math.isfinite(high) else None


# ---- planar walkers: Hopper, Walker2d, HalfCheetah (x velocity reward, qpos[0] left out) -------------------------


def _skip(p: dict) -> int:
    return 1 if p["exclude_current_positions_from_observation"] else 0


def _planar_observe(clip_velocity: bool) -> Callable[[Rows, dict], np.ndarray]:
    def observe(rows: Rows, p: dict) -> np.ndarray:
        velocity = np.clip(rows.qvel, -10, 10) if clip_velocity else rows.qvel
        return np.concatenate((rows.qpos[:, _skip(p) :], velocity), axis=1)

    return observe


def _x_before(rows: Rows, p: dict) -> np.ndarray:
    return rows.qpos[:, 0].copy()


def _forward_reward(rows: Rows, p: dict, x_before: np.ndarray, dt: float) -> np.ndarray:
    x_velocity = (rows.qpos[:, 0] - x_before) / dt
    return p["forward_reward_weight"] * x_velocity


def _hopper_healthy(rows: Rows, p: dict) -> np.ndarray:
    z, angle = rows.qpos[:, 1], rows.qpos[:, 2]
    state = np.concatenate((rows.qpos, rows.qvel), axis=1)[:, 2:]
    min_state, max_state = p["healthy_state_range"]
    min_z, max_z = p["healthy_z_range"]
    min_angle, max_angle = p["healthy_angle_range"]
    healthy_state = np.all(np.logical_and(min_state < state, state < max_state), axis=1)
    healthy_z = (min_z < z) & (z < max_z)
    healthy_angle = (min_angle < angle) & (angle < max_angle)
    return healthy_state & healthy_z & healthy_angle


def _walker_healthy(rows: Rows, p: dict) -> np.ndarray:
    z, angle = rows.qpos[:, 1], rows.qpos[:, 2]
    min_z, max_z = p["healthy_z_range"]
    min_angle, max_angle = p["healthy_angle_range"]
    return (min_z < z) & (z < max_z) & (min_angle < angle) & (angle < max_angle)


def _healthy_walker_reward(healthy: Callable[[Rows, dict], np.ndarray]) -> Callable:
    """Hopper's and Walker2d's ``_get_rew`` and termination: forward + healthy - control, ended when unhealthy."""

    def reward(rows: Rows, p: dict, x_before: np.ndarray, actions: np.ndarray, dt: float):
        forward = _forward_reward(rows, p, x_before, dt)
        is_healthy = healthy(rows, p)
        rewards = forward + is_healthy.astype(np.float64) * p["healthy_reward"]
        reward = rewards - control_cost(p["ctrl_cost_weight"], actions)
        terminated = ~is_healthy if p["terminate_when_unhealthy"] else np.zeros_like(is_healthy)
        return reward, terminated

    return reward


def _cheetah_reward(rows: Rows, p: dict, x_before: np.ndarray, actions: np.ndarray, dt: float):
    reward = _forward_reward(rows, p, x_before, dt) - control_cost(p["ctrl_cost_weight"], actions)
    return reward, np.zeros(len(reward), dtype=bool)


def uniform_reset(rng: np.random.Generator, model: Any, p: dict) -> tuple[np.ndarray, np.ndarray]:
    """``init + U(-s, s)`` for qpos, then the same for qvel (Hopper, Walker2d, InvertedPendulum)."""
    scale = p["reset_noise_scale"]
    qpos = model.qpos0 + rng.uniform(low=-scale, high=scale, size=model.nq)
    qvel = np.zeros(model.nv) + rng.uniform(low=-scale, high=scale, size=model.nv)
    return qpos, qvel


def normal_velocity_reset(rng: np.random.Generator, model: Any, p: dict) -> tuple[np.ndarray, np.ndarray]:
    """``init + U(-s, s)`` for qpos, then ``init + s * N(0, 1)`` for qvel (HalfCheetah, Ant, InvertedDoublePendulum)."""
    scale = p["reset_noise_scale"]
    qpos = model.qpos0 + rng.uniform(low=-scale, high=scale, size=model.nq)
    qvel = np.zeros(model.nv) + scale * rng.standard_normal(model.nv)
    return qpos, qvel


def _planar_labels(model: Any, p: dict) -> tuple[str, ...]:
    return tuple(f"{n} position" for n in qpos_names(model)[_skip(p) :]) + tuple(qvel_names(model))


def _planar_bounds(model: Any, p: dict) -> tuple[tuple[float, float] | None, ...]:
    """The healthy z and angle ranges on qpos[1] and qpos[2] (Hopper, Walker2d), where both ends are finite."""
    bounds: list[tuple[float, float] | None] = [None] * (model.nq - _skip(p) + model.nv)
    if "healthy_z_range" in p:
        bounds[1 - _skip(p)] = _range_or_none(*p["healthy_z_range"])
        bounds[2 - _skip(p)] = _range_or_none(*p["healthy_angle_range"])
    return tuple(bounds)


PLANAR_DEFAULTS = {"forward_reward_weight": 1.0, "exclude_current_positions_from_observation": True}

def _walker_task(id: str, xml_file: str, healthy: Callable[[Rows, dict], np.ndarray], ranges: dict) -> Task:
    """Hopper or Walker2d: a planar body rewarded for forward speed and for staying healthy (``healthy`` on the
    ``ranges`` given), ended when it is not."""
    return Task(
        id=id,
        xml_file=xml_file,
        horizon=1000,
        defaults={
            "frame_skip": 4,
            **PLANAR_DEFAULTS,
            "ctrl_cost_weight": 1e-3,
            "healthy_reward": 1.0,
            "terminate_when_unhealthy": True,
            **ranges,
            "reset_noise_scale": 5e-3,
        },
        observe=_planar_observe(clip_velocity=True),
        before=_x_before,
        reward=_healthy_walker_reward(healthy),
        reset=uniform_reset,
        labels=_planar_labels,
        bounds=_planar_bounds,
        terminates=lambda p: bool(p["terminate_when_unhealthy"]),
    )


HOPPER = _walker_task(
    "Hopper-v5",
    "hopper.xml",
    _hopper_healthy,
    {"healthy_state_range": (-100.0, 100.0), "healthy_z_range": (0.7, INF), "healthy_angle_range": (-0.2, 0.2)},
)
WALKER2D = _walker_task(
    "Walker2d-v5",
    "walker2d_v5.xml",
    _walker_healthy,
    {"healthy_z_range": (0.8, 2.0), "healthy_angle_range": (-1.0, 1.0)},
)

HALF_CHEETAH = Task(
    id="HalfCheetah-v5",
    xml_file="half_cheetah.xml",
    horizon=1000,
    defaults={"frame_skip": 5, **PLANAR_DEFAULTS, "ctrl_cost_weight": 0.1, "reset_noise_scale": 0.1},
    observe=_planar_observe(clip_velocity=False),
    before=_x_before,
    reward=_cheetah_reward,
    reset=normal_velocity_reset,
    labels=_planar_labels,
    bounds=_planar_bounds,
    terminates=lambda p: False,
    bounds_label="no bounds (HalfCheetah never terminates)",
)


# ---- Ant: x velocity of the main body, healthy torso height, contact forces --------------------------------------

CFRC_PARTS = ("torque x", "torque y", "torque z", "force x", "force y", "force z")  # cfrc_ext's 6, MuJoCo's order


def _ant_skip(p: dict) -> int:
    return 2 if p["exclude_current_positions_from_observation"] else 0


def _clipped_contact_forces(rows: Rows, p: dict) -> np.ndarray:
    min_value, max_value = p["contact_force_range"]
    return np.clip(rows.cfrc_ext, min_value, max_value)  # (N, nbody, 6)


def _ant_observe(rows: Rows, p: dict) -> np.ndarray:
    parts = [rows.qpos[:, _ant_skip(p) :], rows.qvel]
    if p["include_cfrc_ext_in_observation"]:
        parts.append(_clipped_contact_forces(rows, p)[:, 1:].reshape(len(rows.qpos), -1))
    return np.concatenate(parts, axis=1)


def _main_body_xy(rows: Rows, p: dict) -> np.ndarray:
    return rows.xpos[:, rows.model.body(p["main_body"]).id, :2].copy()


def _ant_reward(rows: Rows, p: dict, xy_before: np.ndarray, actions: np.ndarray, dt: float):
    xy_velocity = (_main_body_xy(rows, p) - xy_before) / dt
    forward = xy_velocity[:, 0] * p["forward_reward_weight"]
    state = np.concatenate((rows.qpos, rows.qvel), axis=1)
    min_z, max_z = p["healthy_z_range"]
    is_healthy = np.isfinite(state).all(axis=1) & (min_z <= state[:, 2]) & (state[:, 2] <= max_z)
    rewards = forward + is_healthy.astype(np.float64) * p["healthy_reward"]
    costs = control_cost(p["ctrl_cost_weight"], actions)
    if rows.cfrc_ext is not None:
        squares = np.square(_clipped_contact_forces(rows, p)).reshape(len(actions), -1)
        costs = costs + p["contact_cost_weight"] * np.sum(squares, axis=1)
    terminated = ~is_healthy if p["terminate_when_unhealthy"] else np.zeros_like(is_healthy)
    return rewards - costs, terminated


def _ant_labels(model: Any, p: dict) -> tuple[str, ...]:
    labels = [f"{n} position" for n in qpos_names(model)[_ant_skip(p) :]] + qvel_names(model)
    if p["include_cfrc_ext_in_observation"]:
        labels += [f"{model.body(b).name} contact {c}" for b in range(1, model.nbody) for c in CFRC_PARTS]
    return tuple(labels)


def _ant_bounds(model: Any, p: dict) -> tuple[tuple[float, float] | None, ...]:
    bounds: list[tuple[float, float] | None] = [None] * len(_ant_labels(model, p))
    bounds[2 - _ant_skip(p)] = _range_or_none(*p["healthy_z_range"])  # the torso's height, qpos[2]
    if p["include_cfrc_ext_in_observation"]:
        first = model.nq - _ant_skip(p) + model.nv
        bounds[first:] = [_range_or_none(*p["contact_force_range"])] * (len(bounds) - first)
    return tuple(bounds)


ANT = Task(
    id="Ant-v5",
    xml_file="ant.xml",
    horizon=1000,
    defaults={
        "frame_skip": 5,
        **PLANAR_DEFAULTS,
        "ctrl_cost_weight": 0.5,
        "contact_cost_weight": 5e-4,
        "healthy_reward": 1.0,
        "main_body": 1,
        "terminate_when_unhealthy": True,
        "healthy_z_range": (0.2, 1.0),
        "contact_force_range": (-1.0, 1.0),
        "reset_noise_scale": 0.1,
        "include_cfrc_ext_in_observation": True,
    },
    observe=_ant_observe,
    before=_main_body_xy,
    reward=_ant_reward,
    reset=normal_velocity_reset,
    labels=_ant_labels,
    bounds=_ant_bounds,
    terminates=lambda p: bool(p["terminate_when_unhealthy"]),
    derived=frozenset({"xpos"}),
    contact_forces=lambda p: bool(p["include_cfrc_ext_in_observation"] or p["contact_cost_weight"] != 0),
    bounds_label="healthy torso height and contact-force clip range",
)
