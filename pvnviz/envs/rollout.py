"""The one batched rollout of every environment: the episodes of Algorithms 1 and 3 (Section 4, Appendix C).

The paper's PVN needs the returns of many policies, each run for many episodes (Algorithm 1's dataset,
Algorithm 3's checks of the ascended policies). An environment gives a step function over a whole batch of
K policies x B episodes (Brax-style): ``reset(initial_states) -> State`` and ``step(State, actions) -> State``,
where the ``State`` holds what the policies observe, the last step's rewards and which episodes are done.
:func:`rollout` is the only time loop over it: one policy call and one step per time step, for every
episode at once. It sums the returns, counts the steps really taken (:func:`rollout_counted`), reports
progress, stops when every episode is done, can drop finished episodes from the block (``compact``, for
environments whose episodes end early) and can record every step for replays (:func:`record`).

Array layouts: initial states ``(K, B, state)``; observations ``(K, B, obs)``; actions ``(K, B)`` integers
for a discrete action space, ``(K, B, act)`` reals otherwise; rewards, done and returns ``(K, B)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from pvnviz.core.progress import ProgressFn, Report, Stage

# compact=True shrinks the block once every policy has at most this fraction of its columns still running.
COMPACTION_THRESHOLD = 0.75
REPORTS_PER_ROLLOUT = 50  # progress (and so Stop) is checked at least this often over a horizon


@dataclass
class State:
    """A batch of running episodes. ``physics`` is the environment's own; the rest the rollout reads.

    A step may update a state in place and return it: the state passed to ``step`` is consumed.
    """

    physics: Any  # e.g. CartPole's (4, K, B) rows of float64, the Swimmer's MuJoCo batch
    obs: np.ndarray  # (K, B, obs): what the policies see before the next step
    reward: np.ndarray  # (K, B) float64: the last step's reward, 0 for an episode that had ended before it
    done: np.ndarray  # (K, B) bool: the episode has ended; from then on its state stays as it was


class Dynamics(Protocol):
    """An environment's physics as a batched step function. ``select`` is optional: an environment whose
    episodes end early has it, so that a rollout can drop finished episodes (``compact``)."""

    name: str  # for progress messages, e.g. "CartPole"
    state_size: int  # of one initial state (the last axis of ``reset``'s initial_states)
    discrete: bool  # actions are integers (K, B); else reals (K, B, *action_shape)
    action_shape: tuple[int, ...]  # of one action: () when discrete

    def reset(self, initial_states: np.ndarray, nthread: int | None = None) -> State: ...

    def step(self, state: State, actions: np.ndarray) -> State: ...

    def frame(self, state: State) -> np.ndarray: ...  # (K, B, F): what a replay draws of each time step


class Trajectories(NamedTuple):
    """Every step of a recorded rollout (K policies x B episodes x T steps).

    ``active[..., t]``: step ``t`` was really taken (the episode had not ended before it); ``done[..., t]``:
    the episode has ended at step ``t`` or earlier, so the ending step is ``active & done``. Inactive steps
    have reward 0 and (discrete actions) action -1, and repeat the episode's last observation and frame.
    """

    observations: np.ndarray  # (K, B, T + 1, obs): index t is what the policy saw before action t
    frames: np.ndarray  # (K, B, T + 1, F): the environment's ``frame`` of each state (CartPole: the state)
    actions: np.ndarray  # (K, B, T) int8, or (K, B, T, act) float64
    rewards: np.ndarray  # (K, B, T) float64
    active: np.ndarray  # (K, B, T) bool
    done: np.ndarray  # (K, B, T) bool
    returns: np.ndarray  # (K, B) float64, rewards summed over time


def check_counts(num_policies: int, num_episodes: int, horizon: int) -> None:
    """ValueError, saying what to change, unless every count is at least 1."""
    for name, value, example in (
        ("horizon", horizon, "e.g. 100 for CartPole, 1000 for Swimmer"),
        ("num_policies", num_policies, "a positive number of policies"),
        ("num_episodes", num_episodes, "a positive number of episodes per policy"),
    ):
        if int(value) < 1:
            raise ValueError(f"{name} must be at least 1, got {value}; pass {example}.")


def check_initial_states(initial_states: np.ndarray, state_size: int, horizon: int) -> np.ndarray:
    """``initial_states`` as float64 (K, B, state_size), and the counts checked; else a ValueError."""
    initial_states = np.asarray(initial_states, dtype=np.float64)
    if initial_states.ndim != 3 or initial_states.shape[-1] != state_size:
        raise ValueError(
            f"initial_states must have shape (num_policies, num_episodes, {state_size}), got "
            f"{initial_states.shape}; use reset_states(rng, (K, B)) to make them."
        )
    check_counts(initial_states.shape[0], initial_states.shape[1], horizon)
    return initial_states


def rollout(
    dynamics: Dynamics,
    policy_fn: Callable[[np.ndarray], np.ndarray],
    initial_states: np.ndarray,
    horizon: int,
    *,
    on_progress: ProgressFn | None = None,
    compact: bool = False,
    nthread: int | None = None,
) -> np.ndarray:
    """Undiscounted returns (K, B) float64 of episodes from ``initial_states`` (K, B, state).

    ``policy_fn`` maps observations (K, B, obs) to actions; it is called once per time step for every episode.
    Episodes end when the environment says so or after ``horizon`` steps. ``on_progress(done_steps, horizon,
    info)`` is called every few steps. With ``compact`` (and a ``select`` in ``dynamics``), finished episodes
    are dropped from the block, so ``policy_fn`` then sees (K, W, obs) with W <= B; a policy that keeps
    per-episode state has a ``compact(order)`` method, told which columns survive (``order`` (K, W)).
    """
    return rollout_counted(
        dynamics, policy_fn, initial_states, horizon, on_progress=on_progress, compact=compact, nthread=nthread
    ).returns


class Counted(NamedTuple):
    """A rollout's returns and the environment steps it really took (each running episode's steps, summed)."""

    returns: np.ndarray  # (K, B) float64
    env_steps: int


def rollout_counted(
    dynamics: Dynamics,
    policy_fn: Callable[[np.ndarray], np.ndarray],
    initial_states: np.ndarray,
    horizon: int,
    *,
    on_progress: ProgressFn | None = None,
    compact: bool = False,
    nthread: int | None = None,
) -> Counted:
    """:func:`rollout`, and the environment steps taken: every step of an episode that had not ended before it,
    the ending step included (what Algorithm 1 and 3 spend, whatever the rewards are)."""
    return _run(dynamics, policy_fn, initial_states, int(horizon), on_progress, compact, nthread, record=False)


def record(
    dynamics: Dynamics,
    policy_fn: Callable[[np.ndarray], np.ndarray],
    initial_states: np.ndarray,
    horizon: int,
    *,
    on_progress: ProgressFn | None = None,
    nthread: int | None = None,
) -> Trajectories:
    """Like :func:`rollout`, keeping every step (for a handful of episodes: replays and visited states)."""
    return _run(dynamics, policy_fn, initial_states, int(horizon), on_progress, False, nthread, record=True)


def _run(dynamics, policy_fn, initial_states, horizon, on_progress, compact, nthread, record):
    """The time loop of :func:`rollout` and :func:`record`."""
    state = dynamics.reset(check_initial_states(initial_states, dynamics.state_size, horizon), nthread)
    episodes = _Episodes(state.done.shape, compact and hasattr(dynamics, "select"))
    recording = _Recording(dynamics, state, horizon) if record else None
    report = _Reporter(dynamics.name, horizon, state.done.size, on_progress)
    steps_run = env_steps = 0
    try:
        for step in range(horizon):
            actions = _checked(dynamics, policy_fn(state.obs), state.done.shape)
            running = ~state.done
            env_steps += int(np.count_nonzero(running))
            state = dynamics.step(state, actions)
            episodes.returns += state.reward
            if recording is not None:
                recording.took(step, dynamics, state, actions, running)
            steps_run = step + 1
            still_running = not state.done.all()
            report.step(steps_run, state.done, still_running)
            if not still_running:
                break
            state = episodes.compact(dynamics, state, policy_fn)
    finally:
        if hasattr(dynamics, "close"):  # e.g. a physics engine's thread pool
            dynamics.close(state)
    report.end(steps_run)
    if recording is not None:
        return recording.trajectories(steps_run, episodes.returns)
    return Counted(episodes.final(), env_steps)


def _checked(dynamics: Dynamics, actions: Any, batch_shape: tuple[int, ...]) -> np.ndarray:
    """The policy's actions, checked against the action space: a mistake is named at the first step."""
    actions = np.asarray(actions)
    shape = (*batch_shape, *dynamics.action_shape)
    if dynamics.discrete:
        if actions.shape != shape or actions.dtype.kind not in "biu":
            raise ValueError(
                f"policy_fn must return integer actions of shape {shape}, got {actions.dtype} array of shape "
                f"{actions.shape}; sample the actions inside the policy."
            )
        return actions
    if actions.shape != shape or actions.dtype.kind not in "fiu":
        raise ValueError(
            f"policy_fn must return real actions of shape {shape}, got {actions.dtype} array of shape "
            f"{actions.shape}; return one action vector of {dynamics.action_shape} numbers per episode."
        )
    actions = np.asarray(actions, dtype=np.float64)
    if not np.isfinite(actions).all():
        raise ValueError("policy_fn returned non-finite actions (NaN or inf); check the policy parameters.")
    return actions


