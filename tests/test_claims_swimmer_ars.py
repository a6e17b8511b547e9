"""docs/random-search.md, "Swimmer at ARS's budget, ARS's way": every number recomputed from the shipped rows.

The held-out comparison is ``data/swimmer-ars-compare.jsonl`` (what ``pvnviz compare --env swimmer --beyond
budget-ars`` wrote, and linear ARS run alone as it runs it), with shared restarts ``data/swimmer-ars-shared.jsonl``;
the development runs are ``data/swimmer-ars-dev.jsonl``; the preset's settings are ``pvnviz/runs/presets.py``'s.
"""

import dataclasses
import json
import re
from pathlib import Path

import numpy as np

from pvnviz.runs.budget import StepBudget
from pvnviz.runs.presets import PRESETS, preset_label

ROOT = Path(__file__).resolve().parents[1]
HEADER = "| seed | best of random (linear dataset) | PVN `budget-ars` mean / best | with shared restarts mean / best |"


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


SHARED = "PVN budget-ars (share_best=true)"


def test_the_shared_preset_is_what_the_shared_rows_ran():
    """``budget-ars-shared`` is ``budget-ars`` with ``--set share_best=true``, the runs behind the SHARED rows, and
    the section names it."""
    plain, shared = PRESETS["swimmer"]["budget-ars"](), PRESETS["swimmer"]["budget-ars-shared"]()
    assert not plain.share_best and shared == dataclasses.replace(plain, share_best=True)
    text = " ".join(section().split())
    assert "`python -m pvnviz run swimmer --preset budget-ars-shared`" in text
    said = re.search(r'or "([^"]+)" in the Swimmer page\'s preset box', text)
    assert said and preset_label("swimmer", "budget-ars-shared").startswith(said.group(1))


def listed(values: list) -> str:
    """'1, 2 and 3' (floats to one decimal)."""
    said = [f"{v:.1f}" if isinstance(v, float) else str(v) for v in values]
    return ", ".join(said[:-1]) + f" and {said[-1]}"


def test_the_held_out_table_is_the_shipped_rows_and_the_verdict_follows():
    """The table of seeds 40-43: the dataset's best, the preset without and with shared restarts (mean / best start),
    linear ARS; and the verdict against ARS V1-t, for both, from the rows."""
    mine, shared = rows_of("swimmer-ars-compare.jsonl"), rows_of("swimmer-ars-shared.jsonl")
    found = table(section())
    pvn, best = mine["PVN budget-ars"], mine["best of random policies"]
    with_sharing = [r for r in shared[SHARED] if r["seed"] <= 43]  # seed 44: test_the_unseen_seed_is_its_rows
    seeds = [r["seed"] for r in pvn]
    assert seeds == [r["seed"] for r in best] == [r["seed"] for r in with_sharing] == [40, 41, 42, 43]
    # the same datasets: the shared runs' best policies are the same policies, measured the same
    assert [r["fresh_mean"] for r in shared["best of random policies"][:4]] == [r["fresh_mean"] for r in best]
    assert {r["policy"] for r in pvn + best + with_sharing} == {"linear"}
    v1 = {r["seed"]: r for r in mine["ARS V1-t"]}
    v2 = {r["seed"]: r for r in mine["ARS V2-t"]}
    assert {r["policy"] for r in list(v1.values()) + list(v2.values())} == {"linear"}
    for p, q, b in zip(pvn, with_sharing, best):
        seed = p["seed"]
        assert p["env_steps"] == q["env_steps"] == 12_500_000
        assert found[str(seed)] == [
            f"{b['fresh_mean']:.1f}",
            f"{p['fresh_mean']:.1f} / {p['fresh_best']:.1f}",
            f"{q['fresh_mean']:.1f} / {q['fresh_best']:.1f}",
            f"{v1[seed]['fresh_mean']:.1f}",
            f"{v2[seed]['fresh_mean']:.1f}",
        ]
    assert len(found) == len(seeds) + 1  # a row per seed and the steps
    assert found["env steps"] == [f"{best[0]['env_steps'] / 1e6:.1f} M", "12.50 M", "12.50 M", "12.51 M", "12.51 M"]
    assert {r["env_steps"] for r in list(v1.values()) + list(v2.values())} == {12_512_000}
    text = " ".join(section().split())
    ars = [v1[s]["fresh_mean"] for s in seeds]
    for name, rows in (("With shared restarts", with_sharing), ("Without them", pvn)):
        above = [r["seed"] for r, a in zip(rows, ars) if r["fresh_mean"] >= a]
        said = f"{name}, the PVN's mean over its 5 starts is at or above ARS V1-t's on {len(above)} of the 4"
        assert f"{said} held-out seeds ({listed(above)}): {listed([r['fresh_mean'] for r in rows])} against" in text
    assert f"against {listed(ars)} on seeds 40-43" in text
    lost = [(r, a) for r, a in zip(with_sharing, ars) if r["fresh_mean"] < a]
    for r, a in lost:
        assert f"On seed {r['seed']} it ends {a - r['fresh_mean']:.1f} below V1-t" in text
    low = [v2[s]["fresh_mean"] for s in seeds]
    assert f"V2-t ends far behind on seeds 40-43 ({min(low):.1f}-{max(low):.1f})" in text and max(low) < 300
    mlp = {r["seed"]: r["fresh_mean"] for r in rows_of("swimmer-compare.jsonl")["ARS V1-t"]}
    assert f"MLP [30] ARS (`data/swimmer-compare.jsonl`) ended at {mlp[40]:.1f} and {mlp[41]:.1f} (V1-t)" in text


def test_the_unseen_seed_is_its_rows():
    """Seed 44, run only with shared restarts and linear ARS V1-t, never run before: the sentence is its rows."""
    rows = {m: [r for r in found if r["seed"] == 44] for m, found in rows_of("swimmer-ars-shared.jsonl").items()}
    (p,), (b,), (a,) = rows[SHARED], rows["best of random policies"], rows["ARS V1-t"]
    assert a["policy"] == p["policy"] == "linear" and a["env_steps"] == 12_512_000 and p["env_steps"] == 12_500_000
    text = " ".join(section().split())
    said = (f"On seed 44, run for nothing else: mean {p['fresh_mean']:.1f}, best start {p['fresh_best']:.1f}, "
            f"against ARS V1-t's {a['fresh_mean']:.1f}; the dataset's best policy {b['fresh_mean']:.1f}.")  # fmt: skip
    assert said in text


def test_shared_restarts_were_chosen_on_the_development_seed():
    dev = rows_of("swimmer-ars-dev.jsonl")
    (plain,), (shared,) = dev["PVN budget-ars"], dev[SHARED]
    assert plain["seed"] == shared["seed"] == 140
    text = " ".join(section().split())
    said = f"mean {shared['fresh_mean']:.1f}, best start {shared['fresh_best']:.1f}, against "
    assert said + f"{plain['fresh_mean']:.1f} and {plain['fresh_best']:.1f} without" in text


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
