"""docs/beyond.md's development seeds 300-319 of CartPole `beyond`: with 20 episodes a check (the preset before the
ten-episode choice), with and without ``share_best``, and the variants tried, as their seed records say (`python -m
pvnviz.runs.seed_records cartpole beyond 300-319 --inputs fingerprint --set eval_episodes=20 --set rounds=60 [--set
share_best=true]`), and one of them run again to show the records are what the command gives; with 10 episodes a
check, the preset's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pvnviz.runs.seed_records import preset_config, read_records, seed_record

ROOT = Path(__file__).resolve().parents[1]
EP20 = ("eval_episodes=20", "rounds=60")  # the preset's checks before the ten-episode choice
RECORDS = {
    EP20: ROOT / "data" / "claims" / "cartpole-beyond-pooled-300-319.jsonl",
    (*EP20, "share_best=true"): ROOT / "data" / "claims" / "cartpole-beyond-shared-300-319.jsonl",
}
SHARED = (*EP20, "share_best=true")


CLAIMS = ROOT / "data" / "claims"


def readings(name: str, overrides: list[str], seeds: range) -> tuple[dict[int, float], dict[int, float], list[float]]:
    """The records ``data/claims/name`` of ``seeds`` run with ``overrides``, each within the cap: per seed, the starts'
    fresh mean and Algorithm 3's answer (``returned_start`` of the selection estimates), and the shares spent beyond
    the dataset."""
    from pvnviz.core.ascent import returned_start

    records = read_records(CLAIMS / name)
    assert [r["seed"] for r in records] == list(seeds)
    assert all(r["preset"] == "beyond" and r.get("set") == overrides for r in records)
    numbers = {r["seed"]: r["inputs"]["fingerprint"] for r in records}
    shares = [n["beyond_dataset_fraction"] for n in numbers.values()]
    assert max(shares) <= 0.25
    means = {s: float(np.mean(n["fresh_return_per_start"])) for s, n in numbers.items()}
    answers = {s: n["fresh_return_per_start"][returned_start(n["best_return_per_start"])] for s, n in numbers.items()}
    return means, answers, shares


def reading(values: dict[int, float]) -> str:
    """Seeds' numbers as the docs sum them up: mean, lowest (its seed), how many at 90 or more of how many."""
    low = min(values, key=values.get)
    at_90 = sum(v >= 90 for v in values.values())
    return f"mean {np.mean(list(values.values())):.1f}, lowest {values[low]:.1f} (seed {low}), {at_90} of {len(values)}"


def every_seed(means: dict[int, float], answers: dict[int, float]) -> str:
    """How the docs list a set of seeds: every seed's starts' mean, then both readings summed up."""
    listed = ", ".join(f"{v:.1f}" for v in means.values())
    return f"{listed} ({reading(means)} at 90 or more; Algorithm 3's answer: {reading(answers)})"


def beyond_text(start: str, end: str) -> str:
    """docs/beyond.md, whitespace collapsed, from ``start`` to the first ``end`` after it."""
    text = " ".join((ROOT / "docs" / "beyond.md").read_text().split())
    first = text.index(start)
    return text[first : text.index(end, first + len(start))]


EP10 = ["eval_episodes=10", "rounds=100"]  # the preset's, named in its development records


def paragraph() -> str:
    text = " ".join((ROOT / "docs" / "beyond.md").read_text().split())
    start = text.index("**Shared restarts, tried and not kept.**")
    return text[start : text.index("**", text.index("**", start + 2) + 2)]


def fresh_means(overrides: tuple[str, ...]) -> dict[int, float]:
    records = read_records(RECORDS[overrides])
    assert all(r["preset"] == "beyond" and r.get("set", []) == list(overrides) for r in records)
    return {r["seed"]: float(np.mean(r["inputs"]["fingerprint"]["fresh_return_per_start"])) for r in records}


@pytest.mark.parametrize("overrides", list(RECORDS), ids=["ep20", "shared"])
def test_the_paragraph_lists_every_seed_of_its_records(overrides):
    means = fresh_means(overrides)
    assert list(means) == list(range(300, 320))
    values = list(means.values())
    listed = ", ".join(f"{v:.1f}" for v in values)
    at_90 = sum(v >= 90 for v in values)
    said = f"{listed} (mean {np.mean(values):.1f}, lowest {min(values):.1f}, {at_90} of 20 at 90 or more)"
    assert said in paragraph(), said


