"""The README's and docs/results.md's numbers, re-derived by running what they name.

Each test reads the claim from the document itself (the README's results table, a section of docs/results.md),
recomputes it from the command or function the document cites, and compares the two at the precision the
document prints. A change that moves a result then fails here on the day it lands, and a document edited
without re-running fails too.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from pvnviz.polytope.experiment import PolytopeConfig, run_polytope
from pvnviz.polytope.survey import PAPER_SURVEY, POLICY_TOLERANCE, record, survey

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
RESULTS = (ROOT / "docs" / "results.md").read_text()


def readme_row(experiment: str) -> str:
    """The README results table's row whose first cell starts with ``experiment``."""
    rows = [line for line in README.splitlines() if line.startswith(f"| {experiment}")]
    assert len(rows) == 1, f"one README row for {experiment!r}, found {len(rows)}"
    return rows[0]


def results_section(heading: str) -> str:
    """The text of docs/results.md's ``## heading`` section."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", RESULTS, re.M | re.S)
    assert match, f"docs/results.md has no section {heading!r}"
    return match.group(1)


def numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", text)]


# --- Polytope (Section 6.1) --------------------------------------------------------------------------------


def test_the_polytope_claims_name_the_surveys_numbers():
    """The README row and docs/results.md quote PAPER_SURVEY's counts and default seed, word for word."""
    row, section = readme_row("Polytope"), results_section("Polytope")
    seed, n = PAPER_SURVEY.first_at_optimum, len(PAPER_SURVEY.seeds)
    first, last = PAPER_SURVEY.seeds.start, PAPER_SURVEY.seeds.stop - 1
    assert f"at seed {seed}, the app's default" in row
    assert f"over seeds {first}-{last}" in row
    assert f"optimum's J on {PAPER_SURVEY.near_optimal}, at [1, 1] on {PAPER_SURVEY.at_optimum} |" in row
    assert f"--seed {seed} " in section and f"The app opens on seed {seed}," in section
    assert f"on {PAPER_SURVEY.near_optimal} of {n} seeds" in section
    assert f"on {PAPER_SURVEY.at_optimum} of {n}" in section


def test_the_default_seed_reaches_the_optimum_both_ways():
    """`run polytope --seed 10`: both ascents end at the optimum [1, 1], J = 0.684, and the PVN's test MSE
    falls as docs/results.md says."""
    result = run_polytope(PolytopeConfig(), PAPER_SURVEY.first_at_optimum)
    summary = result.summary()
    optimum = np.array(summary["optimal_policy"])
    assert f"(J = {summary['optimal_J']:.3f})" in readme_row("Polytope")
    assert f"optimum [{optimum[0]:.0f}, {optimum[1]:.0f}]" in readme_row("Polytope")
    np.testing.assert_allclose(summary["exact_ascent_final_policy"], optimum, atol=POLICY_TOLERANCE)
    np.testing.assert_allclose(summary["learned_ascent_final_policy"], optimum, atol=POLICY_TOLERANCE)
    section = results_section("Polytope")
    said = re.search(r"test MSE falls from ([\d.]+) to ([\de.-]+)", section)
    assert said, "docs/results.md names the test MSE's fall"
    assert f"{summary['pvn_initial_test_loss']:.2f}" == said.group(1)
    assert f"{summary['pvn_final_test_loss']:.0e}".replace("e-0", "e-") == said.group(2)


@pytest.mark.slow
def test_the_paper_survey_is_what_the_seeds_give():
    """PAPER_SURVEY, quoted by the page, the README and docs/results.md, recomputed over its 100 seeds
    (about 30 s)."""
    result = survey(PolytopeConfig(), PAPER_SURVEY.seeds)
    assert record(result) == PAPER_SURVEY, (result.near_optimal, result.at_optimum)


# --- CartPole (Section 6.2, Fig. 4) --------------------------------------------------------------------------

CARTPOLE_TABLES = {"paper": 0, "paper-linear": 1}  # preset -> which seed table of the CartPole section it fills


def seed_table(section: str, index: int) -> dict[str, tuple[str, str]]:
    """The ``index``-th "| seed | fingerprint PVN | flattened-weights PVN |" table: first cell -> the two numbers as
    printed (bold and remarks dropped)."""
    header = r"^\| seed \| fingerprint PVN \| flattened-weights PVN \|\n\|[-|]+\|\n"
    tables = re.findall(header + r"((?:\|.*\n)+)", section, re.M)
    rows = {}
    for line in tables[index].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = tuple(re.search(r"[\d.]+", c.replace("**", "")).group(0) for c in cells[1:3])
    return rows


CARTPOLE_TABLE_SEEDS = list(range(5))


@pytest.fixture(scope="module")
def cartpole_best() -> dict[str, dict[int, dict[str, float]]]:
    """preset -> seed -> input -> best true return along the ascent, mean over the starts (Algorithm 3): the
    CartPole section's tables, from their seed records (`python -m pvnviz.runs.seed_records cartpole PRESET 0-4
    --out data/claims/cartpole-PRESET-0-4.jsonl`). Seed 0 of each preset is run again (about 15 s a run here)
    and must give its record, field by field."""
    from pvnviz.runs.pipeline import run_experiment
    from pvnviz.runs.seed_records import preset_config, read_records, seed_record

    best = {}
    for preset in CARTPOLE_TABLES:
        records = read_records(ROOT / "data" / "claims" / f"cartpole-{preset}-0-4.jsonl")
        assert [r["seed"] for r in records] == CARTPOLE_TABLE_SEEDS and {r["preset"] for r in records} == {preset}
        again = run_experiment(preset_config("cartpole", preset), seed=records[0]["seed"])
        assert seed_record("cartpole", preset, records[0]["seed"], again) == records[0], preset
        best[preset] = {
            r["seed"]: {name: float(np.mean(by["best_return_per_start"])) for name, by in r["inputs"].items()}
            for r in records
        }
    return best


