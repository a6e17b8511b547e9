"""Which batched step function runs a gymnasium environment (``gym:ID``), and the one place policies' actions
are mapped into its action space.

The PVN pipeline (Section 6, Algorithms 1-3) runs on a ``BatchedEnv`` (``pvnviz.envs.batched``). For ``gym:ID``
``batched_env`` picks, in order:

1. the built-in environments the paper ran, where the name is exactly theirs: ``gym:CartPole-v1``
   (``pvnviz.envs.cartpole``) and ``gym:Swimmer-v5`` (``pvnviz.envs.swimmer``), no keywords;
2. a batched family, where its module exists here and lists the ID in its ``IDS`` tuple (``FAMILY_MODULES``):
   ``pvnviz.envs.classic`` (NumPy classic control) and ``pvnviz.envs.mujoco_family`` (MuJoCo), each with
   ``batched_env(gym_id) -> BatchedEnv`` whose dynamics step actions in the environment's own units;
3. otherwise (also where a family refuses a keyword it does not model) the generic path, the environment's own
   code through gymnasium's vector API (``pvnviz.envs.gym_vector``).

Every policy outputs actions the way its action space says (``pvnviz.core.policies``): a softmax choice for
``Discrete``, tanh outputs in [-1, 1] for a ``Box``. For a ``Box`` whose bounds are not [-1, 1] the dynamics are
wrapped here (:class:`BoxActions`) so that ``pvnviz.envs.gym_id.box_actions`` maps the tanh outputs into the
bounds right before each step, whichever family steps it. A family's ``BatchedEnv`` counts its steps as
"measured" unless its episodes all run the whole horizon (``BatchedEnv.step_count``).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from typing import Any

import numpy as np

from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.gym_id import GymId, box_actions, check_qualifies, is_identity_box
from pvnviz.envs.rollout import State, record

FAMILY_MODULES = ("pvnviz.envs.classic", "pvnviz.envs.mujoco_family")  # each: IDS and batched_env(gym_id)
BUILT_IN_IDS = {"CartPole-v1": "cartpole", "Swimmer-v5": "swimmer"}  # exactly the paper's environments
VISIT_STEPS = 100  # random-action episodes that ``visited_states`` draws from are at most this long


class BoxActions:
    """Dynamics whose ``step`` takes the policies' tanh outputs (K, B, act) in [-1, 1] and passes them on mapped
    into the Box bounds (``box_actions``); everything else is the wrapped dynamics' (``select``, ``close``...)."""

    def __init__(self, inner: Any, low: np.ndarray, high: np.ndarray):
        self.inner = inner
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)

    def __getattr__(self, name: str) -> Any:  # name, state_size, discrete, action_shape, frame, select, close
        return getattr(self.inner, name)

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        return self.inner.reset(initial_states, nthread)

    def step(self, state: State, actions: np.ndarray) -> State:
        return self.inner.step(state, box_actions(actions, self.low, self.high))

    def frame(self, state: State) -> np.ndarray:
        return self.inner.frame(state)


def family_module(gym_id: GymId) -> Any | None:
    """The batched family module that lists this ID (no keywords needed: a family takes the ones it knows),
    or None where none is installed or lists it."""
    for module_name in FAMILY_MODULES:
        if importlib.util.find_spec(module_name) is None:
            continue
        module = importlib.import_module(module_name)
        if gym_id.id in getattr(module, "IDS", ()):
            return module
    return None


def family_name(gym_id: GymId) -> str:
    """Which path steps this environment: "built-in", a family module's name, or "gymnasium vector"."""
    if gym_id.id in BUILT_IN_IDS and not gym_id.kwargs:
        return "built-in"
    module = family_module(gym_id)
    return module.__name__.rsplit(".", 1)[-1] if module is not None else "gymnasium vector"


