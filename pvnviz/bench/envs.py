"""``python -m pvnviz.bench envs``: Algorithm 1's collector on any gymnasium environment, against gymnasium's own
vector environment stepping the same batched policy.

One row per environment ID. Each row times three ways of running K random MLP policies x B episodes for at
most T steps (Algorithm 1's inner loop, Appendix C):

* ``batched``: ``get_env("gym:ID")``, the family's own batched step (``pvnviz.envs.classic``,
  ``pvnviz.envs.mujoco_family``, the built-in CartPole and Swimmer), where the ID has one;
* ``generic``: ``pvnviz.envs.families.generic_env``, the environment's own code through ``gymnasium.make_vec``
  as the PVN pipeline drives it (episodes end on their own terminated or truncated, finished ones are dropped);
* ``make_vec``: a plain loop over ``gymnasium.make_vec(ID, num_envs=K*B, vectorization_mode="sync")`` with the
  same policy (one batched forward pass per step over all K*B observations, tanh outputs mapped into a Box's
  bounds), collecting the same K x B episodes: every sub-environment runs its first episode to its end or T steps;
  the loop ends when all have ended, and a sub-environment's steps after its first episode are not counted.

Every way collects one episode per (policy, episode) pair, at most T steps long. A rate is environment steps of
those episodes per second of wall time, policy included; each way is timed ``--repeat`` times, in turn with the
others, and its fastest repeat kept. Goals (issue text):
``generic`` at least ``make_vec``'s, ``batched`` at least 3x. Nothing here passes or fails: the ratios are printed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvnviz.cli.argtypes import OneLineParser, positive_int
from pvnviz.core.policies import PolicyArch, glorot_params, sampling_policy

CLASSIC = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1")
MUJOCO = (
    "Swimmer-v5",
    "InvertedPendulum-v5",
    "InvertedDoublePendulum-v5",
    "Reacher-v5",
    "Hopper-v5",
    "HalfCheetah-v5",
    "Walker2d-v5",
    "Ant-v5",
)
DEFAULT_IDS = CLASSIC + MUJOCO
# (K policies, B episodes, T steps) by family: the MuJoCo rows are smaller, their steps cost ~100x more
SIZES = {"classic": (100, 10, 200), "mujoco": (25, 4, 200)}


@dataclass(frozen=True)
class Timing:
    """One way of running the policies: env steps really taken, and the seconds they took."""

    env_steps: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.env_steps / self.seconds if self.seconds > 0 else float("nan")


@dataclass(frozen=True)
class Row:
    """One environment's three timings (``batched`` None where no batched family lists the ID)."""

    gym_id: str
    path: str  # which path ``get_env`` takes: "built-in", a family module, or "gymnasium vector"
    sizes: tuple[int, int, int]  # K, B, T
    make_vec: Timing
    generic: Timing
    batched: Timing | None


def _arch(env) -> PolicyArch:
    return PolicyArch(env.obs_dim, env.act_dim, (30,), env.discrete)


def time_pipeline(env, params: np.ndarray, sizes: tuple[int, int, int], seed: int) -> Timing:
    """Our rollout of ``params`` (K, P) x B episodes, at most T steps each, through a ``BatchedEnv``."""
    k, b, t = sizes
    arch = _arch(env)
    policy = sampling_policy(arch, params, np.random.default_rng(seed + 1))
    start = time.perf_counter()
    counted = env.rollout_counted(
        policy, num_policies=k, num_episodes=b, horizon=t, rng=np.random.default_rng(seed)
    )
    return Timing(int(counted.env_steps), time.perf_counter() - start)


def time_make_vec(gym_name: str, env, params: np.ndarray, sizes: tuple[int, int, int], seed: int) -> Timing:
    """gymnasium's sync vector environment stepping the same policies for T steps (resets not counted)."""
    import gymnasium

    from pvnviz.envs.gym_id import box_actions, parse_env_name

    k, b, t = sizes
    gym_id = parse_env_name(gym_name)
    vec = gymnasium.make_vec(gym_id.id, num_envs=k * b, vectorization_mode="sync", **gym_id.kwargs_dict)
    arch = _arch(env)
    policy = sampling_policy(arch, params, np.random.default_rng(seed + 1))
    space = vec.single_action_space
    low = high = None
    if not arch.discrete:
        low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    obs, _ = vec.reset(seed=seed)
    ended = np.zeros(k * b, dtype=bool)  # the sub-environment's first episode has ended
    steps = 0
    start = time.perf_counter()
    for _ in range(t):
        actions = policy(np.asarray(obs, np.float32).reshape(k, b, -1))
        if arch.discrete:
            actions = actions.reshape(k * b)
        else:
            actions = box_actions(actions, low, high).reshape(k * b, -1).astype(space.dtype)
        obs, _, terminated, truncated, _ = vec.step(actions)
        steps += int(np.count_nonzero(~ended))
        ended |= np.logical_or(terminated, truncated)
        if ended.all():
            break
    seconds = time.perf_counter() - start
    vec.close()
    return Timing(steps, seconds)


