"""What a policy does: one episode per policy from a shared start state, as a ``pvnviz.envs.scene.Replay``.

Used to show a policy before and after gradient ascent (Section 5): the same initial state and the same
random stream for both, so the difference is the policy's. ``shared_start_episodes`` is the part every
environment shares; ``cart_and_pole`` (Section 6.2) and ``swimmer_bodies`` (Section 6.3) make the
``BatchedEnv.replay`` of the shipped environments from their step functions, passed in (this module imports
no environment, so each environment's ``batched_env`` can use it). A new environment may write its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pvnviz.core.progress import ProgressFn, Report, Stage
from pvnviz.envs.rollout import Dynamics, Trajectories, record
from pvnviz.envs.scene import Panel, Part, Replay

if TYPE_CHECKING:
    from pvnviz.core.policies import PolicyArch

ReplayFunction = Callable[["PolicyArch", np.ndarray, int, int], Replay]  # (arch, params (K, P), horizon, seed)
CART_HALF_WIDTH, CART_HEIGHT = 0.25, 0.15  # drawn size of CartPole's cart (the pole hinges on its top)


def shared_start_episodes(
    dynamics: Dynamics,
    reset_states: Callable,
    arch: PolicyArch,
    params: np.ndarray,
    horizon: int,
    seed: int,
) -> Trajectories:
    """One episode per policy (K, 1) from one start state drawn with ``seed``; the record of the rollout."""
    from pvnviz.core.policies import sampling_policy

    rng = np.random.default_rng(seed)
    start = reset_states(rng, (1, 1))
    starts = np.broadcast_to(start, (len(params), 1, start.shape[-1])).copy()
    return record(dynamics, sampling_policy(arch, params, rng), starts, horizon)


def cart_and_pole(dynamics: Dynamics, reset_states: Callable, track: float, pole_length: float = 1.0) -> ReplayFunction:
    """CartPole's replay: cart and pole side by side per policy, the track drawn to the termination bound."""

    def replay(arch: PolicyArch, params: np.ndarray, horizon: int, seed: int) -> Replay:
        traj = shared_start_episodes(dynamics, reset_states, arch, params, horizon, seed)
        alive = np.concatenate([np.ones((len(params), 1), bool), traj.active[:, 0]], axis=1)  # state t reached?
        panels = []
        for states, frames in zip(traj.frames[:, 0], alive.sum(1)):  # one panel per policy
            x, theta = states[:frames, 0, None], states[:frames, 2, None]  # (F, 1)
            cart = np.stack([x + CART_HALF_WIDTH * np.array([-1, 1, 1, -1, -1]), 0 * x + [0, 0, 1, 1, 0]], -1)
            cart[..., 1] *= CART_HEIGHT
            pole = np.stack([x + [0, pole_length] * np.sin(theta), CART_HEIGHT + [0, pole_length] * np.cos(theta)], -1)
            parts = (
                Part("track", np.array([[[-track, 0.0], [track, 0.0]]]), "termination bound"),
                Part("body", cart, "cart"),
                Part("pole", pole, "pole"),
            )
            panels.append(Panel(parts, int(frames), f"{int(frames) - 1} steps"))
        return Replay(
            title="Replay: the same start state, before and after ascent",
            panels=tuple(panels),
            x_title="cart position",
            y_title="height",
            x_range=(-track - 0.2, track + 0.2),
            y_range=(-0.2, 1.3),
            layout="columns",
            frame_every=2,
            frame_ms=40,
            caption="The same start state and random stream for both policies. Press ▶: the starting policy "
            "drops the pole or leaves the track early; the ascended one balances much longer.",
        )

    return replay


