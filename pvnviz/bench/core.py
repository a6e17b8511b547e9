"""Benchmarks ``python -m pvnviz.bench polytope`` and ``cartpole`` (Sections 6.1 and 6.2).

Each benchmark runs our batched collector (Appendix C's Algorithm 1 on the batched
environment, exactly the code the experiments use) and a baseline in the same process,
and prints the ratio. CartPole's baseline is a plain Python loop over
``gymnasium.make("CartPole-v1")`` with the same policies; the benchmark also times the
whole Paper pipeline (both inputs) of Section 6.2.
"""

from __future__ import annotations

import time

import numpy as np

from pvnviz.core.policies import PolicyArch, forward_numpy
from pvnviz.envs.registry import get_env
from pvnviz.runs.collection import collect_dataset


def bench_polytope(repeats: int = 5) -> dict:
    """Section 6.1: the exact view (5,000-policy polytope, 20x20 field, exact ascent) and PVN training.

    Baselines in the same process: the polytope by iterative policy evaluation, one policy at a
    time (what the closed form replaces), and the same PVN trained with torch (what the NumPy
    network replaces).
    """
    from pvnviz.polytope.experiment import PolytopeConfig, exact_view, train_polytope_pvn

    config = PolytopeConfig()
    exact_view(config)  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        exact_view(config)
    exact_seconds = (time.perf_counter() - start) / repeats
    start = time.perf_counter()
    train_polytope_pvn(config, 0)
    numpy_seconds = time.perf_counter() - start
    return {
        "exact_seconds": exact_seconds,
        "iterative_seconds": _iterative_polytope(config),
        "pvn_numpy_seconds": numpy_seconds,
        "pvn_torch_seconds": _torch_pvn(config),
        "pvn_stepwise_seconds": _stepwise_pvn(config),
    }


def _iterative_polytope(config) -> float:
    """Seconds for the polytope by iterative policy evaluation, one policy at a time."""
    from pvnviz.polytope import mdp as mdp_lib

    m = config.mdp()
    x = mdp_lib.sample_policies(np.random.default_rng(0), config.num_polytope_points)
    pi = mdp_lib.policy_matrix(x)
    start = time.perf_counter()
    for k in range(len(x)):
        P_pi = np.einsum("sa,sat->st", pi[k], m.transitions)
        r_pi = np.einsum("sa,sa->s", pi[k], m.rewards)
        V = np.zeros(2)
        for _ in range(200):  # gamma^200 < 1e-19 at gamma 0.8
            V = r_pi + m.gamma * P_pi @ V
    return time.perf_counter() - start


def _stepwise_pvn(config) -> float:
    """Seconds for the unfused NumPy step that train_rmsprop replaces: gather, grads, update."""
    from pvnviz.polytope.tiny_mlp import RMSProp, TinyMLP

    rng = np.random.default_rng(0)
    step_net = TinyMLP.init(rng, 2, config.hidden_size, 2)
    step_opt, xn, yn = RMSProp(step_net.params(), config.learning_rate), rng.random((20, 2)), rng.random((20, 2))
    batches = rng.integers(0, 20, size=(config.train_steps, config.batch_size))
    start = time.perf_counter()
    for idx in batches:
        step_opt.step(step_net.mse_and_grads(xn[idx], yn[idx])[1])
    return time.perf_counter() - start


