"""The generic batched environment: any qualifying gymnasium environment's own code, through its vector API.

The PVN's dataset and checks (Algorithms 1 and 3, Appendix C) roll out K policies x B episodes in lockstep
(``pvnviz.envs.rollout``). For an environment without a batched NumPy or MuJoCo family of its own
(``pvnviz.envs.families``), :class:`GymVector` is that step function: the K x B episodes are the sub-environments
of one ``gymnasium.make_vec`` vector environment (``SyncVectorEnv``, or ``AsyncVectorEnv`` for a few slow
episodes: ``vector_mode``), so every number is the environment's own code's. A return is the sum of the
environment's own rewards; an episode ends on its own ``terminated`` or ``truncated`` (its registered
``TimeLimit`` included) or at the rollout's horizon.

An episode's start is its reset seed: ``reset_states`` draws one per episode, (K, B, 1) float64 holding whole
numbers below 2**31, and ``reset`` gives sub-environment ``i`` the seed of episode ``i`` (``reset(seed=[...])``).
The same seed and actions give gymnasium's own ``make(ID).reset(seed=s)`` then ``step`` loop exactly
(tests/test_gym_vector.py). A sync block steps each running episode's sub-environment itself, and finished
episodes are dropped from the block (``select``), so a rollout costs the steps it takes.
Actions reach ``step`` in the environment's own units (``pvnviz.envs.families`` maps the policies' outputs).
"""

from __future__ import annotations

import atexit
import os
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from pvnviz.envs.gym_id import GymId, QualifiedSpaces, check_qualifies
from pvnviz.envs.rollout import State

SEED_LIMIT = 2**31  # reset seeds are drawn below this (exact in float64, any gymnasium env takes them)
ASYNC_MAX_ENVS = 16  # AsyncVectorEnv runs one process per episode: only for a few slow episodes
ASYNC_BELOW_STEPS_PER_SECOND = 2000.0  # ... of an environment this slow on one core
PROBE_ENVS, PROBE_STEPS = 32, 20  # the probe measuring a generic environment's speed (``probe``)
DEFAULT_STEPS_PER_SECOND = 5000.0  # where the probe fails: conservative
# One sub-environment's memory (its Python objects, wrappers, buffers; MuJoCo's MjModel and MjData), by family,
# at least: measured here as the resident size of 2000 sync sub-environments (classic control: 1-6 KB;
# Hopper-v5: 1.1 MB), then doubled. The probe raises it where it measures more.
BYTES_PER_EPISODE = {"classic control": 16 * 1024, "Box2D": 512 * 1024, "MuJoCo": 2 * 2**20, "other": 2 * 2**20}
DEFAULT_BYTES_PER_EPISODE = BYTES_PER_EPISODE["other"]
CACHED_SIZES = 2  # vector environments kept for reuse per environment (the collection's and the checks' sizes)


def vector_mode(num_envs: int, steps_per_second: float, cores: int | None = None) -> str:
    """"async" (one process per episode) for at most ``ASYNC_MAX_ENVS`` episodes of an environment slower than
    ``ASYNC_BELOW_STEPS_PER_SECOND`` on a machine of more than one core; else "sync" (one process)."""
    cores = (os.cpu_count() or 1) if cores is None else cores
    slow = steps_per_second < ASYNC_BELOW_STEPS_PER_SECOND
    return "async" if slow and cores > 1 and num_envs <= ASYNC_MAX_ENVS else "sync"


@dataclass
class _Physics:
    """The running block: a vector environment and which of its sub-environments each column is."""

    env: Any  # gymnasium.vector.VectorEnv: a SyncVectorEnv's ``envs`` are stepped one by one
    index: np.ndarray  # (K, W) int: the sub-environment of each column
    home: Any  # the cached SyncVectorEnv the sub-environments belong to, given back at ``close``; None: async


