"""Gymnasium's MuJoCo ``-v5`` family, batched: K policies x B episodes stepped as one ``mujoco.batch.Batch``.

The PVN pipeline (Section 6, Algorithms 1-3) needs the returns of many small policies; as the Swimmer does
(``pvnviz.envs.swimmer``), every episode of a rollout is one row of a ``mujoco.batch.Batch``, stepped in C by
one call per environment step. The tasks are the tables of ``pvnviz.envs.mujoco_tasks`` (locomotion) and
``pvnviz.envs.mujoco_control`` (pendulums, Reacher), :data:`IDS`;
:func:`batched_env` builds the ``BatchedEnv`` of one, with its keyword arguments.

Exactness (tested step by step against ``gymnasium.make(id)``, bit for bit, rewards and terminations included):

* Model: gymnasium's own XML (from the installed gymnasium), collisions included, unchanged.
* Each row keeps its episode's whole integration state, the constraint solver's warm start included, as
  gymnasium's one ``MjData`` per episode does. Reset: ``mj_resetData``, the drawn ``qpos``/``qvel`` written,
  ``mj_forward`` (gymnasium's ``set_state``). Step: ``ctrl = action``, ``frame_skip`` calls of ``mj_step``.
* ``Ant-v5``'s contact forces (``cfrc_ext``, in its observation and its contact cost) are what gymnasium's
  ``mj_rnePostConstraint`` after ``mj_step`` computes from the last substep's quantities; no sensor reproduces
  that under RK4, so those batches keep one ``MjData`` per episode (``persistent``; about 0.2 MB resident
  each) and the call is made for each running episode after each step, from a copy of its data (about 7 % of
  Ant's step time).
* Actions are in the environment's own units (``actuator_ctrlrange``; MuJoCo clamps ``ctrl``, the control
  cost uses the action as given), float64; ``pvnviz.envs.families`` maps policies' tanh outputs into them.
  (gymnasium computes the control cost in the action's dtype: given float32 actions, its rewards differ from
  the float64 ones in the last bits.)

Episodes that end (Hopper, Walker2d and Ant when unhealthy, the pendulums when they fall) stop stepping: only
the running rows are stepped, a finished one keeps its state and observation, and its reward is 0. ``select``
lets a rollout drop finished episodes from the block: the kept rows' whole integration states move to a new,
narrower batch, so each episode continues exactly as it would have.

Array layouts (K policies, B episodes, N = K * B): state ``(K, B, 1 + nq + nv)``, MuJoCo's
``mjSTATE_FULLPHYSICS`` ``[time, qpos, qvel]`` (no model here has activations); observations ``(K, B, obs)``;
actions ``(K, B, nu)``; a frame (for replays, ``pvnviz.envs.scene_mujoco``) is ``qpos`` ``(K, B, nq)``.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
from mujoco.batch import Batch

from pvnviz.envs import mujoco_control, mujoco_tasks
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.mujoco_tasks import Rows, Task
from pvnviz.envs.rollout import State, record
from pvnviz.envs.scene_mujoco import mujoco_replay
from pvnviz.envs.swimmer import batch_threads

TASKS: dict[str, Task] = {
    task.id: task
    for task in (
        mujoco_tasks.HOPPER,
        mujoco_tasks.HALF_CHEETAH,
        mujoco_tasks.WALKER2D,
        mujoco_control.INVERTED_PENDULUM,
        mujoco_control.INVERTED_DOUBLE_PENDULUM,
        mujoco_control.REACHER,
        mujoco_tasks.ANT,
    )
}
IDS = tuple(TASKS)
STATE_SPEC = mujoco.mjtState.mjSTATE_FULLPHYSICS
VISIT_STEPS = 100  # visited_states: random-action episodes at most this long
# environment steps per CPU second, one thread, 200 episodes of random actions (pvnviz.envs.mujoco_speed:
# python -m pvnviz.envs.mujoco_speed Hopper-v5 ...), measured on a loaded 2-core machine: lower bounds
STEPS_PER_SECOND = {
    "Hopper-v5": 11e3,
    "HalfCheetah-v5": 24e3,
    "Walker2d-v5": 8e3,
    "InvertedPendulum-v5": 40e3,
    "InvertedDoublePendulum-v5": 18e3,
    "Reacher-v5": 42e3,
    "Ant-v5": 3.9e3,
}


# resident memory of one episode's own MjData in a persistent batch (Ant-v5): a 1000-episode batch's RSS after
# 50 random steps, 205 MB, per episode
PERSISTENT_RESIDENT_BYTES = 205_000


def assets_path(xml_file: str) -> Path:
    """Path of one of gymnasium's MuJoCo model files (found without importing gymnasium's MuJoCo envs)."""
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("gymnasium is not installed; install gymnasium==1.4.0 (see requirements.txt).")
    path = Path(list(spec.submodule_search_locations)[0]) / "envs" / "mujoco" / "assets" / xml_file
    if not path.is_file():
        raise FileNotFoundError(f"gymnasium's model {xml_file} is missing at {path}; reinstall gymnasium.")
    return path


@functools.cache
def load_model(xml_file: str) -> mujoco.MjModel:
    """The MjModel of gymnasium's ``xml_file`` (cached; treat it as read-only)."""
    model = mujoco.MjModel.from_xml_path(str(assets_path(xml_file)))
    if model.na or mujoco.mj_stateSize(model, STATE_SPEC) != 1 + model.nq + model.nv:
        raise RuntimeError(f"{xml_file}: its full physics state is not [time, qpos, qvel]")
    return model