def _torch_pvn(config) -> float:
    """Seconds for the same PVN trained with torch, one thread."""
    import torch

    torch.set_num_threads(1)
    net = torch.nn.Sequential(torch.nn.Linear(2, 50), torch.nn.ReLU(), torch.nn.Linear(50, 2))
    optimizer = torch.optim.RMSprop(net.parameters(), lr=config.learning_rate)
    xs, ys = torch.rand(20, 2), torch.rand(20, 2)
    start = time.perf_counter()
    for _ in range(config.train_steps):
        idx = torch.randint(0, 20, (32,))
        loss = ((net(xs[idx]) - ys[idx]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start


def format_polytope(r: dict) -> str:
    return "\n".join(
        [
            "Polytope (Section 6.1), paper settings",
            f"  exact view (5,000-policy polytope + 20x20 field + ascent): {r['exact_seconds'] * 1000:.1f} ms; "
            f"5,000 policies by iterative evaluation: {r['iterative_seconds']:.2f} s; "
            f"ratio {r['iterative_seconds'] / r['exact_seconds']:.0f}x",
            f"  PVN, 20,000 RMSProp steps: NumPy {r['pvn_numpy_seconds']:.2f} s, torch {r['pvn_torch_seconds']:.2f} s; "
            f"ratio {r['pvn_torch_seconds'] / r['pvn_numpy_seconds']:.1f}x; unfused NumPy steps "
            f"{r['pvn_stepwise_seconds']:.2f} s, ratio {r['pvn_stepwise_seconds'] / r['pvn_numpy_seconds']:.1f}x",
        ]
    )


def gymnasium_cartpole_loop(
    params: np.ndarray, arch: PolicyArch, num_episodes: int, horizon: int, seed: int
) -> tuple[np.ndarray, float]:
    """Returns (K, num_episodes) and seconds of a plain loop over gymnasium, one step at a time."""
    import gymnasium

    env = gymnasium.make("CartPole-v1", max_episode_steps=horizon)
    rng = np.random.default_rng(seed)
    returns = np.zeros((len(params), num_episodes))
    env.reset(seed=seed)
    start = time.perf_counter()
    for k in range(len(params)):
        for e in range(num_episodes):
            obs, _ = env.reset()
            done = False
            while not done:
                probs = forward_numpy(arch, params[k : k + 1], obs[None, None])[0, 0]
                obs, reward, terminated, truncated, _ = env.step(int(rng.random() >= probs[0]))
                returns[k, e] += reward
                done = terminated or truncated
    return returns, time.perf_counter() - start


def bench_cartpole(
    num_policies: int = 1000,
    num_episodes: int = 100,
    horizon: int = 100,
    baseline_episodes: int = 2,
    seed: int = 0,
    pipeline: bool = True,
) -> dict:
    """Env-steps/s of our collector against the gymnasium loop; optionally the Paper pipeline's time."""
    env = get_env("cartpole")
    arch = PolicyArch(4, 2, (30,), True)
    start = time.perf_counter()
    dataset = collect_dataset(env, arch, num_policies, num_episodes, horizon, np.random.default_rng(seed))
    ours_seconds = time.perf_counter() - start
    ours_steps = float(dataset.returns.sum())  # reward 1 per step: a return is an episode's length
    gym_returns, gym_seconds = gymnasium_cartpole_loop(dataset.params, arch, baseline_episodes, horizon, seed)
    result = {
        "num_policies": num_policies,
        "num_episodes": num_episodes,
        "horizon": horizon,
        "ours_seconds": ours_seconds,
        "ours_env_steps": ours_steps,
        "ours_steps_per_second": ours_steps / ours_seconds,
        "gymnasium_env_steps": float(gym_returns.sum()),
        "gymnasium_seconds": gym_seconds,
        "gymnasium_steps_per_second": gym_returns.sum() / gym_seconds,
        "ours_mean_return": float(dataset.returns.mean()),
        "gymnasium_mean_return": float(gym_returns.mean()),
    }
    result["speedup"] = result["ours_steps_per_second"] / result["gymnasium_steps_per_second"]
    if pipeline:
        from pvnviz.runs.pipeline import run_experiment
        from pvnviz.runs.presets import PRESETS

        start = time.perf_counter()
        run = run_experiment(PRESETS["cartpole"]["paper"](), seed)
        result["paper_pipeline_seconds"] = time.perf_counter() - start
        result["paper_pipeline_timings"] = run.timings
    return result


def format_cartpole(r: dict) -> str:
    lines = [
        f"CartPole collector: {r['num_policies']} policies x {r['num_episodes']} episodes, horizon {r['horizon']}",
        f"  ours (batched):      {r['ours_seconds']:.2f} s, {r['ours_steps_per_second']:,.0f} env-steps/s "
        f"(mean return {r['ours_mean_return']:.2f})",
        f"  gymnasium loop:      {r['gymnasium_seconds']:.2f} s for {r['gymnasium_env_steps']:,.0f} steps, "
        f"{r['gymnasium_steps_per_second']:,.0f} env-steps/s (mean return {r['gymnasium_mean_return']:.2f})",
        f"  ratio ours/gymnasium: {r['speedup']:.1f}x",
    ]
    if "paper_pipeline_seconds" in r:
        t = r["paper_pipeline_timings"]
        lines.append(
            f"  Paper pipeline (collect + 2 PVNs + 2 ascents): {r['paper_pipeline_seconds']:.1f} s "
            f"({', '.join(f'{k} {v:.1f}' for k, v in t.items() if k != 'total')})"
        )
    return "\n".join(lines)
