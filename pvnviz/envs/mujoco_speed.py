"""How fast the batched MuJoCo family steps (``pvnviz.envs.mujoco_family``), against gymnasium's own vector env.

Where ``BatchedEnv.steps_per_second`` of the MuJoCo family comes from (``pvnviz.runs.sizing`` sizes runs with it):
N episodes under uniformly random actions, one thread, environment steps per second of the process's CPU time
(so that other work on the machine does not count), counting only the steps episodes really take (an ended
episode is not stepped again). The reference is
``gymnasium.make_vec(id, num_envs=N, vectorization_mode="sync")``, which steps the same environments one
``MjData`` after another in Python (and resets ended ones).

    python -m pvnviz.envs.mujoco_speed Hopper-v5 HalfCheetah-v5 --episodes 200 --steps 200
    python -m pvnviz.envs.mujoco_speed Hopper-v5 --kwargs '{"terminate_when_unhealthy": false}'
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from pvnviz.envs import mujoco_family, rollout


def batched_rate(env_id: str, num_episodes: int, num_steps: int, kwargs: dict | None = None, seed: int = 0) -> float:
    """Environment steps per CPU second of the batched family on one thread (random actions in the bounds)."""
    env = mujoco_family.batched_env((env_id, kwargs or {}))
    rng = np.random.default_rng(seed)
    low, high = env.action_space.low.astype(np.float64), env.action_space.high.astype(np.float64)
    actions = rng.uniform(low, high, size=(num_steps, 1, num_episodes, env.act_dim))
    calls = iter(actions)
    states = env.reset_states(rng, (1, num_episodes))
    start = time.process_time()
    counted = rollout.rollout_counted(env.dynamics, lambda obs: next(calls), states, num_steps, nthread=1)
    return counted.env_steps / (time.process_time() - start)


def gymnasium_rate(env_id: str, num_envs: int, num_steps: int, kwargs: dict | None = None, seed: int = 0) -> float:
    """Environment steps per CPU second of ``gymnasium.make_vec(..., vectorization_mode="sync")``."""
    import gymnasium

    envs = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", **(kwargs or {}))
    envs.reset(seed=seed)
    envs.action_space.seed(seed)
    actions = [envs.action_space.sample() for _ in range(num_steps)]
    start = time.process_time()
    for action in actions:
        envs.step(action)
    elapsed = time.process_time() - start
    envs.close()
    return num_envs * num_steps / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="+", help=f"any of {', '.join(mujoco_family.IDS)}")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--kwargs", default="{}", help='keywords for every ID, JSON: \'{"ctrl_cost_weight": 0.01}\'')
    args = parser.parse_args(argv)
    try:
        kwargs = json.loads(args.kwargs)
        if not isinstance(kwargs, dict):
            raise ValueError
    except ValueError:
        print(f"error: --kwargs must be a JSON object, got {args.kwargs!r}.", file=sys.stderr)
        return 2
    unknown = [i for i in args.ids if i not in mujoco_family.IDS]
    if unknown or args.episodes < 1 or args.steps < 1:
        ids = ", ".join(mujoco_family.IDS)
        print(f"error: give IDs among {ids} and positive counts (unknown: {unknown or 'none'}).", file=sys.stderr)
        return 2
    for env_id in args.ids:
        try:
            ours = batched_rate(env_id, args.episodes, args.steps, kwargs)
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        theirs = gymnasium_rate(env_id, args.episodes, args.steps, kwargs)
        print(f"{env_id}: batched {ours:,.0f} steps/s, gymnasium sync vector {theirs:,.0f} steps/s "
              f"({ours / theirs:.1f}x), {args.episodes} episodes x {args.steps} steps, per CPU second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