class GymVector:
    """A gymnasium environment as a batched step function (``pvnviz.envs.rollout.Dynamics``)."""

    state_size = 1  # an episode's start is its reset seed

    def __init__(self, gym_id: GymId, spaces: QualifiedSpaces, steps_per_second: float = DEFAULT_STEPS_PER_SECOND):
        self.gym_id = gym_id
        self.spaces = spaces
        self.name = gym_id.id
        self.discrete = spaces.discrete
        self.action_shape: tuple[int, ...] = () if spaces.discrete else (spaces.act_dim,)
        self.steps_per_second = steps_per_second
        self.bytes_per_episode = BYTES_PER_EPISODE.get(spaces.family, DEFAULT_BYTES_PER_EPISODE)
        self._cache: dict[int, Any] = {}  # num_envs -> a SyncVectorEnv kept for the next reset of that size
        atexit.register(self.shutdown)

    def make_vec(self, num_envs: int, mode: str | None = None) -> Any:
        """A fresh ``gymnasium.make_vec`` of ``num_envs`` sub-environments (``vector_mode`` unless ``mode``)."""
        import gymnasium
        from gymnasium.vector import AutoresetMode

        mode = mode or vector_mode(num_envs, self.steps_per_second)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return gymnasium.make_vec(
                self.gym_id.id,
                num_envs=num_envs,
                vectorization_mode=mode,
                vector_kwargs={"autoreset_mode": AutoresetMode.NEXT_STEP},
                **self.gym_id.kwargs_dict,
            )

    def _vector(self, num_envs: int) -> tuple[Any, Any]:
        """A vector environment of ``num_envs``, and the cached one to give back after the rollout (None: async,
        closed after the rollout). A cached one is taken out of the cache while a rollout uses it."""
        if vector_mode(num_envs, self.steps_per_second) == "async":
            return self.make_vec(num_envs, "async"), None
        env = self._cache.pop(num_envs, None)
        if env is None:
            env = self.make_vec(num_envs, "sync")
        return env, env

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        """Every episode reset with its seed: ``initial_states`` (K, B, 1) whole numbers below ``SEED_LIMIT``."""
        seeds = np.asarray(initial_states)[..., 0]
        shape = seeds.shape
        env, home = self._vector(int(seeds.size))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obs, _ = env.reset(seed=[int(s) for s in seeds.reshape(-1)])
        index = np.arange(seeds.size).reshape(shape)
        obs = np.asarray(obs).reshape(*shape, -1)
        return State(_Physics(env, index, home), obs.copy(), np.zeros(shape), np.zeros(shape, dtype=bool))

    def step(self, state: State, actions: np.ndarray) -> State:
        """One step of every running episode; only their rewards, observations and endings count.

        A sync block steps each running episode's own sub-environment (``env.envs[i].step``), exactly as
        ``SyncVectorEnv.step`` would, without stepping finished ones or merging their ``info`` dicts; an async
        block steps all its processes at once."""
        physics, running = state.physics, ~state.done
        if physics.home is None:
            return self._step_async(state, actions)
        envs, index = physics.env.envs, physics.index.reshape(-1)
        flat = np.asarray(actions).reshape(-1, *self.action_shape).astype(self._action_dtype(), copy=False)
        obs = state.obs.reshape(index.size, -1).copy()
        reward = np.zeros(index.size)
        ended = np.zeros(index.size, dtype=bool)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for j in np.flatnonzero(running.reshape(-1)):
                obs[j], reward[j], terminated, truncated, _ = envs[index[j]].step(flat[j])
                ended[j] = terminated or truncated
        shape = running.shape
        state.obs, state.reward = obs.reshape(state.obs.shape), reward.reshape(shape)
        state.done = state.done | ended.reshape(shape)
        return state

    def _step_async(self, state: State, actions: np.ndarray) -> State:
        """``step`` for an ``AsyncVectorEnv``: every process steps (a finished one with a neutral action)."""
        physics, running = state.physics, ~state.done
        env, index = physics.env, physics.index
        flat = np.empty((env.num_envs, *self.action_shape), dtype=self._action_dtype())
        if self.discrete:
            flat[...] = 0
        else:
            flat[...] = self._neutral_action()
        flat[index.reshape(-1)] = np.asarray(actions).reshape(-1, *self.action_shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obs, reward, terminated, truncated, _ = env.step(flat)
        obs = np.asarray(obs)[index]
        ended = (np.asarray(terminated) | np.asarray(truncated))[index]
        state.reward = np.where(running, np.asarray(reward, dtype=np.float64)[index], 0.0)
        state.obs = np.where(running[..., None], obs, state.obs).astype(state.obs.dtype, copy=False)
        state.done = state.done | (running & ended)
        return state

    def _action_dtype(self) -> Any:
        return np.int64 if self.discrete else self.spaces.action_space.dtype

    def _neutral_action(self) -> np.ndarray:
        """An action inside the Box for columns no episode uses (the middle, where finite)."""
        low, high = self.spaces.action_space.low, self.spaces.action_space.high
        finite = np.isfinite(low) & np.isfinite(high)
        return np.where(finite, (np.where(finite, low, 0) + np.where(finite, high, 0)) / 2, 0.0)

    def frame(self, state: State) -> np.ndarray:
        """The observations (K, B, obs) as float64: what a replay of a generic environment has to draw."""
        return np.asarray(state.obs, dtype=np.float64)

    def select(self, physics: _Physics, order: np.ndarray) -> _Physics:
        """Keep the columns ``order`` (K, W) names: the same sub-environments, re-indexed (``step`` steps only
        the ones a column names)."""
        return _Physics(physics.env, np.take_along_axis(physics.index, order, axis=1), physics.home)

    def close(self, state: State) -> None:
        """After a rollout: an async vector environment is closed, the sync one kept for the next reset of its
        size (at most ``CACHED_SIZES`` sizes are kept)."""
        physics = state.physics
        if physics.home is None:
            physics.env.close()
            return
        size = physics.home.num_envs
        if size in self._cache:
            physics.home.close()
            return
        while len(self._cache) >= CACHED_SIZES:
            self._cache.pop(next(iter(self._cache))).close()
        self._cache[size] = physics.home

    def shutdown(self) -> None:
        """Close every cached vector environment (at exit, or when the environment is dropped)."""
        while self._cache:
            _, env = self._cache.popitem()
            try:
                env.close()
            except Exception:  # noqa: BLE001 - closing at exit never raises
                pass


def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """One reset seed per episode: (*shape, 1) float64 whole numbers in [0, ``SEED_LIMIT``)."""
    return rng.integers(0, SEED_LIMIT, size=(*tuple(shape), 1)).astype(np.float64)


@dataclass(frozen=True)
class Probe:
    """What a short run of the environment measured: steps per second of one core, bytes per episode."""

    steps_per_second: float
    bytes_per_episode: int


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def probe(gym_id: GymId, family: str = "other", num_envs: int = PROBE_ENVS, steps: int = PROBE_STEPS) -> Probe:
    """A short run of this environment's sync vector env (random actions): its steps per second on one core
    (``DEFAULT_STEPS_PER_SECOND`` if the probe fails) and its bytes per episode, at least the family's
    ``BYTES_PER_EPISODE`` (more where the resident size grew more per sub-environment)."""
    import gymnasium

    floor = BYTES_PER_EPISODE.get(family, DEFAULT_BYTES_PER_EPISODE)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            before = _resident_bytes()
            env = gymnasium.make_vec(gym_id.id, num_envs=num_envs, vectorization_mode="sync", **gym_id.kwargs_dict)
            try:
                env.reset(seed=0)
                grown = max(0, _resident_bytes() - before) // num_envs
                env.action_space.seed(0)
                actions = [env.action_space.sample() for _ in range(steps)]
                start = time.perf_counter()
                for action in actions:
                    env.step(action)
                elapsed = time.perf_counter() - start
            finally:
                env.close()
    except Exception:  # noqa: BLE001 - a probe that fails leaves the conservative defaults
        return Probe(DEFAULT_STEPS_PER_SECOND, floor)
    return Probe(float(num_envs * steps / max(elapsed, 1e-9)), int(max(floor, grown)))


def dynamics(gym_id: GymId, measured: Probe | None = None) -> GymVector:
    """The generic step function of a qualifying environment (EnvRefused, one line, for any other); its speed
    and memory are ``measured``, else probed now."""
    spaces = check_qualifies(gym_id)
    measured = probe(gym_id, spaces.family) if measured is None else measured
    vector = GymVector(gym_id, spaces, measured.steps_per_second)
    vector.bytes_per_episode = measured.bytes_per_episode
    return vector
