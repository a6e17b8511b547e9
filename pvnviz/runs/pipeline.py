"""The CartPole and Swimmer experiments end to end (Sections 6.2 and 6.3, Appendix B-C).

collect (Algorithm 1) -> filter and histogram (Section 3) -> train one PVN per input,
fingerprint and/or flattened weights (Algorithm 2) -> ascend the same starts through
each PVN, scoring iterates by Monte Carlo (Algorithm 3).

Every stage draws from its own child of ``SeedSequence(seed)``, so changing a later
stage's settings never changes an earlier stage's result.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch

from pvnviz.core.ascent import AscentTrace, ascend, check_steps, evaluate_returns, remeasure
from pvnviz.core.ensemble import PVNEnsemble, TrainedEnsemble, train_ensemble
from pvnviz.core.fingerprint import initial_probes
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import glorot_params
from pvnviz.core.progress import ProgressFn, no_progress
from pvnviz.core.pvn import INPUT_MODES, PVN, MetricsFn, TrainedPVN, train_pvn
from pvnviz.core.rounds import active_rounds
from pvnviz.envs.registry import get_env
from pvnviz.runs.collection import collect_dataset
from pvnviz.runs.config import DATASET_FIELDS, ExperimentConfig, dataset_config, num_validation  # noqa: F401
from pvnviz.runs.dataset import PolicyDataset

STAGES = {"collect": 0, "split": 1, "probes": 2, "train": 3, "starts": 4, "ascent": 5, "fresh": 6}


def _rng(seed: int, stage: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, STAGES[stage]]))


def collect(config: ExperimentConfig, seed: int, on_progress: ProgressFn = no_progress, **chunking) -> PolicyDataset:
    """Stage 1: the dataset of random policies and their returns (``chunking``: see ``collect_dataset``)."""
    return collect_dataset(
        get_env(config.env),
        config.arch(),
        config.num_policies,
        config.num_episodes,
        config.horizon,
        _rng(seed, "collect"),
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
    idx = _rng(seed, "split").permutation(np.flatnonzero(kept))
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


def build_pvn(config: ExperimentConfig, bins: ReturnBins, input_mode: str, seed: int, member: int = 0) -> PVN:
    env = get_env(config.env)
    rng = _rng(seed, "probes") if member == 0 else np.random.default_rng([seed, STAGES["probes"], member])
    probes = initial_probes(config.num_probes, env.obs_dim, config.probe_init, rng, env.visited_states)
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


def train(
    config: ExperimentConfig,
    dataset: PolicyDataset,
    parts: Split,
    input_mode: str,
    seed: int,
    on_progress: ProgressFn = no_progress,
    on_metrics: MetricsFn | None = None,
) -> TrainedPVN:
    """Stage 3: one PVN on the kept training policies (see ``train_members`` for an ensemble)."""
    model = build_pvn(config, parts.bins, input_mode, seed)
    targets = parts.bins.pmf(dataset.returns)
    return train_pvn(
        model,
        params=dataset.params[parts.train_idx],
        targets=targets[parts.train_idx],
        val_params=dataset.params[parts.val_idx],
        val_targets=targets[parts.val_idx],
        train_steps=config.train_steps,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        rng=_rng(seed, "train"),
        log_every=config.log_every,
        snapshot_every=config.log_every,
        on_progress=on_progress,
        on_metrics=on_metrics,
        keep_best=config.keep_best,
    )


def build_ensemble(config: ExperimentConfig, bins: ReturnBins, input_mode: str, seed: int) -> PVNEnsemble:
    members = [build_pvn(config, bins, input_mode, seed, i) for i in range(config.ensemble_size)]
    return PVNEnsemble(members, config.pessimism)


def train_members(
    config: ExperimentConfig,
    dataset: PolicyDataset,
    parts: Split,
    input_mode: str,
    seed: int,
    on_progress: ProgressFn = no_progress,
) -> TrainedEnsemble:
    """Stage 3 with ``ensemble_size`` > 1: the bootstrapped members, trained at once as one network."""
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
        rng=_rng(seed, "train"),
        log_every=config.log_every,
        on_progress=on_progress,
    )


def starting_policies(
    config: ExperimentConfig, seed: int, dataset: PolicyDataset | None = None, parts: Split | None = None
) -> np.ndarray:
    """The A starts, the same for every input: random (Glorot), or the dataset's best training policies.

    ``start_from="dataset"`` takes the ``num_starts`` training policies with the highest measured mean
    returns (ties in index order): the ascent then climbs from the best the PVN saw, at no env-step cost.
    """
    if config.start_from == "random":
        return glorot_params(config.arch(), config.num_starts, _rng(seed, "starts"))
    if dataset is None or parts is None:
        raise ValueError("start_from='dataset' needs the dataset and its split.")
    if len(parts.train_idx) < config.num_starts:
        raise ValueError(
            f"start_from='dataset' needs {config.num_starts} training policies; the split has "
            f"{len(parts.train_idx)}: lower num_starts or raise return_limit."
        )
    order = np.argsort(-dataset.mean_returns[parts.train_idx], kind="stable")[: config.num_starts]
    return dataset.params[parts.train_idx[order]].astype(np.float32)  # a copy


def ascend_through(
    config: ExperimentConfig,
    trained: TrainedPVN | PVNEnsemble,
    seed: int,
    on_progress: ProgressFn = no_progress,
    dataset: PolicyDataset | None = None,
    parts: Split | None = None,
) -> AscentTrace:
    """Stage 4: Algorithm 3 through one trained PVN, then its choices re-measured on fresh episodes.

    The fresh episodes come from their own stream (stage "fresh"), which plays no part in
    choosing the iterates, so their mean is an unbiased estimate of the chosen policies' returns.
    """
    env = get_env(config.env)
    model = trained if isinstance(trained, PVNEnsemble) else trained.model

    def one_round(model, starts: np.ndarray, r: int) -> AscentTrace:
        rng = _rng(seed, "ascent") if r == 0 else np.random.default_rng([seed, STAGES["ascent"], r])
        trace = ascend(
            model,
            env,
            starts=starts,
            steps=config.ascent_steps,
            learning_rate=config.ascent_learning_rate,
            eval_every=config.eval_every,
            eval_episodes=config.eval_episodes,
            horizon=config.horizon,
            rng=rng,
            on_progress=on_progress,
            early_checks=tuple(config.early_checks),
        )
        return dataclasses.replace(trace, start_counts=config.start_from == "dataset")

    def finetune(model, params: np.ndarray, means: np.ndarray):
        # The checked iterates join the training set (3 copies each, so batches see them), targets at their means.
        x = np.concatenate([dataset.params[parts.train_idx], *[params] * 3])
        y = np.concatenate([parts.bins.pmf(dataset.returns[parts.train_idx]), *[parts.bins.pmf(means[:, None])] * 3])
        vx, vy = dataset.params[parts.val_idx], parts.bins.pmf(dataset.returns[parts.val_idx])
        rng = np.random.default_rng([seed, STAGES["train"], len(means)])
        steps = config.round_train_steps
        data = dict(params=x, targets=y, val_params=vx, val_targets=vy, train_steps=steps, log_every=steps)
        settings = dict(batch_size=config.batch_size, learning_rate=config.learning_rate, rng=rng)
        if isinstance(model, PVNEnsemble):
            return train_ensemble(model, **data, **settings).ensemble
        return train_pvn(model, **data, **settings, snapshot_every=steps).model

    def explore(best: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray, int]:
        # Antithetic pairs around each start's best iterate (ARS's directions), measured like a check.
        rng = np.random.default_rng([seed, STAGES["ascent"], r, 1])
        delta = rng.standard_normal((config.round_perturbations, *best.shape)) * config.perturbation_std
        params = np.concatenate([best + delta, best - delta]).reshape(-1, best.shape[-1]).astype(np.float32)
        means = evaluate_returns(env, config.arch(), params, config.eval_episodes, config.horizon, rng)
        return params, means, env_steps(config.env, means, config.eval_episodes, config.horizon)

    def affordable(so_far: AscentTrace) -> bool:
        # The next round at its most: every check and perturbation running the whole horizon.
        spent = env_steps(config.env, so_far.true_returns, config.eval_episodes, config.horizon)
        checks = len(check_steps(config.ascent_steps, config.eval_every, tuple(config.early_checks)))
        policies = so_far.true_returns.shape[1] * checks
        policies += so_far.true_returns.shape[1] * 2 * config.round_perturbations
        most = policies * config.eval_episodes * config.horizon
        cap = config.max_beyond_fraction * dataset.num_env_steps
        return spent + so_far.explore_env_steps + most <= cap

    starts = starting_policies(config, seed, dataset, parts)
    if dataset is None or parts is None:
        trace = one_round(model, starts, 0)
    else:
        explorer = explore if config.round_perturbations > 0 else None
        capped = affordable if config.max_beyond_fraction > 0 else None
        trace = active_rounds(model, starts, config.rounds, one_round, finetune, explorer, capped)
    if config.fresh_episodes < 1:
        return trace
    return remeasure(trace, env, config.arch(), config.fresh_episodes, config.horizon, _rng(seed, "fresh"), on_progress)


def env_steps(env_name: str, mean_returns: np.ndarray, num_episodes: int, horizon: int) -> int:
    """Environment steps spent measuring policies with these mean returns over ``num_episodes`` each."""
    return get_env(env_name).episode_steps(mean_returns, horizon, episodes_per_return=num_episodes)


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

    def summary(self) -> dict:
        per_input = {}
        for mode, trace in self.traces.items():
            checks = env_steps(self.config.env, trace.true_returns, self.config.eval_episodes, self.config.horizon)
            fresh = {}
            if trace.fresh_returns is not None:
                fresh = {
                    "fresh_return_per_start": trace.fresh_returns.round(3).tolist(),
                    "fresh_mean_return": float(trace.fresh_returns.mean()),
                    "fresh_episodes": self.config.fresh_episodes,
                }
            if mode in self.ensembles:
                fresh["ensemble_val_spread"] = self.ensembles[mode].val_spread
            if trace.disagreement is not None:
                chosen = trace.disagreement[trace.eval_steps[trace.best_index], np.arange(trace.disagreement.shape[1])]
                fresh["ascent_disagreement_chosen"] = chosen.round(3).tolist()
            per_input[mode] = {
                **fresh,
                "ascent_eval_steps": trace.eval_steps.tolist(),
                "ascent_true_returns_per_start": trace.true_returns.T.round(3).tolist(),
                "final_mean_return": float(trace.final_returns.mean()),
                "best_mean_return": float(trace.best_returns.mean()),
                "best_return_per_start": trace.best_returns.round(3).tolist(),
                "start_mean_return": float(trace.true_returns[0].mean()),
                # Algorithm 3's periodic checks: environment steps spent beyond the dataset.
                "check_env_steps": checks,
                "check_fraction_of_dataset": round(checks / max(self.dataset.num_env_steps, 1), 4),
                # The active rounds' perturbations (pvnviz.core.rounds): measured, counted apart from the checks.
                "explore_env_steps": trace.explore_env_steps,
                "beyond_dataset_fraction": round(
                    (checks + trace.explore_env_steps) / max(self.dataset.num_env_steps, 1), 4
                ),
                "final_val_kl": float(
                    self.trained[mode].val_loss.min() if self.config.keep_best else self.trained[mode].val_loss[-1]
                ),
            }
        kept = self.split.kept
        return {
            "experiment": self.config.env,
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


def run_experiment(
    config: ExperimentConfig,
    seed: int = 0,
    on_progress: ProgressFn = no_progress,
    on_metrics: MetricsFn | None = None,
    dataset: PolicyDataset | None = None,
) -> ExperimentResult:
    """All stages for every input in ``config.inputs``.

    ``dataset`` skips the collection when given; it must be ``collect(config, seed)``'s
    result (the pages cache it on ``dataset_config``, so ascent-only changes do not recollect).
    """
    timings: dict[str, float] = {}
    if dataset is None:
        dataset = collect(config, seed, on_progress)
    timings["collect"] = dataset.seconds
    parts = split(config, dataset, seed)
    trained, traces, ensembles = {}, {}, {}
    for mode in config.inputs:
        t0 = time.perf_counter()
        if config.ensemble_size > 1:
            ensembles[mode] = train_members(config, dataset, parts, mode, seed, on_progress)
            trained[mode] = ensembles[mode].summary
        else:
            trained[mode] = train(config, dataset, parts, mode, seed, on_progress, on_metrics)
        timings[f"train_{mode}"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        model = ensembles[mode].ensemble if mode in ensembles else trained[mode]
        traces[mode] = ascend_through(config, model, seed, on_progress, dataset, parts)
        timings[f"ascent_{mode}"] = time.perf_counter() - t0
    timings["total"] = sum(timings.values())
    return ExperimentResult(config, seed, dataset, parts, trained, traces, timings, ensembles)
