"""Gymnasium's MuJoCo ``-v5`` control tasks as tables (``pvnviz.envs.mujoco_tasks.Task``): InvertedPendulum,
InvertedDoublePendulum and Reacher, stepped in one batch by ``pvnviz.envs.mujoco_family`` (Section 6).

Transcribed from gymnasium 1.4.0's ``inverted_pendulum_v5.py``, ``inverted_double_pendulum_v5.py`` and
``reacher_v5.py`` with the same floating-point operations in the same order, as ``pvnviz.envs.mujoco_tasks``
says for the locomotion tasks; ``p`` is the resolved keyword arguments.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pvnviz.envs.mujoco_tasks import (
    Rows,
    Task,
    normal_velocity_reset,
    qpos_names,
    qvel_names,
    scalar_square,
    uniform_reset,
)

# ---- InvertedPendulum, InvertedDoublePendulum: reward for staying up -------------------------------------------------


def _pendulum_observe(rows: Rows, p: dict) -> np.ndarray:
    return np.concatenate((rows.qpos, rows.qvel), axis=1)


def _pendulum_reward(rows: Rows, p: dict, before: None, actions: np.ndarray, dt: float):
    observation = _pendulum_observe(rows, p)
    terminated = ~np.isfinite(observation).all(axis=1) | (np.abs(observation[:, 1]) > 0.2)
    return (~terminated).astype(np.float64), terminated


INVERTED_PENDULUM = Task(
    id="InvertedPendulum-v5",
    xml_file="inverted_pendulum.xml",
    horizon=1000,
    defaults={"frame_skip": 2, "reset_noise_scale": 0.01},
    observe=_pendulum_observe,
    before=lambda rows, p: None,
    reward=_pendulum_reward,
    reset=uniform_reset,
    labels=lambda model, p: tuple(f"{n} position" for n in qpos_names(model)) + tuple(qvel_names(model)),
    bounds=lambda model, p: ((-1.0, 1.0), (-0.2, 0.2), None, None),
    terminates=lambda p: True,
    bounds_label="the cart's rail and the pole angle's termination bounds",
)


def _double_observe(rows: Rows, p: dict) -> np.ndarray:
    qpos = rows.qpos
    return np.concatenate(
        (
            qpos[:, :1],
            np.sin(qpos[:, 1:]),
            np.cos(qpos[:, 1:]),
            np.clip(rows.qvel, -10, 10),
            np.clip(rows.qfrc_constraint, -10, 10)[:, :1],
        ),
        axis=1,
    )


def _double_reward(rows: Rows, p: dict, before: None, actions: np.ndarray, dt: float):
    x, y = rows.site_xpos[:, 0, 0], rows.site_xpos[:, 0, 2]  # the tip's site, as the last substep placed it
    terminated = y <= 1
    v1, v2 = rows.qvel[:, 1], rows.qvel[:, 2]
    dist_penalty = 0.01 * scalar_square(x) + scalar_square(y - 2)
    vel_penalty = 0.001 * scalar_square(v1) + 0.005 * scalar_square(v2)
    alive_bonus = p["healthy_reward"] * (~terminated).astype(np.float64)
    return alive_bonus - dist_penalty - vel_penalty, terminated


def _double_labels(model: Any, p: dict) -> tuple[str, ...]:
    cart, *hinges = qpos_names(model)
    return (
        (f"{cart} position",)
        + tuple(f"sin {h}" for h in hinges)
        + tuple(f"cos {h}" for h in hinges)
        + tuple(qvel_names(model))
        + (f"{cart} constraint force",)
    )


INVERTED_DOUBLE_PENDULUM = Task(
    id="InvertedDoublePendulum-v5",
    xml_file="inverted_double_pendulum.xml",
    horizon=1000,
    defaults={"frame_skip": 5, "healthy_reward": 10.0, "reset_noise_scale": 0.1},
    observe=_double_observe,
    before=lambda rows, p: None,
    reward=_double_reward,
    reset=normal_velocity_reset,
    labels=_double_labels,
    bounds=lambda model, p: ((-1.0, 1.0),) + (None,) * 8,
    terminates=lambda p: True,
    derived=frozenset({"site_xpos", "qfrc_constraint"}),
    bounds_label="the cart's rail (it ends when the tip falls below 1 m)",
)


# ---- Reacher: distance of the fingertip to a random target ----------------------------------------------------------


def _fingertip_to_target(rows: Rows) -> np.ndarray:
    model = rows.model
    return rows.xpos[:, model.body("fingertip").id] - rows.xpos[:, model.body("target").id]  # (N, 3)


def _reacher_observe(rows: Rows, p: dict) -> np.ndarray:
    theta = rows.qpos[:, :2]
    vec = _fingertip_to_target(rows)
    return np.concatenate((np.cos(theta), np.sin(theta), rows.qpos[:, 2:], rows.qvel[:, :2], vec[:, :2]), axis=1)


def _reacher_reward(rows: Rows, p: dict, before: None, actions: np.ndarray, dt: float):
    vec = _fingertip_to_target(rows)
    norm = np.sqrt(np.matmul(vec[:, None, :], vec[:, :, None])[:, 0, 0])  # np.linalg.norm's BLAS dot, per row
    reward_dist = -norm * p["reward_dist_weight"]
    reward_ctrl = -np.sum(np.square(actions), axis=1) * p["reward_control_weight"]
    return reward_dist + reward_ctrl, np.zeros(len(actions), dtype=bool)


def _reacher_reset(rng: np.random.Generator, model: Any, p: dict) -> tuple[np.ndarray, np.ndarray]:
    """Arm angles ``U(-0.1, 0.1)``, the target drawn in the disc of radius 0.2 by rejection, velocities
    ``U(-0.005, 0.005)`` with the target's set to 0: gymnasium's ``reset_model``."""
    qpos = rng.uniform(low=-0.1, high=0.1, size=model.nq) + model.qpos0
    while True:
        goal = rng.uniform(low=-0.2, high=0.2, size=2)
        if np.linalg.norm(goal) < 0.2:
            break
    qpos[-2:] = goal
    qvel = np.zeros(model.nv) + rng.uniform(low=-0.005, high=0.005, size=model.nv)
    qvel[-2:] = 0
    return qpos, qvel


def _reacher_labels(model: Any, p: dict) -> tuple[str, ...]:
    arm = qpos_names(model)[:2]
    return (
        tuple(f"cos {j}" for j in arm)
        + tuple(f"sin {j}" for j in arm)
        + tuple(f"{n} position" for n in qpos_names(model)[2:])
        + tuple(qvel_names(model)[:2])
        + ("fingertip - target x", "fingertip - target y")
    )


REACHER = Task(
    id="Reacher-v5",
    xml_file="reacher.xml",
    horizon=50,
    defaults={"frame_skip": 2, "reward_dist_weight": 1.0, "reward_control_weight": 1.0},
    observe=_reacher_observe,
    before=lambda rows, p: None,
    reward=_reacher_reward,
    reset=_reacher_reset,
    labels=_reacher_labels,
    bounds=lambda model, p: (None,) * 10,
    terminates=lambda p: False,
    derived=frozenset({"xpos"}),
    bounds_label="no bounds (Reacher never terminates)",
)
