"""docs/env-results.md, where the PVN works: every number of its tables re-derived from the shipped rows
(data/envs-compare.jsonl, read here as plain JSON), the budgets they claim checked, and the preset, the reader
(pvnviz.runs.env_results) and the figure (pvnviz.figures.env_results) behind them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from pvnviz.core.config_fields import apply_overrides
from pvnviz.figures.env_results import METHODS, env_results_figure
from pvnviz.runs.budget import StepBudget
from pvnviz.runs.env_results import env_results, env_summary, load_env_rows, shipped_env_results
from pvnviz.runs.presets import GYM_SMALL_DATASET_STEPS, presets_for

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "data" / "envs-compare.jsonl"
ENVS = ["Pendulum-v1", "Acrobot-v1", "MountainCarContinuous-v0", "InvertedPendulum-v5", "Hopper-v5", "HalfCheetah-v5"]


def raw_rows() -> list[dict]:
    return [json.loads(line) for line in ROWS.read_text().splitlines() if line.strip()]


def by_run() -> dict[tuple[str, int, str], dict[str, dict]]:
    """{(ID, seed, PVN preset): {method: row}} straight from the file: each run's PVN row, then its other rows."""
    out: dict[tuple[str, int, str], dict[str, dict]] = {}
    for row in raw_rows():
        if row["method"].startswith("PVN "):
            key = (row["env"].removeprefix("gym:"), row["seed"], row["method"].removeprefix("PVN "))
            assert key not in out, key
            out[key] = {}
        assert (row["env"].removeprefix("gym:"), row["seed"]) == key[:2]
        out[key][row["method"]] = row
    return out


def section() -> str:
    return (ROOT / "docs" / "env-results.md").read_text()


def table(header_start: str) -> list[list[str]]:
    """The cells of the markdown table in the section whose header line starts with ``header_start``."""
    lines = section().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    cells = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells.append([c.strip().replace("**", "") for c in line.strip().strip("|").split("|")])
    return cells


def steps(n: int) -> str:
    return f"{n / 1e6:.2f} M" if n >= 100_000 else f"{n / 1e3:.0f} k"


def test_every_environment_has_at_least_three_seeds_and_every_method():
    runs = by_run()
    for env in ENVS:
        seeds = sorted(seed for (e, seed, _) in runs if e == env)
        assert len(set(seeds)) >= 3, (env, seeds)
    for key, methods in runs.items():
        assert set(methods) == {f"PVN {key[2]}", "best of random policies", "ARS V1-t", "ARS V2-t"}, key


def test_the_seed_table_is_the_shipped_rows():
    """Every cell of the per-seed table, and every run of the rows in it once."""
    cells = table("| env | seed | PVN preset |")
    runs = by_run()
    assert sorted((c[0], int(c[1]), c[2].strip("`")) for c in cells) == sorted(runs)
    for c in cells:
        preset = c[2].strip("`")
        methods = runs[c[0], int(c[1]), preset]
        p, best = methods[f"PVN {preset}"], methods["best of random policies"]
        v1, v2 = methods["ARS V1-t"], methods["ARS V2-t"]
        assert c[3] == f"{best['fresh_mean']:.1f}"
        assert c[4] == f"{p['fresh_mean']:.1f} / {p['fresh_best']:.1f}"
        assert (c[5], c[6]) == (f"{v1['fresh_mean']:.1f}", f"{v2['fresh_mean']:.1f}")
        ars = max(v1["env_steps"], v2["env_steps"])
        assert c[7] == f"{steps(best['env_steps'])} / {steps(p['env_steps'])} / {steps(ars)}"


def test_the_summary_table_is_the_means_over_seeds():
    cells = table("| env | PVN preset | seeds |")
    runs = by_run()
    assert sorted((c[0], c[1].strip("`")) for c in cells) == sorted({(e, p) for e, _, p in runs})
    assert list(dict.fromkeys(c[0] for c in cells)) == ENVS
    for c in cells:
        preset = c[1].strip("`")
        seeds = [seed for (e, seed, p) in runs if (e, p) == (c[0], preset)]
        assert c[2] == ", ".join(map(str, seeds))
        mine = [runs[c[0], seed, preset] for seed in seeds]

        def mean(method: str, key: str = "fresh_mean", rows: list = mine) -> float:
            return float(np.mean([g[method][key] for g in rows]))

        pvn, v1, v2 = mean(f"PVN {preset}"), mean("ARS V1-t"), mean("ARS V2-t")
        assert c[3] == f"{mean('best of random policies'):.1f}"
        assert c[4] == f"{pvn:.1f} / {mean(f'PVN {preset}', 'fresh_best'):.1f}"
        assert (c[5], c[6]) == (f"{v1:.1f}", f"{v2:.1f}")
        best = mean("best of random policies")
        names = {"best of random": best, "PVN": pvn, "ARS V1-t": v1, "ARS V2-t": v2}
        assert c[7] == max(names, key=names.get), c[0]


def preset_config(env: str, preset: str):
    """A PVN row's preset as it ran: ``beyond``, or ``beyond (key=value, ...)`` with its ``--set`` overrides."""
    name, _, overrides = preset.partition(" (")
    return apply_overrides(presets_for(f"gym:{env}")[name](), [o for o in overrides.rstrip(")").split(", ") if o])


