"""Active rounds on the polytope (pvnviz.polytope.rounds, .monte_carlo) against independent references.

The exact check against value iteration, the sampled check against the exact values (Monte Carlo, within
four standard errors), the checks spent against the budget rule, each fine-tune's data against the checks
made before it, and two runs of one seed against each other.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from pvnviz.core.config_fields import ConfigError
from pvnviz.polytope import mdp as mdp_lib
from pvnviz.polytope import rounds as rounds_lib
from pvnviz.polytope.experiment import PolytopeConfig, learned_view, train_polytope_pvn
from pvnviz.polytope.monte_carlo import TRUNCATION_TOLERANCE, monte_carlo_horizon, sampled_values
from pvnviz.polytope.rounds import (
    PolytopeRoundsConfig,
    active_rounds,
    check_values,
    config_from_dict,
    rounds_from_dict,
    rounds_to_dict,
)
from pvnviz.polytope.survey import beyond_survey, read_beyond_records

# A fast config for the tests of mechanics: a small PVN training; the rounds' logic is the same.
FAST = PolytopeRoundsConfig(train_steps=400, round_train_steps=50, grid_size=5)


def value_iteration(mdp: mdp_lib.TabularMDP, x: np.ndarray, sweeps: int = 400) -> np.ndarray:
    """V[k, s] by iterating V <- r_pi + gamma P_pi V from 0, one policy and one state at a time (loops only)."""
    out = np.zeros((len(x), mdp.num_states))
    for k, (p1, p2) in enumerate(x):
        pi = [[p1, 1 - p1], [p2, 1 - p2]]
        V = [0.0, 0.0]
        for _ in range(sweeps):
            V = [
                sum(
                    pi[s][a] * (mdp.rewards[s, a] + mdp.gamma * sum(mdp.transitions[s, a, t] * V[t] for t in range(2)))
                    for a in range(2)
                )
                for s in range(2)
            ]
        out[k] = V
    return out


def test_the_exact_check_is_value_iteration():
    mdp = PolytopeConfig().mdp()
    x = np.random.default_rng(0).uniform(size=(12, 2))
    x[:4] = [[0, 0], [0, 1], [1, 0], [1, 1]]  # the corners too
    measured = check_values(FAST, mdp, x, np.random.default_rng(1))
    np.testing.assert_allclose(measured, value_iteration(mdp, x), atol=1e-10)


def test_the_horizon_truncates_below_the_tolerance():
    mdp = PolytopeConfig().mdp()
    H = monte_carlo_horizon(mdp)
    left = lambda h: mdp.gamma**h * np.max(np.abs(mdp.rewards)) / (1 - mdp.gamma)  # noqa: E731
    assert left(H) <= TRUNCATION_TOLERANCE < left(H - 1)


def test_sampled_returns_have_the_exact_mean():
    """20,000 independent episodes from each state of one policy: their mean is the exact V within 4 standard
    errors (measured from the same episodes), and their spread is not zero (the check is noisy)."""
    mdp = PolytopeConfig().mdp()
    x = np.array([[0.3, 0.8]])
    n = 20_000
    returns = sampled_values(mdp, np.repeat(x, n, axis=0), 1, np.random.default_rng(3))  # (n, 2): one episode each
    exact = mdp_lib.values(mdp, mdp_lib.policy_matrix(x))[0]
    standard_error = returns.std(axis=0) / np.sqrt(n)
    assert np.all(returns.std(axis=0) > 0.05)
    assert np.all(np.abs(returns.mean(axis=0) - exact) <= 4 * standard_error + TRUNCATION_TOLERANCE)


def test_the_sampled_check_converges_to_the_exact_values():
    """The error of a check shrinks as its episodes grow: 4 standard errors of one episode's spread (at most
    the returns' range) over sqrt(episodes)."""
    mdp = PolytopeConfig().mdp()
    x = np.random.default_rng(5).uniform(size=(6, 2))
    exact = mdp_lib.values(mdp, mdp_lib.policy_matrix(x))
    errors = []
    for episodes in (10, 10_000):
        measured = sampled_values(mdp, x, episodes, np.random.default_rng(episodes))
        errors.append(np.max(np.abs(measured - exact)))
        assert errors[-1] <= 4 * 1.0 / np.sqrt(episodes)  # one episode's std is below 1.0 on this MDP
    assert errors[1] < errors[0] / 5


