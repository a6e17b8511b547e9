"""Zero-shot gradient ascent through a trained PVN (Section 5, Algorithm 3).

A starting policies (flat parameters (A, P)) ascend J_hat together as one batch with
Adam; the PVN is frozen. Every ``eval_every`` steps the iterates are kept, and at the
end all kept iterates are scored by Monte Carlo in one batched rollout of
(E * A) policies x ``eval_episodes`` episodes. Algorithm 3's result for each start is
the best true return seen along its path, and the parameters that reached it.

Active rounds (Section 5's active learning, this project's): those checks are data about exactly the region
the ascent walks into, where the PVN has seen nothing ("regions of the policy space where fewer samples have
been obtained"). A round ascends, adds the checked iterates and their measured mean returns to the PVN's
training set, fine-tunes the PVN, and ascends again from each start's best iterate so far; optionally it
also measures a few antithetic perturbations of each start's best (as Augmented Random Search would, Mania
et al., 2018), which show the PVN the return's slope around the point the ascent will leave from. The loop
is ``pvnviz.runs.rounds.ascend_in_rounds``, under the env-step cap of ``pvnviz.runs.budget.StepBudget``;
``join_rounds`` here joins the rounds' traces into one, every check kept and counted, the perturbations'
environment steps counted apart (``AscentTrace.explore_env_steps``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from pvnviz.core.policies import PolicyArch, sampling_policy
from pvnviz.core.progress import ProgressFn, Report, Stage, no_progress
from pvnviz.core.pvn import PVN


class Rollouts(Protocol):
    """What Algorithm 3 scores its iterates with: an environment's batched Monte Carlo rollouts.

    ``pvnviz.envs.batched.BatchedEnv`` is one; the ascent is given it and knows nothing else of the environment.
    """

    def rollout_returns(
        self,
        policy_fn: Callable[[np.ndarray], np.ndarray],
        *,
        num_policies: int,
        num_episodes: int,
        horizon: int,
        rng: np.random.Generator,
        on_progress: ProgressFn | None = None,
    ) -> np.ndarray:
        """Undiscounted returns (K, B) of K = ``num_policies`` policies x B = ``num_episodes`` episodes."""
        ...


@dataclass(frozen=True)
class AscentTrace:
    """One ascent of A starts through one PVN."""

    input_mode: str
    checked_steps: np.ndarray  # (E,) the ascent steps whose iterates were checked (scored by Monte Carlo)
    true_returns: np.ndarray  # (E, A) Monte Carlo mean return of each start's iterate
    predicted: np.ndarray  # (T + 1, A) J_hat of every iterate
    params: np.ndarray  # (E, A, P) the scored iterates
    seconds: float
    fresh_returns: np.ndarray | None = None  # (A,) the chosen iterates re-measured on fresh episodes, or None
    disagreement: np.ndarray | None = None  # (T + 1, A) an ensemble's spread (std of J_hat) along each path
    start_counts: bool = False  # the start (index 0) may be chosen: a measured policy of the dataset, not a random one
    explore_env_steps: int = 0  # env steps of the active rounds' perturbations, beyond the checks
    pool_checks: bool = False  # choose on the mean of all checks of the same iterate (``pooled_returns``)
    check_env_steps: int | None = None  # env steps the checks took, as the rollouts counted them (None: not counted)
    episode_returns: np.ndarray | None = None  # (E, A, B) each check's episode returns (kept in memory, not saved)

    @property
    def selection_bias(self) -> np.ndarray | None:
        """Per start, the selection estimate minus the fresh re-measurement (A,), or None without one."""
        return None if self.fresh_returns is None else self.best_returns - self.fresh_returns

    @property
    def pooled_returns(self) -> np.ndarray:
        """(E, A): each check replaced by the mean of every check of the same start with the same parameters.

        Active rounds re-measure each round's start, the iterate chosen so far, on new episodes; pooled, a
        policy's estimate gains episodes each time it is chosen again, so a lucky check regresses towards the
        policy's return instead of standing as a maximum of noisy estimates. Checks of equal episodes: plain mean.
        """
        pooled = self.true_returns.astype(float).copy()
        for a in range(self.params.shape[1]):
            groups: dict[bytes, list[int]] = {}
            for e in range(self.params.shape[0]):
                groups.setdefault(np.ascontiguousarray(self.params[e, a]).tobytes(), []).append(e)
            for rows in groups.values():
                pooled[rows, a] = self.true_returns[rows, a].mean()
        return pooled

    @property
    def selection_returns(self) -> np.ndarray:
        """(E, A) what Algorithm 3 chooses on: the checks, or with ``pool_checks`` their ``pooled_returns``."""
        return self.pooled_returns if self.pool_checks else self.true_returns

    @property
    def best_index(self) -> np.ndarray:
        """Per start, the scored iterate with the highest true return (A,) (with ``pool_checks``: pooled).

        As in Algorithm 3, only iterates after an update count; the untouched start
        (index 0) is used only when no step was taken, or when ``start_counts`` (a start taken
        from the dataset is a candidate answer itself: the ascent must beat it to replace it).
        Ties go to the first such check.
        """
        if len(self.true_returns) == 1:
            return np.zeros(self.true_returns.shape[1], dtype=int)
        scores = self.selection_returns
        if self.start_counts:
            return np.argmax(scores, axis=0)
        return 1 + np.argmax(scores[1:], axis=0)

    @property
    def best_returns(self) -> np.ndarray:
        """Algorithm 3's result per start: the best true return seen along the ascent (A,) (with
        ``pool_checks``: the chosen iterate's pooled mean)."""
        return self.selection_returns[self.best_index, np.arange(self.true_returns.shape[1])]

    @property
    def returned_start(self) -> int:
        """The start whose policy Algorithm 3 returns (``returned_start``)."""
        return returned_start(self.best_returns)

    @property
    def best_params(self) -> np.ndarray:
        return self.params[self.best_index, np.arange(self.params.shape[1])]

    @property
    def final_returns(self) -> np.ndarray:
        return self.true_returns[-1]


