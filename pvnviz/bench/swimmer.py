"""Benchmark ``python -m pvnviz.bench swimmer``: the batched Swimmer collector of Section 6.3 (``pvnviz.envs.swimmer``).

Measures environment steps per second of the Swimmer's rollouts (``pvnviz.envs.rollout`` over ``pvnviz.envs.swimmer``)
on random MLP policies (8 -> 30 -> 2, tanh hidden and output, Glorot-uniform
weights, zero biases, evaluated for all K x B episodes at once with batched
matmuls), and compares it, in the same process, with

* a plain Python loop over ``gymnasium.make("Swimmer-v5")`` running a subset of
  the same policies, one observation at a time, and
* the physics limit: single-thread ``mj_step`` rate x cores / frame_skip,
  measured before and after the collector (the mean is used).

The ``mujoco.rollout`` engine lives here too, kept for comparison (``--engine rollout``): one
``rollout.Rollout`` call per environment step restarts the constraint solver's warm start, so it is
bit-identical to gymnasium only until a rotor reaches its joint limit (see ``pvnviz.envs.swimmer``).

``python -m pvnviz.bench swimmer [--num-policies K] [--num-episodes B] [--horizon T]``
prints a report (``main``); :func:`bench_swimmer` returns the numbers as a dict.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import mujoco
import numpy as np
from mujoco import rollout as mj_rollout

from pvnviz.cli.argtypes import OneLineParser, non_negative_int, positive_int
from pvnviz.core.policies import PolicyArch, forward_numpy, glorot_params
from pvnviz.envs import rollout, swimmer
from pvnviz.envs.rollout import Trajectories, check_counts

HIDDEN_SIZE = 30
GOAL_FRACTION_OF_PHYSICS_LIMIT = 0.7  # printed next to the measurement
GOAL_SPEEDUP_OVER_GYMNASIUM = 4.0


class RolloutStepper:
    """One ``mujoco.rollout`` call per env step; restarts the warm start at zero every call."""

    def __init__(self, model: mujoco.MjModel, initial_states: np.ndarray, nthread: int):
        count = initial_states.shape[0]
        self.models = [model] * count  # skip_checks=True needs one model per rollout
        self.datas = [mujoco.MjData(model) for _ in range(nthread)]
        self.pool = mj_rollout.Rollout(nthread=nthread if nthread > 1 else 0)
        self.state = np.array(initial_states, dtype=np.float64, order="C")
        self.qpos = self.state[:, swimmer.QPOS_SLICE]
        self.qvel = self.state[:, swimmer.QVEL_SLICE]
        self.control = np.zeros((count, swimmer.FRAME_SKIP, swimmer.ACTION_SIZE))
        self.out = np.empty((count, swimmer.FRAME_SKIP, swimmer.STATE_SIZE))
        self.sensordata = np.empty((count, swimmer.FRAME_SKIP, model.nsensordata))
        self.chunk_size = max(1, count // (nthread * 10))

    def step(self, actions: np.ndarray) -> None:
        self.control[:] = actions[:, None, :]
        self.pool.rollout(
            self.models,
            self.datas,
            self.state,
            self.control,
            nstep=swimmer.FRAME_SKIP,
            state=self.out,
            sensordata=self.sensordata,
            skip_checks=True,
            chunk_size=self.chunk_size,
        )
        self.state[:] = self.out[:, -1]

    def close(self) -> None:
        self.pool.close()


ENGINES = {"batch": swimmer.BatchStepper, "rollout": RolloutStepper}


def simulate(
    policy_fn: Callable[[np.ndarray], np.ndarray],
    initial_states: np.ndarray,
    horizon: int,
    *,
    engine: str = "batch",
    record: bool = False,
    nthread: int | None = None,
    profile: dict[str, float] | None = None,
) -> tuple[np.ndarray, Trajectories | None]:
    """The Swimmer's rollout (``pvnviz.envs.rollout``) on ``engine`` ("batch": the collector's; "rollout": for
    comparison).

    Returns (returns (K, B), the ``Trajectories`` with ``record``, else None). A ``profile`` dict receives the
    seconds spent in the "policy", the "physics" and the rest of the loop ("other").
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {tuple(ENGINES)}, got {engine!r}.")
    threads = (os.cpu_count() or 1) if nthread is None else int(nthread)
    stepper_class, timed_policy = ENGINES[engine], policy_fn
    if profile is not None:
        for key in ("policy", "physics", "other"):
            profile.setdefault(key, 0.0)

        def timed_policy(observations: np.ndarray) -> np.ndarray:
            tick = time.perf_counter()
            actions = policy_fn(observations)
            profile["policy"] += time.perf_counter() - tick
            return actions

        class TimedStepper(stepper_class):
            def step(self, actions: np.ndarray) -> None:
                tick = time.perf_counter()
                super().step(actions)
                profile["physics"] += time.perf_counter() - tick

        stepper_class = TimedStepper
        before = profile["policy"] + profile["physics"]
    started = time.perf_counter()
    dynamics = swimmer.Swimmer(stepper_class)
    if record:
        trajectories = rollout.record(dynamics, timed_policy, initial_states, horizon, nthread=threads)
        result = (trajectories.returns, trajectories)
    else:
        result = (rollout.rollout(dynamics, timed_policy, initial_states, horizon, nthread=threads), None)
    if profile is not None:
        inner = profile["policy"] + profile["physics"] - before
        profile["other"] += time.perf_counter() - started - inner
    return result


