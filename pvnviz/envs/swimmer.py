"""Batched closed-loop Swimmer on MuJoCo: the environment of Section 6.3 of the paper.

The PVN needs the returns of thousands of small policies, each run for 1000-step episodes: this module is
the Swimmer's batched step function (:class:`Swimmer`, Brax-style ``step(state, actions) -> state``), which
steps all K x B episodes at once in C (MuJoCo's thread pool); ``pvnviz.envs.rollout`` is the time loop over
it, the same for every environment: one batched policy evaluation and one batched physics call per step.

The semantics are exactly gymnasium's ``Swimmer-v5`` (gymnasium 1.4.0, defaults), tested step by step:

* Model: gymnasium's own ``swimmer.xml`` (3 capsules, 2 hinge motors, RK4, timestep 0.01 s); collision
  detection is skipped because no geom can collide (:func:`load_model`), which changes no number.
* ``frame_skip`` 4, so ``dt`` = 0.04 s. Observation (8, float64): ``qpos[2:]`` then ``qvel`` (:func:`observe`).
* Reward: ``x_velocity - 1e-4 * sum(action**2)`` with ``x_velocity = (qpos[0] after - before) / dt``.
  Actions are not clipped by the environment (MuJoCo clamps ``ctrl`` to [-1, 1]; the cost uses the raw action).
* Reset: ``qpos = init_qpos + U(-0.1, 0.1)^5`` then ``qvel = U(-0.1, 0.1)^5``, one generator. No termination.

Exactness: gymnasium keeps one ``MjData`` per episode, so the constraint solver's warm start carries over
between steps; it matters whenever a rotor reaches its +-100 degree limit (without it, 20 % of random-MLP
episodes changed by more than 1e-6, by up to 10). ``mujoco.batch.Batch`` keeps each episode's whole
integration state, warm start included, and is bit-identical to gymnasium; the ``mujoco.rollout`` engine,
which restarts the warm start every call, and the physics-limit measurement live in ``pvnviz.bench.swimmer``.

Array layouts (K policies, B episodes per policy, T = horizon): state ``(..., 11)`` float64, MuJoCo's
mjSTATE_FULLPHYSICS ``[time, qpos (5), qvel (5)]``; observations ``(K, B, 8)``; actions ``(K, B, 2)``;
returns ``(K, B)``; a replay's frame: ``qpos`` ``(K, B, 5)`` (bodies for replays: ``pvnviz.envs.replay``).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

import mujoco
import numpy as np
from mujoco.batch import Batch

from pvnviz.envs import replay
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.rollout import State, record

# gymnasium Swimmer-v5 defaults, named as its constructor arguments.
FRAME_SKIP = 4
FORWARD_REWARD_WEIGHT = 1.0
CTRL_COST_WEIGHT = 1e-4
RESET_NOISE_SCALE = 0.1
DEFAULT_HORIZON = 1000  # gymnasium's max_episode_steps for Swimmer-v5

MODEL_FILE_NAME = "swimmer.xml"
OBSERVATION_SIZE = 8  # qpos[2:] (3) + qvel (5)
ACTION_SIZE = 2
NUM_POSITIONS = 5  # model.nq
NUM_VELOCITIES = 5  # model.nv
STATE_SPEC = mujoco.mjtState.mjSTATE_FULLPHYSICS
STATE_SIZE = 1 + NUM_POSITIONS + NUM_VELOCITIES  # [time, qpos, qvel]; the model has no act/plugin/history
QPOS_SLICE = slice(1, 1 + NUM_POSITIONS)
QVEL_SLICE = slice(1 + NUM_POSITIONS, STATE_SIZE)
BODY_NAMES = ("torso", "mid", "back")  # the swimmer's 3 links, front to back (body 0 is the world)


def model_path() -> Path:
    """Path of gymnasium's ``swimmer.xml`` (found without importing gymnasium's MuJoCo envs)."""
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("gymnasium is not installed; install gymnasium==1.4.0 (see requirements.txt).")
    path = Path(list(spec.submodule_search_locations)[0]) / "envs" / "mujoco" / "assets" / MODEL_FILE_NAME
    if not path.is_file():
        raise FileNotFoundError(f"gymnasium's Swimmer model is missing at {path}; reinstall gymnasium.")
    return path


def can_collide(model: mujoco.MjModel) -> bool:
    """Whether any two geoms of ``model`` could ever be in contact.

    MuJoCo tests a geom pair only if ``contype`` of one shares a bit with
    ``conaffinity`` of the other, or if the pair is listed explicitly.
    """
    contype = model.geom_contype.astype(np.int64)
    conaffinity = model.geom_conaffinity.astype(np.int64)
    compatible = (contype[:, None] & conaffinity[None, :]) != 0
    return bool(compatible.any() or model.npair > 0 or model.nflex > 0)


@functools.lru_cache(maxsize=1)
def load_model() -> mujoco.MjModel:
    """The Swimmer MjModel (cached; treat it as read-only).

    Exactly gymnasium's ``swimmer.xml``, with one change that cannot alter any
    result: every geom of the swimmer and the floor has ``contype`` and
    ``conaffinity`` 0, so no contact can ever be found, and collision detection
    is switched off (``mjDSBL_CONTACT``) instead of searching for contacts 4 x
    4 times per environment step (RK4 stages); that makes ``mj_step`` about
    10 % faster. The parity tests check bitwise agreement with gymnasium.
    """
    model = mujoco.MjModel.from_xml_path(str(model_path()))
    sizes = (model.nq, model.nv, model.nu, mujoco.mj_stateSize(model, STATE_SPEC))
    if sizes != (NUM_POSITIONS, NUM_VELOCITIES, ACTION_SIZE, STATE_SIZE):
        raise RuntimeError(f"unexpected swimmer.xml sizes (nq, nv, nu, nstate) = {sizes}")
    if not can_collide(model):
        model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    return model


def env_dt() -> float:
    """Seconds per environment step, computed as gymnasium does: ``timestep * frame_skip``."""
    return load_model().opt.timestep * FRAME_SKIP


def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Initial full physics states (*shape, 11), drawn exactly as gymnasium's ``reset_model``.

    For each episode in C order, 5 qpos noises then 5 qvel noises are drawn with
    ``rng.uniform(low=-0.1, high=0.1)``, so ``reset_states(default_rng(s), (n,))``
    equals n successive resets of ``gymnasium.make("Swimmer-v5")`` after
    ``reset(seed=s)``. Time is 0.
    """
    model = load_model()
    shape = tuple(int(n) for n in shape)
    noise = rng.uniform(low=-RESET_NOISE_SCALE, high=RESET_NOISE_SCALE, size=(*shape, NUM_POSITIONS + NUM_VELOCITIES))
    states = np.zeros((*shape, STATE_SIZE))
    states[..., QPOS_SLICE] = model.qpos0 + noise[..., :NUM_POSITIONS]
    states[..., QVEL_SLICE] = np.zeros(NUM_VELOCITIES) + noise[..., NUM_POSITIONS:]  # init_qvel is zero
    return states


