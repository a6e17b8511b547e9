"""Replays of any MuJoCo environment (Hopper, Walker2d, HalfCheetah, Ant, Reacher, ...): a policy before and after
its ascent (Section 5), drawn from the model's own geoms at each step's joint positions, with no renderer.

``mujoco.mj_kinematics`` places every geom of the model at a frame's ``qpos``; each geom is drawn as the segment
along its axis (capsules and cylinders: the two ends of the axis, ``geom_xpos +- size[1] * z axis``; boxes and
ellipsoids: their longest axis) or, for a sphere or a mesh, its centre. Geoms of the world body are drawn once
(tracks: the floor as a line, rails as segments); the others move (``links`` parts, one per geom), and the root
body's path is the trail. The view is the side (x, z), or from above (x, y) for a model that stays in a horizontal
plane (Swimmer, Reacher), as the Swimmer's own replay (``pvnviz.envs.replay.swimmer_bodies``) draws it.

A frame is the environment's ``Dynamics.frame``: the joint positions ``qpos``, ``(K, B, T + 1, nq)`` in a recorded
rollout. ``mujoco_replay(dynamics, reset_states, load_model)`` makes the ``BatchedEnv.replay`` of an environment
from its step function and its ``mujoco.MjModel``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pvnviz.envs.replay import ReplayFunction, shared_start_episodes
from pvnviz.envs.rollout import Dynamics, Trajectories
from pvnviz.envs.scene import Panel, Part, Replay

if TYPE_CHECKING:
    from pvnviz.core.policies import PolicyArch

FLAT_SPREAD = 0.02  # metres: a model whose moving geoms' heights vary less than this is drawn from above


@dataclass(frozen=True)
class GeomFrames:
    """Every geom's segment at every frame: ``ends`` (F, G, 2, 3) world coordinates (a point geom's two ends are
    its centre), which geoms belong to the world body (``static``, (G,) bool), which are planes (``plane``), and
    the root body's position (F, 3)."""

    ends: np.ndarray
    static: np.ndarray
    plane: np.ndarray
    root: np.ndarray


def geom_frames(qpos: np.ndarray, model: Any) -> GeomFrames:
    """``GeomFrames`` for joint positions ``qpos`` (F, nq) of ``model`` (a ``mujoco.MjModel``): one
    ``mj_kinematics`` per frame (a Python loop: for replays, not training)."""
    import mujoco

    qpos = np.asarray(qpos, dtype=np.float64).reshape(-1, model.nq)
    types = np.asarray(model.geom_type)
    axial = np.isin(types, [mujoco.mjtGeom.mjGEOM_CAPSULE, mujoco.mjtGeom.mjGEOM_CYLINDER])
    boxy = np.isin(types, [mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_ELLIPSOID])
    size = np.asarray(model.geom_size, dtype=np.float64)
    longest = np.argmax(size, axis=1)  # a box's or an ellipsoid's longest local axis
    half = np.where(axial, size[:, 1], np.where(boxy, size[np.arange(len(size)), longest], 0.0))
    local_axis = np.where(axial, 2, np.where(boxy, longest, 2))
    data = mujoco.MjData(model)
    ends = np.empty((len(qpos), model.ngeom, 2, 3))
    root = np.empty((len(qpos), 3))
    for frame, positions in enumerate(qpos):
        data.qpos[:] = positions
        mujoco.mj_kinematics(model, data)
        axes = data.geom_xmat.reshape(-1, 3, 3)[np.arange(model.ngeom), :, local_axis]  # (G, 3) world directions
        ends[frame, :, 0] = data.geom_xpos + half[:, None] * axes
        ends[frame, :, 1] = data.geom_xpos - half[:, None] * axes
        root[frame] = data.xpos[min(1, model.nbody - 1)]
    static = np.asarray(model.geom_bodyid) == 0
    return GeomFrames(ends, static, types == mujoco.mjtGeom.mjGEOM_PLANE, root)


def view_axes(frames: GeomFrames) -> tuple[int, int]:
    """The world axes drawn across and up: (x, z) from the side, or (x, y) from above for a model whose moving
    geoms stay within ``FLAT_SPREAD`` of one height."""
    moving = frames.ends[:, ~frames.static]
    flat = moving.size == 0 or np.ptp(moving[..., 2]) < FLAT_SPREAD
    return (0, 1) if flat else (0, 2)