def test_the_sampled_check_runs_large_batches_block_by_block(monkeypatch):
    """Policies past the block size run in several blocks: every policy still gets its own exact mean."""
    from pvnviz.polytope import monte_carlo

    monkeypatch.setattr(monte_carlo, "BLOCK_EPISODES", 64)
    mdp = PolytopeConfig().mdp()
    x = np.random.default_rng(6).uniform(size=(5, 2))
    measured = sampled_values(mdp, x, 5000, np.random.default_rng(7))
    exact = mdp_lib.values(mdp, mdp_lib.policy_matrix(x))
    assert measured.shape == (5, 2) and np.max(np.abs(measured - exact)) <= 4 * 1.0 / np.sqrt(5000)
    assert sampled_values(mdp, x[:0], 10, np.random.default_rng(7)).shape == (0, 2)


def test_the_checks_spent_follow_the_budget_rule():
    """Round 0 checks its iterates; every later round 2 * round_perturbations more; rounds go on while the next
    keeps the total within max_checks, and stop when it would not."""
    cases = [
        {},
        {"max_checks": 7},
        {"check_every": 50, "max_checks": 11},
        {"round_perturbations": 0, "max_checks": 5},
        {"check_every": 30, "round_perturbations": 2, "max_checks": 30},
    ]
    for changes in cases:
        config = dataclasses.replace(FAST, **changes)
        per_round = len(range(config.check_every, config.ascent_steps + 1, config.check_every))
        per_round += config.ascent_steps % config.check_every != 0  # the last step, when not a multiple
        later = per_round + 2 * config.round_perturbations
        result = active_rounds(config, train_polytope_pvn(config, 0), 0)
        spent = [len(r.perturbed.J) + len(r.checked.J) for r in result.rounds]
        assert spent[0] == per_round and all(s == later for s in spent[1:]), (changes, spent)
        assert result.checks_spent == sum(spent) == len(result.all_checks().J) <= config.max_checks
        assert result.checks_spent + later > config.max_checks, changes
        assert [r.checks_spent for r in result.rounds] == list(np.cumsum(spent))


def test_a_fine_tune_adds_exactly_the_checks_so_far(monkeypatch):
    """Each fine-tune trains on the training policies and check_copies copies of every check made before it
    (earlier rounds' iterates and perturbations, and this round's perturbations) at their measured values."""
    seen = []
    real = rounds_lib.train_rmsprop

    def spy(net, x, y, batches, lr, *args, **kwargs):
        seen.append((x.copy(), y.copy()))
        return real(net, x, y, batches, lr, *args, **kwargs)

    monkeypatch.setattr(rounds_lib, "train_rmsprop", spy)
    config = dataclasses.replace(FAST, check_episodes=20)  # sampled: measured values differ from the exact ones
    trained = train_polytope_pvn(config, 1)
    result = active_rounds(config, trained, 1)
    assert len(seen) == len(result.rounds) - 1 >= 2
    for r, (x, y) in enumerate(seen, start=1):
        before = [c for q in result.rounds[:r] for c in (q.perturbed, q.checked)] + [result.rounds[r].perturbed]
        policies = np.concatenate([c.policies for c in before])
        values = np.concatenate([c.values for c in before])
        copies = config.check_copies
        np.testing.assert_array_equal(x, np.concatenate([trained.train_policies, *[policies] * copies]))
        np.testing.assert_array_equal(y, np.concatenate([trained.train_values, *[values] * copies]))
        exact = mdp_lib.values(config.mdp(), mdp_lib.policy_matrix(policies))
        assert not np.allclose(values, exact)  # the measured values, noise and all, not the exact ones