def observe(qpos: np.ndarray, qvel: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The only definition of Swimmer-v5's observation (..., 8): ``qpos[2:]`` then ``qvel`` (into ``out``)."""
    if out is None:
        out = np.empty((*qpos.shape[:-1], OBSERVATION_SIZE), dtype=np.result_type(qpos, qvel))
    out[..., :3] = qpos[..., 2:]
    out[..., 3:] = qvel
    return out


def observations_from_states(states: np.ndarray) -> np.ndarray:
    """Observations (..., 8) of full physics states (..., 11): ``qpos[2:]`` then ``qvel``."""
    states = np.asarray(states, dtype=np.float64)
    return observe(states[..., QPOS_SLICE], states[..., QVEL_SLICE])


def batch_threads(nthread: int | None) -> int:
    """The threads a ``mujoco.batch.Batch`` steps with: ``nthread``, or one per core for None (at least 1)."""
    threads = (os.cpu_count() or 1) if nthread is None else int(nthread)
    if threads < 1:
        raise ValueError(f"nthread must be at least 1, got {nthread}; pass None for one thread per core.")
    return threads


class BatchStepper:
    """All episodes as rows of a ``mujoco.batch.Batch`` (warm start carried: gymnasium-exact)."""

    def __init__(self, model: mujoco.MjModel, initial_states: np.ndarray, nthread: int):
        count = initial_states.shape[0]
        self.batch = Batch(model, nsim=count, nthread=min(nthread, count))
        # mj_resetData for every row (zero warm start, ctrl and applied forces), no mj_forward
        self.batch.reset(stage=mujoco.mjtStage.mjSTAGE_NONE)
        self.time = self.batch.bind("time")
        self.qpos = self.batch.bind("qpos")  # live (N, 5) views of the state rows
        self.qvel = self.batch.bind("qvel")
        self.ctrl = self.batch.bind("ctrl")
        self.time[:] = initial_states[:, 0]
        self.qpos[:] = initial_states[:, QPOS_SLICE]
        self.qvel[:] = initial_states[:, QVEL_SLICE]

    def step(self, actions: np.ndarray) -> None:
        self.ctrl[:] = actions
        self.batch.step(nstep=FRAME_SKIP)

    def close(self) -> None:
        pass


class _Physics:
    """The swimmer's running episodes: the stepper, and flat (N,) buffers that the ``State``'s arrays view."""

    def __init__(self, stepper, count: int):
        self.stepper = stepper
        self.reward, self.observation = np.zeros(count), np.empty((count, OBSERVATION_SIZE))
        self.scratch = (np.empty(count), np.empty(count), env_dt())  # x before the step, the control cost, dt


class Swimmer:
    """Swimmer-v5 as a batched step function (``pvnviz.envs.rollout.Dynamics``) over K policies x B episodes.

    ``stepper_class(model, states (N, 11), nthread)`` owns the physics: live ``qpos`` and ``qvel`` views (N, 5),
    ``step(actions (N, 2))`` and ``close()``; :class:`BatchStepper` is gymnasium-exact (``pvnviz.bench.swimmer``
    passes the ``mujoco.rollout`` engine). The episodes never end: each runs the whole horizon.
    """

    name = "Swimmer"
    state_size = STATE_SIZE
    discrete = False
    action_shape = (ACTION_SIZE,)

    def __init__(self, stepper_class: type = BatchStepper):
        self.stepper_class = stepper_class

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        shape = initial_states.shape[:-1]
        count = int(np.prod(shape))
        states = initial_states.reshape(count, STATE_SIZE)
        stepper = self.stepper_class(load_model(), states, batch_threads(nthread))
        physics = _Physics(stepper, count)
        observe(stepper.qpos, stepper.qvel, out=physics.observation)
        return State(
            physics,
            physics.observation.reshape(*shape, OBSERVATION_SIZE),
            physics.reward.reshape(shape),
            np.zeros(shape, dtype=bool),
        )

    def step(self, state: State, actions: np.ndarray) -> State:
        """One environment step (``FRAME_SKIP`` physics steps) of every episode, and its reward."""
        physics = state.physics
        _step_and_reward(physics.stepper, actions.reshape(-1, ACTION_SIZE), physics.reward, *physics.scratch)
        observe(physics.stepper.qpos, physics.stepper.qvel, out=physics.observation)
        return state

    def frame(self, state: State) -> np.ndarray:
        """The joint positions ``qpos`` (K, B, 5): what a replay draws (``pvnviz.envs.replay.body_frames``)."""
        return state.physics.stepper.qpos.reshape(*state.done.shape, NUM_POSITIONS)

    def close(self, state: State) -> None:
        state.physics.stepper.close()


def _step_and_reward(
    stepper, actions: np.ndarray, reward: np.ndarray, x_before: np.ndarray, ctrl_cost: np.ndarray, dt: float
) -> None:
    """One physics step of every episode, its reward written into ``reward``: the same operations, in the
    same order, as gymnasium's SwimmerEnv.step / _get_rew."""
    x_before[:] = stepper.qpos[:, 0]
    stepper.step(actions)
    np.subtract(stepper.qpos[:, 0], x_before, out=reward)
    reward /= dt
    reward *= FORWARD_REWARD_WEIGHT
    np.sum(np.square(actions), axis=1, out=ctrl_cost)
    ctrl_cost *= CTRL_COST_WEIGHT
    reward -= ctrl_cost


DYNAMICS = Swimmer()


def visited_states(rng: np.random.Generator, num_states: int, horizon: int = 200) -> np.ndarray:
    """Observations (n, 8) visited under uniformly random actions: one random step of each of n episodes."""
    starts = reset_states(rng, (1, num_states))

    def random_actions(obs: np.ndarray) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, size=(*obs.shape[:-1], ACTION_SIZE))

    traj = record(DYNAMICS, random_actions, starts, horizon)
    pick = rng.integers(0, horizon + 1, size=num_states)
    return traj.observations[0, np.arange(num_states), pick]


