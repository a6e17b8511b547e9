"""gymnasium's classic control as batched NumPy step functions: the ``BatchedEnv`` (``pvnviz.envs.batched``) of
``Acrobot-v1``, ``MountainCar-v0``, ``MountainCarContinuous-v0`` and ``Pendulum-v1`` (and ``CartPole-v1``), so
the PVN pipeline (Section 6, Algorithms 1-3 of the paper) can run K policies x B episodes of them as one array
operation per step.

Each environment's physics lives in its own module (``pvnviz.envs.acrobot``, ``pvnviz.envs.mountain_car``,
``pvnviz.envs.pendulum``, ``pvnviz.envs.cartpole``), equal to gymnasium 1.4.0's bit for bit: observations,
rewards and terminations, from the same reset draws (``reset_states(rng, (K, B))`` draws what K x B successive
``env.reset()`` calls draw from the same generator). This module is the family's entry point for
``pvnviz.envs.families``: :data:`IDS` and :func:`batched_env`.

Actions are in the environment's own units (integers for ``Discrete``, reals in the ``Box`` for continuous
actions, taken as the space's float32); mapping a policy's tanh outputs into the ``Box`` is done by the caller
(``pvnviz.envs.gym_id.box_actions``). Truncation is the rollout's horizon. Replays draw each environment's raw
state (``Dynamics.frame``) as ``pvnviz.envs.scene_classic.replay_for`` picks the scene by ID.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pvnviz.envs import acrobot, mountain_car, pendulum
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.rollout import Dynamics, record
from pvnviz.envs.scene_classic import replay_for

IDS = ("Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1")
CARTPOLE_ID = "CartPole-v1"
# The constructor keywords each environment takes (besides render_mode, which draws nothing here), and defaults.
KEYWORDS: dict[str, dict[str, Any]] = {
    "Acrobot-v1": {},
    "MountainCar-v0": {"goal_velocity": 0},
    "MountainCarContinuous-v0": {"goal_velocity": 0},
    "Pendulum-v1": {"g": pendulum.DEFAULT_GRAVITY},
    CARTPOLE_ID: {},
}
VISIT_STEPS = 100  # random-action episodes that ``visited_states`` draws from are at most this long
FAMILY = "classic control"


@dataclass(frozen=True)
class _Spec:
    """What differs between the classic environments' ``BatchedEnv``s besides their dynamics."""

    obs_dim: int
    act_dim: int
    discrete: bool
    state_labels: tuple[str, ...]
    state_bounds: tuple[tuple[float, float] | None, ...]
    bounds_label: str
    reset_states: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
    observation: tuple[np.ndarray, np.ndarray]  # the observation Box's low and high (float32)
    action_bounds: tuple[float, float] | None  # the action Box's low and high (None: Discrete)
    # one core, one block of 1000 random-action episodes: ``python tests/test_classic_envs.py`` (a shared machine)
    steps_per_second: float
    bytes_per_episode: int  # the state, and the temporaries of one step (tracemalloc's peak)
    fixed_length: bool


def _specs() -> dict[str, _Spec]:
    mc_low, mc_high = mountain_car.OBSERVATION_LOW, mountain_car.OBSERVATION_HIGH
    mc_labels = ("position", "velocity")
    mc_bounds = (
        (mountain_car.MIN_POSITION, mountain_car.MAX_POSITION),
        (-mountain_car.MAX_SPEED, mountain_car.MAX_SPEED),
    )
    acro_high = acrobot.OBSERVATION_HIGH
    return {
        "Acrobot-v1": _Spec(
            6, acrobot.NUM_ACTIONS, True,
            ("cos theta1", "sin theta1", "cos theta2", "sin theta2", "theta1 velocity", "theta2 velocity"),
            tuple((-float(h), float(h)) for h in acro_high), "observation-space bounds",
            acrobot.reset_states, (-acro_high, acro_high), None, 4e5, 600, False,
        ),
        "MountainCar-v0": _Spec(
            2, mountain_car.NUM_ACTIONS, True, mc_labels, mc_bounds, "the track's ends and the speed limit",
            mountain_car.reset_states, (mc_low, mc_high), None, 5e6, 200, False,
        ),
        "MountainCarContinuous-v0": _Spec(
            2, 1, False, mc_labels, mc_bounds, "the track's ends and the speed limit",
            mountain_car.reset_states, (mc_low, mc_high), (mountain_car.MIN_ACTION, mountain_car.MAX_ACTION),
            3e6, 200, False,
        ),
        "Pendulum-v1": _Spec(
            3, 1, False, ("cos theta", "sin theta", "angular velocity"),
            ((-1.0, 1.0), (-1.0, 1.0), (-float(pendulum.MAX_SPEED), float(pendulum.MAX_SPEED))),
            "observation-space bounds", pendulum.reset_states,
            (-pendulum.OBSERVATION_HIGH, pendulum.OBSERVATION_HIGH), (-pendulum.MAX_TORQUE, pendulum.MAX_TORQUE),
            1.5e6, 250, True,
        ),
    }