def test_round_zero_is_the_zero_shot_ascent_and_later_rounds_start_from_the_best_check():
    config = FAST
    trained = train_polytope_pvn(config, 2)
    result = active_rounds(config, trained, 2)
    zero_shot = learned_view(config, trained)
    np.testing.assert_array_equal(result.rounds[0].ascent.policies, zero_shot.ascent.policies)
    np.testing.assert_array_equal(result.rounds[0].field, zero_shot.field)
    for r in range(1, len(result.rounds)):
        so_far = [c for q in result.rounds[:r] for c in (q.perturbed, q.checked)] + [result.rounds[r].perturbed]
        J = np.concatenate([c.J for c in so_far])
        best = np.concatenate([c.policies for c in so_far])[np.argmax(J)]
        np.testing.assert_array_equal(result.rounds[r].ascent.policies[0], best)
    checks = result.all_checks()
    assert result.best_checked_J == checks.J.max()
    np.testing.assert_allclose(checks.exact_J, checks.J)  # exact checks measure the exact J
    trained_again = train_polytope_pvn(config, 2)
    np.testing.assert_array_equal(trained.net.W1, trained_again.net.W1)  # the rounds tuned a copy


def test_a_seed_gives_the_same_rounds_every_time():
    config = dataclasses.replace(FAST, check_episodes=5)
    first, second = (rounds_to_dict(active_rounds(config, train_polytope_pvn(config, 3), 3)) for _ in range(2))
    first.pop("seconds"), second.pop("seconds")
    assert first == second
    other = rounds_to_dict(active_rounds(config, train_polytope_pvn(config, 4), 4))
    assert other["rounds"][-1]["checked"] != first["rounds"][-1]["checked"]


def test_the_rounds_record_holds_what_a_page_animates():
    config = FAST
    result = active_rounds(config, train_polytope_pvn(config, 0), 0)
    saved = json.loads(json.dumps(rounds_to_dict(result), allow_nan=False))
    assert len(saved["rounds"]) == len(result.rounds) == config.num_rounds()
    for r in saved["rounds"]:
        assert np.shape(r["field"]) == (config.grid_size, config.grid_size, 2)
        assert np.shape(r["ascent"]["policies"]) == (config.ascent_steps + 1, 2)
        assert len(r["checked"]["J"]) == len(r["checked_steps"])
    fields = [np.array(r["field"]) for r in saved["rounds"]]
    assert not np.allclose(fields[0], fields[-1])  # the fine-tunes moved the learned field
    assert rounds_to_dict(rounds_from_dict(saved)) == saved  # a saved run's rounds open as they were


@pytest.mark.parametrize(
    "changes",
    [
        {"max_checks": 0},
        {"check_every": 0},
        {"check_episodes": -1},
        {"round_train_steps": 0},
        {"perturbation_std": 0.0},
        {"ascent_steps": 0},
        {"check_every": 1, "max_checks": 20},  # one round would check 100 iterates
    ],
)
def test_bad_settings_are_refused(changes):
    with pytest.raises(ConfigError):
        PolytopeRoundsConfig(**changes)


def test_a_saved_config_opens_as_its_own_kind():
    assert type(config_from_dict({"max_checks": 9})) is PolytopeRoundsConfig
    assert type(config_from_dict({"train_steps": 9})) is PolytopeConfig


# --- The CLI: `pvnviz run polytope --preset beyond` ---------------------------------------------------------