def physics_limit_steps_per_second(
    seconds: float = 1.0,
    nthread: int | None = None,
    control_fn: Callable[[int, np.ndarray], np.ndarray] | None = None,
    episode_length: int = swimmer.DEFAULT_HORIZON,
    seed: int = 0,
) -> float:
    """Upper bound on environment steps per second: single-thread ``mj_step`` rate x threads / frame_skip.

    One MjData runs episodes of ``episode_length`` steps from gymnasium's reset
    distribution for about ``seconds``; only the ``mj_step(nstep=frame_skip)``
    calls are timed, so Python overhead is excluded, and they are timed in CPU
    time of the calling thread (``time.thread_time``), so the bound is what the
    cores deliver when they are free, even if other processes share them. The cost of a MuJoCo step
    depends on the state (about 30 % more while a rotor presses on its joint
    limit), so the controls matter: ``control_fn(step, observation (8,)) ->
    action (2,)`` drives the episodes (e.g. the benchmarked policies, for a
    workload-matched bound); by default controls are i.i.d. uniform in [-1, 1],
    which rarely reaches the limits (a high, generic bound). ``nthread``
    defaults to ``os.cpu_count()``.
    """
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds}; pass e.g. seconds=1.0.")
    if int(episode_length) < 1:
        raise ValueError(f"episode_length must be at least 1 step, got {episode_length}.")
    threads = (os.cpu_count() or 1) if nthread is None else int(nthread)
    model = swimmer.load_model()
    data = mujoco.MjData(model)
    rng = np.random.default_rng(seed)
    if control_fn is None:

        def control_fn(step: int, observation: np.ndarray) -> np.ndarray:
            return rng.uniform(-1.0, 1.0, swimmer.ACTION_SIZE)

    observation = np.empty(swimmer.OBSERVATION_SIZE)
    stepping = 0.0
    steps = 0
    started = time.perf_counter()
    while steps < 10 or time.perf_counter() - started < seconds:
        if steps % int(episode_length) == 0:
            mujoco.mj_resetData(model, data)
            state = swimmer.reset_states(rng, ())
            data.qpos[:] = state[swimmer.QPOS_SLICE]
            data.qvel[:] = state[swimmer.QVEL_SLICE]
            mujoco.mj_forward(model, data)
        swimmer.observe(data.qpos, data.qvel, out=observation)
        data.ctrl[:] = control_fn(steps, observation)
        tick = time.thread_time()
        mujoco.mj_step(model, data, nstep=swimmer.FRAME_SKIP)
        stepping += time.thread_time() - tick
        steps += 1
    return steps / max(stepping, 1e-9) * threads


@dataclass
class RandomMLPPolicies:
    """K Glorot MLP policies 8 -> 30 -> 2 from ``pvnviz.core.policies``, batched and one at a time."""

    arch: PolicyArch
    params: np.ndarray  # (K, P)

    @classmethod
    def init(cls, rng: np.random.Generator, num_policies: int, hidden_size: int = HIDDEN_SIZE) -> RandomMLPPolicies:
        arch = PolicyArch(swimmer.OBSERVATION_SIZE, swimmer.ACTION_SIZE, (hidden_size,), discrete=False)
        return cls(arch, glorot_params(arch, num_policies, rng))

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        """Actions (K, B, 2) for observations (K, B, 8): one batched matmul per layer."""
        return forward_numpy(self.arch, self.params, observations).astype(np.float64)

    def act(self, policy: int, observation: np.ndarray) -> np.ndarray:
        """Action (2,) of policy ``policy`` for one observation (8,)."""
        one = forward_numpy(self.arch, self.params[policy : policy + 1], observation[None, None])
        return one[0, 0].astype(np.float64)