@pytest.mark.slow
@pytest.mark.parametrize("preset", list(CARTPOLE_TABLES))
def test_the_cartpole_tables_are_what_their_runs_give(preset, cartpole_best):
    section = results_section("CartPole")
    assert f"--preset {preset} --seed S" in section
    table = seed_table(section, CARTPOLE_TABLES[preset])
    got = cartpole_best[preset]
    for seed, by_input in got.items():
        assert table[str(seed)] == (f"{by_input['fingerprint']:.1f}", f"{by_input['flattened']:.1f}"), seed
    means = [np.mean([got[s][name] for s in got]) for name in ("fingerprint", "flattened")]
    assert table["mean"] == (f"{means[0]:.1f}", f"{means[1]:.1f}")
    if preset == "paper":  # Fig. 4b: fingerprints beat the training set's limit on every seed, flattened weights do not
        from pvnviz.runs.presets import PRESETS

        limit = PRESETS["cartpole"]["paper"]().return_limit
        assert min(got[s]["fingerprint"] for s in got) > limit and means[1] < 1.5 * limit < means[0], got


@pytest.mark.slow
def test_the_readme_quotes_the_cartpole_means(cartpole_best):
    mlp = [np.mean([v[name] for v in cartpole_best["paper"].values()]) for name in ("fingerprint", "flattened")]
    lin = [np.mean([v[name] for v in cartpole_best["paper-linear"].values()]) for name in ("fingerprint", "flattened")]
    row = readme_row("CartPole, MLP")
    assert f"fingerprint {mlp[0]:.1f}, flattened weights {mlp[1]:.1f} (the training set's limit: 30)" in row
    assert "seeds 0-4" in row and mlp[0] > 2 * 30 > 30 > mlp[1] - 3  # far above the limit; flattened near it
    row = readme_row("CartPole, linear")
    assert f"about {round(float(np.mean(lin)))} (fingerprint {lin[0]:.1f}, flattened weights {lin[1]:.1f}" in row
    section = results_section("CartPole")
    assert f"**{mlp[0]:.1f}** ({mlp[0] / 30:.2f}x the limit)" in section
    assert f"at about {round(float(np.mean(lin)))} (paper: 70)" in section


# --- Random search at the same budget: the shipped comparisons ------------------------------------------------


def budget_rows(name: str) -> dict[str, list[dict]]:
    """method -> its rows in data/NAME (what `pvnviz compare` wrote), in seed order."""
    import json

    rows: dict[str, list[dict]] = {}
    for line in (ROOT / "data" / name).read_text().splitlines():
        row = json.loads(line)
        rows.setdefault(row["method"], []).append(row)
    return {method: sorted(found, key=lambda r: r["seed"]) for method, found in rows.items()}


def test_the_readme_quotes_the_shipped_random_search_comparisons():
    """The README's ARS row, recomputed from the comparisons' shipped rows (data/*-compare.jsonl): on CartPole the
    means over the seeds, on Swimmer the ranges over the seeds, rounded as printed."""
    row = readme_row("Random search")
    cartpole = budget_rows("cartpole-compare.jsonl")
    pvn = np.mean([r["fresh_mean"] for r in cartpole["PVN beyond"]])
    ars = np.mean([r["fresh_mean"] for r in cartpole["ARS V2-t"]])
    assert f"CartPole: PVN `beyond` {pvn:.1f}, ARS {ars:.1f};" in row
    assert pvn > ars
    swimmer = budget_rows("swimmer-compare.jsonl")
    ars_v1 = [r["fresh_mean"] for r in swimmer["ARS V1-t"]]
    pvn_best = [r["fresh_best"] for r in swimmer["PVN beyond"]]
    said = f"Swimmer, MLP `beyond`: ARS wins ({min(ars_v1):.0f}-{max(ars_v1):.0f} against the PVN's best start, "
    assert said + f"{min(pvn_best):.0f}-{max(pvn_best):.0f})" in row
    assert min(ars_v1) > max(pvn_best)  # "ARS wins" on every seed
    linear = budget_rows("swimmer-ars-compare.jsonl")
    shared = budget_rows("swimmer-ars-shared.jsonl")["PVN budget-ars (share_best=true)"][:4]
    seeds = [r["seed"] for r in shared]
    by_seed = {r["seed"]: r["fresh_mean"] for r in linear["ARS V1-t"]}  # linear ARS, the preset's policies
    ars_v1 = [by_seed[s] for s in seeds]

    def listed(values):
        return ", ".join(f"{v:.1f}" for v in values[:-1]) + f" and {values[-1]:.1f}"

    def above(rows):
        return sum(r["fresh_mean"] >= v for r, v in zip(rows, ars_v1))

    means = listed([r["fresh_mean"] for r in shared])
    said = f"linear `budget-ars` with shared restarts at or above ARS V1-t on {above(shared)} of {len(seeds)} seeds "
    assert said + f"({means} against {listed(ars_v1)} on seeds {seeds[0]}-{seeds[-1]})" in row
    assert [r["seed"] for r in linear["PVN budget-ars"]] == seeds
    assert f"without them on {above(linear['PVN budget-ars'])} of {len(seeds)}" in row
    for comparison in (cartpole, swimmer):  # every method of a comparison ran on the same seeds
        assert len({tuple(r["seed"] for r in rows) for rows in comparison.values()}) == 1


