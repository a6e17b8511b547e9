"""The CartPole and Swimmer experiments end to end, Algorithms 1-3 top to bottom (Sections 6.2-6.3, App. B-C).

``run_experiment`` reads as the method does::

    dataset = collect(...)               Algorithm 1: random policies and their Monte Carlo returns
    parts = split(...)                   the return limit, the histogram's bins (Section 3), validation policies
    for each input (fingerprint, flattened weights):
        fitted = fit(...)                Algorithm 2: the PVN, an ensemble of one as in the paper, or of M
        trace = ascend_in_rounds(...)    Algorithm 3; then, while the budget allows, the active rounds: refit
                                         on the data plus the checked iterates, ascend again from the best
        trace = remeasure(...)           the chosen policies on fresh episodes, an unbiased estimate

Each algorithm is one module of ``pvnviz.core``: Algorithm 1's loop ``pvnviz.core.collect`` (run in chunks by
``pvnviz.runs.collection``), Algorithm 2 ``pvnviz.core.ensemble`` (the network: ``pvnviz.core.pvn``), Algorithm 3
and the rounds' traces ``pvnviz.core.ascent``. Every stage draws from its own child of ``SeedSequence(seed)``, so
changing a later stage's settings never changes an earlier stage's result.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch

from pvnviz.core.ascent import AscentTrace, ascend, join_rounds, measure_episodes, measure_returns, remeasure
from pvnviz.core.ensemble import PVNEnsemble, TrainedEnsemble, train_ensemble
from pvnviz.core.fingerprint import initial_probes
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import glorot_params
from pvnviz.core.progress import NO_HOOKS, Hooks, ProgressFn, no_progress
from pvnviz.core.pvn import INPUT_MODES, PVN, TrainedPVN
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.registry import get_env
from pvnviz.runs import schema
from pvnviz.runs.budget import StepBudget, env_steps
from pvnviz.runs.collection import collect_dataset
from pvnviz.runs.config import DATASET_FIELDS, ExperimentConfig, dataset_config, num_validation  # noqa: F401
from pvnviz.runs.dataset import PolicyDataset

# A refit sees each checked iterate this many times among the dataset's policies, so its batches draw them.
CHECK_COPIES = 3

STAGES = {"collect": 0, "split": 1, "probes": 2, "train": 3, "starts": 4, "ascent": 5, "fresh": 6, "fresh-best-kept": 7}


def stage_rng(seed: int, stage: str) -> np.random.Generator:
    """The random stream of one stage of a run (``STAGES``): the same seed and stage give the same stream."""
    return np.random.default_rng(np.random.SeedSequence([seed, STAGES[stage]]))


def run_experiment(
    config: ExperimentConfig, seed: int = 0, hooks: Hooks = NO_HOOKS, dataset: PolicyDataset | None = None
) -> ExperimentResult:
    """Algorithms 1-3 for every input in ``config.inputs`` (see the module's docstring).

    ``dataset`` skips the collection when given; it must be ``collect(config, seed)``'s
    result (the pages cache it on ``dataset_config``, so ascent-only changes do not recollect).
    """
    timings: dict[str, float] = {}
    if dataset is None:
        dataset = collect(config, seed, hooks.on_progress)
    timings["collect"] = dataset.seconds
    parts = split(config, dataset, seed)
    env = get_env(config.env_name)
    trained, traces, ensembles = {}, {}, {}
    for input_mode in config.inputs:
        t0 = time.perf_counter()
        fitted = fit(config, dataset, parts, input_mode, seed, hooks)
        timings[f"train_{input_mode}"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        trace = ascend_in_rounds(config, fitted.ensemble, seed, dataset, parts, hooks)
        if config.fresh_episodes > 0:
            fresh, arch = stage_rng(seed, "fresh"), config.arch()
            trace = remeasure(trace, env, arch, config.fresh_episodes, config.horizon, fresh, hooks.on_progress)
        timings[f"ascent_{input_mode}"] = time.perf_counter() - t0
        traces[input_mode] = trace
        # The PVN as the rounds left it (its curves are the first fit's); more than one member is also kept whole.
        trained[input_mode] = dataclasses.replace(fitted.summary, model=fitted.ensemble.member(0))
        if fitted.ensemble.size > 1:
            ensembles[input_mode] = dataclasses.replace(fitted, summary=trained[input_mode])
    timings["total"] = sum(timings.values())
    result = ExperimentResult(config, seed, dataset, parts, trained, traces, timings, ensembles)
    return dataclasses.replace(result, kept_best_fresh=kept_best_fresh(config, seed, dataset, parts))


def kept_best_fresh(config: ExperimentConfig, seed: int, dataset: PolicyDataset, parts: Split) -> float | None:
    """The best kept policy (by its dataset return) re-measured on ``fresh_episodes`` fresh episodes, from a stream
    of its own (None when ``fresh_episodes`` is 0): what an ascent must beat, as the starts' chosen policies are
    measured. The dataset's best of K returns of few episodes each is the luckiest, so its dataset return is
    above its true one (Pendulum, 1 episode a policy: by hundreds); this is not. Not counted as the method's steps,
    as the starts' fresh episodes are not."""
    if config.fresh_episodes <= 0:
        return None
    kept = np.flatnonzero(parts.kept)
    best = kept[np.argmax(dataset.mean_returns[kept])]
    env, rng = get_env(config.env_name), stage_rng(seed, "fresh-best-kept")
    return float(measure_returns(env, config.arch(), dataset.params[best][None], config.fresh_episodes,
                                 config.horizon, rng)[0])  # fmt: skip


def collect(config: ExperimentConfig, seed: int, on_progress: ProgressFn = no_progress, **chunking) -> PolicyDataset:
    """Stage 1: the dataset of random policies and their returns (``chunking``: see ``collect_dataset``)."""
    return collect_dataset(
        get_env(config.env_name),
        config.arch(),
        config.num_policies,
        config.num_episodes,
        config.horizon,
        stage_rng(seed, "collect"),
        on_progress,
        **chunking,
    )


@dataclass(frozen=True)
class Split:
    """The training-set filter, the histogram bins and the train/validation split."""

    kept: np.ndarray  # (K,) bool
    bins: ReturnBins
    train_idx: np.ndarray  # indices into the dataset
    val_idx: np.ndarray


def split(config: ExperimentConfig, dataset: PolicyDataset, seed: int) -> Split:
    """Stage 2: filter by the return limit, bin over the kept returns, hold out validation policies."""
    kept = dataset.kept(config.return_limit)
    if not kept.any():
        raise ValueError(
            f"the return limit {config.return_limit} filters out every policy (lowest mean return "
            f"{dataset.mean_returns.min():.1f}); raise the limit."
        )
    # G_min, G_max of the training data the PVN sees (the kept policies' returns), Section 3.
    bins = ReturnBins.from_returns(dataset.returns[kept], config.num_bins)
    idx = stage_rng(seed, "split").permutation(np.flatnonzero(kept))
    num_val = num_validation(config.val_fraction, len(idx))
    if num_val < 1:  # the config holds one out of num_policies (ExperimentConfig); the return limit left fewer
        raise ValueError(
            f"only {len(idx)} of {len(kept)} policies pass the return limit {config.return_limit}, and "
            f"val_fraction={config.val_fraction} of them holds out no validation policy; raise return_limit "
            "or val_fraction."
        )
    parts = Split(kept, bins, np.sort(idx[num_val:]), np.sort(idx[:num_val]))
    if config.start_from == "dataset" and len(parts.train_idx) < config.num_starts:  # known now, not after training
        raise ValueError(
            f"start_from='dataset' needs {config.num_starts} training policies; the return limit "
            f"{config.return_limit} leaves {len(parts.train_idx)}: lower num_starts or raise return_limit."
        )
    return parts


def fit(
    config: ExperimentConfig, dataset: PolicyDataset, parts: Split, input_mode: str, seed: int, hooks: Hooks = NO_HOOKS
) -> TrainedEnsemble:
    """Algorithm 2 on the kept training policies: ``ensemble_size`` PVNs at once (one: the paper's PVN)."""
    targets = parts.bins.pmf(dataset.returns)
    return train_ensemble(
        build_ensemble(config, parts.bins, input_mode, seed),
        params=dataset.params[parts.train_idx],
        targets=targets[parts.train_idx],
        val_params=dataset.params[parts.val_idx],
        val_targets=targets[parts.val_idx],
        train_steps=config.train_steps,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        rng=stage_rng(seed, "train"),
        log_every=config.log_every,
        keep_best=config.keep_best,
        hooks=hooks,
    )


def build_ensemble(config: ExperimentConfig, bins: ReturnBins, input_mode: str, seed: int) -> PVNEnsemble:
    members = [build_pvn(config, bins, input_mode, seed, i) for i in range(config.ensemble_size)]
    return PVNEnsemble(members, config.pessimism)


def build_pvn(config: ExperimentConfig, bins: ReturnBins, input_mode: str, seed: int, member: int = 0) -> PVN:
    env = get_env(config.env_name)
    rng = stage_rng(seed, "probes") if member == 0 else np.random.default_rng([seed, STAGES["probes"], member])
    space = env.observation_space
    probes = initial_probes(
        config.num_probes, env.obs_dim, config.probe_init, rng, env.visited_states, (space.low, space.high)
    )
    generator = torch.Generator().manual_seed(int(rng.integers(2**31)) + INPUT_MODES.index(input_mode))
    return PVN(
        config.arch(),
        bins,
        input_mode=input_mode,
        hidden=tuple(config.pvn_hidden),
        temperature=config.temperature,
        probes=probes,
        train_probes=config.train_probes,
        generator=generator,
    )


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
    for r in range(1, config.rounds):
        so_far = join_rounds(traces, explored_steps)
        if not budget.allows_another_round(so_far):
            break
        if radius is not None:
            radius = trust_radii(radius, so_far, len(traces[-1].true_returns))
        if config.round_perturbations > 0:
            params, means, steps = explore(config, env, so_far.best_params, seed, r)
            explored_params.append(params)
            explored_means.append(means)
            explored_steps += steps
        measured = np.concatenate([so_far.params.reshape(-1, so_far.params.shape[-1]), *explored_params])
        explored = [parts.bins.pmf(m[:, None]) for m in explored_means]
        targets = np.concatenate([check_targets(config, parts.bins, so_far), *explored])
        refit(config, pvn, dataset, parts, measured, targets, seed)
        traces.append(ascend_round(config, env, pvn, restarts(so_far, config.share_best), seed, r, hooks, radius))
    return join_rounds(traces, explored_steps)


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


@dataclass
class ExperimentResult:
    """Everything one run produced."""

    config: ExperimentConfig
    seed: int
    dataset: PolicyDataset
    split: Split
    trained: dict[str, TrainedPVN]
    traces: dict[str, AscentTrace]
    timings: dict[str, float]
    ensembles: dict[str, TrainedEnsemble] = dataclasses.field(default_factory=dict)
    kept_best_fresh: float | None = None  # the best kept policy's fresh return (``kept_best_fresh``); None: not made

    def summary(self) -> dict:
        """summary.json: exactly the keys ``pvnviz.runs.schema.SUMMARY_KEYS`` and ``SUMMARY_INPUT_KEYS`` declare (and
        the ``SUMMARY_INPUT_OPTIONAL_KEYS`` that apply); AssertionError if they disagree."""
        per_input = {}
        for input_mode, trace in self.traces.items():
            checks = StepBudget(self.config).checks_spent(trace)
            fresh = {}
            if trace.fresh_returns is not None:
                fresh = {
                    "fresh_return_per_start": trace.fresh_returns.round(3).tolist(),
                    "fresh_mean_return": float(trace.fresh_returns.mean()),
                    "fresh_episodes": self.config.fresh_episodes,
                }
            if input_mode in self.ensembles:
                fresh["ensemble_val_spread"] = self.ensembles[input_mode].val_spread
            if trace.disagreement is not None:
                starts = np.arange(trace.disagreement.shape[1])
                chosen = trace.disagreement[trace.checked_steps[trace.best_index], starts]
                fresh["ascent_disagreement_chosen"] = chosen.round(3).tolist()
            per_input[input_mode] = {
                **fresh,
                "ascent_eval_steps": trace.checked_steps.tolist(),
                "ascent_true_returns_per_start": trace.true_returns.T.round(3).tolist(),
                "final_mean_return": float(trace.final_returns.mean()),
                "best_mean_return": float(trace.best_returns.mean()),
                "best_return_per_start": trace.best_returns.round(3).tolist(),
                "start_mean_return": float(trace.true_returns[0].mean()),
                # Algorithm 3's periodic checks: environment steps spent beyond the dataset.
                "check_env_steps": checks,
                "check_fraction_of_dataset": round(checks / max(self.dataset.num_env_steps, 1), 4),
                # The active rounds' perturbations: measured, counted apart from the checks.
                "explore_env_steps": trace.explore_env_steps,
                "beyond_dataset_fraction": round(
                    (checks + trace.explore_env_steps) / max(self.dataset.num_env_steps, 1), 4
                ),
                "final_val_kl": float(
                    self.trained[input_mode].val_loss.min()
                    if self.config.keep_best
                    else self.trained[input_mode].val_loss[-1]
                ),
            }
        kept = self.split.kept
        summary = {
            "experiment": self.config.env_name,
            "seed": self.seed,
            "num_policies": int(len(kept)),
            "num_kept": int(kept.sum()),
            "return_limit": self.config.return_limit,
            "dataset_best_mean_return": float(self.dataset.mean_returns.max()),
            "kept_best_mean_return": float(self.dataset.mean_returns[kept].max()),
            "dataset_env_steps": self.dataset.num_env_steps,
            "bins": [self.split.bins.g_min, self.split.bins.g_max, self.split.bins.num_bins],
            "inputs": per_input,
            "timings_seconds": self.timings,
        }
        if self.kept_best_fresh is not None:
            summary["kept_best_fresh_return"] = self.kept_best_fresh
        problems = schema.summary_key_problems(summary)
        if problems:  # the declaration in pvnviz.runs.schema and this writer must agree
            raise AssertionError(f"summary.json keys differ from pvnviz.runs.schema's: {', '.join(problems)}")
        return summary