class _Episodes:
    """The returns, and which episode sits in which column of the block (``slot_episode``, moved by compaction)."""

    def __init__(self, shape: tuple[int, ...], compact: bool):
        self.returns = np.zeros(shape)
        self.compacting = compact
        if compact:
            self.final_returns = np.zeros(shape)
            self.slot_episode = np.broadcast_to(np.arange(shape[-1]), shape).copy()

    def compact(self, dynamics: Dynamics, state: State, policy_fn: Callable) -> State:
        """When every policy has at most ``COMPACTION_THRESHOLD`` of its columns running, move each policy's
        running episodes to the front and cut the block to the widest policy's count."""
        if not self.compacting:
            return state
        width = int(np.count_nonzero(~state.done, axis=1).max())
        if width > COMPACTION_THRESHOLD * state.done.shape[1]:
            return state
        np.put_along_axis(self.final_returns, self.slot_episode, self.returns, axis=1)  # finished ones are final
        order = np.argsort(state.done, axis=1, kind="stable")[:, :width]  # running columns first
        self.returns = np.take_along_axis(self.returns, order, axis=1)
        self.slot_episode = np.take_along_axis(self.slot_episode, order, axis=1)
        state = State(
            dynamics.select(state.physics, order),
            np.take_along_axis(state.obs, order[..., None], axis=1),
            np.take_along_axis(state.reward, order, axis=1),
            np.take_along_axis(state.done, order, axis=1),
        )
        if hasattr(policy_fn, "compact"):  # a policy with per-episode state follows its episodes
            policy_fn.compact(order)
        return state

    def final(self) -> np.ndarray:
        if not self.compacting:
            return self.returns
        np.put_along_axis(self.final_returns, self.slot_episode, self.returns, axis=1)
        return self.final_returns


