"""How often the zero-shot learned ascent of Section 6.1 reaches the optimum, over seeds.

The paper runs Fig. 3 once: a PVN trained on 20 uniform policies, then 100 SGD steps through it from
[0.5, 0], and reports that the learned ascent converges to the optimum like the exact one. Here a seed
draws the 40 policies, the train/test split and the PVN's initialisation, so the learned ascent's end
depends on it: where the 20 training policies leave the PVN's gradient wrong near the square's edges, the
ascent stalls on a spurious plateau or on a worse corner.

``survey`` runs the paper's settings on many seeds and counts two ways of arriving, both judged with the
exact J of Eq. (2):

- *near-optimal*: the last iterate's exact J is within ``J_TOLERANCE`` of the optimum's;
- *at the optimum*: the last iterate is within ``POLICY_TOLERANCE`` of the optimal policy in every
  coordinate.

``PAPER_SURVEY`` is the survey of the paper's settings that the app, the README and docs/results.md quote;
a slow test recomputes it, so a change that moves the rate fails on the day it lands.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvnviz.core.seed_map import seed_map
from pvnviz.polytope import mdp as mdp_lib
from pvnviz.polytope.experiment import PolytopeConfig, learned_view, train_polytope_pvn
from pvnviz.polytope.rounds import PolytopeRoundsConfig, active_rounds

J_TOLERANCE = 0.05
"""A last iterate whose exact J is this close to the optimum's counts as near-optimal."""
POLICY_TOLERANCE = 0.05
"""A last iterate this close to the optimal policy, in every coordinate, counts as at the optimum."""


@dataclass(frozen=True)
class SeedEnd:
    """Where the learned ascent of one seed ended, judged with the exact J."""

    seed: int
    policy: tuple[float, float]  # the last iterate [P(a1|s1), P(a1|s2)]
    exact_J: float
    near_optimal: bool
    at_optimum: bool


@dataclass(frozen=True)
class Survey:
    """The learned ascent's ends over a range of seeds (one ``SeedEnd`` each, in seed order)."""

    ends: tuple[SeedEnd, ...]
    optimal_J: float

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(end.seed for end in self.ends)

    @property
    def near_optimal(self) -> tuple[int, ...]:
        """The seeds whose ascent ended near-optimal."""
        return tuple(end.seed for end in self.ends if end.near_optimal)

    @property
    def at_optimum(self) -> tuple[int, ...]:
        """The seeds whose ascent ended at the optimal policy."""
        return tuple(end.seed for end in self.ends if end.at_optimum)


def seed_end(config: PolytopeConfig, seed: int) -> SeedEnd:
    """Train the PVN of ``seed``, ascend through it, and judge the last iterate exactly."""
    mdp = config.mdp()
    best_policy, best_J = mdp_lib.optimal_policy(mdp)
    path = learned_view(config, train_polytope_pvn(config, seed)).ascent
    last = path.policies[-1]
    exact_J = float(path.exact_J[-1])
    return SeedEnd(
        seed=seed,
        policy=(float(last[0]), float(last[1])),
        exact_J=exact_J,
        near_optimal=bool(best_J - exact_J <= J_TOLERANCE),
        at_optimum=bool(np.max(np.abs(last - best_policy[:, 0])) <= POLICY_TOLERANCE),
    )


def survey(config: PolytopeConfig, seeds: Iterable[int], processes: int | None = None) -> Survey:
    """``seed_end`` of every seed (about 0.3 s each at the paper's settings), over ``processes`` (``seed_map``)."""
    _, best_J = mdp_lib.optimal_policy(config.mdp())
    return Survey(tuple(seed_map(seed_end, config, seeds, processes)), float(best_J))