# --- CartPole `beyond`: held-out seeds, from their shipped seed records ----------------------------------------

CARTPOLE_BEYOND_RECORDS = ROOT / "data" / "claims" / "cartpole-beyond-300-319.jsonl"


def beyond_section(heading: str, page: str = "beyond.md") -> str:
    """The text of docs/``page``'s ``## heading`` section."""
    text = (ROOT / "docs" / page).read_text()
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"docs/{page} has no section {heading!r}"
    return match.group(1)


def cartpole_sums() -> str:
    """Where the held-out sets of CartPole `beyond` are summed up, whitespace collapsed: docs/beyond.md's section,
    then docs/held-out-20.md's "What they add up to" (the sets run with 20 episodes a check)."""
    sections = beyond_section("CartPole `beyond`"), beyond_section("What they add up to", "held-out-20.md")
    return " ".join(" ".join(sections).split())


@pytest.fixture(scope="module")
def cartpole_beyond() -> dict:
    """The held-out seeds' records (`python -m pvnviz.runs.seed_records cartpole beyond 300-319 --inputs
    fingerprint`) and their fresh means (tests/test_remeasure_script.py re-measures their chosen policies in
    plain gymnasium)."""
    from pvnviz.runs.seed_records import read_records

    records = read_records(CARTPOLE_BEYOND_RECORDS)
    fresh = {r["seed"]: np.mean(r["inputs"]["fingerprint"]["fresh_return_per_start"]) for r in records}
    return {"records": records, "fresh": fresh}


@pytest.mark.slow
def test_the_cartpole_beyond_claims_are_what_the_seed_records_say(cartpole_beyond):
    """README and docs/beyond.md: every held-out seed's fresh mean, their mean and lowest, the share of the
    dataset spent beyond it, recomputed from the records; the records are of seeds 300-319, fingerprint, as
    run by the command the doc names."""
    records, fresh = cartpole_beyond["records"], cartpole_beyond["fresh"]
    assert [r["seed"] for r in records] == list(range(300, 320))
    assert all(r["preset"] == "beyond" and list(r["inputs"]) == ["fingerprint"] for r in records)
    values = list(fresh.values())
    mean, lowest = float(np.mean(values)), min(values)
    section = beyond_section("CartPole `beyond`")
    listed = ", ".join(f"{v:.1f}" for v in values)
    assert f"{listed}: **mean {mean:.1f}, every seed at {lowest:.1f} or more**" in " ".join(section.split())
    shares = [r["inputs"]["fingerprint"]["beyond_dataset_fraction"] for r in records]
    spent = f"{100 * min(shares):.1f}-{100 * max(shares):.1f}% of the dataset's env steps beyond it"
    assert spent in " ".join(section.split())
    assert max(shares) <= 0.25


CARTPOLE_HELD_OUT_RECORDS = ROOT / "data" / "claims" / "cartpole-beyond-500-549.jsonl"


def test_the_cartpole_beyond_held_out_seeds_are_what_their_records_say():
    """docs/beyond.md: the held-out seeds 500-549 of the preset with 20 episodes a check (pooled checks),
    every seed's fresh mean and per-start returns in the table, their mean and lowest, how many at 90 or more, the
    share of the dataset spent beyond it, recomputed from the records (`python -m pvnviz.runs.seed_records cartpole
    beyond 500-549 --inputs fingerprint --set eval_episodes=20 --set rounds=60`)."""
    from pvnviz.runs.seed_records import read_records

    records = read_records(CARTPOLE_HELD_OUT_RECORDS)
    seeds = [r["seed"] for r in records]
    assert seeds == list(range(500, 500 + len(seeds))) and len(seeds) >= 20
    assert all(r["preset"] == "beyond" and list(r["inputs"]) == ["fingerprint"] and r["set"] == EP20 for r in records)
    per_start = {r["seed"]: r["inputs"]["fingerprint"]["fresh_return_per_start"] for r in records}
    fresh = {seed: float(np.mean(v)) for seed, v in per_start.items()}
    section = cartpole_sums()
    rows = held_out_section("Seeds 500-549, 20 episodes a check")
    for seed, values in per_start.items():
        assert f"| {seed} | {fresh[seed]:.1f} | {', '.join(f'{v:.1f}' for v in values)} |" in rows, seed
    mean, lowest = float(np.mean(list(fresh.values()))), min(fresh.values())
    at_90 = sum(v >= 90 for v in fresh.values())
    span = f"{seeds[0]}-{seeds[-1]}"
    low = min(fresh, key=fresh.get)
    assert f"seeds {span}: mean {mean:.1f}, lowest {lowest:.1f} (seed {low}), {at_90} of {len(seeds)}" in section
    shares = [r["inputs"]["fingerprint"]["beyond_dataset_fraction"] for r in records]
    assert f"{100 * min(shares):.1f}-{100 * max(shares):.1f}% of the dataset's env steps beyond it" in section
    assert max(shares) <= 0.25