def returned_start(best_per_start) -> int:
    """Algorithm 3's answer, ``return argmax_theta(Theta)``: of the A starts' chosen iterates, the one whose check
    (what chose it: ``best_returns``, pooled with ``pool_checks``) is highest; ties go to the first start. The
    fresh re-measurement plays no part, so the answer's fresh return stays an honest estimate."""
    return int(np.argmax(np.asarray(best_per_start, dtype=float)))


def remeasure(
    trace: AscentTrace,
    env: Rollouts,
    arch: PolicyArch,
    num_episodes: int,
    horizon: int,
    rng: np.random.Generator,
    on_progress: ProgressFn = no_progress,
) -> AscentTrace:
    """Honest Algorithm 3: re-measure each start's chosen iterate on fresh episodes.

    The best iterate is chosen on its Monte Carlo estimate, so that estimate is biased
    upwards (the maximum of noisy estimates). ``rng`` must be a stream that played no part
    in the choice; the fresh mean returns are stored as ``fresh_returns``.
    """
    fresh = measure_returns(env, arch, trace.best_params, num_episodes, horizon, rng, on_progress)
    return dataclasses.replace(trace, fresh_returns=fresh)


def measure_returns(
    env: Rollouts,
    arch: PolicyArch,
    params: np.ndarray,
    num_episodes: int,
    horizon: int,
    rng: np.random.Generator,
    on_progress: ProgressFn = no_progress,
) -> np.ndarray:
    """Monte Carlo mean undiscounted return of each policy (K, P) -> (K,)."""
    return measure_episodes(env, arch, params, num_episodes, horizon, rng, on_progress)[0].mean(axis=1)


def measure_episodes(
    env: Rollouts,
    arch: PolicyArch,
    params: np.ndarray,
    num_episodes: int,
    horizon: int,
    rng: np.random.Generator,
    on_progress: ProgressFn = no_progress,
) -> tuple[np.ndarray, int | None]:
    """Each policy's (K, P) undiscounted return in each of ``num_episodes`` episodes (K, B), and the environment
    steps they took where the environment counts them (else None)."""
    policy_fn = sampling_policy(arch, params, rng)
    kwargs = {"num_policies": len(params), "num_episodes": num_episodes, "horizon": horizon, "rng": rng}
    kwargs["on_progress"] = on_progress
    if hasattr(env, "rollout_counted"):
        counted = env.rollout_counted(policy_fn, **kwargs)
        return np.asarray(counted.returns), int(counted.env_steps)
    return np.asarray(env.rollout_returns(policy_fn, **kwargs)), None


def check_steps(steps: int, eval_every: int, early: tuple[int, ...] = ()) -> list[int]:
    """The ascent steps whose iterates Algorithm 3 scores: every ``eval_every``-th, the last, and ``early`` ones."""
    return sorted({*range(0, steps + 1, eval_every), steps, *(e for e in early if 0 < e < steps)})


@contextmanager
def frozen(model: PVN) -> Iterator[None]:
    """The PVN's weights (and probes) held fixed while policies ascend through it, then restored as they were."""
    trainable = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, flag in zip(model.parameters(), trainable):
            p.requires_grad_(flag)


