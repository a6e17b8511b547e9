"""docs/random-search.md, "Swimmer at ARS's budget, ARS's way": every number recomputed from the shipped rows.

The held-out comparison is ``data/swimmer-ars-compare.jsonl`` (what ``pvnviz compare --env swimmer --beyond
budget-ars`` wrote), its ARS rows ``data/swimmer-compare.jsonl``'s (the same budget, so the same ARS runs); the
development run is ``data/swimmer-ars-dev.jsonl``; the preset's settings are ``pvnviz/runs/presets.py``'s.
"""

import json
import re
from pathlib import Path

import numpy as np

from pvnviz.runs.budget import StepBudget
from pvnviz.runs.presets import PRESETS

ROOT = Path(__file__).resolve().parents[1]
HEADER = "| seed | best of random (linear dataset) | PVN `budget-ars` mean / best | ARS V1-t | ARS V2-t |"


def section() -> str:
    text = (ROOT / "docs" / "random-search.md").read_text()
    match = re.search(r"^## Swimmer at ARS's budget, ARS's way\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, "docs/random-search.md has no section on the Swimmer at ARS's budget"
    return match.group(1)


def rows_of(name: str) -> dict[str, list[dict]]:
    """method -> its rows in data/NAME, in seed order."""
    rows: dict[str, list[dict]] = {}
    for line in (ROOT / "data" / name).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows.setdefault(row["method"], []).append(row)
    return {method: sorted(found, key=lambda r: r["seed"]) for method, found in rows.items()}


def table(text: str) -> dict[str, list[str]]:
    """The table under ``HEADER``: first cell -> the others, bold marks removed."""
    lines = text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith(HEADER)))
    found = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]
        found[cells[0]] = cells[1:]
    return found


