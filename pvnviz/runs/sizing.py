"""Work sized before it starts: limits, and memory and time estimates of a Section 6 run.

A run of Algorithms 1-3 (Section 6, Appendix B's settings) costs, in order of size:
- collecting the dataset, K policies x B episodes x H steps (Algorithm 1, Appendix C);
- training the PVN, ``train_steps`` minibatches (Algorithm 2);
- the ascent (Algorithm 3), whose Monte Carlo scoring rolls out every kept iterate at once:
  A starts x (T / eval_every + 1) iterates x ``eval_episodes`` episodes, plus the fresh re-measurement.
``estimate`` turns a config into peak bytes and seconds on one core of this project's reference machine,
from rates measured with the benchmarks (``python -m pvnviz.bench``; the constants below say which).
They are estimates: within a factor of about 2 of measured runs (tests/test_sizing.py checks a few).

``LIMITS`` bounds every count, for the CLI, the pages and the URL alike, well above Appendix B's settings;
``pvnviz.core.config_fields.check_limits`` refuses a config beyond them (or beyond its layer caps) with a message
naming the setting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pvnviz.core.config_fields import ConfigError

# (lowest, highest) of every count of an experiment config (``pvnviz.core.config_fields.check_limits``; layer sizes
# apply per layer, within ``pvnviz.core.config_fields.MAX_LAYERS`` x ``MAX_LAYER_SIZE``)
LIMITS: dict[str, tuple[int, int]] = {
    "num_policies": (1, 10_000_000),
    "num_episodes": (1, 100_000),
    "horizon": (1, 100_000),
    "num_bins": (2, 1001),
    "num_probes": (1, 1000),
    "train_steps": (1, 10_000_000),
    "batch_size": (1, 65_536),
    "num_starts": (1, 10_000),
    "ascent_steps": (0, 1_000_000),
    "eval_every": (1, 1_000_000),
    "eval_episodes": (1, 100_000),
    "log_every": (1, 1_000_000),
    "ensemble_size": (1, 64),
    "rounds": (1, 100),
    "round_train_steps": (1, 1_000_000),
    "round_perturbations": (0, 1000),
    "fresh_episodes": (0, 100_000),
}

# Measured rates (this project's 2-core reference machine, one process). Each environment's own rates,
# env steps per second and bytes per running episode, are on its BatchedEnv (tests/test_sizing.py checks them).
TRAIN_STEP_OVERHEAD_S = 3e-4  # one Adam step of a small PVN, batch 32 (Section 3-4)
SECONDS_PER_FLOP = 1.5e-10  # effective, forward + backward, float32 on one core
ASCENT_STEP_S = 5e-4  # one Adam step of all starts through a frozen PVN (Algorithm 3)
BASE_BYTES = 400 * 2**20  # the interpreter, torch, numpy, mujoco


@dataclass(frozen=True)
class Estimate:
    """Peak memory and compute time of one run; ``largest`` names the setting behind the memory peak."""

    bytes: int
    seconds: float
    largest: str
    parts: dict[str, float]  # seconds per stage

    def describe(self) -> str:
        return f"about {format_bytes(self.bytes)} and {format_seconds(self.seconds)}"


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit in ("B", "KB") else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def format_seconds(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.0f} days"


def _mlp_params(sizes: list[int]) -> int:
    return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=False))


# one fused RMSProp step of the polytope PVN (pvnviz.polytope.tiny_mlp), batch 32: numpy's per-call overhead, which
# follows the host's single-core speed. Calibrated on a 2-core machine so that the defaults' estimate sits well inside
# the 2.5x of the measured CPU time that tests/test_sizing.py allows, not at its edge
POLYTOPE_STEP_OVERHEAD_S = 2.0e-5


def estimate_polytope(config: Any) -> Estimate:
    """Peak bytes and seconds of ``run_polytope(config)`` (Section 6.1): PVN training dominates the time."""
    flops = 12.0 * config.hidden_size  # forward and backward of 2 -> hidden -> 2, per example
    step = POLYTOPE_STEP_OVERHEAD_S + SECONDS_PER_FLOP * config.batch_size * flops
    memory = {
        "num_polytope_points": config.num_polytope_points * 64,
        "batch_size": config.batch_size * config.hidden_size * 8 * 4,
        "num_policies": config.num_policies * 64,
    }
    parts = {"train": config.train_steps * step, "ascent": config.ascent_steps * 2e-4 + config.grid_size**2 * 1e-5}
    return Estimate(
        bytes=BASE_BYTES + int(sum(memory.values())),
        seconds=float(sum(parts.values())),
        largest=max(memory, key=memory.get),
        parts=parts,
    )


def estimate(config: Any) -> Estimate:
    """Peak bytes and seconds of ``run_experiment(config)`` (one seed, every input in ``config.inputs``), or of the
    polytope experiment for a ``PolytopeConfig``."""
    from pvnviz.envs.registry import get_env
    from pvnviz.runs.budget import StepBudget
    from pvnviz.runs.collection import DEFAULT_CHUNK_STEPS  # one collection chunk is what runs at once

    if not hasattr(config, "env_name"):
        return estimate_polytope(config)

    env = get_env(config.env_name)
    rate, per_episode = env.steps_per_second, env.bytes_per_episode  # measured per environment (its module)
    policy_params = config.arch().num_params
    k, b, h = config.num_policies, config.num_episodes, config.horizon
    inputs = len(config.inputs)
    members = config.ensemble_size
    rounds = config.rounds
    kept = config.num_starts * StepBudget(config).checks_per_round  # the checked iterates, measured at once
    batch = max(kept, config.num_starts * 2 * config.round_perturbations)  # or a round's perturbations

    memory = {
        "num_policies": k * (policy_params * 8 + b * 8) * 2,  # the dataset, and its kept copy
        "num_episodes": min(k * b, max(1, DEFAULT_CHUNK_STEPS // h)) * per_episode,  # one collection chunk
        "eval_episodes": batch * (config.eval_episodes * per_episode + policy_params * 8) * rounds,
        "fresh_episodes": config.num_starts * config.fresh_episodes * per_episode,
    }
    pvn_inputs = {"fingerprint": config.num_probes * env.act_dim, "flattened": policy_params}
    flops, pvn_bytes = 0.0, 0
    for input_mode in config.inputs:
        pvn = _mlp_params([pvn_inputs.get(input_mode, policy_params), *config.pvn_hidden, config.num_bins])
        extra = config.num_probes * policy_params if input_mode == "fingerprint" else 0
        flops = max(flops, 6.0 * (pvn + extra))
        pvn_bytes = max(pvn_bytes, 4 * 4 * pvn * members)  # weights, gradients, two Adam moments
    memory["pvn_hidden"] = pvn_bytes + config.batch_size * flops  # activations of one minibatch, generously
    total_bytes = BASE_BYTES + int(sum(memory.values()))
    largest = max(memory, key=memory.get)

    train_step = TRAIN_STEP_OVERHEAD_S + SECONDS_PER_FLOP * config.batch_size * flops
    scored_steps = kept * config.eval_episodes * h + config.num_starts * config.fresh_episodes * h
    explored = (rounds - 1) * config.num_starts * 2 * config.round_perturbations  # perturbations, per input
    parts = {
        "collect": k * b * h / rate,
        "train": inputs * members * train_step * (config.train_steps + (rounds - 1) * config.round_train_steps),
        "ascent": inputs * rounds * (config.ascent_steps * ASCENT_STEP_S * max(1, members) + scored_steps / rate)
        + inputs * explored * config.eval_episodes * h / rate,
    }
    return Estimate(bytes=total_bytes, seconds=float(sum(parts.values())), largest=largest, parts=parts)


def available_memory() -> int:
    """Bytes this machine can still give a new allocation (MemAvailable), or a large number where unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 50