def gymnasium_loop_steps_per_second(
    policies: RandomMLPPolicies, num_policies: int, horizon: int, seed: int = 0
) -> tuple[float, float, np.ndarray]:
    """Python loop over one gymnasium Swimmer-v5 (first ``num_policies`` policies, 1 episode each).

    Returns (env-steps per wall second, env-steps per CPU second, returns (num_policies,)).
    """
    import gymnasium

    env = gymnasium.make("Swimmer-v5", max_episode_steps=horizon)
    returns = np.zeros(num_policies)
    started, cpu_started = time.perf_counter(), time.process_time()
    for policy in range(num_policies):
        observation, _ = env.reset(seed=seed + policy)
        for _ in range(horizon):
            observation, reward, terminated, truncated, _ = env.step(policies.act(policy, observation))
            returns[policy] += reward
            if terminated or truncated:
                break
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    env.close()
    steps = num_policies * horizon
    return steps / elapsed, steps / max(cpu, 1e-9), returns


def bench_swimmer(
    num_policies: int = 2000,
    num_episodes: int = 5,
    horizon: int = 100,
    gymnasium_policies: int = 20,
    seed: int = 0,
    engine: str = "batch",
    physics_seconds: float = 1.0,
) -> dict:
    """Measure our collector against gymnasium and the physics limit; returns a dict of the numbers.

    The default batch (2000 policies x 5 episodes) is the size of the paper's
    Swimmer data set; the horizon is shortened to keep the benchmark short.
    Two physics limits are measured (see
    :func:`physics_limit_steps_per_second`, CPU-time based):
    "matched" steps the same policies with the same horizon (the reference,
    measured before and after our run and averaged), "generic" uses i.i.d.
    uniform controls, which rarely press on the joint limits and are cheaper.

    Wall-clock ratios are the headline numbers. On a shared machine other
    processes take cores away from our threads (``cpu_utilisation`` below the
    thread count shows it); the ``*_cpu`` ratios divide by the CPU time we
    actually got instead, i.e. what the ratios would be on free cores.
    """
    check_counts(num_policies, num_episodes, horizon)
    rng = np.random.default_rng(seed)
    policies = RandomMLPPolicies.init(rng, num_policies)
    threads = os.cpu_count() or 1
    generic = physics_limit_steps_per_second(physics_seconds, seed=seed)
    matched_before = _matched_limit(policies, num_policies, horizon, physics_seconds, seed)
    returns, ours_seconds, ours_cpu, profile = _time_ours(policies, rng, num_episodes, horizon, engine)
    matched_after = _matched_limit(policies, num_policies, horizon, physics_seconds, seed)
    env_steps = num_policies * num_episodes * horizon
    gym_policies = max(1, min(int(gymnasium_policies), num_policies))
    gym, gym_cpu, _ = gymnasium_loop_steps_per_second(policies, gym_policies, horizon, seed)
    matched = 0.5 * (matched_before + matched_after)
    ours = env_steps / ours_seconds
    ours_if_free = env_steps / max(ours_cpu, 1e-9) * threads  # per CPU second, on all cores
    return {
        "engine": engine,
        "threads": threads,
        "num_policies": num_policies,
        "num_episodes": num_episodes,
        "horizon": horizon,
        "env_steps": env_steps,
        "seconds": ours_seconds,
        "cpu_seconds": ours_cpu,
        "cpu_utilisation": ours_cpu / ours_seconds,
        "ours_steps_per_second": ours,
        "gymnasium_steps_per_second": gym,
        "gymnasium_steps_per_cpu_second": gym_cpu,
        "gymnasium_env_steps": gym_policies * horizon,
        "physics_limit_steps_per_second": matched,
        "physics_limit_before": matched_before,
        "physics_limit_after": matched_after,
        "physics_limit_generic": generic,
        **_ratios(ours, ours_if_free, matched, generic, gym, gym_cpu),
        "profile_seconds": profile,
        "mean_return": float(np.mean(returns)),
    }


def _time_ours(
    policies: RandomMLPPolicies, rng: np.random.Generator, num_episodes: int, horizon: int, engine: str
) -> tuple[np.ndarray, float, float, dict[str, float]]:
    """Our collector on every policy: (returns (K, B), wall seconds, CPU seconds, profile of ``simulate``)."""
    profile: dict[str, float] = {}
    started, cpu_started = time.perf_counter(), time.process_time()
    initial_states = swimmer.reset_states(rng, (len(policies.params), num_episodes))  # as rollout_returns draws them
    returns, _ = simulate(policies, initial_states, horizon, engine=engine, profile=profile)
    return returns, time.perf_counter() - started, time.process_time() - cpu_started, profile


