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
and the rounds' traces ``pvnviz.core.ascent``; the active rounds are ``pvnviz.runs.rounds``. Every stage draws from
its own random stream (``pvnviz.runs.streams``), so changing a later stage's settings never changes an earlier
stage's result.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch

from pvnviz.core.ascent import AscentTrace, measure_returns, remeasure
from pvnviz.core.ensemble import PVNEnsemble, TrainedEnsemble, train_ensemble
from pvnviz.core.fingerprint import initial_probes
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.progress import NO_HOOKS, Hooks, ProgressFn, no_progress
from pvnviz.core.pvn import INPUT_MODES, PVN, TrainedPVN
from pvnviz.envs.registry import get_env
from pvnviz.runs import schema
from pvnviz.runs.budget import StepBudget
from pvnviz.runs.collection import collect_dataset
from pvnviz.runs.config import DATASET_FIELDS, ExperimentConfig, dataset_config, num_validation  # noqa: F401
from pvnviz.runs.dataset import PolicyDataset, Split
from pvnviz.runs.rounds import ascend_in_rounds
from pvnviz.runs.streams import STAGES, stage_rng


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
        fingerprint_outputs=config.fingerprint_outputs,
        activation=config.pvn_activation,
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

    def _input_summary(self, input_mode: str, trace: AscentTrace) -> dict:
        """summary.json's entry for one PVN input: its fresh returns (where measured), its checks, the steps they
        spent beyond the dataset, and its PVN's validation KL."""
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
        return {
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

    def summary(self) -> dict:
        """summary.json: exactly the keys ``pvnviz.runs.schema.SUMMARY_KEYS`` and ``SUMMARY_INPUT_KEYS`` declare (and
        the ``SUMMARY_INPUT_OPTIONAL_KEYS`` that apply); AssertionError if they disagree."""
        per_input = {input_mode: self._input_summary(input_mode, trace) for input_mode, trace in self.traces.items()}
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