def check_memory(config: Any, available: int | None = None) -> Estimate:
    """The estimate, or ConfigError if the run would need more memory than is free, naming the setting to lower."""
    est = estimate(config)
    free = available_memory() if available is None else available
    if est.bytes > free:
        raise ConfigError(
            f"this run needs {format_bytes(est.bytes)} of memory, more than the {format_bytes(free)} free; "
            f"lower {est.largest} (now {getattr(config, est.largest)})."
        )
    return est


def check_budget(config: Any, budget_seconds: float, est: Estimate | None = None) -> Estimate:
    """The estimate (``est`` if already made), or ConfigError if it would take longer than ``budget_seconds``."""
    est = estimate(config) if est is None else est
    if est.seconds > budget_seconds:
        slowest = max(est.parts, key=est.parts.get)
        hint = {
            "collect": "num_policies, num_episodes or horizon",
            "train": "train_steps, batch_size, num_probes or pvn_hidden",
            "ascent": "ascent_steps, num_starts or eval_episodes (or raise eval_every)",
        }[slowest] if hasattr(config, "env_name") else "train_steps, batch_size or hidden_size"
        raise ConfigError(
            f"this run would take {format_seconds(est.seconds)} ({slowest} {format_seconds(est.parts[slowest])}), "
            f"over the {format_seconds(budget_seconds)} budget for live runs; lower {hint}, "
            "or run it from the CLI and open the saved run."
        )
    return est
