"""The same environment-step budget for random search and for the PVN (beyond the paper, Section 6).

``compare`` runs, on one seed, the PVN's zero-shot preset (CartPole ``paper``, Swimmer ``budget-10000x1``) and
its ``beyond`` preset on one dataset (dataset + Algorithm 3's checks), ARS V1-t and V2-t (Mania et al., 2018;
``SETTINGS``, untuned) with the larger of the two PVN budgets, and best-of-random-policies (the best policy of
the dataset, no limit). Every final policy is re-measured on fresh episodes from a stream no method used.
A row is ``{method, env, seed, env_steps, fresh_mean, fresh_best}``; ``load_rows`` reads a saved comparison
(one JSON row per line), as ``pvnviz compare`` writes and the pages draw.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvnviz.baselines.ars import EnvObjective, ars
from pvnviz.core.ascent import measure_returns
from pvnviz.core.policies import PolicyArch, glorot_params
from pvnviz.envs.registry import get_env
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.pipeline import dataset_config, run_experiment, stage_rng
from pvnviz.runs.presets import presets_for


@dataclass(frozen=True)
class Setting:
    """One environment's comparison: the two PVN presets and ARS's hyperparameters (Mania et al. 2018)."""

    zero_shot: str  # the PVN preset without rounds
    beyond: str  # the PVN preset with this project's additions
    directions: int  # ARS: N directions per iteration
    top: int  # ARS: b best directions used
    step_size: float  # ARS: alpha
    noise: float  # ARS: nu
    fresh_episodes: int  # re-measurement of every final policy


SETTINGS = {
    # CartPole: ARS untuned (64 directions, top 32); 100 fresh episodes as the PVN runs use.
    "cartpole": Setting("paper", "beyond", 64, 32, 0.02, 0.03, 100),
    # Swimmer: Mania et al.'s Swimmer step and noise (0.02, 0.01), 8 directions (top 4) so that one
    # iteration is a batch of 16 episodes; 10 fresh episodes as the PVN runs use.
    "swimmer": Setting("budget-10000x1", "beyond", 8, 4, 0.02, 0.01, 10),
}


def setting_for(env_name: str) -> Setting:
    """The comparison's setting: ``SETTINGS``' for a built-in environment; for a gym: one, CartPole's for Discrete
    actions and the Swimmer's for a Box (their presets have the same ids, ``pvnviz.runs.presets.presets_for``)."""
    if env_name in SETTINGS:
        return SETTINGS[env_name]
    return SETTINGS["cartpole" if get_env(env_name).discrete else "swimmer"]


def compare(seed: int, env_name: str = "cartpole", dataset: PolicyDataset | None = None) -> list[dict]:
    """One JSON row per method: its environment steps and the fresh return of its final policies.

    ``dataset``: the two PVN presets' dataset (``collect`` of either, they share it), to skip collecting it.
    """
    setting = setting_for(env_name)
    rows = _pvn_rows(seed, env_name, dataset)
    budget = max(row["env_steps"] for row in rows if row["method"].startswith("PVN"))
    beyond = presets_for(env_name)[setting.beyond]()
    return rows + [_ars_row(seed, env_name, beyond.arch(), beyond.horizon, normalise, budget) for normalise in (0, 1)]


def _row(method: str, env_name: str, seed: int, env_steps: int, fresh_mean: float, fresh_best: float) -> dict:
    return {"method": method, "env": env_name, "seed": seed, "env_steps": env_steps, "fresh_mean": fresh_mean,
            "fresh_best": fresh_best}  # fmt: skip


def _pvn_rows(seed: int, env_name: str, dataset: PolicyDataset | None) -> list[dict]:
    """The two PVN presets on one dataset, and the dataset's best policy re-measured (best of random policies)."""
    setting, env, rows = setting_for(env_name), get_env(env_name), []
    names = (setting.zero_shot, setting.beyond)
    presets = {name: dataclasses.replace(presets_for(env_name)[name](), inputs=("fingerprint",)) for name in names}
    zero_shot, beyond = presets.values()
    assert dataset_config(zero_shot) == dataset_config(beyond), "the two PVN presets must share their dataset"
    for preset, config in presets.items():
        result = run_experiment(config, seed, dataset=dataset)
        dataset = result.dataset
        s = result.summary()
        f = s["inputs"]["fingerprint"]
        spent = s["dataset_env_steps"] + f["check_env_steps"] + f["explore_env_steps"]
        fresh_best = max(f["fresh_return_per_start"])
        rows.append(_row(f"PVN {preset}", env_name, seed, spent, f["fresh_mean_return"], fresh_best))
        if preset == setting.zero_shot:
            best = dataset.params[np.argmax(dataset.mean_returns)][None]
            fresh_rng = stage_rng(seed, "fresh")
            fresh = measure_returns(env, config.arch(), best, setting.fresh_episodes, config.horizon, fresh_rng)
            mean = float(fresh[0])
            rows.append(_row("best of random policies", env_name, seed, s["dataset_env_steps"], mean, mean))
    return rows


def _ars_row(seed: int, env_name: str, arch: PolicyArch, horizon: int, normalise: int, budget: int) -> dict:
    """ARS V1-t (``normalise`` 0) or V2-t (1) within ``budget`` environment steps, its final policy re-measured."""
    setting, env = setting_for(env_name), get_env(env_name)
    rng = np.random.default_rng([seed, 100, normalise])
    objective = EnvObjective(env, arch, 1, horizon, rng, bool(normalise))
    theta0 = glorot_params(arch, 1, rng)[0]
    s = setting
    result = ars(objective, theta0, 10**6, s.directions, s.top, s.step_size, s.noise, rng, budget)
    fresh_rng = stage_rng(seed, "fresh")
    if normalise:  # V2: the final policy sees observations through the running normalisation it learned
        final = objective.policy(result.theta[None], update=False)
        fresh = env.rollout_returns(
            final, num_policies=1, num_episodes=setting.fresh_episodes, horizon=horizon, rng=fresh_rng
        ).mean()
    else:
        fresh = measure_returns(env, arch, result.theta[None], setting.fresh_episodes, horizon, fresh_rng)[0]
    version = "ARS V2-t" if normalise else "ARS V1-t"
    return _row(version, env_name, seed, int(result.env_steps[-1]), float(fresh), float(fresh))


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