def batched_env() -> BatchedEnv:
    """The Swimmer as a ``BatchedEnv`` (gymnasium's Swimmer-v5 model; deterministic tanh policies, 8 obs, 2 actions)."""
    import gymnasium

    rotor_limit = float(np.radians(100.0))  # the hinge range of swimmer.xml's two rotors
    return BatchedEnv(
        name="swimmer",
        obs_dim=OBSERVATION_SIZE,
        act_dim=ACTION_SIZE,
        discrete=False,
        state_labels=tuple(
            "front-tip angle,rotor 1 angle,rotor 2 angle,tip x velocity,tip y velocity,tip angular velocity,"
            "rotor 1 velocity,rotor 2 velocity".split(",")
        ),
        state_bounds=(None, (-rotor_limit, rotor_limit), (-rotor_limit, rotor_limit), None, None, None, None, None),
        dynamics=DYNAMICS,
        visited_states=visited_states,
        reset_states=reset_states,
        observation_space=gymnasium.spaces.Box(-np.inf, np.inf, (OBSERVATION_SIZE,), np.float64),
        action_space=gymnasium.spaces.Box(-1.0, 1.0, (ACTION_SIZE,), np.float32),
        bounds_label="the rotors' joint limits",
        steps_per_second=30e3,
        bytes_per_episode=1600,
        fixed_length=True,
        replay=replay.swimmer_bodies(DYNAMICS, reset_states, load_model, BODY_NAMES),
    )