def batched_env(gym_id: GymId) -> BatchedEnv:
    """The ``BatchedEnv`` of a qualifying gymnasium environment, named ``gym_id.name`` (EnvRefused, one line,
    for an environment that does not qualify)."""
    spaces = check_qualifies(gym_id)
    if gym_id.id in BUILT_IN_IDS and not gym_id.kwargs:  # the built-in, as every page runs it
        module = importlib.import_module(f"pvnviz.envs.{BUILT_IN_IDS[gym_id.id]}")
        env = dataclasses.replace(module.batched_env(), name=gym_id.name, family="built-in")
    else:
        module = family_module(gym_id)
        env = None
        if module is not None:
            try:
                env = module.batched_env(gym_id)
            except (ValueError, TypeError):  # a keyword the family does not model: gymnasium's own code takes it
                module = None
        if module is not None and env is not None:
            step_count = env.step_count if env.fixed_length or env.step_count == "measured" else "measured"
            env = dataclasses.replace(
                env, name=gym_id.name, step_count=step_count, family=env.family or module.__name__.rsplit(".", 1)[-1]
            )
        else:
            env = generic_env(gym_id, spaces)
    space = env.action_space
    if not env.discrete and not is_identity_box(space.low, space.high) and not isinstance(env.dynamics, BoxActions):
        env = dataclasses.replace(env, dynamics=BoxActions(env.dynamics, space.low, space.high))
    return env


def generic_env(gym_id: GymId, spaces: Any | None = None) -> BatchedEnv:
    """The generic ``BatchedEnv``: gymnasium's vector API (``pvnviz.envs.gym_vector``), step counts measured,
    speed and memory probed once per process (``gym_vector.probe``), probing states visited by random actions."""
    from pvnviz.envs import gym_vector

    spaces = check_qualifies(gym_id) if spaces is None else spaces
    dynamics = gym_vector.dynamics(gym_id)
    obs_space, act_space = spaces.observation_space, spaces.action_space
    wrapped: Any = dynamics
    if not spaces.discrete and not is_identity_box(act_space.low, act_space.high):
        wrapped = BoxActions(dynamics, act_space.low, act_space.high)
    horizon = min(VISIT_STEPS, spaces.max_episode_steps or VISIT_STEPS)

    def visited(rng: np.random.Generator, n: int) -> np.ndarray:
        """Observations (n, obs_dim) float32 visited by uniformly random actions, one from each of n episodes."""
        starts = gym_vector.reset_states(rng, (1, n))
        if spaces.discrete:
            def act(obs: np.ndarray) -> np.ndarray:
                return rng.integers(0, spaces.act_dim, size=obs.shape[:-1])
        else:
            def act(obs: np.ndarray) -> np.ndarray:
                return rng.uniform(-1.0, 1.0, size=(*obs.shape[:-1], spaces.act_dim))
        traj = record(wrapped, act, starts, horizon)
        lengths = traj.active[0].sum(-1)  # (n,)
        pick = (rng.random(n) * (lengths + 1)).astype(int)  # the start, or the state after any step taken
        return traj.observations[0, np.arange(n), pick].astype(np.float32)

    low, high = np.asarray(obs_space.low, np.float64), np.asarray(obs_space.high, np.float64)
    bounds = tuple(
        (float(lo), float(hi)) if np.isfinite(lo) and np.isfinite(hi) and max(abs(lo), abs(hi)) < 1e6 else None
        for lo, hi in zip(low, high, strict=True)
    )
    return BatchedEnv(
        name=gym_id.name,
        obs_dim=spaces.obs_dim,
        act_dim=spaces.act_dim,
        discrete=spaces.discrete,
        state_labels=tuple(f"observation {i}" for i in range(spaces.obs_dim)),
        state_bounds=bounds,
        dynamics=wrapped,
        visited_states=visited,
        reset_states=gym_vector.reset_states,
        observation_space=obs_space,
        action_space=act_space,
        bounds_label="observation-space bounds",
        steps_per_second=dynamics.steps_per_second,
        bytes_per_episode=dynamics.bytes_per_episode,
        fixed_length=False,
        replay=None,
        step_count="measured",
        family="gymnasium vector",
    )
