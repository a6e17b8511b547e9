"""Active rounds: the ascent's checked iterates join the PVN's data (Section 5's active learning).

Algorithm 3 already measures every ``eval_every``-th iterate by Monte Carlo to choose the
best. Those measurements are data about exactly the region the ascent walks into, where
the PVN has seen nothing (Section 5: "regions of the policy space where fewer samples have
been obtained"). A round here: ascend, add the checked iterates and their measured mean
returns to the training set, fine-tune the PVN, and ascend again from each start's best
iterate so far. The checks are all counted (their returns are in the concatenated trace).

Optionally (``explore``) a round also measures a few antithetic perturbations of each start's
best iterate, as Augmented Random Search would (Mania et al., 2018), and adds them to the data:
they show the PVN the return's slope around the point the ascent will leave from. Their
environment steps are counted apart (``AscentTrace.explore_env_steps``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from pvnviz.core.ascent import AscentTrace

AscendFn = Callable[[object, np.ndarray, int], AscentTrace]  # (model, starts (A, P), round) -> trace
FinetuneFn = Callable[[object, np.ndarray, np.ndarray], object]  # (model, params (N, P), means (N,)) -> model
# (best (A, P), round) -> perturbed params (N, P), their measured means (N,), env steps spent
ExploreFn = Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray, int]]


def concatenate(traces: list[AscentTrace]) -> AscentTrace:
    """One trace of consecutive rounds: ascent steps continue, and every check is kept (and counted).

    A later round's first check re-measures the previous round's chosen iterate at the same step.
    """
    steps, predicted, disagreement, offset = [], [], [], 0
    for i, t in enumerate(traces):
        steps.append(t.eval_steps + offset)
        predicted.append(t.predicted[0 if i == 0 else 1 :])
        if t.disagreement is not None:
            disagreement.append(t.disagreement[0 if i == 0 else 1 :])
        offset += len(t.predicted) - 1
    return AscentTrace(
        input_mode=traces[0].input_mode,
        eval_steps=np.concatenate(steps),
        true_returns=np.concatenate([t.true_returns for t in traces]),
        predicted=np.concatenate(predicted),
        params=np.concatenate([t.params for t in traces]),
        seconds=sum(t.seconds for t in traces),
        disagreement=np.concatenate(disagreement) if len(disagreement) == len(traces) else None,
        start_counts=traces[0].start_counts,
    )


def active_rounds(
    model: object,
    starts: np.ndarray,
    rounds: int,
    ascend: AscendFn,
    finetune: FinetuneFn,
    explore: ExploreFn | None = None,
    affordable: Callable[[AscentTrace], bool] | None = None,
) -> AscentTrace:
    """``rounds`` ascents; between two, the PVN is fine-tuned on every check (and perturbation) so far.

    Each round restarts from each start's best-checked iterate. Returns the concatenated trace,
    whose ``best_index`` chooses across all rounds; perturbations are data only, never chosen.
    ``affordable(trace so far)``: whether one more round fits the budget; the rounds end where it says no.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1; got {rounds}.")
    traces = [ascend(model, starts, 0)]
    extra_params, extra_means, extra_steps = [], [], 0
    for r in range(1, rounds):
        so_far = concatenate(traces)
        so_far = dataclasses.replace(so_far, explore_env_steps=extra_steps)
        if affordable is not None and not affordable(so_far):
            break
        num_checks, num_starts, num_params = so_far.params.shape
        if explore is not None:
            params, means, steps = explore(so_far.best_params, r)
            extra_params.append(params)
            extra_means.append(means)
            extra_steps += steps
        x = np.concatenate([so_far.params.reshape(-1, num_params), *extra_params])
        y = np.concatenate([so_far.true_returns.reshape(-1), *extra_means])
        model = finetune(model, x, y)
        traces.append(ascend(model, so_far.best_params, r))
    return dataclasses.replace(concatenate(traces), explore_env_steps=extra_steps)
