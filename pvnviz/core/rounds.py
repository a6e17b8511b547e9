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

The rounds themselves are a loop in ``pvnviz.runs.pipeline.ascend_in_rounds``, under the env-step cap of
``pvnviz.runs.budget.StepBudget``; this module joins their traces into one.
"""

from __future__ import annotations

import numpy as np

from pvnviz.core.ascent import AscentTrace


def concatenate(traces: list[AscentTrace], explore_env_steps: int = 0) -> AscentTrace:
    """One trace of consecutive rounds: ascent steps continue, and every check is kept (and counted).

    ``explore_env_steps``: the steps the rounds' perturbations spent, counted apart from the checks.

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
        explore_env_steps=explore_env_steps,
    )
