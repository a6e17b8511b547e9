"""A live run as the app runs it in a worker: Algorithms 1-3 (Sections 4-5, ``pvnviz.runs.pipeline``), then
the replay of each start before and after its ascent (Section 5's zero-shot ascent, shown as in Fig. 4-5), so a
finished run's page draws at once.

The replays are what ``pvnviz.envs.registry.replay_pairs`` makes from a result's ascent traces: for every PVN
(input mode) and start, the start policy and the best policy its ascent saw. A page that shows a run made
elsewhere (shipped, saved, uploaded) asks a worker for them by ``replays_key``; a live run brings them along,
under the same key, so the tabs waiting on it no longer wait on a second job (and its progress bar) when it ends.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pvnviz.core.progress import NO_HOOKS, Cancelled, Hooks, RunProgress, Segment, Stage

log = logging.getLogger("pvnlab.live")

if TYPE_CHECKING:
    from pvnviz.core.ascent import AscentTrace
    from pvnviz.runs.config import ExperimentConfig
    from pvnviz.runs.dataset import PolicyDataset
    from pvnviz.runs.pipeline import ExperimentResult


def policy_pair(trace: AscentTrace, start: int) -> np.ndarray:
    """(2, P): the start policy and the best-seen policy of its ascent."""
    return np.stack([trace.params[0, start], trace.best_params[start]])


def replay_pairs_of(result: ExperimentResult) -> dict[str, np.ndarray]:
    """{input_mode: (starts, 2, P)}: each start's policy before and after its ascent through that PVN."""
    return {m: np.stack([policy_pair(t, s) for s in range(t.params.shape[1])]) for m, t in result.traces.items()}


def values_digest(*arrays: Any) -> str:
    """A digest of arrays' values: animations are shared between sessions by what they are drawn from, and two
    runs (an upload, say) can have the same config and seed but other numbers."""
    digest = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(np.asarray(a, dtype=float))
        digest.update(str(a.shape).encode() + a.tobytes())
    return digest.hexdigest()


def replays_key(result: ExperimentResult, pairs: dict[str, np.ndarray] | None = None) -> Hashable:
    """The shared cache's key of ``result``'s replays: from the run's own config and seed and the pairs' values,
    so every session showing the run shares them, whatever its sidebar's seed."""
    pairs = replay_pairs_of(result) if pairs is None else pairs
    return ("replays", result.config, result.seed, values_digest(*pairs.values()))


@dataclass(frozen=True)
class LiveRun:
    """A live run's result and its replays ({(input_mode, start): Replay}; None for an environment without a replay
    or a run without ascent traces)."""

    result: ExperimentResult
    replays: dict | None


def run_plan(config: ExperimentConfig, collect: bool = True) -> list[Segment]:
    """The segments a live run reports, in order, each weighted by its expected seconds (``pvnviz.runs.sizing``'s
    rates): Algorithm 1's collection (unless the dataset is given), then per input Algorithm 2's training and
    each round's ascent and Monte Carlo checks (the last round's with the fresh re-measurement), then the replays."""
    from pvnviz.envs.registry import get_env
    from pvnviz.runs.budget import StepBudget
    from pvnviz.runs.sizing import ASCENT_STEP_S, estimate

    env = get_env(config.env_name)
    rate, h = env.steps_per_second, config.horizon
    parts = estimate(config).parts
    plan = []
    if collect:
        plan.append(Segment(frozenset({Stage.COLLECTING, Stage.ROLLOUTS}), parts["collect"]))
    climb = config.ascent_steps * ASCENT_STEP_S * config.ensemble_size
    checks = config.num_starts * StepBudget(config).checks_per_round * config.eval_episodes * h / rate
    fresh = config.num_starts * config.fresh_episodes * h / rate
    for _ in config.inputs:
        plan.append(Segment(frozenset({Stage.TRAIN_PVN}), parts["train"] / max(len(config.inputs), 1)))
        for r in range(config.rounds):
            last = r == config.rounds - 1 and fresh > 0
            plan.append(Segment(frozenset({Stage.ASCENT}), climb))
            plan.append(Segment(frozenset({Stage.ROLLOUTS}), checks + (fresh if last else 0.0), 2 if last else 1))
    if env.replay is not None:
        plan.append(Segment(frozenset({Stage.REPLAYS}), len(config.inputs) * config.num_starts * 2 * h / rate))
    return plan


def run_live(
    config: ExperimentConfig, seed: int = 0, hooks: Hooks = NO_HOOKS, dataset: PolicyDataset | None = None
) -> LiveRun:
    """``run_experiment``, then ``replay_pairs`` of its result with the run's seed (the ``live_experiment``
    task of ``pvnviz.workers.tasks``). Progress goes through ``hooks`` (stage ``replays`` last); a Stop during
    the replays ends the run as a Stop during training does. Replays that fail leave the run whole, with none
    (logged): the page then asks a worker for them and says why they could not be made, under the rest.
    Every report carries the whole run's share done (``Report.overall``, over ``run_plan``), which never falls."""
    from pvnviz.envs.registry import get_env, replay_pairs
    from pvnviz.runs.pipeline import run_experiment

    overall = RunProgress(run_plan(config, collect=dataset is None))
    hooks = Hooks(overall.wrap(hooks.on_progress), hooks.on_metrics)

    result = run_experiment(config, seed, hooks=hooks, dataset=dataset)
    if get_env(config.env_name).replay is None or not result.traces:
        return LiveRun(result, None)
    pairs = replay_pairs_of(result)
    try:
        replays = replay_pairs(
            config.env_name, config.arch(), pairs, config.horizon, seed, on_progress=hooks.on_progress
        )
    except Cancelled:
        raise
    except Exception:  # noqa: BLE001 - minutes of training are not lost to the replays; the page retries them
        log.exception(
            "the replays of a live run (%s, seed %s) failed; the run is kept without them", config.env_name, seed
        )
        return LiveRun(result, None)
    return LiveRun(result, replays)
