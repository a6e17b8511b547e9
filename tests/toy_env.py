"""A third environment in one module, to show that adding one needs nothing else (tests/test_registry.py).

"Line": a point on a rail between two walls at -1 and +1. Action 0 pushes left, 1 right; reward 1 per
step until the point hits a wall (so a return is an episode's length, as in CartPole). Its physics is one
batched step function, ``Line``; the rollouts over it are ``pvnviz.envs.rollout``'s, as for every
environment. Its replay draws the point as a small square on the rail between the walls.
"""

from __future__ import annotations

import numpy as np

from pvnviz.envs import replay as replays
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.rollout import State
from pvnviz.envs.scene import Panel, Part, Replay

DT, PUSH = 0.05, 0.1


def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-0.05, 0.05, size=(*shape, 2))


class Line:
    """The point's physics as a batched step function (``pvnviz.envs.rollout.Dynamics``): state (K, B, 2)."""

    name, state_size, discrete, action_shape = "Line", 2, True, ()

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        shape = initial_states.shape[:-1]
        return State(initial_states.copy(), initial_states.astype(np.float32), np.zeros(shape), np.zeros(shape, bool))

    def step(self, state: State, actions: np.ndarray) -> State:
        """A finished episode keeps its position; reward 1 per step taken, until the point hits a wall."""
        x, v, running = state.physics[..., 0], state.physics[..., 1], ~state.done
        x[:] = np.where(running, x + DT * v, x)
        v[:] = np.where(running, v + PUSH * (2 * actions - 1), v)
        state.reward[:] = running
        state.done |= np.abs(x) >= 1.0
        state.obs[:] = state.physics
        return state

    def frame(self, state: State) -> np.ndarray:
        return state.physics[..., :1]  # the position


def replay(arch, params: np.ndarray, horizon: int, seed: int) -> Replay:
    """One episode per policy from one start: the point as a square (half side 0.05) on the rail."""
    traj = replays.shared_start_episodes(Line(), reset_states, arch, params, horizon, seed)
    positions, returns = traj.frames[..., 0], traj.returns
    square = 0.05 * np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]])
    panels = []
    for x, length in zip(positions[:, 0], returns[:, 0].astype(int)):
        point = np.stack([x[: length + 1], 0 * x[: length + 1]], axis=-1)  # (frames, 2)
        parts = (Part("track", np.array([[[-1.0, 0.0], [1.0, 0.0]]])), Part("body", point[:, None] + square))
        panels.append(Panel(parts, length + 1, f"{length} steps"))
    return Replay("Replay: the point on its rail", tuple(panels), "position", "", (-1.2, 1.2), (-0.3, 0.3),
                  "columns", 1, 40, "The point stays between the walls for as many steps as its return.")  # fmt: skip


def visited_states(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.stack([rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, n)], axis=-1).astype(np.float32)


def batched_env() -> BatchedEnv:
    import gymnasium

    return BatchedEnv(
        name="line",
        obs_dim=2,
        act_dim=2,
        discrete=True,
        state_labels=("position", "velocity"),
        state_bounds=((-1.0, 1.0), None),
        dynamics=Line(),
        visited_states=visited_states,
        reset_states=reset_states,
        observation_space=gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32),
        action_space=gymnasium.spaces.Discrete(2),
        bounds_label="the walls",
        steps_per_second=5e6,
        bytes_per_episode=300,
        fixed_length=False,
        replay=replay,
    )
