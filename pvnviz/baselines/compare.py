"""The same environment-step budget for random search and for the PVN (beyond the paper, Section 6).

``compare`` runs, on one seed, the PVN's zero-shot preset (CartPole ``paper``, Swimmer ``budget-10000x1``) and
its ``beyond`` preset on one dataset (dataset + Algorithm 3's checks), ARS V1-t and V2-t (Mania et al., 2018;
``SETTINGS``, untuned) with the larger of the two PVN budgets, and best-of-random-policies (the best policy of
the dataset, no limit). Every final policy is re-measured on fresh episodes from a stream no method used.
A row is ``{method, env, seed, env_steps, fresh_mean, fresh_best, policy}`` (``policy``: the policies' shape,
``linear`` or ``MLP [30]``; ARS uses the PVN's); ``load_rows`` reads a saved comparison (one JSON row per line), as
``pvnviz compare`` writes and the pages draw. ``compare(..., beyond=PRESET)`` runs that preset instead of the two
(a preset with a dataset of its own: no zero-shot row), and ``ars`` chooses which ARS versions run.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvnviz.baselines.ars import EnvObjective, ars
from pvnviz.core.ascent import measure_returns
from pvnviz.core.config_fields import apply_overrides
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


ARS_VERSIONS = ("V1-t", "V2-t")  # V1-t: raw states; V2-t: states normalised by their running mean and std


def compare(
    seed: int,
    env_name: str = "cartpole",
    dataset: PolicyDataset | None = None,
    beyond: str | None = None,
    ars: tuple[str, ...] = ARS_VERSIONS,
    overrides: tuple[str, ...] = (),
) -> list[dict]:
    """One JSON row per method: its environment steps and the fresh return of its final policies.

    ``dataset``: the PVN presets' dataset (``collect`` of either, they share it), to skip collecting it.
    ``beyond``: a preset id of ``env_name`` run alone (with best-of-random on its dataset) instead of the setting's
    two. ARS (``ars``: a subset of ``ARS_VERSIONS``) gets the largest PVN budget and the PVN's policy shape.
    ``overrides``: ``key=value`` settings (``--set``) applied to every PVN preset run, named in its method
    (``PVN beyond (round_budget=measured)``).
    """
    setting = setting_for(env_name)
    names = (setting.zero_shot, setting.beyond) if beyond is None else (beyond,)
    rows = _pvn_rows(seed, env_name, dataset, names, overrides)
    budget = max(row["env_steps"] for row in rows if row["method"].startswith("PVN"))  # the largest PVN budget
    config = presets_for(env_name)[names[-1]]()
    return rows + [
        _ars_row(seed, env_name, config.arch(), config.horizon, ARS_VERSIONS.index(version), budget)
        for version in ars
    ]


def policy_shape(arch: PolicyArch) -> str:
    """A comparison row's ``policy``: ``linear`` or ``MLP [30]`` (the hidden layers)."""
    return "linear" if not arch.hidden else f"MLP {list(arch.hidden)}"


def _row(method: str, env_name: str, seed: int, env_steps: int, fresh_mean: float, fresh_best: float,
         policy: str) -> dict:  # fmt: skip
    return {"method": method, "env": env_name, "seed": seed, "env_steps": env_steps, "fresh_mean": fresh_mean,
            "fresh_best": fresh_best, "policy": policy}  # fmt: skip


def pvn_method(preset: str, overrides: tuple[str, ...] = ()) -> str:
    """A PVN row's ``method``: ``PVN beyond``, with any ``--set`` overrides after it in parentheses."""
    return f"PVN {preset}" + (f" ({', '.join(overrides)})" if overrides else "")


def _pvn_rows(
    seed: int, env_name: str, dataset: PolicyDataset | None, names: tuple[str, ...], overrides: tuple[str, ...] = ()
) -> list[dict]:
    """The PVN presets ``names`` (zero-shot first, each with ``overrides``) on one dataset, and the dataset's best
    policy re-measured (best of random policies) after the first."""
    env, rows = get_env(env_name), []
    made = {name: apply_overrides(presets_for(env_name)[name](), list(overrides)) for name in names}
    presets = {name: dataclasses.replace(config, inputs=("fingerprint",)) for name, config in made.items()}
    configs = list(presets.values())
    assert all(dataset_config(c) == dataset_config(configs[0]) for c in configs), "the PVN presets share a dataset"
    for preset, config in presets.items():
        result = run_experiment(config, seed, dataset=dataset)
        dataset = result.dataset
        s = result.summary()
        f = s["inputs"]["fingerprint"]
        spent = s["dataset_env_steps"] + f["check_env_steps"] + f["explore_env_steps"]
        fresh_best = max(f["fresh_return_per_start"])
        shape = policy_shape(config.arch())
        method = pvn_method(preset, overrides)
        rows.append(_row(method, env_name, seed, spent, f["fresh_mean_return"], fresh_best, shape))
        if preset == names[0]:
            best = dataset.params[np.argmax(dataset.mean_returns)][None]
            fresh_rng = stage_rng(seed, "fresh")
            episodes = setting_for(env_name).fresh_episodes
            fresh = measure_returns(env, config.arch(), best, episodes, config.horizon, fresh_rng)
            mean = float(fresh[0])
            rows.append(_row("best of random policies", env_name, seed, s["dataset_env_steps"], mean, mean, shape))
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
    return _row(version, env_name, seed, int(result.env_steps[-1]), float(fresh), float(fresh), policy_shape(arch))


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