def test_every_method_spent_the_same_budget():
    """ARS ran until it passed the PVN's steps (dataset + checks), by less than one iteration of its episodes
    (8 or 64 directions, two episodes each, at most the horizon); the PVN spent its dataset and then checks,
    within its cap counted at_most (or Algorithm 3's own first round of checks, which always runs, where that is
    more), and past it by less than one round at its most counted as measured."""
    for (env, seed, preset), methods in by_run().items():
        config = preset_config(env, preset)
        directions = 64 if env == "Acrobot-v1" else 8
        dataset, spent = methods["best of random policies"]["env_steps"], methods[f"PVN {preset}"]["env_steps"]
        assert dataset <= config.num_policies * config.num_episodes * config.horizon
        assert dataset < spent
        budget = StepBudget(config)
        first = config.num_starts * budget.checks_per_round * config.eval_episodes * config.horizon
        slack = budget.round_at_most if config.round_budget == "measured" else 0
        assert spent <= dataset + max(config.max_beyond_fraction * dataset, first) + slack, (env, seed, preset)
        for version in ("ARS V1-t", "ARS V2-t"):
            ars = methods[version]["env_steps"]
            assert spent <= ars < spent + 2 * directions * config.horizon, (env, seed, version)


def test_beyond_1m_is_beyond_on_a_dataset_of_at_most_a_million_steps():
    for name in ("gym:Acrobot-v1", "gym:Pendulum-v1", "gym:Hopper-v5", "gym:MountainCarContinuous-v0"):
        presets = presets_for(name)
        small, beyond = presets["beyond-1M"](), presets["beyond"]()
        size = small.num_policies * small.num_episodes * small.horizon
        assert size <= GYM_SMALL_DATASET_STEPS or small.num_policies == 1000, name
        assert small.num_policies >= 1000 and small.num_episodes >= 1
        same = {k: v for k, v in vars(small).items() if k not in ("num_policies", "num_episodes")}
        assert same == {k: v for k, v in vars(beyond).items() if k not in ("num_policies", "num_episodes")}
    acrobot = presets_for("gym:Acrobot-v1")["beyond-1M"]()
    assert (acrobot.num_policies, acrobot.num_episodes) == (1000, 2)  # 1000 x 2 x 500 steps
    pendulum = presets_for("gym:Pendulum-v1")["beyond-1M"]()
    assert (pendulum.num_policies, pendulum.num_episodes) == (5000, 1)  # 5000 x 1 x 200 steps


def test_the_reader_and_the_figure_hold_every_seed():
    results = shipped_env_results()
    assert len(results) == len(by_run())
    summary = env_summary(results)
    assert list(dict.fromkeys(s["env"].removeprefix("gym:") for s in summary)) == ENVS
    panels = list(dict.fromkeys((r.env, r.preset) for r in results))
    one = shipped_env_results("gym:Hopper-v5")
    assert {r.env for r in one} == {"gym:Hopper-v5"} and len(one) >= 3
    fig = env_results_figure(results)
    assert len(fig.data) == len(panels) * len(METHODS)
    for trace in fig.data:  # every marker is one seed's number of that method
        label, field = next((m[0], m[1]) for m in METHODS if m[0] == trace.name)
        axis = trace.yaxis.removeprefix("y") or "1"
        panel = panels[int(axis) - 1]
        assert list(trace.y) == [getattr(r, field) for r in results if (r.env, r.preset) == panel]
    assert len(env_results_figure(one).data) == len({r.preset for r in one}) * len(METHODS)


def test_a_seed_without_every_method_is_refused(tmp_path):
    rows = [r for r in raw_rows() if not (r["env"] == "gym:Pendulum-v1" and r["method"] == "ARS V2-t")]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(ValueError, match="Pendulum-v1 seed 0: no single row for ARS V2-t"):
        env_results(load_env_rows(path))
    path.write_text('{"method": "PVN beyond"}\n')
    with pytest.raises(ValueError, match="line 1: not a comparison row"):
        load_env_rows(path)


def test_every_return_the_prose_quotes_is_a_row():
    """Below the tables, every number with one decimal that is not a step count (``M``) or a share (``%``) is a
    row's fresh mean or best return, as the tables print it."""
    lines = section().splitlines()
    prose = " ".join(lines[max(i for i, line in enumerate(lines) if line.startswith("|")) + 1 :])
    quoted = re.findall(r"(?<![\w.])-?\d+\.\d(?![\d%]| ?M\b)", prose)
    printed = {f"{row[key]:.1f}" for row in raw_rows() for key in ("fresh_mean", "fresh_best")}
    assert len(quoted) > 40
    assert [q for q in quoted if q not in printed and f"-{q}" not in printed] == []


def test_the_commands_name_every_environment_that_ran_each_preset():
    """The page's command block: the ``beyond-1M`` line's IDs and the ``beyond`` line's "tried" IDs are the
    environments with rows of that preset (Pendulum's ``beyond`` has a line of its own)."""
    block = section().split("```bash\n", 1)[1].split("```", 1)[0]
    named: dict[str, set[str]] = {}
    preset = None
    for line in block.splitlines():
        if line.startswith("pvnviz compare --env gym:ID"):
            preset = line.split("--beyond ")[1].split()[0]
        elif line.startswith("pvnviz"):
            preset = None
        if preset is not None:
            named.setdefault(preset, set()).update(re.findall(r"[A-Z]\w+-v\d", line.split("#", 1)[-1]))
    runs = {(env, p) for env, _, p in by_run()}
    assert named["beyond-1M"] == {env for env, p in runs if p == "beyond-1M"}
    assert named["beyond"] == {env for env, p in runs if p == "beyond"} - {"Pendulum-v1"}
