"""Benchmark ``python -m pvnviz.bench ray``: Algorithm 1 (Appendix C) locally and on Ray, same process.

One Swimmer plan (the paper's expensive dataset, Section 6.3 / Appendix B) is collected
locally (one chunk, as the pages do; and in the same chunks as Ray, on one physics
thread and on all cores) and on a local Ray cluster with 1 and with 2 workers of one
CPU each. Every Ray dataset is checked equal to the local one. Ray's overhead per chunk
is timed on tiny chunks (1 policy x 1 episode x 1 step) against the same chunks run
locally. Wall-clock rates are the best of 2 runs; the rate per CPU second of
the Ray workers (what a free core delivers) gives the time of the paper's 10^9-step dataset per 16-core node.
"""

from __future__ import annotations

import time

import numpy as np

from pvnviz.cli.argtypes import OneLineParser, positive_int
from pvnviz.core.policies import PolicyArch
from pvnviz.runs.collection import LocalExecutor, Plan, collect_plan

PAPER_STEPS = 2000 * 500 * 1000  # Appendix B: 2000 policies x 500 returns x 1000 steps
NODE_CORES = 16


def _timed(plan: Plan, executor, repeats: int = 2) -> tuple[float, float, np.ndarray]:
    """Best wall seconds of ``repeats`` runs, CPU seconds summed over the chunks of that run, and the returns."""
    best = (np.inf, 0.0, np.empty(0))
    for _ in range(repeats):
        chunks = {}
        start = time.perf_counter()
        executor.run(list(enumerate(plan.chunks())), chunks.__setitem__)
        seconds = time.perf_counter() - start
        if seconds < best[0]:
            ordered = [chunks[i] for i in sorted(chunks)]
            cpu = sum(c.cpu_seconds for c in ordered)
            best = (seconds, cpu, np.concatenate([c.returns for c in ordered]))
    return best


def bench_ray(num_policies: int = 16, num_episodes: int = 50, horizon: int = 200, chunk_policies: int = 2) -> dict:
    """Env-steps/s locally and on Ray with 1 and 2 workers; Ray's seconds of overhead per chunk."""
    import ray

    from pvnviz.workers.collect_ray import RayExecutor, connect

    arch = PolicyArch(8, 2, (30,), False)
    plan = Plan("swimmer", arch, num_policies, num_episodes, horizon, entropy=0, chunk_policies=chunk_policies)
    whole = Plan("swimmer", arch, num_policies, num_episodes, horizon, entropy=0)
    tiny = Plan("swimmer", arch, 40, 1, 1, entropy=0, chunk_policies=1)
    steps = num_policies * num_episodes * horizon
    result: dict = {"env_steps": steps, "chunks": len(plan.chunks()), "chunk_policies": chunk_policies}
    collect_plan(Plan("swimmer", arch, 2, 2, 10, entropy=1))  # warm-up: model load, imports
    seconds, _, reference = _timed(whole, LocalExecutor())
    result["local_one_chunk"] = steps / seconds
    result["local_chunks"] = steps / _timed(plan, LocalExecutor())[0]
    seconds, cpu, _ = _timed(plan, LocalExecutor(nthread=1))
    result["local_chunks_1_thread"], result["local_1_thread_per_cpu_second"] = steps / seconds, steps / cpu
    local_tiny = _timed(tiny, LocalExecutor(nthread=1))[0]
    for workers in (1, 2):
        start = time.perf_counter()
        connect(None, num_cpus=workers)
        executor = RayExecutor(num_cpus=1)
        collect_plan(Plan("swimmer", arch, 2 * workers, 1, 1, entropy=1, chunk_policies=1), executor)  # start workers
        result[f"ray_{workers}_startup_seconds"] = time.perf_counter() - start
        seconds, cpu, returns = _timed(plan, executor)
        result[f"ray_{workers}_identical"] = bool(np.array_equal(returns, reference.astype(np.float32)))
        result[f"ray_{workers}"], result[f"ray_{workers}_per_cpu_second"] = steps / seconds, steps / cpu
        if workers == 1:
            ray_tiny = _timed(tiny, executor)[0]
            result["ray_overhead_per_chunk_seconds"] = (ray_tiny - local_tiny) / len(tiny.chunks())
        ray.shutdown()
    per_core = result["ray_2_per_cpu_second"]
    result["per_core"] = per_core
    result["paper_hours_per_16_core_node"] = PAPER_STEPS / (per_core * NODE_CORES) / 3600
    return result


def format_ray(r: dict) -> str:
    base = r["local_one_chunk"]
    return "\n".join(
        [
            f"Algorithm 1 on Ray: Swimmer, {r['env_steps']:,} env-steps in {r['chunks']} chunks of "
            f"{r['chunk_policies']} policies (same process, ratios against local one chunk)",
            f"  local, one chunk, all cores:     {base:,.0f} env-steps/s  (1.00x)",
            f"  local, same chunks, all cores:   {r['local_chunks']:,.0f} env-steps/s  "
            f"({r['local_chunks'] / base:.2f}x)",
            f"  local, same chunks, 1 thread:    {r['local_chunks_1_thread']:,.0f} env-steps/s  "
            f"({r['local_chunks_1_thread'] / base:.2f}x)",
            f"  Ray, 1 worker x 1 CPU:           {r['ray_1']:,.0f} env-steps/s  ({r['ray_1'] / base:.2f}x; "
            f"{r['ray_1'] / r['local_chunks_1_thread']:.2f}x local 1 thread; identical: {r['ray_1_identical']})",
            f"  Ray, 2 workers x 1 CPU:          {r['ray_2']:,.0f} env-steps/s  ({r['ray_2'] / base:.2f}x; "
            f"identical: {r['ray_2_identical']})",
            f"  Ray start-up (cluster + first tasks): {r['ray_1_startup_seconds']:.1f} s (1 CPU), "
            f"{r['ray_2_startup_seconds']:.1f} s (2 CPUs)",
            f"  Ray overhead per chunk: {r['ray_overhead_per_chunk_seconds'] * 1000:.1f} ms "
            "(40 tiny chunks on Ray minus the same chunks locally)",
            f"  per CPU second (what a free core delivers): local 1 thread {r['local_1_thread_per_cpu_second']:,.0f}, "
            f"Ray 1 worker {r['ray_1_per_cpu_second']:,.0f}, "
            f"Ray 2 workers {r['ray_2_per_cpu_second']:,.0f} env-steps/s",
            f"  paper's 10^9 steps (Appendix B) on one 16-core node: 1e9 / ({r['per_core']:,.0f} x 16) / 3600 = "
            f"{r['paper_hours_per_16_core_node']:.1f} h",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m pvnviz.bench ray", description=__doc__.splitlines()[0])
    parser.add_argument("--num-policies", type=positive_int, default=16)
    parser.add_argument("--num-episodes", type=positive_int, default=50)
    parser.add_argument("--horizon", type=positive_int, default=200)
    parser.add_argument("--chunk-policies", type=positive_int, default=2)
    args = parser.parse_args(argv)
    print(format_ray(bench_ray(args.num_policies, args.num_episodes, args.horizon, args.chunk_policies)))
    return 0