def test_the_paragraph_names_the_seeds_sharing_pulled_down():
    today, shared = fresh_means(EP20), fresh_means(SHARED)
    worse = [s for s in shared if shared[s] < 90 <= today[s]]
    text = paragraph()
    lifted = [s for s in shared if today[s] < 90 <= shared[s]]
    assert len(lifted) == 1
    up = lifted[0]
    pulled = " and ".join(map(str, worse))
    said = f"Sharing lifted seed {up} ({today[up]:.1f} to {shared[up]:.1f}) and pulled seeds {pulled} below 90"
    assert worse and said in text
    starts = [v for r in read_records(RECORDS[SHARED]) if r["seed"] in worse
              for v in r["inputs"]["fingerprint"]["fresh_return_per_start"]]  # fmt: skip
    assert f"every start ended between {min(starts):.1f} and {max(starts):.1f}" in text
    assert f"their means were {' and '.join(f'{today[s]:.1f}' for s in worse)}" in text
    low = min(today, key=today.get)
    assert f"leaves one development seed below 90 ({low}, {today[low]:.1f})" in text
    assert sum(v < 90 for v in today.values()) == 1


@pytest.mark.slow
def test_a_record_is_what_its_command_gives():
    """Seed 304 with shared restarts, run again: the same fresh returns, start by start, as its record."""
    from pvnviz.runs.pipeline import run_experiment

    overrides = SHARED
    then = ("fingerprint_outputs=probabilities", "pvn_activation=relu")  # the preset's when the record was made
    config = preset_config("cartpole", "beyond", ("fingerprint",), (*overrides, *then))
    again = seed_record("cartpole", "beyond", 304, run_experiment(config, seed=304), overrides)
    (shipped,) = [r for r in read_records(RECORDS[overrides]) if r["seed"] == 304]
    for name, fields in shipped["inputs"].items():  # a record may lack the optional best_return_per_start
        again["inputs"][name] = {key: again["inputs"][name][key] for key in fields}
    assert again == shipped


VARIANTS = ROOT / "data" / "claims" / "cartpole-beyond-variants-300-319.jsonl"


def test_the_variants_paragraph_is_what_their_rows_say():
    """docs/beyond.md, "Trust regions and check histograms, tried and not kept": each variant's mean, lowest seed
    and count at 90 or more over seeds 300-319, from its rows; and the 20-episode preset's, from its records."""
    import json

    text = " ".join((ROOT / "docs" / "beyond.md").read_text().split())
    start = text.index("**Trust regions and check histograms, tried and not kept**")
    paragraph = text[start : text.index("No preset uses either.", start)]
    rows = [json.loads(line) for line in VARIANTS.read_text().splitlines() if line.strip()]
    for setting in ("trust_radius=1.0", "check_histograms=true"):
        means = {r["seed"]: float(np.mean(r["fresh_return_per_start"])) for r in rows if r["set"] == [*EP20, setting]}
        assert list(means) == list(range(300, 320)), setting
        low = min(means, key=means.get)
        at_90 = sum(v >= 90 for v in means.values())
        said = f"mean {np.mean(list(means.values())):.1f}, lowest {means[low]:.1f} (seed {low}), {at_90} of 20 at 90"
        assert said in paragraph, said
    today = fresh_means(EP20)
    said = f"{np.mean(list(today.values())):.1f}, {min(today.values()):.1f} and {sum(v >= 90 for v in today.values())}"
    assert f"against {said} of 20" in paragraph


def test_a_measured_round_budget_changed_nothing_on_the_development_seeds_it_ran():
    """docs/beyond.md: ``round_budget`` measured gave CartPole `beyond` the same rounds and results on seeds 300-310
    (its records, data/claims/cartpole-beyond-measured-300-310.jsonl): every start's fresh return equal today's, and
    the same share of the dataset's steps spent (so the same rounds), within the cap."""
    measured = read_records(ROOT / "data" / "claims" / "cartpole-beyond-measured-300-310.jsonl")
    assert [r["seed"] for r in measured] == list(range(300, 311))
    assert all(r.get("set") == [*EP20, "round_budget=measured"] for r in measured)
    today = {r["seed"]: r["inputs"]["fingerprint"] for r in read_records(RECORDS[EP20])}
    for r in measured:
        mine, theirs = r["inputs"]["fingerprint"], today[r["seed"]]
        assert mine["fresh_return_per_start"] == theirs["fresh_return_per_start"], r["seed"]
        assert mine["beyond_dataset_fraction"] == theirs["beyond_dataset_fraction"] <= 0.25
    text = " ".join((ROOT / "docs" / "beyond.md").read_text().split())
    assert "it gave the same rounds and results on development seeds 300-310" in text


def test_the_ten_episode_paragraph_is_what_its_records_say():
    """docs/beyond.md, "Half the episodes a check": the development seeds 300-319 with 10 episodes a check and
    up to 100 rounds, every seed's fresh mean, both readings (the starts' mean, Algorithm 3's answer) and the share
    spent beyond the dataset, from their records."""
    means, answers, shares = readings("cartpole-beyond-ep10-300-319.jsonl", EP10, range(300, 320))
    paragraph = beyond_text("**Half the episodes a check", "**Shared restarts")
    assert every_seed(means, answers) in paragraph
    assert f"{100 * min(shares):.1f}-{100 * max(shares):.1f}% of the dataset's env steps beyond it" in paragraph
    today = fresh_means(EP20)
    assert f"The slow-climb seed 310 ends at {means[310]:.1f} ({today[310]:.1f} with 20 episodes)" in paragraph