def swimmer_bodies(
    dynamics: Dynamics, reset_states: Callable, load_model: Callable, body_names: Sequence[str]
) -> ReplayFunction:
    """Swimmer's replay: the links seen from above (MuJoCo kinematics), stacked per policy, with the front's path.

    The swimmer's frames are its joint positions ``qpos`` (K, B, T + 1, nq); ``qpos[0]`` is the forward position.
    Its policies are deterministic, so ``replay.many`` (see ``replay_all``) rolls out several sets of policies in
    one batch: the same episodes as one rollout per set, for one pass of the time loop instead of one per set.
    """

    def replay(arch: PolicyArch, params: np.ndarray, horizon: int, seed: int) -> Replay:
        return draw(shared_start_episodes(dynamics, reset_states, arch, params, horizon, seed))

    def many(arch: PolicyArch, stacks: Sequence[np.ndarray], horizon: int, seed: int) -> list[Replay]:
        traj = shared_start_episodes(dynamics, reset_states, arch, np.concatenate(stacks), horizon, seed)
        ends = np.cumsum([len(stack) for stack in stacks])
        return [draw(Trajectories(*(a[end - len(s) : end] for a in traj))) for s, end in zip(stacks, ends)]

    def draw(traj: Trajectories) -> Replay:
        qpos = traj.frames[:, 0]  # (K, T+1, nq)
        _, segments = body_frames(qpos, load_model(), body_names)  # (K, T+1, links, 2 ends, xyz)
        returns, distance = traj.returns[:, 0], qpos[:, -1, 0] - qpos[:, 0, 0]
        panels = []
        for ends, ret, dist in zip(segments[..., :2], returns, distance):
            chain = np.concatenate([ends[:, :, 0], ends[:, -1:, 1]], axis=1)  # front ends, then the last back end
            trail = ends[None, :, 0].mean(axis=2)  # (1, T+1, 2): centre of the front link
            parts = (Part("trail", trail, "path of the front link"), Part("links", chain, "links"))
            panels.append(Panel(parts, len(ends), f"return {ret:.0f}, travelled {dist:+.2f} m"))
        return Replay(
            title="Replay: the swimmer from above, before and after ascent",
            panels=tuple(panels),
            x_title="x (m), forward →",
            y_title="y (m)",
            x_range=None,
            y_range=None,
            layout="rows",
            frame_every=10,
            frame_ms=50,
            caption="MuJoCo body positions of the three links, seen from above, from the same start state; the blue "
            f"line is the path of the front link. Press ▶: over the episode the start policy travels {distance[0]:+.2f}"
            f" m and the ascended one {distance[-1]:+.2f} m (forward is to the right; a return sums the forward "
            "velocity).",
        )

    replay.many = many
    return replay


def body_frames(qpos: np.ndarray, model: Any, body_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Link positions (..., L, 3) and capsule end points (..., L, 2, 3) for joint positions (..., nq).

    ``model`` is the ``mujoco.MjModel``, ``body_names`` its L links front to back. Runs ``mj_kinematics``
    once per frame (a Python loop: use it for replays, not training). End points are (front, back) along
    each capsule's axis, in world coordinates.
    """
    import mujoco

    qpos = np.asarray(qpos, dtype=np.float64)
    flat = qpos.reshape(-1, model.nq)
    body_ids = [model.body(name).id for name in body_names]
    geom_ids = [int(np.flatnonzero(model.geom_bodyid == body)[0]) for body in body_ids]
    half_lengths = model.geom_size[geom_ids, 1]
    data = mujoco.MjData(model)
    bodies = np.empty((flat.shape[0], len(body_names), 3))
    segments = np.empty((flat.shape[0], len(body_names), 2, 3))
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
    return bodies.reshape(*lead, len(body_names), 3), segments.reshape(*lead, len(body_names), 2, 3)


def replay_all(
    replay: ReplayFunction,
    arch: PolicyArch,
    pairs: dict[str, np.ndarray],
    horizon: int,
    seed: int,
    on_progress: ProgressFn | None = None,
) -> dict[tuple[str, int], Replay]:
    """``replay`` of every start's (before, after) pair, ``pairs[input_mode]`` (starts, 2, P):
    {(input_mode, start): Replay}, each from the same start state (``seed``), so a page can switch between them
    without computing again.

    A replay of deterministic policies with a ``many`` (the Swimmer's) makes them all in one batched rollout.
    """
    jobs = [(input_mode, start) for input_mode, stack in pairs.items() for start in range(len(stack))]
    many = getattr(replay, "many", None)
    if many is not None and not arch.discrete and jobs:  # no random draws in the episodes: one batch is the same
        if on_progress is not None:
            on_progress(0, len(jobs), Report(Stage.REPLAYS, f"all {len(jobs)} in one batch"))
        made = many(arch, [pairs[input_mode][start] for input_mode, start in jobs], horizon, seed)
        if on_progress is not None:
            on_progress(len(jobs), len(jobs), Report(Stage.REPLAYS, "done"))
        return dict(zip(jobs, made, strict=True))
    out = {}
    for done, (input_mode, start) in enumerate(jobs):
        if on_progress is not None:
            on_progress(done, len(jobs), Report(Stage.REPLAYS, f"{input_mode} start {start + 1}"))
        out[input_mode, start] = replay(arch, pairs[input_mode][start], horizon, seed)
    if on_progress is not None:
        on_progress(len(jobs), len(jobs), Report(Stage.REPLAYS, "done"))
    return out
