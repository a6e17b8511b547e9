"""Replays of gymnasium's classic control (Acrobot, MountainCar, Pendulum): a policy before and after its ascent
(Section 5), drawn from each step's raw physical state as a ``pvnviz.envs.scene.Replay``, with no renderer.

Each scene is the geometry gymnasium's own ``render`` draws (gymnasium 1.4.0,
``gymnasium/envs/classic_control/``), in the environment's units with y up:

* Pendulum (state ``(theta, theta_dot)``): a rod of length 1 from the pivot to ``(-sin theta, cos theta)``;
  ``theta = 0`` is upright, the goal. The circle the tip can reach is drawn as a track.
* Acrobot (state ``(theta1, theta2, dtheta1, dtheta2)``): two links of length 1, the first from the pivot to
  ``(sin theta1, -cos theta1)``, the second on to ``+ (sin(theta1 + theta2), -cos(theta1 + theta2))``;
  the goal line is ``y = 1``, which the tip must rise above.
* MountainCar and MountainCarContinuous (state ``(position, velocity)``): the hill ``y = 0.45 sin(3x) + 0.55``
  over ``[-1.2, 0.6]``, a car 0.12 x 0.06 on it, tilted with the slope, and the flag at the goal position.

A frame is the environment's ``Dynamics.frame``: its raw state, ``(K, B, T + 1, S)`` in a recorded rollout, with
the state variables first, in gymnasium's order. ``classic_replay(scene, dynamics, reset_states)`` makes the
``BatchedEnv.replay`` of an environment from its step function, as ``pvnviz.envs.replay.cart_and_pole`` does
CartPole's; ``replay_for(gym_id, dynamics, reset_states, action_space)`` picks the scene by gymnasium ID.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pvnviz.envs.replay import ReplayFunction, shared_start_episodes
from pvnviz.envs.rollout import Dynamics
from pvnviz.envs.scene import Panel, Part, Replay

if TYPE_CHECKING:
    from pvnviz.core.policies import PolicyArch

HILL_RANGE = (-1.2, 0.6)  # MountainCar's positions (min_position, max_position)
CAR_WIDTH, CAR_HEIGHT, CAR_CLEARANCE = 0.12, 0.06, 0.03  # gymnasium's 40 x 20 px car, 10 px up, at 600 px / 1.8
MOUNTAIN_CAR_GOAL = 0.5  # MountainCar-v0's goal position (MountainCarContinuous-v0: 0.45)


def hill_height(x: np.ndarray) -> np.ndarray:
    """MountainCar's track: the height of the hill at positions ``x``."""
    return np.sin(3 * np.asarray(x, dtype=np.float64)) * 0.45 + 0.55


def pendulum_parts(states: np.ndarray) -> tuple[Part, ...]:
    """The pendulum at states (F, >= 1): the circle its tip sweeps (track) and the rod, pivot to tip (pole)."""
    theta = np.asarray(states, dtype=np.float64)[:, 0]
    angles = np.linspace(0, 2 * np.pi, 73)
    circle = np.stack([np.cos(angles), np.sin(angles)], -1)[None]
    tip = np.stack([-np.sin(theta), np.cos(theta)], -1)  # (F, 2); theta = 0 is upright
    rod = np.stack([np.zeros_like(tip), tip], axis=1)  # (F, 2 points, 2)
    return Part("track", circle, "the tip's circle"), Part("pole", rod, "rod")


def acrobot_parts(states: np.ndarray) -> tuple[Part, ...]:
    """The acrobot at states (F, >= 2): the goal line y = 1 (track) and the two links, pivot to tip (links)."""
    states = np.asarray(states, dtype=np.float64)
    theta1, theta2 = states[:, 0], states[:, 1]
    elbow = np.stack([np.sin(theta1), -np.cos(theta1)], -1)
    tip = elbow + np.stack([np.sin(theta1 + theta2), -np.cos(theta1 + theta2)], -1)
    chain = np.stack([np.zeros_like(tip), elbow, tip], axis=1)  # (F, 3 joints, 2)
    goal = np.array([[[-2.2, 1.0], [2.2, 1.0]]])
    return Part("track", goal, "goal line y = 1"), Part("links", chain, "links")


def mountain_car_parts(states: np.ndarray, goal: float = MOUNTAIN_CAR_GOAL) -> tuple[Part, ...]:
    """The car at states (F, >= 1): the hill and the flag at ``goal`` (tracks) and the car (body)."""
    x = np.asarray(states, dtype=np.float64)[:, 0]
    xs = np.linspace(*HILL_RANGE, 100)
    hill = np.stack([xs, hill_height(xs)], -1)[None]
    flag = np.array([[[goal, hill_height(goal)], [goal, hill_height(goal) + 0.15]]])
    angle = np.arctan(1.35 * np.cos(3 * x))  # the hill's slope: d/dx of 0.45 sin(3x) + 0.55
    corners = np.array([[-0.5, 0.0], [0.5, 0.0], [0.5, 1.0], [-0.5, 1.0], [-0.5, 0.0]]) * [CAR_WIDTH, CAR_HEIGHT]
    corners = corners + [0.0, CAR_CLEARANCE]
    cos, sin = np.cos(angle)[:, None], np.sin(angle)[:, None]  # (F, 1)
    car = np.stack(
        [x[:, None] + cos * corners[:, 0] - sin * corners[:, 1], hill_height(x)[:, None] + sin * corners[:, 0]
         + cos * corners[:, 1]],
        -1,
    )  # (F, 5, 2)
    return Part("track", hill, "hill"), Part("track", flag, "flag"), Part("body", car, "car")