HELD_OUT_PAGES = ("held-out.md", "held-out-20.md")  # the seeds of the settings since, and of 20 episodes a check


def held_out_section(heading: str) -> str:
    """The ``## heading`` section of the held-out pages (the one page that has it), whitespace collapsed."""
    pages = [page for page in HELD_OUT_PAGES if f"\n## {heading}\n" in (ROOT / "docs" / page).read_text()]
    assert len(pages) == 1, f"one held-out page has {heading!r}; found {pages}"
    return " ".join(beyond_section(heading, pages[0]).split())


def held_out_rows(records: list[dict], heading: str) -> tuple[dict, dict, dict]:
    """Asserts the held-out pages' ``heading`` table holds every record's row (its starts' mean, Algorithm 3's answer
    by ``returned_start``, each start's fresh return); returns, per seed, the starts' mean, the answer's fresh return
    and every start's fresh returns."""
    from pvnviz.core.ascent import returned_start

    rows = held_out_section(heading)
    means, answers, starts = {}, {}, {}
    for r in records:
        numbers = r["inputs"]["fingerprint"]
        fresh = numbers["fresh_return_per_start"]
        k = returned_start(numbers["best_return_per_start"])
        means[r["seed"]], answers[r["seed"]], starts[r["seed"]] = float(np.mean(fresh)), fresh[k], fresh
        listed = ", ".join(f"{v:.1f}" for v in fresh)
        assert f"| {r['seed']} | {np.mean(fresh):.1f} | {fresh[k]:.1f} (start {k + 1}) | {listed} |" in rows, r["seed"]
    return means, answers, starts


def reading(values: dict[int, float]) -> str:
    """Seeds' numbers as the docs sum them up: mean, lowest (its seed), how many of them at 90 or more."""
    low = min(values, key=values.get)
    at_90 = sum(v >= 90 for v in values.values())
    return f"mean {np.mean(list(values.values())):.1f}, lowest {values[low]:.1f} (seed {low}), {at_90} of {len(values)}"


def held_out_sums(records: list[dict], first: int, last: int, heading: str) -> tuple[dict, dict, dict]:
    """``held_out_rows`` of seeds ``first``-``last``, and docs/beyond.md's sums of them: both readings' mean, lowest
    and count at 90 or more, and the share spent beyond the dataset (at most the cap)."""
    assert [r["seed"] for r in records] == list(range(first, last + 1))
    means, answers, starts = held_out_rows(records, heading)
    section = cartpole_sums()
    shares = [r["inputs"]["fingerprint"]["beyond_dataset_fraction"] for r in records]
    spent = f"{100 * min(shares):.1f}-{100 * max(shares):.1f}% of the dataset's env steps beyond it"
    assert f"Over seeds {first}-{last}: {reading(means)} at 90 or more, {spent}" in section
    assert f"Algorithm 3's answer: {reading(answers)} at 90 or more" in section
    assert max(shares) <= 0.25
    return means, answers, starts


CARTPOLE_600_RECORDS = ROOT / "data" / "claims" / "cartpole-beyond-600-649.jsonl"
EP20 = ["eval_episodes=20", "rounds=60"]  # the preset's checks before the ten-episode choice


def test_the_cartpole_beyond_seeds_600_649_are_what_their_records_say():
    """docs/held-out.md's rows and docs/beyond.md's sums for seeds 600-649: each seed's starts' mean, Algorithm 3's
    answer (``returned_start`` of the selection estimates) and fresh return per start; over the seeds, both
    readings' mean, lowest and count at 90 or more; the share spent beyond the dataset."""
    from pvnviz.runs.seed_records import read_records

    records = read_records(CARTPOLE_600_RECORDS)
    assert all(r["preset"] == "beyond" and list(r["inputs"]) == ["fingerprint"] and r["set"] == EP20 for r in records)
    means, answers, answer_starts = held_out_sums(records, 600, 649, "Seeds 600-649, 20 episodes a check")
    section = cartpole_sums()
    # the two patterns of the seeds below 90: stalled starts the answer leaves behind, and a slow climb it cannot
    low = [s for s in means if means[s] < 90]
    stalled, slow = [s for s in low if answers[s] >= 90], [s for s in low if answers[s] < 90]
    assert f"On {', '.join(map(str, stalled[:-1]))} and {stalled[-1]} some starts stalled while one reached" in section
    best = [answers[s] for s in stalled]
    assert f"reached {min(best):.1f}-{max(best):.1f}, and Algorithm 3's answer is that start" in section
    ends = [v for s in slow for v in answer_starts[s]]
    said = f"On {', '.join(map(str, slow[:-1]))} and {slow[-1]} every start ended between {min(ends):.1f} and"
    assert said + f" {max(ends):.1f}, and so does the answer ({min(answers[s] for s in slow):.1f}-" in section


CARTPOLE_EP10_RECORDS = ROOT / "data" / "claims" / "cartpole-beyond-ep10-650-699.jsonl"
EP10 = ["eval_episodes=10", "rounds=100"]  # the preset's, chosen on development seeds 300-319
# The preset's fingerprints and PVN before log-probabilities and a leaky PVN were chosen (docs/beyond.md): every
# record made before that ran with these, whatever else its command named.
PROBABILITIES_RELU = ("fingerprint_outputs=probabilities", "pvn_activation=relu")