def dynamics(gym_id: str, kwargs: Mapping[str, Any] | None = None) -> Dynamics:
    """The batched step function of one of :data:`IDS` built with its constructor keywords (checked)."""
    kwargs = check_kwargs(gym_id, kwargs)
    if gym_id == "Acrobot-v1":
        return acrobot.Acrobot()
    if gym_id == "MountainCar-v0":
        return mountain_car.MountainCar(**kwargs)
    if gym_id == "MountainCarContinuous-v0":
        return mountain_car.MountainCarContinuous(**kwargs)
    return pendulum.Pendulum(**kwargs)


def check_kwargs(gym_id: str, kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keywords, without ``render_mode``; a ValueError names an unknown environment or keyword."""
    if gym_id not in KEYWORDS:
        raise ValueError(f"{gym_id!r} is not a classic-control environment here; choose one of: {', '.join(KEYWORDS)}.")
    kwargs = {k: v for k, v in dict(kwargs or {}).items() if k != "render_mode"}
    unknown = sorted(set(kwargs) - set(KEYWORDS[gym_id]))
    if unknown:
        known = ", ".join(KEYWORDS[gym_id]) or "none"
        raise ValueError(
            f"{gym_id} takes no keyword {', '.join(unknown)}; its keywords are: {known} (and render_mode)."
        )
    return kwargs


def batched_env(gym_id: Any, kwargs: Mapping[str, Any] | None = None) -> BatchedEnv:
    """The ``BatchedEnv`` of a classic-control environment: ``gym_id`` is an ID string (keywords in ``kwargs``) or
    a ``pvnviz.envs.gym_id.GymId`` (its ``id`` and ``kwargs``). The name is the ID; a caller may rename it."""
    if hasattr(gym_id, "kwargs_dict"):
        gym_id, kwargs = gym_id.id, {**gym_id.kwargs_dict, **dict(kwargs or {})}
    kwargs = check_kwargs(gym_id, kwargs)
    if gym_id == CARTPOLE_ID:
        from pvnviz.envs import cartpole

        return cartpole.batched_env()
    import gymnasium

    spec = _specs()[gym_id]
    step = dynamics(gym_id, kwargs)
    low, high = spec.observation
    if spec.discrete:
        action_space = gymnasium.spaces.Discrete(spec.act_dim)
    else:
        action_space = gymnasium.spaces.Box(*spec.action_bounds, shape=(spec.act_dim,), dtype=np.float32)
    return BatchedEnv(
        name=gym_id,
        obs_dim=spec.obs_dim,
        act_dim=spec.act_dim,
        discrete=spec.discrete,
        state_labels=spec.state_labels,
        state_bounds=spec.state_bounds,
        dynamics=step,
        visited_states=_visited(step, spec),
        reset_states=spec.reset_states,
        observation_space=gymnasium.spaces.Box(low, high, dtype=np.float32),
        action_space=action_space,
        bounds_label=spec.bounds_label,
        steps_per_second=spec.steps_per_second,
        bytes_per_episode=spec.bytes_per_episode,
        fixed_length=spec.fixed_length,
        replay=replay_for(gym_id, step, spec.reset_states, action_space),
        step_count="horizon" if spec.fixed_length else "measured",
        family=FAMILY,
    )


def _visited(step: Dynamics, spec: _Spec) -> Callable[[np.random.Generator, int], np.ndarray]:
    def visited(rng: np.random.Generator, n: int) -> np.ndarray:
        """Observations (n, obs_dim) float32 visited by uniformly random actions: one from each of n episodes
        of at most ``VISIT_STEPS`` steps (its start or the observation after any step taken)."""
        starts = spec.reset_states(rng, (1, n))
        if spec.discrete:
            def act(obs: np.ndarray) -> np.ndarray:
                return rng.integers(0, spec.act_dim, size=obs.shape[:-1])
        else:
            low, high = spec.action_bounds

            def act(obs: np.ndarray) -> np.ndarray:
                return rng.uniform(low, high, size=(*obs.shape[:-1], spec.act_dim))
        traj = record(step, act, starts, VISIT_STEPS)
        lengths = traj.active[0].sum(-1)  # (n,)
        pick = (rng.random(n) * (lengths + 1)).astype(int)
        return traj.observations[0, np.arange(n), pick].astype(np.float32)

    return visited