def fastest(timings: list[Timing]) -> Timing:
    """The repeat with the highest rate: the least disturbed by the rest of the machine (timeit's rule)."""
    return max(timings, key=lambda t: t.rate)


def bench_env(gym_name: str, seed: int = 0, sizes: tuple[int, int, int] | None = None, repeat: int = 3) -> Row:
    """One environment's row: the same Glorot MLP [30] policies run the three ways, each ``repeat`` times, in
    turn (make_vec, generic, batched, then again), the fastest repeat of each kept."""
    from pvnviz.envs import families
    from pvnviz.envs.gym_id import parse_env_name
    from pvnviz.envs.registry import get_env

    gym_id = parse_env_name(gym_name)
    sizes = sizes or SIZES["classic" if gym_id.id in CLASSIC else "mujoco"]
    path = families.family_name(gym_id)
    generic = families.generic_env(gym_id)
    params = glorot_params(_arch(generic), sizes[0], np.random.default_rng(seed))
    time_pipeline(generic, params, (*sizes[:2], 1), seed)  # warm-up: builds (and caches) the vector env, untimed
    env = get_env(gym_id.name) if path != "gymnasium vector" else None
    if env is not None:
        time_pipeline(env, params, (*sizes[:2], 1), seed)  # warm-up: first-call costs (model load, threads)
    vec, gen, bat = [], [], []
    for _ in range(repeat):
        vec.append(time_make_vec(gym_id.name, generic, params, sizes, seed))
        gen.append(time_pipeline(generic, params, sizes, seed))
        if env is not None:
            bat.append(time_pipeline(env, params, sizes, seed))
    shutdown = getattr(generic.dynamics, "shutdown", None) or getattr(
        getattr(generic.dynamics, "inner", None), "shutdown", None
    )
    if shutdown is not None:
        shutdown()
    return Row(gym_id.id, path, sizes, fastest(vec), fastest(gen), fastest(bat) if bat else None)


def format_rows(rows: list[Row]) -> str:
    """The table: env-steps/s of each way, and the two ratios against ``make_vec``."""
    head = (
        f"{'environment':<27} {'path':<14} {'K x B x T':<13} {'make_vec':>11} {'generic':>11} {'x':>6} "
        f"{'batched':>12} {'x':>7}"
    )
    lines = ["Collector env-steps/s, same batched MLP [30] policies (python -m pvnviz.bench envs)", head]
    for r in rows:
        k, b, t = r.sizes
        batched = f"{'-':>12} {'':>7}"
        if r.batched is not None:
            batched = f"{r.batched.rate:12,.0f} {r.batched.rate / r.make_vec.rate:6.1f}x"
        lines.append(
            f"{r.gym_id:<27} {r.path:<14} {f'{k} x {b} x {t}':<13} {r.make_vec.rate:11,.0f} {r.generic.rate:11,.0f} "
            f"{r.generic.rate / r.make_vec.rate:5.2f}x {batched}"
        )
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = OneLineParser(prog="python -m pvnviz.bench envs", description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="+", default=list(DEFAULT_IDS), help="gymnasium IDs (gym:ID?k=v also)")
    parser.add_argument("--policies", type=positive_int, help="K (default by family)")
    parser.add_argument("--episodes", type=positive_int, help="B (default by family)")
    parser.add_argument("--steps", type=positive_int, help="T (default by family)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=positive_int, default=3, help="timings of each way; the fastest is kept")
    return parser.parse_args(argv)


def main(argv: list[str], echo: Callable[[str], None] = print) -> int:
    """Run the benchmark over ``--ids``; returns the exit status (2, one line on stderr, for a bad ID)."""
    from pvnviz.envs.gym_id import check_qualifies, parse_env_name

    args = parse_args(argv)
    names = [i if i.startswith("gym:") else f"gym:{i}" for i in args.ids]
    for name in names:  # refused before any timing starts
        check_qualifies(parse_env_name(name))
    rows = []
    for name in names:
        gid = parse_env_name(name).id
        k, b, t = SIZES["classic" if gid in CLASSIC else "mujoco"]
        sizes = (args.policies or k, args.episodes or b, args.steps or t)
        rows.append(bench_env(name, seed=args.seed, sizes=sizes, repeat=args.repeat))
        echo(format_rows(rows[-1:]).splitlines()[-1])
    echo(format_rows(rows))
    return 0