@pytest.mark.parametrize(
    "seeds, named, readme_said",
    [
        # chosen on 300-319 before these seeds were run; the command named the settings the preset then lacked
        ((650, 699), EP10, "The preset before (probability fingerprints, a ReLU PVN), held-out seeds 650-699"),
        # run after the choice with the preset as it ships (no settings named); 20 episodes a check ran them before
        ((500, 549), None, "seeds 500-549 with it"),
    ],
)
def test_the_cartpole_ten_episode_seeds_are_what_their_records_say(seeds, named, readme_said):
    """docs/held-out.md's rows, docs/beyond.md's sums and the README's row for a set of seeds run with the preset's
    10 episodes a check and up to 100 rounds: each seed's starts' mean, Algorithm 3's answer and fresh return per
    start; over the seeds, both readings' mean, lowest and count at 90 or more; the share spent beyond the
    dataset."""
    from pvnviz.runs.seed_records import preset_config, read_records

    first, last = seeds
    records = read_records(ROOT / "data" / "claims" / f"cartpole-beyond-ep10-{first}-{last}.jsonl")
    assert all(r["preset"] == "beyond" and list(r["inputs"]) == ["fingerprint"] for r in records)
    assert all(r.get("set") == named for r in records)
    then = preset_config("cartpole", "beyond", overrides=(*EP10, *PROBABILITIES_RELU))  # the preset when they ran
    assert preset_config("cartpole", "beyond", overrides=(*(named or ()), *PROBABILITIES_RELU)) == then
    means, answers, _ = held_out_sums(records, first, last, f"Seeds {first}-{last}, 10 episodes a check")
    row = readme_row("CartPole `beyond`")
    assert f"{readme_said}: the 5 starts' {reading(means)} seeds at 90 or more" in row
    assert f"Algorithm 3's answer {reading(answers)} seeds at 90 or more" in row


def test_the_ten_episode_seeds_500_549_below_90_are_what_docs_beyond_md_says():
    """The seeds of 500-549 whose starts' mean is below 90 with the preset: where the answer is below 90 too, every
    start's range and the answer (the slow climb); where it is not, the starts' range and the answer's start."""
    from pvnviz.runs.seed_records import read_records

    records = read_records(ROOT / "data" / "claims" / "cartpole-beyond-ep10-500-549.jsonl")
    means, answers, starts = held_out_rows(records, "Seeds 500-549, 10 episodes a check")
    section = " ".join(beyond_section("CartPole `beyond`").split())
    low = sorted(s for s in means if means[s] < 90)
    assert low == [513, 539]  # the seeds the paragraph names
    slow, apart = 513, 539
    assert answers[slow] < 90 <= answers[apart]
    said = f"On seed {slow} every start ended between {min(starts[slow]):.1f} and {max(starts[slow]):.1f}, and so"
    assert said + f" does the answer ({answers[slow]:.1f})" in section
    said = f"On seed {apart} ({means[apart]:.1f}) the starts ended apart, at {min(starts[apart]):.1f}-"
    assert said + f"{max(starts[apart]):.1f}, and Algorithm 3's answer is the start at {answers[apart]:.1f}" in section
    assert "one of 500-549" in section and sum(a < 90 for a in answers.values()) == 1


@pytest.mark.slow
def test_a_held_out_record_is_what_its_command_gives():
    """Seed 600 run again with 20 episodes a check and at most 60 rounds (fingerprint), probability fingerprints
    and a ReLU PVN: the same record, field by field."""
    from pvnviz.runs.pipeline import run_experiment
    from pvnviz.runs.seed_records import preset_config, read_records, seed_record

    config = preset_config("cartpole", "beyond", ("fingerprint",), (*EP20, *PROBABILITIES_RELU))
    shipped = read_records(CARTPOLE_600_RECORDS)[0]
    assert seed_record("cartpole", "beyond", 600, run_experiment(config, seed=600), tuple(EP20)) == shipped


@pytest.mark.slow
def test_a_ten_episode_record_is_what_its_command_gives():
    """Seed 650 run again with 10 episodes a check and up to 100 rounds, as its command named them, and the
    probability fingerprints and ReLU PVN the preset then had: the same record, field by field."""
    from pvnviz.runs.pipeline import run_experiment
    from pvnviz.runs.seed_records import preset_config, read_records, seed_record

    config = preset_config("cartpole", "beyond", ("fingerprint",), (*EP10, *PROBABILITIES_RELU))
    shipped = read_records(CARTPOLE_EP10_RECORDS)[0]
    assert seed_record("cartpole", "beyond", 650, run_experiment(config, seed=650), tuple(EP10)) == shipped


# --- Swimmer (Section 6.3): the shipped zero-shot runs ---------------------------------------------------------

SWIMMER_SHIPPED = {"data/swimmer-budget-10000x1": "10,000 x 1", "data/swimmer-budget-2000x5": "2,000 x 5"}


