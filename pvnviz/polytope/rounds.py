"""Active rounds on the value polytope: Algorithm 3's checks fed back into the PVN (Section 5, Section 6.1).

Section 5 warns that the ascent through a PVN "may lead us to regions of the policy space where fewer samples
have been obtained", and asks to "limit the number of gradient steps and periodically verify that the
performance is still increasing"; Algorithm 3 checks each iterate with a Monte Carlo return and keeps the
best. Those checks are data about exactly the region the ascent walks into. The ``beyond`` mode spends them
as this project's active rounds do on CartPole and Swimmer (``pvnviz.core.ascent``, ``join_rounds``):

1. round 0 is the zero-shot learned ascent of Section 6.1 (``learned_view``: the paper's 100 SGD steps from
   ``ascent_start`` through the PVN trained on the 20 uniform policies);
2. the round's iterates at steps ``check_every``, ``2 * check_every``, ... and its last step are checked:
   each check measures the policy's state values V(s1), V(s2) (a point of the polytope) and so its J;
3. a later round first checks ``round_perturbations`` antithetic pairs of random perturbations of the best
   checked policy so far (as Augmented Random Search does, Mania et al. 2018, and CartPole's rounds with
   ``round_perturbations``): the checks along a stalled path all sit where it stalled and say nothing of
   the slope of J around it, which is what the PVN got wrong there;
4. every check so far is added to the PVN's training set (``check_copies`` copies each, as CartPole's refit
   does) and the PVN is fine-tuned ``round_train_steps`` RMSProp steps (Appendix B's optimiser and rate);
5. the round ascends again, the same number of steps, from the best checked policy so far, and checks
   its iterates as in 2;

until one more round would take the checks past ``max_checks`` (the budget beyond the ``num_train``
training policies). The answer is Algorithm 3's: the checked policy with the best measured J, judged here
with the exact J of Eq. (2) as well.

A check is exact (``check_episodes = 0``: the values by the closed form of ``mdp.values``, which is what a
Monte Carlo check converges to on this MDP) or sampled: ``check_episodes`` episodes from each state, each the
discounted return, truncated with a bias below ``TRUNCATION_TOLERANCE`` (``pvnviz.polytope.monte_carlo``).

Arrays: policies ``x[k] = [P(a1|s1), P(a1|s2)]`` (K, 2); values ``V[k, s]`` (K, 2); the gradient field on
the page's grid (G, G, 2), as ``ExactView.field``. Every draw comes from ``numpy.random.default_rng([seed,
stream, round])``: a seed gives the same rounds every time.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pvnviz.core.config_fields import check, check_limits, from_dict, param
from pvnviz.core.progress import ProgressFn, Report, Stage, no_progress
from pvnviz.polytope import mdp as mdp_lib
from pvnviz.polytope.experiment import (
    AscentPath,
    PolytopeConfig,
    PolytopeResult,
    TrainedPolytopePVN,
    gradient_ascent,
    run_polytope,
)
from pvnviz.polytope.monte_carlo import sampled_values
from pvnviz.polytope.tiny_mlp import TinyMLP, train_rmsprop

ROUNDS_LIMITS: dict[str, tuple[int, int]] = {
    "max_checks": (1, 10_000),
    "check_every": (1, 100_000),
    "round_train_steps": (1, 1_000_000),
    "check_episodes": (0, 1_000_000),
    "check_copies": (1, 100),
    "round_perturbations": (0, 1000),
}
"""(lowest, highest) of every count the active rounds add to ``PolytopeConfig``."""

ROUNDS_FILE = "rounds.json"
"""A beyond run's rounds in its folder (``rounds_to_dict``)."""

STREAMS = {"fine_tune": 1, "check": 2, "explore": 3}
"""The random streams of the rounds: ``default_rng([seed, STREAMS[name], round])``."""


