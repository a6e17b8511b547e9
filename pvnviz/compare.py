"""The same environment-step budget for random search and for the PVN (issue 9, item 4).

``python -m pvnviz.compare --seed S`` runs, on CartPole MLP [30] at horizon 100: the PVN
``paper`` and ``beyond`` presets (dataset + Algorithm 3's checks), ARS V1-t and V2-t (Mania et al.,
2018; 64 directions, top 32, step 0.02, noise 0.03, untuned) with the budget the ``beyond``
run spent, and best-of-random-policies (the best policy of the dataset, no limit). Every
final policy is re-measured on 100 fresh episodes from a stream no method used. Prints one JSON line per method;
``data/cartpole-budget.jsonl`` holds seeds 10-14 (``--seed 10 11 12 13 14 > data/cartpole-budget.jsonl``), drawn on
the CartPole page by ``load_rows`` and ``pvnviz.figures.beyond.budget_figure``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np

from pvnviz.ars import EnvObjective, ars
from pvnviz.ascent import evaluate_returns
from pvnviz.envs import get_env
from pvnviz.experiment import _rng, run_experiment
from pvnviz.policies import glorot_params
from pvnviz.presets import PRESETS


def compare(seed: int, fresh_episodes: int = 100) -> list[dict]:
    rows = []
    env = get_env("cartpole")
    budget = 0
    for preset in ("paper", "beyond"):
        config = dataclasses.replace(PRESETS["cartpole"][preset](), inputs=("fingerprint",))
        result = run_experiment(config, seed)
        s = result.summary()
        f = s["inputs"]["fingerprint"]
        spent = s["dataset_env_steps"] + f["check_env_steps"]
        budget = max(budget, spent)
        rows.append(
            dict(
                method=f"PVN {preset}",
                seed=seed,
                env_steps=spent,
                fresh_mean=f["fresh_mean_return"],
                fresh_best=max(f["fresh_return_per_start"]),
            )
        )
        if preset == "paper":
            data = result.dataset
            best = data.params[np.argmax(data.mean_returns)][None]
            fresh = evaluate_returns(env, config.arch(), best, fresh_episodes, config.horizon, _rng(seed, "fresh"))
            rows.append(
                dict(
                    method="best of random policies",
                    seed=seed,
                    env_steps=s["dataset_env_steps"],
                    fresh_mean=float(fresh[0]),
                    fresh_best=float(fresh[0]),
                )
            )
    arch = PRESETS["cartpole"]["beyond"]().arch()
    for version, normalise in (("ARS V1-t", False), ("ARS V2-t", True)):
        rng = np.random.default_rng([seed, 100, int(normalise)])
        objective = EnvObjective(env, arch, 1, 100, rng, normalise)
        theta0 = glorot_params(arch, 1, rng)[0]
        result = ars(objective, theta0, 10**6, 64, 32, 0.02, 0.03, rng, budget)
        final = objective.policy(result.theta[None], update=False) if normalise else None
        fresh_rng = _rng(seed, "fresh")
        if final is None:
            fresh = evaluate_returns(env, arch, result.theta[None], fresh_episodes, 100, fresh_rng)[0]
        else:
            fresh = float(
                env.rollout_returns(
                    final, num_policies=1, num_episodes=fresh_episodes, horizon=100, rng=fresh_rng
                ).mean()
            )
        rows.append(
            dict(
                method=version,
                seed=seed,
                env_steps=int(result.env_steps[-1]),
                fresh_mean=float(fresh),
                fresh_best=float(fresh),
            )
        )
    return rows


def load_rows(path: str | Path) -> list[dict]:
    """The rows of a saved comparison (one JSON object per line); ValueError naming the line if one is not a row."""
    rows = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows.append({"method": str(row["method"]), "seed": int(row["seed"]), "env_steps": int(row["env_steps"]),
                         "fresh_mean": float(row["fresh_mean"])})  # fmt: skip
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{Path(path).name}, line {number}: not a comparison row.") from None
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, nargs="+", default=[0])
    parser.add_argument("--html", help="also write the chart (returns against env steps) to this HTML file")
    args = parser.parse_args()
    rows = []
    for seed in args.seed:
        for row in compare(seed):
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.html:
        from pvnviz.figures.beyond import budget_figure

        budget_figure(rows).write_html(args.html)


if __name__ == "__main__":
    main()