def _matched_limit(policies: RandomMLPPolicies, num_policies: int, horizon: int, seconds: float, seed: int) -> float:
    """The physics limit stepping the same policies with the same horizon."""
    return physics_limit_steps_per_second(
        seconds,
        control_fn=lambda step, observation: policies.act((step // horizon) % num_policies, observation),
        episode_length=horizon,
        seed=seed,
    )


def _ratios(ours: float, ours_if_free: float, matched: float, generic: float, gym: float, gym_cpu: float) -> dict:
    """Our rate against the physics limits and gymnasium, wall clock and per CPU second; the paper's set's time."""
    return {
        "fraction_of_physics_limit": ours / matched,
        "fraction_of_generic_physics_limit": ours / generic,
        "speedup_over_gymnasium": ours / gym,
        "fraction_of_physics_limit_cpu": ours_if_free / matched,
        "speedup_over_gymnasium_cpu": ours_if_free / gym_cpu,
        "estimated_seconds_2000x5x1000": 2000 * 5 * 1000 / ours,
        "estimated_seconds_2000x5x1000_free_cores": 2000 * 5 * 1000 / ours_if_free,
    }


def format_report(result: dict) -> str:
    """Readable multi-line report of a :func:`bench_swimmer` result."""
    profile = result["profile_seconds"]
    total = max(sum(profile.values()), 1e-12)
    per_step_ms = {name: 1e3 * seconds / result["horizon"] for name, seconds in profile.items()}
    frac, speed = result["fraction_of_physics_limit"], result["speedup_over_gymnasium"]
    lines = [
        f"Swimmer-v5 batched collector ({result['engine']} engine, {result['threads']} threads)",
        f"  batch: {result['num_policies']} policies x {result['num_episodes']} episodes x "
        f"{result['horizon']} steps = {result['env_steps']:,} env-steps in {result['seconds']:.2f} s "
        f"(CPU {result['cpu_seconds']:.2f} s, {result['cpu_utilisation']:.2f} of {result['threads']} cores busy)",
        f"  ours:          {result['ours_steps_per_second']:>10,.0f} env-steps/s",
        f"  gymnasium:     {result['gymnasium_steps_per_second']:>10,.0f} env-steps/s "
        f"(Python loop, {result['gymnasium_env_steps']:,} env-steps; "
        f"{result['gymnasium_steps_per_cpu_second']:,.0f} per CPU second)",
        f"  physics limit: {result['physics_limit_steps_per_second']:>10,.0f} env-steps/s "
        f"(same policies; before {result['physics_limit_before']:,.0f}, after {result['physics_limit_after']:,.0f})",
        f"  generic limit: {result['physics_limit_generic']:>10,.0f} env-steps/s (i.i.d. uniform controls)",
        f"  ours / physics limit: {frac:6.1%}  (goal {GOAL_FRACTION_OF_PHYSICS_LIMIT:.0%}; "
        f"{result['fraction_of_generic_physics_limit']:.1%} of the generic limit)",
        f"  ours / gymnasium:     {speed:6.1f}x  (goal {GOAL_SPEEDUP_OVER_GYMNASIUM:.0f}x)",
        f"  on free cores (CPU-time based): {result['fraction_of_physics_limit_cpu']:.1%} of the physics limit, "
        f"{result['speedup_over_gymnasium_cpu']:.1f}x gymnasium",
        "  per env step (all episodes): "
        + ", ".join(f"{name} {ms:.2f} ms ({profile[name] / total:.0%})" for name, ms in per_step_ms.items()),
        f"  estimated 2000 policies x 5 episodes x 1000 steps: "
        f"{result['estimated_seconds_2000x5x1000'] / 60:.1f} min at this speed, "
        f"{result['estimated_seconds_2000x5x1000_free_cores'] / 60:.1f} min on free cores",
    ]
    if result["cpu_utilisation"] < 0.9 * result["threads"]:
        lines.append(
            f"  note: other processes were using the cores (only {result['cpu_utilisation']:.2f} of "
            f"{result['threads']} busy with us), so the wall-clock ratios understate; see the free-cores line."
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None):
    """The benchmark's options; a bad number prints one line on stderr and exits with status 2."""
    parser = OneLineParser(prog="python -m pvnviz.bench swimmer", description=__doc__.splitlines()[0])
    parser.add_argument("--num-policies", type=positive_int, default=2000)
    parser.add_argument("--num-episodes", type=positive_int, default=5)
    parser.add_argument("--horizon", type=positive_int, default=100)
    parser.add_argument(
        "--gymnasium-policies", type=positive_int, default=20, help="policies run through gymnasium (1 episode each)"
    )
    parser.add_argument("--engine", choices=tuple(ENGINES), default="batch")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    return parser.parse_args(argv)


def run(args) -> None:
    """Run :func:`bench_swimmer` with parsed options and print the report."""
    result = bench_swimmer(
        num_policies=args.num_policies,
        num_episodes=args.num_episodes,
        horizon=args.horizon,
        gymnasium_policies=args.gymnasium_policies,
        seed=args.seed,
        engine=args.engine,
    )
    print(format_report(result), flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: run :func:`bench_swimmer` and print the report."""
    run(parse_args(argv))
    return 0