def test_the_cli_writes_the_rounds_into_the_run(tmp_path, capsys):
    from pvnviz.cli.main import main
    from pvnviz.runs.store import read_run

    out = tmp_path / "run"
    fast = ["--set", "train_steps=300", "--set", "round_train_steps=30", "--quiet"]
    argv = ["run", "polytope", "--preset", "beyond", "--checks", "7", "--episodes", "4", "--out", str(out), *fast]
    assert main(argv) == 0
    headline = capsys.readouterr().out
    assert "active rounds:" in headline and "checks of 4 episodes per state" in headline
    info = read_run(out, "polytope")
    assert info.config["max_checks"] == 7 and info.config["check_episodes"] == 4
    saved = json.loads((out / rounds_lib.ROUNDS_FILE).read_text())
    assert info.summary["beyond_checks"] == saved["rounds"][-1]["checks_spent"] == 7  # 1 + 3 + 3
    assert info.summary["beyond_episodes"] == 7 * 4 * 2
    every_J = [j for r in saved["rounds"] for part in ("perturbed", "checked") for j in r[part]["J"]]
    assert info.summary["beyond_best_checked_J"] == max(every_J)
    assert main(["manifest", str(out)]) == 0
    (out / "manifest.json").unlink()  # an older run's folder, whose rounds.json does not open
    (out / rounds_lib.ROUNDS_FILE).write_text('{"rounds": [{"index": 0}]}')
    assert main(["manifest", str(out)]) == 2
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--checks", "3"], "--preset beyond"),  # the paper's preset has no rounds
        (["--preset", "beyond", "--checks", "0"], "--checks"),
        (["--preset", "beyond", "--episodes", "-2"], "--episodes"),
        (["--preset", "beyond", "--episodes", "2000000"], "check_episodes"),
        (["--preset", "beyond", "--set", "check_every=1"], "check_every"),
        (["--preset", "beyond", "--set", "perturbation_std=-1"], "perturbation_std"),
    ],
)
def test_bad_round_settings_are_one_line_and_exit_2(tmp_path, args, message, capsys):
    from pvnviz.cli.main import main

    try:
        status = main(["run", "polytope", "--out", str(tmp_path / "r"), "--quiet", *args])
    except SystemExit as exit:  # argparse's own refusals
        status = exit.code
    assert status == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err
    assert not (tmp_path / "r").exists()


# --- docs/results.md's table of the active rounds, re-derived (as tests/test_claims.py does) ---------------

RESULTS = (Path(__file__).resolve().parents[1] / "docs" / "results.md").read_text()
SECTION = "Polytope beyond zero-shot"


def claimed_rows() -> list[tuple[int, range, tuple[int, ...]]]:
    """(check_episodes, seeds, (zero-shot near-optimal, near-optimal, at [1, 1], checks per seed)) of each row
    of the section's table: ``| exact | 0-23 | 8 of 24 | 23 of 24 | 22 of 24 | 19 |``."""
    match = re.search(rf"^## {SECTION}\n(.*?)(?=^## |\Z)", RESULTS, re.M | re.S)
    rows = []
    for line in match.group(1).splitlines() if match else []:  # no section: no rows, and the next test fails
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != 6 or not re.fullmatch(r"\d+-\d+", cells[1]):
            continue
        episodes = 0 if cells[0] == "exact" else int(cells[0].split()[0])
        first, last = map(int, cells[1].split("-"))
        counts = tuple(int(c.split()[0]) for c in cells[2:])
        assert all(c.endswith(f"of {last - first + 1}") for c in cells[2:5]), line
        rows.append((episodes, range(first, last + 1), counts))
    return rows


def derived(episodes: int, seeds: range) -> tuple[int, ...]:
    result = beyond_survey(PolytopeRoundsConfig(check_episodes=episodes), seeds)
    spent = {end.checks_spent for end in result.ends}
    assert len(spent) == 1  # the budget rule spends the same on every seed
    if episodes == 0 or episodes >= 100:  # the section: these rounds never end below a near-optimal zero-shot end
        assert not [end.seed for end in result.ends if end.zero_shot_near_optimal and not end.near_optimal]
    zero_shot = sum(end.zero_shot_near_optimal for end in result.ends)
    return (zero_shot, len(result.near_optimal), len(result.at_optimum), spent.pop())


def test_the_table_has_the_rows_it_needs():
    keys = {(e, s.start, s.stop) for e, s, _ in claimed_rows()}
    assert {(0, 0, 24), (0, 100, 200)} <= keys


def test_the_exact_rounds_on_seeds_0_23_are_what_the_table_says():
    (row,) = [r for r in claimed_rows() if r[0] == 0 and r[1] == range(24)]
    assert derived(0, range(24)) == row[2]