def test_the_swimmer_table_rows_of_the_shipped_runs_are_their_files():
    """docs/results.md's rows for data/swimmer-budget-10000x1 and data/swimmer-budget-2000x5: fresh return per
    start, their mean, the dataset's best policy, recomputed from each run's files;
    the spreads and the final iterates' fall too."""
    from pvnviz.runs.files import load_result

    section = " ".join(results_section("Swimmer").split())
    finals = {}
    for folder, shape in SWIMMER_SHIPPED.items():
        result = load_result(ROOT / folder, "swimmer")
        trace = result.traces["fingerprint"]
        per_start = ", ".join(f"{r:.1f}" for r in trace.fresh_returns)
        best = f"{result.dataset.mean_returns.max():.1f}"
        assert f"| `{folder}`: " in section and f"| {shape}" in section
        row = section[section.index(f"| `{folder}`: ") :].split(" | |")[0]
        assert f"| {per_start} | {trace.fresh_returns.mean():.1f} | {best}" in row, row
        finals[folder] = f"{trace.final_returns.mean():.1f}"
    paper = load_result(ROOT / "data" / "swimmer-budget-2000x5", "swimmer").dataset
    within, between = paper.returns.std(axis=1).mean(), paper.mean_returns.std()
    assert f"the spread within a policy is {within:.1f} against {between:.1f} between policies" in section
    assert f"mean true return of {finals['data/swimmer-budget-10000x1']} in `data/swimmer-budget-10000x1`" in section
    assert f"and {finals['data/swimmer-budget-2000x5']} in `data/swimmer-budget-2000x5`" in section


# --- docs/beyond.md: the presets' settings and the random-search tables ------------------------------------------


def test_beyond_md_states_the_presets_settings():
    """The settings docs/beyond.md gives for each `beyond` preset are the presets' own."""
    from pvnviz.runs.budget import StepBudget
    from pvnviz.runs.config import ExperimentConfig
    from pvnviz.runs.presets import DISCRETE_ROUNDS, PRESETS
    from pvnviz.runs.rounds import CHECK_COPIES

    text = " ".join((ROOT / "docs" / "beyond.md").read_text().split())
    cartpole, linear, swimmer = (PRESETS[e][p]() for e, p in [("cartpole", "beyond"), ("cartpole", "beyond-linear"),
                                                             ("swimmer", "beyond")])  # fmt: skip
    assert f"(at its measured mean, {CHECK_COPIES} copies)" in text
    assert f"fine-tunes the PVN {cartpole.round_train_steps} steps" in text
    assert cartpole.max_beyond_fraction == linear.max_beyond_fraction == swimmer.max_beyond_fraction == 0.25
    assert "past 25% of the dataset's" in text and "capped at 25%" in text
    said = (f"ascent Adam lr {cartpole.ascent_learning_rate}, rounds of {cartpole.ascent_steps} steps **checked only "
            f"at each round's two ends** (the round's start, re-measured, and its last iterate; "
            f"{cartpole.eval_episodes} episodes each), at most {cartpole.rounds} rounds")  # fmt: skip
    assert said in text
    assert StepBudget(cartpole).checks_per_round == 2
    assert cartpole.pool_checks and not linear.pool_checks and not swimmer.pool_checks
    assert "CartPole `beyond` chooses on **pooled checks**" in text
    assert (f"`beyond-linear`: linear policies at lr {linear.ascent_learning_rate}, checked every {linear.eval_every} "
            f"steps ({linear.eval_episodes} episodes each), at most {linear.rounds} rounds") in text  # fmt: skip
    assert linear.policy_hidden == ()
    before = DISCRETE_ROUNDS
    assert (f"before that choice {before.eval_episodes} episodes and at most {before.rounds} rounds, which the "
            "discrete actions of a `gym:` environment keep") in text  # fmt: skip
    paper = ExperimentConfig()
    assert (cartpole.fingerprint_outputs, cartpole.pvn_activation) == ("log_probabilities", "leaky_relu")
    assert (before.fingerprint_outputs, before.pvn_activation) == (paper.fingerprint_outputs, paper.pvn_activation)
    assert ("Its PVN reads **log-probability fingerprints** (`fingerprint_outputs` `log_probabilities`) through "
            "**leaky ReLUs** (`pvn_activation` `leaky_relu`") in text  # fmt: skip
    assert "the discrete actions of a `gym:` environment keep the paper's probabilities and ReLUs" in text
    changed = {"eval_episodes": before.eval_episodes, "rounds": before.rounds, "pvn_activation": before.pvn_activation}
    assert dataclasses.replace(cartpole, fingerprint_outputs=before.fingerprint_outputs, **changed) == before
    early = ", ".join(str(s) for s in swimmer.early_checks[:-1]) + f" and {swimmer.early_checks[-1]}"
    assert f"**{swimmer.rounds} active rounds** of {swimmer.ascent_steps} steps" in text
    assert f"the iterates at steps {early} of each round are checked, then every {swimmer.eval_every} steps" in text
    checks = StepBudget(swimmer).checks_per_round
    share = swimmer.rounds * checks * swimmer.num_starts * swimmer.eval_episodes * swimmer.horizon / 10_000_000
    assert f"({swimmer.eval_episodes} episodes per check, {checks} checks a round, {100 * share:.1f}% in all)" in text


