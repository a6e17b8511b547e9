"""Algorithm 3 through a trained PVN, and this project's active rounds on top of it (docs/beyond.md).

Algorithm 3 (Section 5) ascends each start through the PVN and checks its iterates by Monte Carlo. An active
round then adds every check to the PVN's data, fine-tunes it (Algorithm 2 again) and ascends again from each
start's chosen iterate, while ``pvnviz.runs.budget.StepBudget`` allows another round. With ``rounds`` 1 this is
the paper's zero-shot Algorithm 3. ``pvnviz.runs.pipeline.run_experiment`` calls ``ascend_in_rounds``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pvnviz.core.ascent import AscentTrace, ascend, join_rounds, measure_episodes
from pvnviz.core.ensemble import PVNEnsemble, train_ensemble
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import glorot_params
from pvnviz.core.progress import NO_HOOKS, Hooks
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.registry import get_env
from pvnviz.runs.budget import StepBudget, env_steps
from pvnviz.runs.config import ExperimentConfig
from pvnviz.runs.dataset import PolicyDataset, Split
from pvnviz.runs.streams import STAGES, stage_rng

# A refit sees each checked iterate this many times among the dataset's policies, so its batches draw them.
CHECK_COPIES = 3


def ascend_in_rounds(
    config: ExperimentConfig,
    pvn: PVNEnsemble,
    seed: int,
    dataset: PolicyDataset,
    parts: Split,
    hooks: Hooks = NO_HOOKS,
) -> AscentTrace:
    """Algorithm 3 through the PVN, then up to ``rounds - 1`` active rounds while the budget allows.

    A round: (perturb each start's best iterate and measure the pairs,) refit the PVN on the dataset plus
    every policy measured so far at its measured mean, and ascend again from each start's best iterate
    (``restarts``: with ``share_best``, the lowest start from the highest one's).
    The returned trace holds every round's checks, all counted; its ``best_index`` chooses across rounds.
    The PVN is refitted in place.
    """
    env = get_env(config.env_name)
    budget = StepBudget(config, dataset.num_env_steps)
    starts = starting_policies(config, seed, dataset, parts)
    radius = np.full(len(starts), config.trust_radius) if config.trust_radius > 0 else None
    traces = [ascend_round(config, env, pvn, starts, seed, 0, hooks, radius)]
    explored_params, explored_means, explored_steps = [], [], 0
    spent = [round_spent(traces[0])]  # each round's (env steps, policies measured), for round_budget "measured"
    for r in range(1, config.rounds):
        so_far = join_rounds(traces, explored_steps)
        if not budget.allows_another_round(so_far, spent):
            break
        if radius is not None:
            radius = trust_radii(radius, so_far, len(traces[-1].true_returns))
        round_steps, round_policies = 0, 0
        if config.round_perturbations > 0:
            params, means, steps = explore(config, env, so_far.best_params, seed, r)
            explored_params.append(params)
            explored_means.append(means)
            explored_steps += steps
            round_steps, round_policies = steps, len(params)
        measured = np.concatenate([so_far.params.reshape(-1, so_far.params.shape[-1]), *explored_params])
        explored = [parts.bins.pmf(m[:, None]) for m in explored_means]
        targets = np.concatenate([check_targets(config, parts.bins, so_far), *explored])
        refit(config, pvn, dataset, parts, measured, targets, seed)
        traces.append(ascend_round(config, env, pvn, restarts(so_far, config.share_best), seed, r, hooks, radius))
        checks_steps, checks_policies = round_spent(traces[-1])
        spent.append((checks_steps + round_steps, checks_policies + round_policies))
    return join_rounds(traces, explored_steps)


def round_spent(trace: AscentTrace) -> tuple[int, int]:
    """One round's checks: (environment steps they took, policies measured); (0, 0), which counts nothing, when the
    trace has no count of its steps."""
    if trace.check_env_steps is None:
        return 0, 0
    return int(trace.check_env_steps), int(trace.true_returns.size)


def trust_radii(radius: np.ndarray, so_far: AscentTrace, last_checks: int) -> np.ndarray:
    """Each start's next trust radius (A,): doubled where the last round's final check beat its first (the
    policy it began from, re-measured), halved where it did not; both as Algorithm 3 chooses on them
    (``selection_returns``: pooled with ``pool_checks``). ``so_far`` ends with that round's ``last_checks``
    checks."""
    scores = so_far.selection_returns
    return np.where(scores[-1] > scores[len(scores) - last_checks], 2 * radius, radius / 2)


def restarts(so_far: AscentTrace, share_best: bool) -> np.ndarray:
    """Where each start's next round begins (A, P): its own best iterate; with ``share_best``, the start whose
    best is estimated lowest (``best_returns``, pooled with ``pool_checks``) takes the highest one's instead
    (ties: the first start). A copy, so the trace keeps its own."""
    params = np.array(so_far.best_params, copy=True)
    if share_best and len(params) > 1:
        estimates = so_far.best_returns
        params[int(np.argmin(estimates))] = params[int(np.argmax(estimates))]
    return params


def starting_policies(
    config: ExperimentConfig, seed: int, dataset: PolicyDataset | None = None, parts: Split | None = None
) -> np.ndarray:
    """The A starts, the same for every input: random (Glorot), or the dataset's best training policies.

    ``start_from="dataset"`` takes the ``num_starts`` training policies with the highest measured mean
    returns (ties in index order): the ascent then climbs from the best the PVN saw, at no env-step cost.
    """
    if config.start_from == "random":
        return glorot_params(config.arch(), config.num_starts, stage_rng(seed, "starts"))
    if dataset is None or parts is None:
        raise ValueError("start_from='dataset' needs the dataset and its split.")
    if len(parts.train_idx) < config.num_starts:
        raise ValueError(
            f"start_from='dataset' needs {config.num_starts} training policies; the split has "
            f"{len(parts.train_idx)}: lower num_starts or raise return_limit."
        )
    order = np.argsort(-dataset.mean_returns[parts.train_idx], kind="stable")[: config.num_starts]
    return dataset.params[parts.train_idx[order]].astype(np.float32)  # a copy


def ascend_round(
    config: ExperimentConfig,
    env: BatchedEnv,
    pvn: PVNEnsemble,
    starts: np.ndarray,
    seed: int,
    r: int,
    hooks: Hooks,
    radius: np.ndarray | None = None,
) -> AscentTrace:
    """One ascent of every start at once (each within ``radius`` (A,) of its start where given), its iterates
    checked by Monte Carlo (Algorithm 3)."""
    rng = stage_rng(seed, "ascent") if r == 0 else np.random.default_rng([seed, STAGES["ascent"], r])
    trace = ascend(
        pvn,
        env,
        starts=starts,
        steps=config.ascent_steps,
        learning_rate=config.ascent_learning_rate,
        eval_every=config.eval_every,
        eval_episodes=config.eval_episodes,
        horizon=config.horizon,
        rng=rng,
        on_progress=hooks.on_progress,
        early_checks=tuple(config.early_checks),
        radius=radius,
    )
    return dataclasses.replace(trace, start_counts=config.start_from == "dataset", pool_checks=config.pool_checks)


def explore(
    config: ExperimentConfig, env: BatchedEnv, best: np.ndarray, seed: int, r: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Antithetic pairs around each start's best iterate (ARS's directions), measured like a check:
    (params (2 N A, P), their mean returns, the environment steps spent)."""
    rng = np.random.default_rng([seed, STAGES["ascent"], r, 1])
    delta = rng.standard_normal((config.round_perturbations, *best.shape)) * config.perturbation_std
    params = np.concatenate([best + delta, best - delta]).reshape(-1, best.shape[-1]).astype(np.float32)
    episodes, counted = measure_episodes(env, config.arch(), params, config.eval_episodes, config.horizon, rng)
    means = episodes.mean(axis=1)
    steps = env_steps(config.env_name, means, config.eval_episodes, config.horizon) if counted is None else counted
    return params, means, steps


def check_targets(config: ExperimentConfig, bins: ReturnBins, so_far: AscentTrace) -> np.ndarray:
    """What the PVN is fine-tuned towards for every check so far, (E * A, m) in the order of
    ``so_far.params.reshape(-1, P)``: each check's histogram of episode returns with ``check_histograms``, else a
    point mass at its mean."""
    if config.check_histograms:
        if so_far.episode_returns is None:
            raise ValueError("check_histograms needs the checks' episode returns; this trace holds only their means.")
        return bins.pmf(so_far.episode_returns.reshape(-1, so_far.episode_returns.shape[-1]))
    return bins.pmf(so_far.true_returns.reshape(-1)[:, None])


def refit(
    config: ExperimentConfig,
    pvn: PVNEnsemble,
    dataset: PolicyDataset,
    parts: Split,
    measured: np.ndarray,
    targets: np.ndarray,
    seed: int,
) -> None:
    """Algorithm 2 again, ``round_train_steps`` more steps, on the training policies plus the ``measured``
    ones (N, P) (``CHECK_COPIES`` times each) towards their ``targets`` (N, m); validation stays the dataset's."""
    x = np.concatenate([dataset.params[parts.train_idx], *[measured] * CHECK_COPIES])
    pmf = parts.bins.pmf
    y = np.concatenate([pmf(dataset.returns[parts.train_idx]), *[targets] * CHECK_COPIES])
    steps = config.round_train_steps
    train_ensemble(
        pvn,
        params=x,
        targets=y,
        val_params=dataset.params[parts.val_idx],
        val_targets=parts.bins.pmf(dataset.returns[parts.val_idx]),
        train_steps=steps,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        rng=np.random.default_rng([seed, STAGES["train"], len(targets)]),
        log_every=steps,
    )