@dataclass(frozen=True)
class PolytopeRoundsConfig(PolytopeConfig):
    """The polytope experiment with active rounds after the zero-shot ascent; the paper's settings otherwise."""

    NAMES: ClassVar[tuple[str, ...]] = (*ROUNDS_LIMITS, "perturbation_std")  # the settings it adds

    max_checks: int = param(20, "Checks the rounds may spend beyond the training policies, at most.")
    check_every: int = param(
        100, "A round checks its iterate every this many ascent steps, and its last one (100: the end only)."
    )
    round_train_steps: int = param(2000, "PVN fine-tuning steps (RMSProp) after each round's checks.")
    check_episodes: int = param(
        0, "0: each check is exact (the closed form); else Monte Carlo episodes from each state per check."
    )
    check_copies: int = param(3, "Copies of each check in the fine-tuning set, among the training policies.")
    round_perturbations: int = param(
        1, "Antithetic pairs of random perturbations of the best policy checked at the start of each later round."
    )
    perturbation_std: float = param(
        0.2,
        "Standard deviation of each perturbation's entries (policies are clipped): about the spacing of the "
        "training policies, 1/sqrt(num_train) = 0.22 for 20 on the unit square.",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_limits(self, ROUNDS_LIMITS)
        check(self.perturbation_std > 0, "perturbation_std must be positive.")
        check(self.ascent_steps >= 1, "ascent_steps must be at least 1: every active round checks its iterates.")
        check(
            self.checks_per_round() <= self.max_checks,
            f"one round checks {self.checks_per_round()} iterates, more than max_checks = {self.max_checks}: "
            "raise check_every or max_checks.",
        )

    def check_steps(self) -> list[int]:
        """The steps of a round whose iterates are checked: every ``check_every``-th and the last (never 0)."""
        return sorted({*range(self.check_every, self.ascent_steps + 1, self.check_every), self.ascent_steps})

    def checks_per_round(self) -> int:
        return len(self.check_steps())

    def checks_of_round(self, index: int) -> int:
        """Checks round ``index`` spends: its perturbations (none in round 0) and its iterates."""
        return self.checks_per_round() + (2 * self.round_perturbations if index > 0 else 0)

    def num_rounds(self) -> int:
        """How many rounds the budget allows: as many as keep the checks within ``max_checks``."""
        return 1 + (self.max_checks - self.checks_per_round()) // self.checks_of_round(1)


def config_from_dict(values: dict[str, Any]) -> PolytopeConfig:
    """A saved polytope run's config: ``PolytopeRoundsConfig`` if it holds a rounds setting, else ``PolytopeConfig``."""
    cls = PolytopeRoundsConfig if any(k in values for k in PolytopeRoundsConfig.NAMES) else PolytopeConfig
    return from_dict(cls, values)


def check_values(
    config: PolytopeRoundsConfig, mdp: mdp_lib.TabularMDP, policies: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """The checks' measured state values (K, S): exact, or sampled with ``check_episodes`` episodes per state."""
    if config.check_episodes == 0:
        return mdp_lib.values(mdp, mdp_lib.policy_matrix(policies))
    return sampled_values(mdp, policies, config.check_episodes, rng)


@dataclass(frozen=True)
class Checks:
    """Checked policies with what the check measured and, beside it, the exact truth."""

    policies: np.ndarray  # (C, 2)
    values: np.ndarray  # (C, 2) measured V(s1), V(s2)
    J: np.ndarray  # (C,) measured J = d0 . V
    exact_J: np.ndarray  # (C,) the exact J of the same policies (equal to J for an exact check)

    @classmethod
    def concat(cls, parts: list[Checks]) -> Checks:
        return cls(*(np.concatenate([getattr(c, f.name) for c in parts]) for f in dataclasses.fields(cls)))


@dataclass(frozen=True)
class ActiveRound:
    """One round: its perturbation checks, the PVN it ascended through, its ascent, and its iterates' checks."""

    index: int
    perturbed: Checks  # perturbations of the best policy so far, checked before the fine-tune (none in round 0)
    field: np.ndarray  # (G, G, 2) the PVN's gradient of J_hat on the grid, as the round's ascent followed it
    ascent: AscentPath  # the round's iterates (T + 1, 2), their exact values and J, and J_hat
    checked_steps: np.ndarray  # (C,) steps of this round whose iterates were checked
    checked: Checks  # the iterates at ``checked_steps``
    checks_spent: int  # all rounds' checks up to and including this one

    @property
    def num_checks(self) -> int:
        return len(self.perturbed.J) + len(self.checked.J)


@dataclass(frozen=True)
class PolytopeRounds:
    """The active rounds of one seed; ``rounds[0]`` is the zero-shot ascent's."""

    rounds: tuple[ActiveRound, ...]
    grid: np.ndarray  # (G,) the field's coordinates on each axis
    optimal_policy: np.ndarray  # (2,)
    optimal_J: float
    check_episodes: int  # 0: exact checks
    fine_tune_loss: np.ndarray  # (R - 1,) MSE on the fine-tuning set after each fine-tune
    seconds: float

    @property
    def checks_spent(self) -> int:
        return self.rounds[-1].checks_spent

    @property
    def episodes_spent(self) -> int:
        """Monte Carlo episodes of the sampled checks (0 for exact checks)."""
        return self.checks_spent * self.check_episodes * len(self.optimal_policy)

    def all_checks(self) -> Checks:
        """Every check in the order made: each round's perturbations, then its iterates."""
        return Checks.concat([c for r in self.rounds for c in (r.perturbed, r.checked)])

    @property
    def best_index(self) -> int:
        """Algorithm 3's choice: the check with the highest measured J (the first of equals)."""
        return int(np.argmax(self.all_checks().J))

    @property
    def best_policy(self) -> np.ndarray:
        return self.all_checks().policies[self.best_index]

    @property
    def best_checked_J(self) -> float:
        return float(self.all_checks().J[self.best_index])

    @property
    def best_exact_J(self) -> float:
        return float(self.all_checks().exact_J[self.best_index])


def _field(net: TinyMLP, d0: np.ndarray, grid: np.ndarray) -> np.ndarray:
    points = np.stack(np.meshgrid(grid, grid, indexing="ij"), axis=-1).reshape(-1, 2)
    return net.input_gradient(points, d0).reshape(len(grid), len(grid), 2)


def _ascend(config: PolytopeConfig, mdp: mdp_lib.TabularMDP, net: TinyMLP, start: np.ndarray) -> AscentPath:
    path = gradient_ascent(
        lambda x: net.input_gradient(x, mdp.d0), start, config.ascent_learning_rate, config.ascent_steps
    )
    values = mdp_lib.values(mdp, mdp_lib.policy_matrix(path))
    return AscentPath(path, values, values @ mdp.d0, net.forward(path) @ mdp.d0)


def fine_tune(
    config: PolytopeRoundsConfig,
    net: TinyMLP,
    trained: TrainedPolytopePVN,
    checked_policies: np.ndarray,
    checked_values: np.ndarray,
    rng: np.random.Generator,
) -> float:
    """Train ``net`` in place ``round_train_steps`` more steps on the training policies plus ``check_copies``
    copies of every check at its measured values; returns the MSE on that set afterwards."""
    x = np.concatenate([trained.train_policies, *[checked_policies] * config.check_copies])
    y = np.concatenate([trained.train_values, *[checked_values] * config.check_copies])
    batches = rng.integers(0, len(x), size=(config.round_train_steps, config.batch_size))
    train_rmsprop(net, x, y, batches, config.learning_rate)
    return float(np.mean((net.forward(x) - y) ** 2))


def perturbations(config: PolytopeRoundsConfig, best: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Antithetic pairs ``best +- delta`` (2 N, 2), delta ~ N(0, perturbation_std^2), clipped to the square."""
    delta = rng.standard_normal((config.round_perturbations, len(best))) * config.perturbation_std
    return np.clip(np.concatenate([best + delta, best - delta]), 0.0, 1.0)


def _checks(
    config: PolytopeRoundsConfig, mdp: mdp_lib.TabularMDP, policies: np.ndarray, rng: np.random.Generator
) -> Checks:
    measured = check_values(config, mdp, policies, rng)
    exact = mdp_lib.values(mdp, mdp_lib.policy_matrix(policies)) @ mdp.d0
    return Checks(policies, measured, measured @ mdp.d0, exact)


def active_rounds(
    config: PolytopeRoundsConfig, trained: TrainedPolytopePVN, seed: int, on_progress: ProgressFn = no_progress
) -> PolytopeRounds:
    """The zero-shot ascent through ``trained``, then active rounds until the check budget is spent.

    Round 0 ascends from ``ascent_start`` through ``trained`` as ``learned_view`` does and checks its iterates.
    Every later round checks perturbations of the best checked policy so far, fine-tunes the PVN on every check
    so far, ascends from the best checked policy and checks its iterates. ``trained`` is left as it is: the
    rounds fine-tune a copy of its network.
    """
    start_time = time.perf_counter()
    mdp = config.mdp()
    best_pi, best_J = mdp_lib.optimal_policy(mdp)
    grid = np.linspace(0.0, 1.0, config.grid_size)
    net = copy.deepcopy(trained.net)
    steps = np.array(config.check_steps())
    start = np.asarray(config.ascent_start, dtype=float)
    rounds: list[ActiveRound] = []
    losses: list[float] = []
    spent = 0
    total = config.num_rounds()
    empty = Checks(np.empty((0, 2)), np.empty((0, 2)), np.empty(0), np.empty(0))
    for r in range(total):
        check_rng = np.random.default_rng([seed, STREAMS["check"], r])
        perturbed = empty
        if r > 0:
            # explore: the slope of J around the best policy, where the next ascent leaves from
            so_far = Checks.concat([c for q in rounds for c in (q.perturbed, q.checked)])
            best = so_far.policies[int(np.argmax(so_far.J))]
            explore_rng = np.random.default_rng([seed, STREAMS["explore"], r])
            perturbed = _checks(config, mdp, perturbations(config, best, explore_rng), check_rng)
            # fine-tune on every check so far
            so_far = Checks.concat([so_far, perturbed])
            tune_rng = np.random.default_rng([seed, STREAMS["fine_tune"], r])
            losses.append(fine_tune(config, net, trained, so_far.policies, so_far.values, tune_rng))
            start = so_far.policies[int(np.argmax(so_far.J))]
        # ascend through the PVN and check the iterates
        field = _field(net, mdp.d0, grid)
        path = _ascend(config, mdp, net, start)
        checked = _checks(config, mdp, path.policies[steps], check_rng)
        spent += len(perturbed.J) + len(checked.J)
        rounds.append(ActiveRound(r, perturbed, field, path, steps.copy(), checked, spent))
        shown = max(float(q.checked.J.max()) for q in rounds)
        on_progress(r + 1, total, Report(Stage.ASCENT, f"round {r + 1}: best checked iterate J {shown:.3f}"))
    return PolytopeRounds(
        rounds=tuple(rounds),
        grid=grid,
        optimal_policy=best_pi[:, 0],
        optimal_J=float(best_J),
        check_episodes=config.check_episodes,
        fine_tune_loss=np.array(losses),
        seconds=time.perf_counter() - start_time,
    )


@dataclass(frozen=True)
class PolytopeBeyondResult:
    """The Section 6.1 experiment (zero-shot, as ``run_polytope``) and the active rounds after it."""

    base: PolytopeResult
    rounds: PolytopeRounds

    @property
    def config(self) -> PolytopeConfig:
        return self.base.config

    def summary(self) -> dict:
        rounds = self.rounds
        best = rounds.best_policy
        return {
            **self.base.summary(),
            "beyond_rounds": len(rounds.rounds),
            "beyond_checks": rounds.checks_spent,
            "beyond_check_episodes": rounds.check_episodes,
            "beyond_episodes": rounds.episodes_spent,
            "beyond_best_policy": best.tolist(),
            "beyond_best_checked_J": rounds.best_checked_J,
            "beyond_best_exact_J": rounds.best_exact_J,
        }


def run_polytope_beyond(
    config: PolytopeRoundsConfig, seed: int = 0, on_progress: ProgressFn = no_progress
) -> PolytopeBeyondResult:
    """``run_polytope``, then ``active_rounds`` through the PVN it trained (the CLI's ``--preset beyond``)."""
    base = run_polytope(config, seed, on_progress)
    return PolytopeBeyondResult(base, active_rounds(config, base.trained, seed, on_progress))


def rounds_to_dict(rounds: PolytopeRounds) -> dict[str, Any]:
    """A JSON-ready dict of the rounds (dataclasses as dicts, arrays as nested lists), as a run's rounds.json."""

    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, (tuple, list)):
            return [plain(v) for v in value]
        return value.tolist() if isinstance(value, np.ndarray) else value

    return plain(rounds)


def rounds_from_dict(values: dict[str, Any]) -> PolytopeRounds:
    """The inverse of ``rounds_to_dict``: a run's rounds.json as ``PolytopeRounds`` (KeyError or ValueError if
    it is not one)."""

    def checks(d: dict[str, Any]) -> Checks:
        pairs = {name: np.asarray(d[name], dtype=float).reshape(-1, 2) for name in ("policies", "values")}
        return Checks(**pairs, J=np.asarray(d["J"], dtype=float), exact_J=np.asarray(d["exact_J"], dtype=float))

    def one(d: dict[str, Any]) -> ActiveRound:
        ascent = d["ascent"]
        return ActiveRound(
            index=int(d["index"]),
            perturbed=checks(d["perturbed"]),
            field=np.asarray(d["field"], dtype=float),
            ascent=AscentPath(
                *(np.asarray(ascent[name], dtype=float) for name in ("policies", "values", "exact_J", "predicted_J"))
            ),
            checked_steps=np.asarray(d["checked_steps"], dtype=int),
            checked=checks(d["checked"]),
            checks_spent=int(d["checks_spent"]),
        )

    return PolytopeRounds(
        rounds=tuple(one(d) for d in values["rounds"]),
        grid=np.asarray(values["grid"], dtype=float),
        optimal_policy=np.asarray(values["optimal_policy"], dtype=float),
        optimal_J=float(values["optimal_J"]),
        check_episodes=int(values["check_episodes"]),
        fine_tune_loss=np.asarray(values["fine_tune_loss"], dtype=float),
        seconds=float(values["seconds"]),
    )
