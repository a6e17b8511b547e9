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
    traj = swimmer.rollout_trajectories(sampling_policy(arch, params, rng), starts, horizon=horizon, record_bodies=True)
    return traj.segment_endpoints[:, 0], traj.returns[:, 0], traj.x_displacement[:, 0]