LOG_PROBABILITIES = ("fingerprint_outputs=log_probabilities",)


def test_the_log_probability_paragraph_is_what_its_records_say():
    """docs/beyond.md, "Log-probability fingerprints, tried and not kept": the preset with
    ``fingerprint_outputs=log_probabilities`` on development seeds 300-339, every seed's fresh mean and both readings
    over 300-319, set beside the preset's own records of those seeds, and the seeds it took below 90."""
    logp, logp_answers, _ = readings("cartpole-beyond-logp-300-319.jsonl", list(LOG_PROBABILITIES), range(300, 320))
    more, more_answers, _ = readings("cartpole-beyond-logp-320-339.jsonl", list(LOG_PROBABILITIES), range(320, 340))
    preset, preset_answers, _ = readings("cartpole-beyond-ep10-300-319.jsonl", EP10, range(300, 320))
    paragraph = beyond_text("**Log-probability fingerprints, tried and not kept.**", "No preset uses it.")
    assert every_seed(logp, logp_answers) in paragraph
    assert (
        f"the preset's own: {reading(preset)} at 90 or more; Algorithm 3's answer: {reading(preset_answers)}"
        in paragraph
    )
    assert f"Seeds 320-339: {reading(more)} at 90 or more; Algorithm 3's answer: {reading(more_answers)}" in paragraph
    below = [s for s in logp if logp[s] < 90 <= preset[s]]
    said = " and ".join(f"{s} ({preset[s]:.1f} to {logp[s]:.1f})" for s in below)
    assert below and f"took seeds {said} below 90" in paragraph
    starts = [v for r in read_records(CLAIMS / "cartpole-beyond-logp-300-319.jsonl") if r["seed"] in below
              for v in r["inputs"]["fingerprint"]["fresh_return_per_start"]]  # fmt: skip
    low, high = [v for v in starts if v < 90], [v for v in starts if v >= 90]
    assert len(low) == 3 * len(below) and len(high) == 2 * len(below)
    stalled, reached = f"{min(low):.1f}-{max(low):.1f}", f"{min(high):.1f}-{max(high):.1f}"
    assert f"three starts stalled, at {stalled}, while the other two reached {reached}" in paragraph
    assert f"stayed at 90 or more on all {len(logp) + len(more)} seeds" in paragraph
    assert min([*logp_answers.values(), *more_answers.values()]) >= 90
    shared_name = "cartpole-beyond-logp-shared-300-319.jsonl"
    shared, shared_answers, _ = readings(shared_name, [*LOG_PROBABILITIES, "share_best=true"], range(300, 320))
    assert (
        f"seeds 300-319: {reading(shared)} at 90 or more; Algorithm 3's answer: {reading(shared_answers)}" in paragraph
    )
    weak = [r for r in read_records(CLAIMS / shared_name) if r["seed"] in below]
    starts = [v for r in weak for v in r["inputs"]["fingerprint"]["fresh_return_per_start"]]
    assert [shared[s] < 90 for s in below] == [True] * len(below)
    assert (
        f"On seeds {' and '.join(map(str, below))} every start then ended at {min(starts):.1f}-{max(starts):.1f}"
        in paragraph
    )


LEAKY = (*LOG_PROBABILITIES, "pvn_activation=leaky_relu")


def test_the_leaky_paragraph_is_what_its_records_say():
    """docs/beyond.md, "Log-probabilities and a leaky PVN": development seeds 300-319 with both settings, every
    seed's fresh mean and both readings, beside the preset's own and log-probabilities alone on the same seeds."""
    means, answers, shares = readings("cartpole-beyond-logp-leaky-300-319.jsonl", list(LEAKY), range(300, 320))
    paragraph = beyond_text("**Log-probabilities and a leaky PVN", "**Development seeds 300-319 on an AVX-512")
    assert every_seed(means, answers) in paragraph
    assert f"{100 * min(shares):.1f}-{100 * max(shares):.1f}% of the dataset's env steps beyond it" in paragraph
    for name in ("cartpole-beyond-ep10-300-319.jsonl", "cartpole-beyond-logp-300-319.jsonl"):
        others = {
            r["seed"]: np.mean(r["inputs"]["fingerprint"]["fresh_return_per_start"])
            for r in read_records(CLAIMS / name)
        }
        below = ", ".join(f"{s} ({others[s]:.1f} to {means[s]:.1f})" for s in sorted(others) if others[s] < 90)
        assert below in paragraph
