"""A third environment in one module, to show that adding one needs nothing else (tests/test_registry.py).

"Line": a point on a rail between two walls at -1 and +1. Action 0 pushes left, 1 right; reward 1 per
step until the point hits a wall (so a return is an episode's length, as in CartPole). All K x B episodes
advance in lockstep. Its replay draws the point as a small square on the rail between the walls.
"""

from __future__ import annotations

import numpy as np

from pvnviz.envs import replay as replays
from pvnviz.envs.scene import Panel, Part, Replay
from pvnviz.envs.spec import EnvSpec, check_rollout_counts

DT, PUSH = 0.05, 0.1


def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-0.05, 0.05, size=(*shape, 2))


def rollout_trajectories(policy_fn, states, *, horizon) -> tuple[np.ndarray, np.ndarray]:
    """Positions (K, B, T+1) and returns (K, B) from states (K, B, 2); a finished episode keeps its position."""
    x, v = np.array(states[..., 0], dtype=np.float64), np.array(states[..., 1], dtype=np.float64)
    alive = np.ones(x.shape, dtype=bool)
    returns, positions = np.zeros(x.shape), [x]
    for _ in range(horizon):
        actions = np.asarray(policy_fn(np.stack([x, v], axis=-1).astype(np.float32)))
        x = np.where(alive, x + DT * v, x)
        v = np.where(alive, v + PUSH * (2 * actions - 1), v)
        returns += alive
        alive &= np.abs(x) < 1.0
        positions.append(x)
        if not alive.any():
            break
    return np.stack(positions, axis=-1), returns


def rollout_returns_from_states(policy_fn, states, *, horizon, on_progress=None, nthread=None) -> np.ndarray:
    return rollout_trajectories(policy_fn, states, horizon=horizon)[1]


def replay(arch, params: np.ndarray, horizon: int, seed: int) -> Replay:
    """One episode per policy from one start: the point as a square (half side 0.05) on the rail."""
    positions, returns = replays.shared_start_episodes(reset_states, rollout_trajectories, arch, params, horizon, seed)
    square = 0.05 * np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]])
    panels = []
    for x, length in zip(positions[:, 0], returns[:, 0].astype(int)):
        point = np.stack([x[: length + 1], 0 * x[: length + 1]], axis=-1)  # (frames, 2)
        parts = (Part("track", np.array([[[-1.0, 0.0], [1.0, 0.0]]])), Part("body", point[:, None] + square))
        panels.append(Panel(parts, length + 1, f"{length} steps"))
    return Replay("Replay: the point on its rail", tuple(panels), "position", "", (-1.2, 1.2), (-0.3, 0.3),
                  "columns", 1, 40, "The point stays between the walls for as many steps as its return.")  # fmt: skip


def rollout_returns(policy_fn, *, num_policies, num_episodes, horizon, rng, on_progress=None) -> np.ndarray:
    check_rollout_counts(num_policies, num_episodes, horizon)
    states = reset_states(rng, (num_policies, num_episodes))
    return rollout_returns_from_states(policy_fn, states, horizon=horizon, on_progress=on_progress)


def visited_states(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.stack([rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, n)], axis=-1).astype(np.float32)


def env_spec() -> EnvSpec:
    import gymnasium

    return EnvSpec(
        name="line",
        obs_dim=2,
        act_dim=2,
        discrete=True,
        state_labels=("position", "velocity"),
        state_bounds=((-1.0, 1.0), None),
        rollout_returns=rollout_returns,
        visited_states=visited_states,
        reset_states=reset_states,
        rollout_returns_from_states=rollout_returns_from_states,
        observation_space=gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32),
        action_space=gymnasium.spaces.Discrete(2),
        bounds_label="the walls",
        steps_per_second=5e6,
        bytes_per_episode=300,
        fixed_length=False,
        replay=replay,
    )