def parse_gym_id(gym_id: Any) -> tuple[str, dict[str, Any]]:
    """``(id, kwargs)`` of an object with ``.id`` and ``.kwargs`` (a dict or (key, value) pairs, as
    ``pvnviz.envs.gym_id.GymId``), of an ``(id, kwargs)`` pair, or of a bare ID string (no keywords)."""
    if isinstance(gym_id, str):
        return gym_id, {}
    if hasattr(gym_id, "id") and hasattr(gym_id, "kwargs"):
        kwargs = gym_id.kwargs_dict if hasattr(gym_id, "kwargs_dict") else gym_id.kwargs
        return str(gym_id.id), dict(kwargs or {})
    env_id, kwargs = gym_id
    return str(env_id), dict(kwargs or {})


def resolve(task: Task, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The task's keyword arguments: gymnasium's defaults overridden by ``kwargs``; ValueError naming the accepted
    keywords for an unknown one, and for ``xml_file`` other than gymnasium's own (a different model)."""
    kwargs = dict(kwargs)
    xml_file = kwargs.pop("xml_file", task.xml_file)
    if xml_file != task.xml_file:
        raise ValueError(f"{task.id}: xml_file must be gymnasium's own {task.xml_file!r}; no other model is batched.")
    unknown = sorted(set(kwargs) - set(task.defaults))
    if unknown:
        raise ValueError(
            f"{task.id} does not take {', '.join(unknown)}; it accepts: {', '.join(sorted(task.defaults))}."
        )
    params = dict(task.defaults)
    for key, value in kwargs.items():
        default = task.defaults[key]
        try:
            if isinstance(default, bool):
                if not isinstance(value, (bool, np.bool_)):
                    raise TypeError
                value = bool(value)
            elif isinstance(default, tuple):
                value = tuple(float(v) for v in value)
                if len(value) != len(default):
                    raise TypeError
            elif key == "main_body":  # a body's id or name, as gymnasium's data.body() takes it
                if isinstance(value, bool) or not isinstance(value, (int, str)):
                    raise TypeError
                load_model(task.xml_file).body(value)
            elif key == "frame_skip":
                if isinstance(value, bool) or int(value) != value or int(value) < 1:
                    raise TypeError
                value = int(value)
            elif isinstance(default, (int, float)):
                if isinstance(value, bool):
                    raise TypeError
                value = float(value)
        except (TypeError, ValueError, KeyError, IndexError):
            raise ValueError(f"{task.id}: {key}={value!r} is not like its default {default!r}.") from None
        params[key] = value
    return params


class _Physics:
    """The running episodes: the batch (one row per episode, in the State's C order), its bound fields
    (``rows``), and what the next step's reward needs of the present state (``before``)."""

    def __init__(self, dynamics: MujocoDynamics, count: int, nthread: int):
        model, task = dynamics.model, dynamics.task
        self.dynamics, self.nthread = dynamics, nthread
        self.batch = Batch(model, nsim=count, nthread=min(nthread, count), persistent=dynamics.contact_forces)
        self.batch.reset(stage=mujoco.mjtStage.mjSTAGE_NONE)  # mj_resetData of every row
        self.ctrl = self.batch.bind("ctrl")
        self.qpos = self.batch.bind("qpos")
        self.rows = Rows(model, self.qpos, self.batch.bind("qvel"), **{f: self.batch.bind(f) for f in task.derived})
        if dynamics.contact_forces:
            self.rows.cfrc_ext = np.zeros((count, model.nbody, 6))  # mj_forward leaves it 0, as after a reset
            self.data = mujoco.MjData(model)
        self.before: np.ndarray | None = None

    @classmethod
    def start(cls, dynamics: MujocoDynamics, states: np.ndarray, nthread: int) -> _Physics:
        """Episodes from full physics states (N, 1 + nq + nv), as gymnasium's reset leaves them."""
        physics = cls(dynamics, len(states), nthread)
        nq = dynamics.model.nq
        physics.batch.bind("time")[:] = states[:, 0]
        physics.qpos[:] = states[:, 1 : 1 + nq]
        physics.rows.qvel[:] = states[:, 1 + nq :]
        physics.batch.forward()  # gymnasium's set_state
        physics.before = dynamics.task.before(physics.rows, dynamics.params)
        return physics

    def take(self, flat: np.ndarray) -> _Physics:
        """A batch of the episodes ``flat`` (W,) of this one, in that order: their whole integration states (warm
        start included), so each continues exactly as it would have."""
        taken = _Physics(self.dynamics, len(flat), self.nthread)
        taken.batch.state[:] = self.batch.state[flat]
        if self.rows.cfrc_ext is not None:
            taken.rows.cfrc_ext[:] = self.rows.cfrc_ext[flat]
        taken.before = None if self.before is None else self.before[flat]
        return taken

    def post_constraint(self, model: mujoco.MjModel, ids: np.ndarray | None) -> None:
        """``cfrc_ext`` of the stepped rows: gymnasium's ``mj_rnePostConstraint`` after ``mj_step``."""
        data = self.data
        for sim in range(len(self.qpos)) if ids is None else ids.tolist():
            self.batch.get_data(sim, data)
            mujoco.mj_rnePostConstraint(model, data)
            self.rows.cfrc_ext[sim] = data.cfrc_ext


class MujocoDynamics:
    """One task's batched step function (``pvnviz.envs.rollout.Dynamics``) over K policies x B episodes, with
    ``select`` (a rollout may drop finished episodes from the block)."""

    discrete = False

    def __init__(self, task: Task, params: dict[str, Any]):
        self.task, self.params = task, params
        self.model = load_model(task.xml_file)
        self.name = task.id.rsplit("-", 1)[0]
        self.state_size = 1 + self.model.nq + self.model.nv
        self.action_shape = (self.model.nu,)
        self.frame_skip = int(params["frame_skip"])
        self.dt = self.model.opt.timestep * self.frame_skip  # gymnasium's MujocoEnv.dt
        self.contact_forces = bool(task.contact_forces(params))

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State:
        shape = initial_states.shape[:-1]
        physics = _Physics.start(self, initial_states.reshape(-1, self.state_size), batch_threads(nthread))
        observation = self.task.observe(physics.rows, self.params)
        return State(physics, observation.reshape(*shape, -1), np.zeros(shape), np.zeros(shape, dtype=bool))

    def step(self, state: State, actions: np.ndarray) -> State:
        """One environment step (``frame_skip`` physics steps) of every running episode, its reward and its end;
        writes ``state.obs``, ``state.reward`` and ``state.done``."""
        physics, task, params = state.physics, self.task, self.params
        actions = actions.reshape(-1, self.model.nu)
        running = ~state.done.reshape(-1)
        ids = None if running.all() else np.flatnonzero(running)
        physics.ctrl[:] = actions
        physics.batch.step(ids, nstep=self.frame_skip)
        if self.contact_forces:
            physics.post_constraint(self.model, ids)
        with np.errstate(all="ignore"):  # finished rows may hold anything; they are masked below
            reward, terminated = task.reward(physics.rows, params, physics.before, actions, self.dt)
            observation = task.observe(physics.rows, params)
            after = task.before(physics.rows, params)
        shape = state.done.shape
        if ids is None:
            physics.before = after
            np.copyto(state.reward, reward.reshape(shape))
            np.copyto(state.obs, observation.reshape(state.obs.shape))
            state.done |= terminated.reshape(shape)
        else:
            if after is not None:
                physics.before[ids] = after[ids]
            np.copyto(state.reward, np.where(running, reward, 0.0).reshape(shape))
            np.copyto(state.obs, observation.reshape(state.obs.shape), where=running.reshape(*shape, 1))
            state.done |= (terminated & running).reshape(shape)
        return state

    def select(self, physics: _Physics, order: np.ndarray) -> _Physics:
        """The episodes kept by compaction: ``order`` (K, W) is each new column's old column."""
        old_width = len(physics.qpos) // len(order)
        return physics.take((np.arange(len(order))[:, None] * old_width + order).ravel())

    def frame(self, state: State) -> np.ndarray:
        """The joint positions ``qpos`` (K, B, nq): what a replay draws (``pvnviz.envs.scene_mujoco``)."""
        return state.physics.qpos.reshape(*state.done.shape, self.model.nq)

    def close(self, state: State) -> None:
        pass


def reset_states_fn(task: Task, params: dict[str, Any]):
    """``reset_states(rng, shape) -> (*shape, 1 + nq + nv)``: gymnasium's ``reset_model`` draws, one episode after
    another in C order, so ``reset_states(default_rng(s), (n,))`` is n successive resets after ``reset(seed=s)``."""
    model = load_model(task.xml_file)

    def reset_states(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        shape = tuple(int(n) for n in shape)
        states = np.zeros((*shape, 1 + model.nq + model.nv))
        flat = states.reshape(-1, states.shape[-1])
        for row in flat:
            qpos, qvel = task.reset(rng, model, params)
            row[1 : 1 + model.nq] = qpos
            row[1 + model.nq :] = qvel
        return states

    return reset_states


def bytes_per_episode(model: mujoco.MjModel, obs_dim: int, persistent: bool) -> int:
    """Memory of one running episode: its batch row (integration state), observation and bound outputs, and its
    own ``MjData`` when the batch is persistent. That ``MjData`` reserves ``nbuffer + narena`` bytes (Ant: 14.7
    MB of address space) but touches only a little of its arena: ``PERSISTENT_RESIDENT_BYTES`` is counted."""
    row = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_INTEGRATION) + 4 * obs_dim + model.nbody * 9
    return int(8 * row + (PERSISTENT_RESIDENT_BYTES if persistent else 0))


def visited_states_fn(dynamics: MujocoDynamics, task: Task, reset_states: Any, low: np.ndarray, high: np.ndarray):
    """``BatchedEnv.visited_states`` of a MuJoCo task: observations (n, obs) visited under uniformly random actions
    within [low, high], one state of each of n episodes of at most ``VISIT_STEPS`` steps."""
    model = dynamics.model

    def visited_states(rng: np.random.Generator, num_states: int) -> np.ndarray:
        starts = reset_states(rng, (1, num_states))

        def random_actions(obs: np.ndarray) -> np.ndarray:
            return rng.uniform(low, high, size=(*obs.shape[:-1], model.nu))

        traj = record(dynamics, random_actions, starts, min(VISIT_STEPS, task.horizon))
        lengths = traj.active[0].sum(-1)
        pick = (rng.random(num_states) * (lengths + 1)).astype(int)
        return traj.observations[0, np.arange(num_states), pick]

    return visited_states


def tanh_actions(dynamics: MujocoDynamics, low: np.ndarray, high: np.ndarray) -> type:
    """The dynamics as the replay steps them: its policies output tanh values in [-1, 1], mapped into the
    environment's action bounds [low, high] (``box_actions``) before each step."""
    from pvnviz.envs.gym_id import box_actions

    class _TanhActions:
        name, state_size, discrete, action_shape = dynamics.name, dynamics.state_size, False, dynamics.action_shape
        reset, frame, close = dynamics.reset, dynamics.frame, dynamics.close

        @staticmethod
        def step(state: State, actions: np.ndarray) -> State:
            return dynamics.step(state, box_actions(actions, low, high))

    return _TanhActions


def batched_env(gym_id: Any) -> BatchedEnv:
    """The ``BatchedEnv`` of one of :data:`IDS` with its keyword arguments.

    ``gym_id``: an object with ``.id`` and ``.kwargs`` (``pvnviz.envs.gym_id.GymId``: (key, value) pairs; or a
    dict), an ``(id, kwargs)`` pair, or a bare ID string. ValueError for another ID, an unknown keyword (naming
    the accepted ones) or a keyword the family refuses (``xml_file``). Its dynamics take actions in the
    environment's units; ``replay`` draws the model's geoms and maps tanh outputs into the action bounds itself.
    """
    import gymnasium

    env_id, kwargs = parse_gym_id(gym_id)
    if env_id not in TASKS:
        raise ValueError(f"{env_id!r} is not in the MuJoCo family; choose one of: {', '.join(IDS)}.")
    task = TASKS[env_id]
    params = resolve(task, kwargs)
    dynamics = MujocoDynamics(task, params)
    model = dynamics.model
    reset_states = reset_states_fn(task, params)
    labels = task.labels(model, params)
    obs_dim = len(labels)
    low, high = model.actuator_ctrlrange.astype(np.float32).T.astype(np.float64)

    visited_states = visited_states_fn(dynamics, task, reset_states, low, high)
    terminates = task.terminates(params)
    return BatchedEnv(
        name=env_id,
        obs_dim=obs_dim,
        act_dim=model.nu,
        discrete=False,
        state_labels=labels,
        state_bounds=task.bounds(model, params),
        dynamics=dynamics,
        visited_states=visited_states,
        reset_states=reset_states,
        observation_space=gymnasium.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float64),
        action_space=gymnasium.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32),
        bounds_label=task.bounds_label,
        steps_per_second=STEPS_PER_SECOND[env_id] * task.defaults["frame_skip"] / params["frame_skip"],
        bytes_per_episode=bytes_per_episode(model, obs_dim, dynamics.contact_forces),
        fixed_length=not terminates,
        replay=mujoco_replay(tanh_actions(dynamics, low, high), reset_states, lambda: model),
        step_count="measured" if terminates else "horizon",
        family="MuJoCo",
    )