def panel_parts(frames: GeomFrames, axes: tuple[int, int]) -> tuple[Part, ...]:
    """One panel's parts: the world's geoms (tracks; a plane seen from the side as the floor's line across the
    panel), the root body's path (trail), then each moving geom (links)."""
    across, up = axes
    drawn = frames.ends[..., [across, up]]  # (F, G, 2, 2)
    moving = ~frames.static
    lo, hi = drawn[:, moving, :, 0].min() - 0.5, drawn[:, moving, :, 0].max() + 0.5
    parts = []
    for g in np.flatnonzero(frames.static):
        if frames.plane[g]:
            if up == 2:  # seen from the side: the floor's height across the panel
                height = frames.ends[0, g, 0, 2]
                parts.append(Part("track", np.array([[[lo, height], [hi, height]]]), "floor"))
        else:
            parts.append(Part("track", drawn[:1, g], "fixed geom"))
    parts.append(Part("trail", frames.root[None, :, [across, up]], "path of the root body"))
    for g in np.flatnonzero(moving):
        points = drawn[:, g]
        if np.allclose(points[:, 0], points[:, 1]):
            points = points[:, :1]  # a sphere or a mesh: its centre
        parts.append(Part("links", points, f"geom {g}"))
    return tuple(parts)


def mujoco_replay(dynamics: Dynamics, reset_states: Callable, load_model: Callable[[], Any]) -> ReplayFunction:
    """The ``BatchedEnv.replay`` of a MuJoCo environment whose frames are ``qpos``: one episode per policy from one
    shared start state, one panel each (stacked when the scene is wider than twice its height). Deterministic
    policies are rolled out for every pair in one batch (``replay.many``, as the Swimmer's)."""

    def replay(arch: PolicyArch, params: np.ndarray, horizon: int, seed: int) -> Replay:
        return draw(shared_start_episodes(dynamics, reset_states, arch, params, horizon, seed))

    def many(arch: PolicyArch, stacks: Sequence[np.ndarray], horizon: int, seed: int) -> list[Replay]:
        traj = shared_start_episodes(dynamics, reset_states, arch, np.concatenate(stacks), horizon, seed)
        ends = np.cumsum([len(stack) for stack in stacks])
        return [draw(Trajectories(*(a[end - len(s) : end] for a in traj))) for s, end in zip(stacks, ends)]

    def draw(traj: Trajectories) -> Replay:
        model = load_model()
        alive = np.concatenate([np.ones((len(traj.returns), 1), bool), traj.active[:, 0]], axis=1)
        made = [geom_frames(qpos[: int(n)], model) for qpos, n in zip(traj.frames[:, 0], alive.sum(1))]
        axes = view_axes(made[0])
        panels = []
        for frames, ret in zip(made, traj.returns[:, 0]):
            moved = frames.root[-1, 0] - frames.root[0, 0]
            summary = f"return {ret:.0f}, {len(frames.root) - 1} steps, {moved:+.2f} m"
            panels.append(Panel(panel_parts(frames, axes), len(frames.root), summary))
        points = np.concatenate([f.ends[..., list(axes)].reshape(-1, 2) for f in made])
        width, height = np.ptp(points, axis=0)
        seen = "from above" if axes == (0, 1) else "from the side"
        return Replay(
            title=f"Replay: {dynamics.name} {seen}, before and after ascent",
            panels=tuple(panels),
            x_title="x (m), forward →",
            y_title="y (m)" if axes == (0, 1) else "height z (m)",
            x_range=None,
            y_range=None,
            layout="rows" if width > 2 * max(height, 1e-9) else "columns",
            frame_every=max(1, int(np.ceil(max(len(f.root) for f in made) / 200))),
            frame_ms=50,
            caption="MuJoCo's own geoms at each step's joint positions, from the same start state for both "
            "policies; the blue line is the path of the root body. Press ▶ and compare how far and how steadily "
            "each policy moves (the panel titles give each one's return, steps alive and distance along x).",
        )

    replay.many = many
    return replay