class _Recording:
    """Every step of every episode, for :func:`record` (no compaction then)."""

    def __init__(self, dynamics: Dynamics, state: State, horizon: int):
        shape = state.done.shape
        frame = dynamics.frame(state)
        self.observations = np.empty((*shape, horizon + 1, state.obs.shape[-1]), dtype=state.obs.dtype)
        self.observations[..., 0, :] = state.obs
        self.frames = np.empty((*shape, horizon + 1, frame.shape[-1]), dtype=frame.dtype)
        self.frames[..., 0, :] = frame
        if dynamics.discrete:
            self.actions = np.full((*shape, horizon), -1, dtype=np.int8)
        else:
            self.actions = np.zeros((*shape, horizon, *dynamics.action_shape))
        self.rewards = np.zeros((*shape, horizon))
        self.active = np.zeros((*shape, horizon), dtype=bool)
        self.done = np.zeros((*shape, horizon), dtype=bool)

    def took(self, step: int, dynamics: Dynamics, state: State, actions: np.ndarray, running: np.ndarray) -> None:
        self.active[..., step] = running
        self.actions[:, :, step][running] = actions[running]
        self.rewards[..., step] = state.reward
        self.done[..., step] = state.done
        self.observations[..., step + 1, :] = state.obs
        self.frames[..., step + 1, :] = dynamics.frame(state)

    def trajectories(self, steps_run: int, returns: np.ndarray) -> Trajectories:
        """The record, its steps after the last episode ended filled in as ended (the loop stopped early)."""
        self.observations[..., steps_run + 1 :, :] = self.observations[..., steps_run : steps_run + 1, :]
        self.frames[..., steps_run + 1 :, :] = self.frames[..., steps_run : steps_run + 1, :]
        self.done[..., steps_run:] = True
        return Trajectories(
            self.observations, self.frames, self.actions, self.rewards, self.active, self.done, returns
        )


class _Reporter:
    """Progress every ``horizon / REPORTS_PER_ROLLOUT`` steps, the last one always (where Stop takes effect)."""

    def __init__(self, name: str, horizon: int, total: int, on_progress: ProgressFn | None):
        self.name, self.horizon, self.total, self.on_progress = name, horizon, total, on_progress
        self.every = max(1, horizon // REPORTS_PER_ROLLOUT)

    def step(self, steps_run: int, done: np.ndarray, still_running: bool) -> None:
        if self.on_progress is None or (steps_run % self.every and still_running and steps_run < self.horizon):
            return
        running = int(np.count_nonzero(~done))  # of the block, which compaction may have cut
        detail = f"{self.name} step {steps_run}, {running}/{self.total} running"
        self.on_progress(steps_run, self.horizon, Report(Stage.ROLLOUTS, detail))

    def end(self, steps_run: int) -> None:
        if self.on_progress is not None and steps_run < self.horizon:
            detail = f"{self.name}, all {self.total} episodes ended by step {steps_run}"
            self.on_progress(self.horizon, self.horizon, Report(Stage.ROLLOUTS, detail))