def test_the_preset_is_what_the_section_says_and_spends_ars_budget():
    c = PRESETS["swimmer"]["budget-ars"]()
    text = " ".join(section().split())
    assert c.policy_hidden == () and c.start_from == "dataset" and c.num_starts == 5
    dataset = c.num_policies * c.num_episodes * c.horizon
    assert f"({c.num_policies} policies x {c.num_episodes} rollout, {dataset / 1e6:.1f} M steps)" in text
    assert f"(`max_beyond_fraction` {c.max_beyond_fraction}" in text
    budget = StepBudget(c, dataset)
    rounds = int(budget.cap // budget.round_at_most)
    assert rounds <= c.rounds  # the cap, not the count, ends the rounds
    assert f"{budget.checks_per_round} checks, {budget.round_at_most:,} steps a round" in text
    assert f"{rounds} rounds, {dataset + rounds * budget.round_at_most:,} env steps in all" in text
    early = ", ".join(str(s) for s in c.early_checks)
    assert f"checks at steps {early} and every {c.eval_every}, {c.eval_episodes} episodes each" in text


def test_the_development_run_is_the_shipped_row():
    (dev,) = rows_of("swimmer-ars-dev.jsonl")["PVN budget-ars"]
    text = " ".join(section().split())
    assert dev["seed"] == 140 and dev["policy"] == "linear"
    per_start = ", ".join(f"{x:.1f}" for x in dev["fresh_per_start"])
    steps = dev["env_steps"] / 1e6
    assert f"fresh returns per start {per_start}, mean {dev['fresh_mean']:.1f} at {steps:.2f} M" in text
    assert np.isclose(np.mean(dev["fresh_per_start"]), dev["fresh_mean"])
    curve = dict(dev["curve_best_check_mean"])
    assert all(b >= a for a, b in zip(list(curve.values()), list(curve.values())[1:]))  # a running best
    said = ", ".join(f"{curve[s]:.1f} at {s / 1e6:g} M" for s in (2_750_000, 5_000_000, 7_500_000, 10_000_000))
    assert said in text and f"{curve[12_500_000]:.1f} at 12.5 M" in text


def ars_by_seed() -> dict[int, dict[str, dict]]:
    """seed -> ARS version -> its row: the linear ARS rows of data/swimmer-ars-compare.jsonl where that comparison
    ran them, else data/swimmer-compare.jsonl's MLP [30] ARS (the same budget, so the runs this would make)."""
    found: dict[int, dict[str, dict]] = {}
    for name in ("swimmer-compare.jsonl", "swimmer-ars-compare.jsonl"):  # the comparison's own rows win
        rows = rows_of(name)
        for version in ("ARS V1-t", "ARS V2-t"):
            for row in rows.get(version, []):
                found.setdefault(row["seed"], {})[version] = row
    return found


def test_the_held_out_table_is_the_shipped_rows_and_the_verdict_follows():
    mine = rows_of("swimmer-ars-compare.jsonl")
    before = rows_of("swimmer-compare.jsonl")
    found = table(section())
    pvn, best = mine["PVN budget-ars"], mine["best of random policies"]
    seeds = [r["seed"] for r in pvn]
    assert seeds == [r["seed"] for r in best] and set(seeds) <= {40, 41, 42, 43}
    assert {r["policy"] for r in pvn + best} == {"linear"}
    assert {r["policy"] for v in ("ARS V1-t", "ARS V2-t") for r in mine.get(v, [])} <= {"linear"}
    ars = ars_by_seed()
    above = 0
    for p, b in zip(pvn, best):
        seed = p["seed"]
        # the same budget as the rows the ARS runs were given, so those ARS runs are exactly the ones this would get
        assert p["env_steps"] == 12_500_000
        if seed in {r["seed"] for r in before["PVN beyond"]}:
            assert next(r for r in before["PVN beyond"] if r["seed"] == seed)["env_steps"] == p["env_steps"]
        cells = found[str(seed)]
        v1, v2 = ars[seed]["ARS V1-t"], ars[seed]["ARS V2-t"]
        assert cells[0] == f"{b['fresh_mean']:.1f}"
        assert cells[1] == f"{p['fresh_mean']:.1f} / {p['fresh_best']:.1f}"
        assert cells[2] == f"{v1['fresh_mean']:.1f}" and cells[3] == f"{v2['fresh_mean']:.1f}"
        # swimmer-compare.jsonl's rows predate the field: ARS there took `beyond`'s policies, MLP [30]
        assert cells[4] == v1.get("policy", "MLP [30]") == v2.get("policy", "MLP [30]")
        above += p["fresh_mean"] >= v1["fresh_mean"]
    assert len(found) == len(seeds) + 1  # a row per seed and the steps
    steps = found["env steps"]
    assert steps[0] == f"{best[0]['env_steps'] / 1e6:.1f} M" and steps[1] == f"{pvn[0]['env_steps'] / 1e6:.2f} M"
    assert {r["env_steps"] for s in seeds for r in ars[s].values()} == {12_512_000}
    assert steps[2] == steps[3] == "12.51 M"
    text = " ".join(section().split())
    assert f"at or above ARS V1-t's on {above} of the {len(seeds)} held-out seeds run" in text
    losses = [(p, ars[p["seed"]]["ARS V1-t"]["fresh_mean"]) for p in pvn]
    losses = [(p, v1) for p, v1 in losses if p["fresh_mean"] < v1]
    def listed(values: list[float]) -> str:
        return ", ".join(f"{v:.1f}" for v in values[:-1]) + f" and {values[-1]:.1f}"

    lost = [p["seed"] for p, _ in losses]
    means = listed([v1 - p["fresh_mean"] for p, v1 in losses])
    seeds_lost = ", ".join(map(str, lost[:-1])) + f" and {lost[-1]}"
    assert f"Where it loses, its mean is {means} below V1-t (seeds {seeds_lost})" in text
    bests, v1s = listed([p["fresh_best"] for p, _ in losses]), listed([v1 for _, v1 in losses])
    assert f"and its best start {bests} against V1-t's {v1s}." in text
    behind = [s for s in seeds if ars[s]["ARS V2-t"]["fresh_mean"] < 200]
    assert "V2-t ends far behind on seeds 40-43" in text and behind == [40, 41, 42, 43]
    mlp = {r["seed"]: r for r in before["ARS V1-t"]}
    p40 = next(p for p in pvn if p["seed"] == 40)
    assert f"above V1-t on seed 40 ({p40['fresh_mean']:.1f} against {mlp[40]['fresh_mean']:.1f})" in text
    assert f"MLP [30] ARS (`data/swimmer-compare.jsonl`) ended at {mlp[40]['fresh_mean']:.1f} (V1-t)" in text


def test_where_it_stands_quotes_the_rows():
    text = " ".join(section().split())
    (dev,) = rows_of("swimmer-ars-dev.jsonl")["PVN budget-ars"]
    assert f"the 5 starts themselves measured {dev['start_mean_return']:.1f} on average at their first check" in text
    assert "the top of the PVN's histogram" in text and f"the dataset's best rollout was {dev['bins'][1]:.1f}" in text
    assert f"best return ({dev['bins'][1]:.1f} on seed 140)" in text
    mine = rows_of("swimmer-ars-compare.jsonl")
    mlp = {r["seed"]: r for r in rows_of("swimmer-compare.jsonl")["PVN beyond"]}
    first = mine["PVN budget-ars"][0]
    best = mine["best of random policies"][0]
    seed = first["seed"]
    assert f"scores {best['fresh_mean']:.1f} on seed {seed} (fresh episodes), above the MLP `beyond`'s " in text
    assert f"`beyond`'s {mlp[seed]['fresh_mean']:.1f} after 12.5 M steps" in text
    assert best["fresh_mean"] > mlp[seed]["fresh_mean"]
    gain_mean = first["fresh_mean"] - best["fresh_mean"]
    gain_best = first["fresh_best"] - best["fresh_mean"]
    assert f"add {gain_mean:.1f} to it for the 5-start mean and {gain_best:.1f} for the best start" in text