@dataclass(frozen=True)
class SurveyRecord:
    """The counts of a survey, as the app and the docs quote them."""

    seeds: range
    near_optimal: int
    at_optimum: int
    first_at_optimum: int
    """The smallest seed whose ascent ends at the optimum: the polytope page's default seed."""

    def sentence(self) -> str:
        """One sentence for a page or a doc."""
        n = len(self.seeds)
        return (
            f"over seeds {self.seeds.start}-{self.seeds.stop - 1}, the learned ascent ends within {J_TOLERANCE} "
            f"of the optimum's J on {self.near_optimal} of {n}, and at the optimal policy on {self.at_optimum} "
            f"of {n}"
        )


PAPER_SURVEY = SurveyRecord(seeds=range(100), near_optimal=37, at_optimum=23, first_at_optimum=10)
"""``survey(PolytopeConfig(), range(100))`` counted (recomputed by tests/test_claims.py)."""


@dataclass(frozen=True)
class BeyondSeedEnd(SeedEnd):
    """Where the active rounds of one seed ended: Algorithm 3's choice among every check, judged exactly."""

    checks_spent: int
    zero_shot_near_optimal: bool  # the same seed's zero-shot ascent (round 0's last iterate), for comparison


def beyond_seed_end(config: PolytopeRoundsConfig, seed: int) -> BeyondSeedEnd:
    """Train the PVN of ``seed``, run the active rounds through it, and judge the best checked policy exactly."""
    rounds = active_rounds(config, train_polytope_pvn(config, seed), seed)
    best_J = rounds.optimal_J
    chosen = rounds.best_policy
    exact_J = rounds.best_exact_J
    return BeyondSeedEnd(
        seed=seed,
        policy=(float(chosen[0]), float(chosen[1])),
        exact_J=exact_J,
        near_optimal=bool(best_J - exact_J <= J_TOLERANCE),
        at_optimum=bool(np.max(np.abs(chosen - rounds.optimal_policy)) <= POLICY_TOLERANCE),
        checks_spent=rounds.checks_spent,
        zero_shot_near_optimal=bool(best_J - rounds.rounds[0].ascent.exact_J[-1] <= J_TOLERANCE),
    )


def beyond_survey(config: PolytopeRoundsConfig, seeds: Iterable[int], processes: int | None = None) -> Survey:
    """``beyond_seed_end`` of every seed (its ``ends`` are ``BeyondSeedEnd``; about 0.7 s a seed), over
    ``processes`` (``seed_map``)."""
    _, best_J = mdp_lib.optimal_policy(config.mdp())
    return Survey(tuple(seed_map(beyond_seed_end, config, seeds, processes)), float(best_J))


def record(result: Survey) -> SurveyRecord:
    """The counts of a survey over a contiguous range of seeds."""
    seeds = result.seeds
    return SurveyRecord(
        seeds=range(seeds[0], seeds[-1] + 1),
        near_optimal=len(result.near_optimal),
        at_optimum=len(result.at_optimum),
        first_at_optimum=result.at_optimum[0] if result.at_optimum else -1,
    )


def write_beyond_records(config: PolytopeRoundsConfig, seeds: Iterable[int], path: str | Path) -> Survey:
    """``beyond_survey`` of ``seeds``, one JSON line per seed (every ``BeyondSeedEnd`` field, and the settings that
    differ from ``PolytopeRoundsConfig()``'s under ``"set"``) written to ``path``: the records a test re-derives a
    table from, and re-runs a sample of."""
    result = beyond_survey(config, seeds)
    default = PolytopeRoundsConfig()
    changed = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)
               if getattr(config, f.name) != getattr(default, f.name)}  # fmt: skip
    lines = [json.dumps({**dataclasses.asdict(end), "set": changed}) for end in result.ends]
    Path(path).write_text("\n".join(lines) + "\n")
    return result


def read_beyond_records(path: str | Path) -> tuple[PolytopeRoundsConfig, tuple[BeyondSeedEnd, ...]]:
    """The settings and the ends ``write_beyond_records`` wrote (one settings for the whole file)."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    (changed,) = {json.dumps(row.pop("set"), sort_keys=True) for row in rows}
    config = PolytopeRoundsConfig(**json.loads(changed))
    return config, tuple(BeyondSeedEnd(**{**row, "policy": tuple(row["policy"])}) for row in rows)