def ascend(
    model: PVN,
    env: Rollouts,
    *,
    starts: np.ndarray,
    steps: int,
    learning_rate: float,
    eval_every: int,
    eval_episodes: int,
    horizon: int,
    rng: np.random.Generator,
    on_progress: ProgressFn = no_progress,
    early_checks: tuple[int, ...] = (),
    radius: np.ndarray | None = None,
) -> AscentTrace:
    """Algorithm 3 for all starts at once: Adam on -sum(J_hat), scored every ``eval_every`` steps.

    ``radius`` (A,): each start's iterates are projected, after every step, onto the L2 ball of that radius
    around its start (a trust region: where the PVN was trained near); None: no bound.

    ``early_checks``: further steps to score (``check_steps``), e.g. close to the start, where an
    ascent through an imperfect PVN can leave a good policy's neighbourhood within a few steps.

    ``model`` is a PVN or a ``pvnviz.core.ensemble.PVNEnsemble``; an ensemble's objective is its
    pessimistic J_hat, and the spread of more than one member along every path is recorded as
    ``disagreement``.
    """
    if eval_every < 1:
        raise ValueError("eval_every must be at least 1.")
    start_time = time.perf_counter()
    with frozen(model):
        checked = set(check_steps(steps, eval_every, early_checks))
        kept_steps, kept, predicted, spreads = _climb(model, starts, steps, learning_rate, checked, on_progress, radius)
        num_kept, num_starts, num_params = kept.shape
        episodes, counted = measure_episodes(
            env, model.arch, kept.reshape(-1, num_params), eval_episodes, horizon, rng, on_progress
        )
        episodes = episodes.reshape(num_kept, num_starts, -1)
        returns = episodes.mean(axis=2)
    return AscentTrace(
        input_mode=model.input_mode,
        checked_steps=np.array(kept_steps),
        true_returns=returns,
        predicted=predicted,
        params=kept,
        seconds=time.perf_counter() - start_time,
        disagreement=spreads,
        check_env_steps=counted,
        episode_returns=episodes,
    )


def _climb(
    model: PVN,
    starts: np.ndarray,
    steps: int,
    learning_rate: float,
    checked: set[int],
    on_progress: ProgressFn,
    radius: np.ndarray | None = None,
) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray | None]:
    """Adam on -sum(J_hat) for ``steps`` steps, each iterate within ``radius`` (A,) of its start where given:
    (the checked steps, their iterates (E, A, P), J_hat at every step (T + 1, A), the members' spread at every
    step (T + 1, A) for an ensemble of more than one, else None)."""
    theta = torch.tensor(starts, dtype=torch.float32, requires_grad=True)
    origin = torch.tensor(starts, dtype=torch.float32)
    bound = None if radius is None else torch.as_tensor(radius, dtype=torch.float32)[:, None]
    optimizer = torch.optim.Adam([theta], lr=learning_rate)
    predicted = np.empty((steps + 1, len(starts)))
    spread_fn = getattr(model, "spread", None) if getattr(model, "size", 1) > 1 else None
    spreads = np.empty((steps + 1, len(starts))) if spread_fn is not None else None
    kept_steps, kept = [], []
    for step in range(steps + 1):
        j_hat = model.expected_return(theta)
        predicted[step] = j_hat.detach().numpy()
        if spreads is not None:
            with torch.no_grad():
                spreads[step] = spread_fn(theta).numpy()
        if step in checked:
            kept_steps.append(step)
            kept.append(theta.detach().numpy().copy())
        if step == steps:
            break
        optimizer.zero_grad(set_to_none=True)
        (-j_hat.sum()).backward()
        optimizer.step()
        if bound is not None:
            with torch.no_grad():
                away = theta - origin
                theta.copy_(origin + away * torch.clamp(bound / away.norm(dim=1, keepdim=True).clamp_min(1e-12), max=1))
        if (step + 1) % max(steps // 40, 1) == 0 or step + 1 == steps:  # the last step too: the stage's end
            detail = f"{model.input_mode}, mean J_hat {predicted[step].mean():.1f}"
            on_progress(step + 1, steps, Report(Stage.ASCENT, detail))
    return kept_steps, np.stack(kept), predicted, spreads


def join_rounds(traces: list[AscentTrace], explore_env_steps: int = 0) -> AscentTrace:
    """One trace of consecutive rounds: ascent steps continue, and every check is kept (and counted).

    ``explore_env_steps``: the steps the rounds' perturbations spent, counted apart from the checks.

    A later round's first check re-measures the previous round's chosen iterate at the same step.
    """
    steps, predicted, disagreement, offset = [], [], [], 0
    for i, t in enumerate(traces):
        steps.append(t.checked_steps + offset)
        predicted.append(t.predicted[0 if i == 0 else 1 :])
        if t.disagreement is not None:
            disagreement.append(t.disagreement[0 if i == 0 else 1 :])
        offset += len(t.predicted) - 1
    return AscentTrace(
        input_mode=traces[0].input_mode,
        checked_steps=np.concatenate(steps),
        true_returns=np.concatenate([t.true_returns for t in traces]),
        predicted=np.concatenate(predicted),
        params=np.concatenate([t.params for t in traces]),
        seconds=sum(t.seconds for t in traces),
        disagreement=np.concatenate(disagreement) if len(disagreement) == len(traces) else None,
        start_counts=traces[0].start_counts,
        explore_env_steps=explore_env_steps,
        pool_checks=traces[0].pool_checks,
        check_env_steps=None if any(t.check_env_steps is None for t in traces) else sum(
            t.check_env_steps for t in traces
        ),
        episode_returns=None
        if any(t.episode_returns is None for t in traces)
        else np.concatenate([t.episode_returns for t in traces]),
    )
