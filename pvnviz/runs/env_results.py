"""Where the PVN works: PVN ``beyond`` against random search at the same environment-step budget on gymnasium
environments beyond the paper's two (Section 6 runs CartPole and the Swimmer only).

``data/envs-compare.jsonl`` holds the rows of ``pvnviz compare --env gym:ID --beyond PRESET --seed S``
(``pvnviz.baselines.compare``: one JSON object a method, ``{method, env, seed, env_steps, fresh_mean, fresh_best,
policy}``), every seed run. ``load_env_rows`` reads them; ``env_results`` groups them into one ``EnvSeedResult``
per environment and seed; ``env_summary`` gives each environment's means over its seeds and whether the PVN beat
random search there. The Any environment page draws them (``pvnviz.figures.env_results``); docs/env-results.md
tabulates them and tests/test_claims_envs.py re-derives that table from the rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ENVS_COMPARE = Path(__file__).resolve().parents[2] / "data" / "envs-compare.jsonl"
ARS_METHODS = ("ARS V1-t", "ARS V2-t")
BEST_OF_RANDOM = "best of random policies"
# the methods a summary's winner is chosen among ({EnvSeedResult field: name}); the PVN by its mean over starts
WINNERS = {"best_of_random": "best of random", "pvn_mean": "PVN", "ars_v1": "ARS V1-t", "ars_v2": "ARS V2-t"}


@dataclass(frozen=True)
class EnvSeedResult:
    """One environment and seed: every method's fresh-episode return and the env steps each spent.

    ``pvn_mean``: the mean over the PVN's 5 starts of each chosen policy's fresh return; ``pvn_best``: the best
    start's. ``best_of_random``: the dataset's best policy (by its measured return in the dataset) re-measured on
    fresh episodes. ``dataset_steps`` <= ``pvn_steps`` (dataset plus Algorithm 3's checks) <= ``ars_steps`` up to
    one ARS iteration (ARS stops at the first iteration past the PVN's budget)."""

    env: str  # gym:ID, canonical
    seed: int
    preset: str  # the PVN preset run (beyond, or beyond-1M where the paper-sized dataset did not fit)
    policy: str  # the policies' shape, shared by every method (MLP [30])
    best_of_random: float
    pvn_mean: float
    pvn_best: float
    ars_v1: float
    ars_v2: float
    dataset_steps: int
    pvn_steps: int
    ars_steps: int  # the larger of the two ARS runs'


def load_env_rows(path: str | Path = ENVS_COMPARE) -> list[dict]:
    """Every row of a saved comparison, every field; ValueError naming the line if one is not a comparison row."""
    rows = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows.append({"method": str(row["method"]), "env": str(row["env"]), "seed": int(row["seed"]),
                         "env_steps": int(row["env_steps"]), "fresh_mean": float(row["fresh_mean"]),
                         "fresh_best": float(row["fresh_best"]), "policy": str(row.get("policy", ""))})  # fmt: skip
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{Path(path).name}, line {number}: not a comparison row.") from None
    return rows


def env_results(rows: list[dict], env: str | None = None) -> list[EnvSeedResult]:
    """One result per comparison run (environment, seed and PVN preset) in the rows' order, only ``env``'s if given.

    ``rows`` are in the order ``pvnviz compare --beyond PRESET`` writes them: a run's ``PVN PRESET`` row, then its
    best-of-random and ARS rows, so one environment and seed may hold runs of two presets. ValueError if a run
    lacks a method or a row comes before any PVN row or names another environment or seed than its run's."""
    runs: list[dict[str, dict]] = []
    for row in rows:
        if row["method"].startswith("PVN "):
            runs.append({})
        elif not runs or any((r["env"], r["seed"]) != (row["env"], row["seed"]) for r in runs[-1].values()):
            raise ValueError(f"{row['env']} seed {row['seed']}: its {row['method']} row follows no PVN row of its own.")
        runs[-1][row["method"]] = row
    results = []
    for methods in runs:
        name, seed = next(iter(methods.values()))["env"], next(iter(methods.values()))["seed"]
        if env is not None and name != env:
            continue
        pvn = [m for m in methods if m.startswith("PVN ")]
        missing = [m for m in (BEST_OF_RANDOM, *ARS_METHODS) if m not in methods] + ([] if len(pvn) == 1 else ["PVN"])
        if missing:
            raise ValueError(f"{name} seed {seed}: no single row for {', '.join(missing)}.")
        p, v1, v2 = methods[pvn[0]], methods[ARS_METHODS[0]], methods[ARS_METHODS[1]]
        results.append(
            EnvSeedResult(
                env=name,
                seed=seed,
                preset=pvn[0].removeprefix("PVN "),
                policy=p["policy"],
                best_of_random=methods[BEST_OF_RANDOM]["fresh_mean"],
                pvn_mean=p["fresh_mean"],
                pvn_best=p["fresh_best"],
                ars_v1=v1["fresh_mean"],
                ars_v2=v2["fresh_mean"],
                dataset_steps=methods[BEST_OF_RANDOM]["env_steps"],
                pvn_steps=p["env_steps"],
                ars_steps=max(v1["env_steps"], v2["env_steps"]),
            )
        )
    return results


def env_summary(results: list[EnvSeedResult]) -> list[dict]:
    """Per environment and PVN preset (first-seen order): its seeds, the mean over them of each method's return,
    and ``winner``: which of best of random, the PVN (its mean over starts), ARS V1-t and ARS V2-t has the highest
    mean over the seeds (``WINNERS``' names)."""
    summary = []
    for name, preset in dict.fromkeys((r.env, r.preset) for r in results):
        mine = [r for r in results if (r.env, r.preset) == (name, preset)]
        means = {
            key: float(np.mean([getattr(r, key) for r in mine]))
            for key in ("best_of_random", "pvn_mean", "pvn_best", "ars_v1", "ars_v2")
        }
        winner = max(WINNERS, key=lambda key: means[key])
        summary.append({"env": name, "preset": preset, "seeds": [r.seed for r in mine], **means,
                        "winner": WINNERS[winner]})  # fmt: skip
    return summary


def steps_text(steps: int) -> str:
    """An env-step count as the tables print it: millions with two decimals from 100 k up, else thousands."""
    return f"{steps / 1e6:.2f} M" if steps >= 100_000 else f"{steps / 1e3:.0f} k"


def markdown_table(results: list[EnvSeedResult]) -> str:
    """docs/env-results.md's table of every seed: returns to one decimal, env steps by ``steps_text``."""
    lines = [
        "| env | seed | PVN preset | best of random (dataset) | PVN mean / best of 5 starts | ARS V1-t | ARS V2-t "
        "| env steps: dataset / PVN / ARS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        steps = " / ".join(steps_text(s) for s in (r.dataset_steps, r.pvn_steps, r.ars_steps))
        lines.append(
            f"| {r.env.removeprefix('gym:')} | {r.seed} | `{r.preset}` | {r.best_of_random:.1f} "
            f"| {r.pvn_mean:.1f} / {r.pvn_best:.1f} | {r.ars_v1:.1f} | {r.ars_v2:.1f} | {steps} |"
        )
    return "\n".join(lines)


def markdown_summary(results: list[EnvSeedResult]) -> str:
    """docs/env-results.md's table of the means over seeds (``env_summary``), one line per environment and preset."""
    lines = [
        "| env | PVN preset | seeds | best of random | PVN mean / best start | ARS V1-t | ARS V2-t | highest mean |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in env_summary(results):
        lines.append(
            f"| {s['env'].removeprefix('gym:')} | `{s['preset']}` | {', '.join(map(str, s['seeds']))} "
            f"| {s['best_of_random']:.1f} | {s['pvn_mean']:.1f} / {s['pvn_best']:.1f} | {s['ars_v1']:.1f} "
            f"| {s['ars_v2']:.1f} | {s['winner']} |"
        )
    return "\n".join(lines)


def shipped_env_results(env: str | None = None) -> list[EnvSeedResult]:
    """The shipped comparison's results (``ENVS_COMPARE``), only ``env``'s (a canonical gym: name) if given; [] for
    an environment it does not hold. What the Any environment page draws under an environment."""
    return env_results(load_env_rows(ENVS_COMPARE), env)