ROOT = Path(__file__).resolve().parents[1]
RECORDED = range(100, 200)  # rows over these seeds come from the shipped records (scripts/polytope_rounds_records.py)


def records(episodes: int, changes: dict | None = None):
    """The shipped per-seed records of a row over ``RECORDED``: (their settings, their ends)."""
    name = "std0.1" if changes else "exact" if episodes == 0 else f"{episodes}-episodes"
    return read_beyond_records(ROOT / "data" / "claims" / f"polytope-rounds-{name}-100-199.jsonl")


def counts(ends, episodes: int) -> tuple[int, ...]:
    """A row's counts from its seeds' ends (as ``derived``)."""
    spent = {end.checks_spent for end in ends}
    assert len(spent) == 1  # the budget rule spends the same on every seed
    if episodes == 0 or episodes >= 100:  # the section: these rounds never end below a near-optimal zero-shot end
        assert not [end.seed for end in ends if end.zero_shot_near_optimal and not end.near_optimal]
    near, at = sum(end.near_optimal for end in ends), sum(end.at_optimum for end in ends)
    return (sum(end.zero_shot_near_optimal for end in ends), near, at, spent.pop())


def assert_a_sample_reruns(config: PolytopeRoundsConfig, ends) -> None:
    """Every 20th seed of the records run again: the same end, field by field (the exact J to 1e-9)."""
    sample = [end for end in ends if end.seed % 20 == 7]
    again = beyond_survey(config, [end.seed for end in sample]).ends
    for recorded, now in zip(sample, again, strict=True):
        assert dataclasses.replace(now, exact_J=0.0, policy=(0, 0)) == dataclasses.replace(
            recorded, exact_J=0.0, policy=(0, 0)
        )
        assert now.exact_J == pytest.approx(recorded.exact_J, rel=1e-9)
        assert now.policy == pytest.approx(recorded.policy, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize(
    "row",
    [r for r in claimed_rows() if not (r[0] == 0 and r[1] == range(24))],
    ids=lambda r: f"episodes{r[0]}-seeds{r[1].start}-{r[1].stop - 1}",
)
def test_every_other_row_of_the_table_is_what_the_seeds_give(row):
    """Seeds 0-23: run whole. Seeds 100-199 (about a minute a row): the shipped records, whole, and a sample of
    their seeds run again."""
    episodes, seeds, claimed = row
    if seeds != RECORDED:
        assert derived(episodes, seeds) == claimed
        return
    config, ends = records(episodes)
    assert config == PolytopeRoundsConfig(check_episodes=episodes)
    assert [end.seed for end in ends] == list(RECORDED)
    assert counts(ends, episodes) == claimed
    assert_a_sample_reruns(config, ends)


VARIANTS = [  # (the section's words, the settings, the seeds, near-optimal count)
    ("(no perturbations, 20 rounds of 1 check) 20 of 24", {"round_perturbations": 0}, range(24), 20),
    ("perturbations of std 0.1, 22 of 24", {"perturbation_std": 0.1}, range(24), 22),
    ("(and 96 of seeds 100-199)", {"perturbation_std": 0.1}, range(100, 200), 96),
]


@pytest.mark.slow
@pytest.mark.parametrize("words, changes, seeds, near", VARIANTS, ids=["bare-0-23", "std0.1-0-23", "std0.1-100-199"])
def test_the_variants_the_section_names_are_what_the_seeds_give(words, changes, seeds, near):
    section = re.search(rf"^## {SECTION}\n(.*?)(?=^## |\Z)", RESULTS, re.M | re.S).group(1)
    assert words in " ".join(section.split())
    config = PolytopeRoundsConfig(**changes)
    if changes.get("round_perturbations") == 0:
        assert config.num_rounds() == 20 and config.checks_of_round(1) == 1
    if seeds != RECORDED:
        assert len(beyond_survey(config, seeds).near_optimal) == near
        return
    recorded, ends = records(0, changes)
    assert recorded == config and [end.seed for end in ends] == list(RECORDED)
    assert sum(end.near_optimal for end in ends) == near
    assert_a_sample_reruns(config, ends)