def table_rows(text: str, header_start: str) -> dict[str, list[str]]:
    """The rows of the markdown table whose header line starts with ``header_start``: first cell -> the others."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_the_random_search_tables_are_the_shipped_comparisons():
    """Every cell of the two same-budget tables, from data/cartpole-compare.jsonl and data/swimmer-compare.jsonl."""
    section = beyond_section("Random search at the same budget", "random-search.md")

    def bold(cell: str) -> str:
        return cell.replace("**", "")

    cartpole = budget_rows("cartpole-compare.jsonl")
    rows = table_rows(section, "| seed | best of random (dataset) | PVN `paper` |")
    columns = ["best of random policies", "PVN paper", "PVN beyond", "ARS V1-t", "ARS V2-t"]
    for i, method in enumerate(columns):
        for r in cartpole[method]:
            cell = bold(rows[str(r["seed"])][i])
            want = f"{r['fresh_mean']:.1f}" + (f" / {r['fresh_best']:.1f}" if method == "PVN beyond" else "")
            assert cell == want, (method, r["seed"], cell, want)
        assert bold(rows["mean"][i]) == f"{np.mean([r['fresh_mean'] for r in cartpole[method]]):.1f}", method
        steps = [r["env_steps"] / 1e6 for r in cartpole[method]]
        assert rows["env steps"][i] == f"{min(steps):.2f}-{max(steps):.2f} M", method
    swimmer = budget_rows("swimmer-compare.jsonl")
    rows = table_rows(section, "| seed | best of random (dataset) | PVN `budget-10000x1`")
    columns = ["best of random policies", "PVN budget-10000x1", "PVN beyond", "ARS V1-t", "ARS V2-t"]
    for i, method in enumerate(columns):
        for r in swimmer[method]:
            pair = method.startswith("PVN")
            want = f"{r['fresh_mean']:.1f}" + (f" / {r['fresh_best']:.1f}" if pair else "")
            assert rows[str(r["seed"])][i] == want, (method, r["seed"])
        steps = sorted({r["env_steps"] / 1e6 for r in swimmer[method]})
        digits = 1 if method == "best of random policies" else 2
        assert rows["env steps"][i] == f"{steps[-1]:.{digits}f} M", method


def test_beyond_md_quotes_the_shipped_swimmer_beyond_run():
    """data/swimmer-beyond against data/swimmer-budget-10000x1 (zero-shot on the same dataset), from their files."""
    from pvnviz.runs.files import load_result

    text = " ".join(beyond_section("Swimmer `beyond`").split())
    beyond = load_result(ROOT / "data" / "swimmer-beyond", "swimmer").traces["fingerprint"].fresh_returns
    zero = load_result(ROOT / "data" / "swimmer-budget-10000x1", "swimmer").traces["fingerprint"].fresh_returns
    said = f"fresh returns per start {', '.join(f'{r:.1f}' for r in beyond)}, mean {beyond.mean():.1f}"
    assert said in text and ("every start above DDPG's 143" in text) == bool(beyond.min() > 143)
    assert f"(`data/swimmer-budget-10000x1`): {', '.join(f'{r:.1f}' for r in zero)}." in text


# --- Swimmer: held-out seeds, from their seed records ---------------------------------------------------------

SWIMMER_ZERO_SHOT_RECORDS = ROOT / "data" / "claims" / "swimmer-budget-10000x1-40-43.jsonl"
SWIMMER_BEYOND_RECORDS = ROOT / "data" / "claims" / "swimmer-beyond-54-57.jsonl"
DDPG = 143.0  # Spinning Up's DDPG on Swimmer, the paper's highest baseline


def fresh_per_start(path: Path) -> dict[int, np.ndarray]:
    from pvnviz.runs.seed_records import read_records

    return {r["seed"]: np.array(r["inputs"]["fingerprint"]["fresh_return_per_start"]) for r in read_records(path)}


def test_the_swimmer_zero_shot_claims_are_the_records_and_the_shipped_run():
    """README and docs/results.md: seeds 40-43 (records) and 0 (data/swimmer-budget-10000x1), budget-10000x1,
    zero-shot: how many of the 25 starts end above DDPG's 143, each seed's mean, its dataset's best policy."""
    from pvnviz.runs.files import load_result
    from pvnviz.runs.seed_records import read_records

    records = read_records(SWIMMER_ZERO_SHOT_RECORDS)
    assert [r["seed"] for r in records] == [40, 41, 42, 43] and {r["preset"] for r in records} == {"budget-10000x1"}
    starts = fresh_per_start(SWIMMER_ZERO_SHOT_RECORDS)
    starts[0] = load_result(ROOT / "data" / "swimmer-budget-10000x1", "swimmer").traces["fingerprint"].fresh_returns
    above = sum(int((s > DDPG).sum()) for s in starts.values())
    assert f"not reproduced zero-shot: {above} of 25 starts above 143 (seeds 0, 40-43)" in readme_row("Swimmer (")
    row = " ".join(results_section("Swimmer").split())
    means = ", ".join(f"{starts[s].mean():.1f}" for s in (40, 41, 42, 43))
    overall = np.mean([starts[s].mean() for s in (40, 41, 42, 43)])
    bests = ", ".join(f"{r['dataset_best_mean_return']:.1f}" for r in records)
    assert f"| 10,000 x 1 | means {means} | {overall:.1f} | {bests} |" in row
    assert f"over the five seeds above {above} of 25 starts end above DDPG's 143" in row