@dataclass(frozen=True)
class Scene:
    """What a classic-control replay draws: the parts of a panel from its states (F, S), its axes and words."""

    parts: Callable[[np.ndarray], tuple[Part, ...]]
    x_title: str
    y_title: str
    summary: Callable[[np.ndarray, float, int], str]  # (states (F, S), return, steps taken) -> panel summary
    caption: str


def _pendulum_summary(states: np.ndarray, ret: float, steps: int) -> str:
    upright = np.cos(states[:, 0]) > np.cos(np.pi / 12)  # within 15 degrees of upright
    return f"return {ret:.0f}, {upright.mean():.0%} upright"


def _steps_summary(states: np.ndarray, ret: float, steps: int) -> str:
    """A replay's title for a task ended by reaching a goal: its return and how many steps it took."""
    return f"return {ret:.0f}, {steps} steps"


SCENES: dict[str, Scene] = {
    "pendulum": Scene(
        parts=pendulum_parts,
        x_title="x",
        y_title="height",
        summary=_pendulum_summary,
        caption="The same start state for both policies; the rod turns about the pivot, upright (the top of the "
        "grey circle) is the goal, and every step away from it, fast or pushing hard, costs reward. Press ▶: a "
        "good policy swings the rod up and holds it there (each title: the return, and the share of steps within 15° "
        "of upright).",
    ),
    "acrobot": Scene(
        parts=acrobot_parts,
        x_title="x",
        y_title="height",
        summary=_steps_summary,
        caption="The same start state for both policies; only the joint between the two links is driven. Every "
        "step costs -1 until the tip rises above the grey line (y = 1), which ends the episode: press ▶ and "
        "compare how soon each policy swings it there (fewer steps, higher return).",
    ),
    "mountain_car": Scene(
        parts=mountain_car_parts,
        x_title="position",
        y_title="height",
        summary=_steps_summary,
        caption="The same start state for both policies; the engine is too weak to climb straight up, so the car "
        "must rock back and forth to reach the flag on the right, which ends the episode. Press ▶ and compare "
        "how soon each policy gets there.",
    ),
}


SCENE_OF_ID = {  # gymnasium ID -> (scene, MountainCar's goal position)
    "Pendulum-v1": ("pendulum", None),
    "Acrobot-v1": ("acrobot", None),
    "MountainCar-v0": ("mountain_car", MOUNTAIN_CAR_GOAL),
    "MountainCarContinuous-v0": ("mountain_car", 0.45),
}


def replay_for(env_id: str, dynamics: Dynamics, reset_states: Callable, action_space: Any) -> ReplayFunction | None:
    """The ``BatchedEnv.replay`` of a classic-control environment by its gymnasium ID (None for an ID without a
    scene here): its scene and goal from ``SCENE_OF_ID``, over ``dynamics`` that step actions in the environment's
    own units. For a Box ``action_space`` whose bounds are not [-1, 1], the policies' tanh outputs are mapped into
    them first (``pvnviz.envs.families.BoxActions``), as the rollouts do."""
    if env_id not in SCENE_OF_ID:
        return None
    from pvnviz.envs.families import BoxActions
    from pvnviz.envs.gym_id import is_identity_box

    scene, goal = SCENE_OF_ID[env_id]
    low, high = getattr(action_space, "low", None), getattr(action_space, "high", None)
    if low is not None and not is_identity_box(low, high):
        dynamics = BoxActions(dynamics, low, high)
    return classic_replay(scene, dynamics, reset_states, goal=goal)


def classic_replay(
    scene: str, dynamics: Dynamics, reset_states: Callable, *, goal: float | None = None
) -> ReplayFunction:
    """The ``BatchedEnv.replay`` of a classic-control environment drawn as ``SCENES[scene]`` (MountainCar: the
    flag at ``goal``, default ``MOUNTAIN_CAR_GOAL``): one episode per policy from one shared start state, one
    panel each, side by side. The dynamics' frames must be the raw state (see the module docstring), and its
    ``step`` must take the policies' own actions: for a Box action space whose bounds are not [-1, 1] (Pendulum,
    MountainCarContinuous), dynamics that map tanh outputs into the bounds as the rollouts do
    (``pvnviz.envs.families.BoxActions``), so that a replay shows the policy the run measured."""
    if scene not in SCENES:
        raise ValueError(f"unknown classic-control scene {scene!r}; use one of {sorted(SCENES)}.")
    drawn = SCENES[scene]
    parts = drawn.parts
    if scene == "mountain_car" and goal is not None:
        parts = lambda states: mountain_car_parts(states, goal)  # noqa: E731

    def replay(arch: PolicyArch, params: np.ndarray, horizon: int, seed: int) -> Replay:
        traj = shared_start_episodes(dynamics, reset_states, arch, params, horizon, seed)
        alive = np.concatenate([np.ones((len(params), 1), bool), traj.active[:, 0]], axis=1)  # state t reached?
        panels = []
        for states, frames, ret in zip(traj.frames[:, 0], alive.sum(1), traj.returns[:, 0]):  # one per policy
            shown = states[: int(frames)]
            summary = drawn.summary(shown, float(ret), int(frames) - 1)
            panels.append(Panel(parts(shown), int(frames), summary))
        return Replay(
            title=f"Replay: {dynamics.name}, the same start state before and after ascent",
            panels=tuple(panels),
            x_title=drawn.x_title,
            y_title=drawn.y_title,
            x_range=None,  # fit the scene, one unit as long across as up
            y_range=None,
            layout="columns",
            frame_every=2,
            frame_ms=40,
            caption=drawn.caption,
        )

    return replay
