"""What a policy does: one episode per policy from a shared start state (for the replays).

Used to animate a policy before and after gradient ascent (Section 5): the same initial
state and the same random stream for both, so the difference is the policy's.
"""

from __future__ import annotations

import numpy as np

from pvnviz.policies import PolicyArch, sampling_policy


def cartpole_episodes(arch: PolicyArch, params: np.ndarray, horizon: int, seed: int) -> np.ndarray:
    """States (K, T+1, 4) of one episode per policy from one start; NaN after termination."""
    from pvnviz import cartpole

    rng = np.random.default_rng(seed)
    start = cartpole.reset_states(rng, (1, 1))
    starts = np.broadcast_to(start, (len(params), 1, 4)).copy()
    traj = cartpole.rollout_trajectories(sampling_policy(arch, params, rng), starts, horizon=horizon)
    states = traj.states[:, 0].copy()  # (K, T+1, 4)
    alive = np.concatenate([np.ones((len(params), 1), bool), traj.active[:, 0]], axis=1)  # state t reached?
    states[~alive] = np.nan
    return states


def swimmer_episodes(arch: PolicyArch, params: np.ndarray, horizon: int, seed: int):
    """One Swimmer episode per policy from one start: capsule end points (K, T+1, 3, 2, 3), returns, distance."""
    from pvnviz import swimmer

    rng = np.random.default_rng(seed)
    start = swimmer.reset_states(rng, (1, 1))
    starts = np.broadcast_to(start, (len(params), 1, start.shape[-1])).copy()
    traj = swimmer.rollout_trajectories(sampling_policy(arch, params, rng), starts, horizon=horizon)
    _, segments = body_frames(traj.qpos[:, 0])
    return segments, traj.returns[:, 0], traj.x_displacement[:, 0]


def body_frames(qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Link positions (..., 3, 3) and capsule end points (..., 3, 2, 3) for joint positions (..., 5).

    Runs ``mj_kinematics`` once per frame (a Python loop: use it for replays, not training).
    End points are (front, back) along each capsule's axis, in world coordinates.
    """
    import mujoco

    from pvnviz.swimmer import BODY_NAMES, NUM_POSITIONS, load_model

    model = load_model()
    qpos = np.asarray(qpos, dtype=np.float64)
    flat = qpos.reshape(-1, NUM_POSITIONS)
    body_ids = [model.body(name).id for name in BODY_NAMES]
    geom_ids = [int(np.flatnonzero(model.geom_bodyid == body)[0]) for body in body_ids]
    half_lengths = model.geom_size[geom_ids, 1]
    data = mujoco.MjData(model)
    bodies = np.empty((flat.shape[0], len(BODY_NAMES), 3))
    segments = np.empty((flat.shape[0], len(BODY_NAMES), 2, 3))
    for frame, positions in enumerate(flat):
        data.qpos[:] = positions
        mujoco.mj_kinematics(model, data)
        bodies[frame] = data.xpos[body_ids]
        centers = data.geom_xpos[geom_ids]
        axes = data.geom_xmat[geom_ids].reshape(-1, 3, 3)[:, :, 2]  # capsule axis = geom z axis
        # MuJoCo orients each capsule's z axis towards the swimmer's front (+x at qpos = 0)
        segments[frame, :, 0] = centers + half_lengths[:, None] * axes
        segments[frame, :, 1] = centers - half_lengths[:, None] * axes
    lead = qpos.shape[:-1]
    return bodies.reshape(*lead, len(BODY_NAMES), 3), segments.reshape(*lead, len(BODY_NAMES), 2, 3)