def test_the_swimmer_beyond_claims_are_the_records():
    """README and docs/beyond.md: seeds 54-57, `beyond`: each start's fresh return, how many above 143, the best
    start, the mean over the seeds."""
    from pvnviz.runs.seed_records import read_records

    records = read_records(SWIMMER_BEYOND_RECORDS)
    assert [r["seed"] for r in records] == [54, 55, 56, 57] and {r["preset"] for r in records} == {"beyond"}
    starts = fresh_per_start(SWIMMER_BEYOND_RECORDS)
    every = sum(bool((s > DDPG).all()) for s in starts.values())
    best = [s.max() for s in starts.values()]
    mean = np.mean([s.mean() for s in starts.values()])
    said = (f"every start above 143 on {every} of 4 held-out seeds (54-57), "
            f"best start {min(best):.0f}-{max(best):.0f}, mean {mean:.1f} |")  # fmt: skip
    assert said in readme_row("Swimmer `beyond`")
    text = " ".join(beyond_section("Swimmer `beyond`").split())
    for seed, s in starts.items():
        cells = f"| {seed} | {', '.join(f'{v:.1f}' for v in s)} | **{s.mean():.1f}** | {int((s > DDPG).sum())} of 5 |"
        assert f"{cells} {s.max():.1f} |" in text, seed
    shares = [r["inputs"]["fingerprint"]["beyond_dataset_fraction"] for r in records]
    assert max(shares) <= 0.25 and f"{100 * max(shares):.1f}% of the dataset's environment steps" in text


@pytest.mark.slow
def test_the_swimmer_beyond_policies_score_in_plain_gymnasium_what_the_records_say():
    """Each chosen policy of seeds 54-57 re-run on 10 new episodes of gymnasium's Swimmer-v5, one step at a time
    (about 50 s): each start agrees with its record within the two samples' error."""
    from gym_reference import swimmer_episode_returns
    from pvnviz.runs.presets import PRESETS
    from pvnviz.runs.seed_records import read_records

    arch = PRESETS["swimmer"]["beyond"]().arch()
    for r in read_records(SWIMMER_BEYOND_RECORDS):
        fingerprint = r["inputs"]["fingerprint"]
        plain = swimmer_episode_returns(arch, np.array(fingerprint["chosen_params"]), 10, seed=1000 + r["seed"])
        fresh = np.array(fingerprint["fresh_return_per_start"])
        error = np.sqrt(plain.var(axis=1, ddof=1) * (1 / fingerprint["fresh_episodes"] + 1 / 10))
        assert np.all(np.abs(plain.mean(axis=1) - fresh) < 4 * error + 1.0), (r["seed"], plain.mean(1), fresh)


LEAKY = ["fingerprint_outputs=log_probabilities", "pvn_activation=leaky_relu"]  # chosen on development seeds 300-319


@pytest.mark.parametrize(
    "seeds, named, heading, readme_said",
    [
        # chosen on development seeds 300-319 and committed before these seeds ran; the preset lacked them then
        ((700, 749), LEAKY, "log-probabilities and a leaky PVN", "held-out seeds 700-749, the same settings named in"
         " the command"),
        # run with the preset as it ships, no settings named, after the two settings became its own
        ((500, 549), None, "the preset: log-probabilities and a leaky PVN", "the preset (log-probability fingerprints,"
         " a leaky PVN), seeds 500-549"),
    ],
)  # fmt: skip
def test_the_cartpole_leaky_seeds_are_what_their_records_say(seeds, named, heading, readme_said):
    """Seeds run with log-probability fingerprints and a leaky PVN, named in the command or the preset's own:
    docs/held-out.md's rows, docs/beyond.md's sums and the README's row, both readings, and the share spent beyond
    the dataset."""
    from pvnviz.runs.seed_records import preset_config, read_records

    first, last = seeds
    records = read_records(ROOT / "data" / "claims" / f"cartpole-beyond-logp-leaky-{first}-{last}.jsonl")
    assert all(r["preset"] == "beyond" and list(r["inputs"]) == ["fingerprint"] for r in records)
    assert all(r.get("set") == named for r in records)
    assert preset_config("cartpole", "beyond", overrides=tuple(LEAKY)) == preset_config("cartpole", "beyond")
    means, answers, _ = held_out_sums(records, first, last, f"Seeds {first}-{last}, {heading}")
    row = readme_row("CartPole `beyond`")
    assert f"{readme_said}: the 5 starts' {reading(means)} seeds at 90 or more" in row
    assert f"Algorithm 3's answer {reading(answers)} seeds at 90 or more" in row


def test_the_count_over_every_seed_of_the_presets_settings_is_what_the_records_say():
    """docs/beyond.md's count over every seed run with log-probability fingerprints and a leaky PVN: seeds 500-549,
    700-749 and seed 0 (the shipped run), by both readings."""
    import json

    from pvnviz.core.ascent import returned_start
    from pvnviz.runs.seed_records import read_records

    numbers = [
        r["inputs"]["fingerprint"]
        for name in ("500-549", "700-749")
        for r in read_records(ROOT / "data" / "claims" / f"cartpole-beyond-logp-leaky-{name}.jsonl")
    ]
    shipped = json.loads((ROOT / "data" / "cartpole-beyond" / "summary.json").read_text())
    numbers.append(shipped["inputs"]["fingerprint"])
    means = [np.mean(n["fresh_return_per_start"]) for n in numbers]
    answers = [n["fresh_return_per_start"][returned_start(n["best_return_per_start"])] for n in numbers]
    text = " ".join(beyond_section("CartPole `beyond`").split())
    said = (f"500-549 and 700-749, and seed 0: {len(numbers)} seeds, {sum(m >= 90 for m in means)} at 90 or more by "
            f"the 5 starts' mean, all {len(numbers)} by Algorithm 3's answer")  # fmt: skip
    assert said in text and min(answers) >= 90
