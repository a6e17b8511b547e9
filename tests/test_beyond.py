"""Honest Algorithm 3 and the beyond presets: fresh re-measurement, env-step accounting, old runs, beyond > paper."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from pvnviz.core.ascent import evaluate_returns
from pvnviz.envs.registry import get_env
from pvnviz.runs.budget import Budget, env_steps
from pvnviz.runs.files import load_result, save_result
from pvnviz.runs.pipeline import STAGES, ExperimentConfig, _rng, run_experiment
from pvnviz.runs.presets import PRESETS

NOISY = ExperimentConfig(
    num_policies=150,
    num_episodes=10,
    train_steps=200,
    ascent_steps=40,
    eval_every=2,  # 21 noisy checks per start: their maximum is biased upwards
    eval_episodes=1,
    fresh_episodes=200,
    num_starts=20,
    log_every=50,
    inputs=("fingerprint",),
)


@pytest.fixture(scope="module")
def noisy_run():
    return run_experiment(NOISY, seed=3)


@pytest.mark.slow
def test_fresh_remeasurement_is_unbiased_where_the_selection_is_not(noisy_run):
    """The best of 21 one-episode checks overstates the chosen policy; fresh episodes do not share that luck."""
    trace = noisy_run.traces["fingerprint"]
    assert trace.fresh_returns.shape == (NOISY.num_starts,)
    bias = trace.best_returns - trace.fresh_returns
    assert bias.mean() > 5.0  # winner's curse of the selection estimate (measured about 20)
    # The fresh numbers are the chosen policies measured on the "fresh" stream, not on the ascent's.
    again = evaluate_returns(get_env("cartpole"), NOISY.arch(), trace.best_params, 200, NOISY.horizon, _rng(3, "fresh"))
    np.testing.assert_allclose(trace.fresh_returns, again)
    assert STAGES["fresh"] not in (STAGES["ascent"], STAGES["collect"])
    summary = noisy_run.summary()["inputs"]["fingerprint"]
    assert summary["fresh_mean_return"] == pytest.approx(trace.fresh_returns.mean())
    assert summary["check_env_steps"] == env_steps("cartpole", trace.true_returns, 1, NOISY.horizon)


def test_env_steps_counts_cartpole_lengths_and_swimmer_horizons():
    assert env_steps("cartpole", np.array([[10.0, 20.0], [30.0, 5.5]]), 4, 100) == 4 * 65.5
    assert env_steps("swimmer", np.zeros((3, 5)), 2, 1000) == 30_000


def test_runs_without_fresh_fields_still_load(noisy_run, tmp_path):
    from pvnviz.runs.store import write_manifest, write_run

    save_result(noisy_run, tmp_path)
    write_run(tmp_path, "cartpole", 3, NOISY, noisy_run.summary())
    curves = tmp_path / "curves_fingerprint.npz"
    with np.load(curves) as c:
        old = {k: c[k] for k in c.files if k != "fresh_returns"}
    np.savez_compressed(curves, **old)
    write_manifest(tmp_path)  # an older run, given a manifest by `python -m pvnviz manifest`
    loaded = load_result(tmp_path, "cartpole")
    trace = loaded.traces["fingerprint"]
    assert trace.fresh_returns is None and trace.params.shape[:2] == trace.true_returns.shape
    assert "fresh_mean_return" not in loaded.summary()["inputs"]["fingerprint"]


@pytest.mark.slow
def test_ensemble_run_saves_and_loads(tmp_path):
    from pvnviz.runs.store import write_run

    config = dataclasses.replace(NOISY, ensemble_size=3, pessimism=1.0, num_starts=2, fresh_episodes=5)
    result = run_experiment(config, seed=0)
    trace = result.traces["fingerprint"]
    assert trace.disagreement.shape == (config.ascent_steps + 1, 2) and (trace.disagreement >= 0).all()
    save_result(result, tmp_path)
    write_run(tmp_path, "cartpole", 0, config, result.summary())
    loaded = load_result(tmp_path, "cartpole")
    np.testing.assert_allclose(loaded.traces["fingerprint"].disagreement, trace.disagreement)
    assert loaded.ensembles["fingerprint"].val_spread == pytest.approx(result.ensembles["fingerprint"].val_spread)


def test_swimmer_paper_preset_is_appendix_b_exactly():
    c = PRESETS["swimmer"]["paper"]()
    assert (c.num_policies, c.num_episodes, c.ascent_steps, c.ascent_learning_rate) == (2000, 500, 1000, 0.002)
    assert PRESETS["swimmer"]["budget-2000x5"]().num_episodes == 5
    wide = PRESETS["swimmer"]["budget-10000x1"]()
    assert wide.num_policies * wide.num_episodes * wide.horizon == 10_000_000


@pytest.mark.slow
@pytest.mark.parametrize("seed", [20, 21])
def test_beyond_beats_paper_on_cartpole_fresh_episodes(seed):
    one = ("fingerprint",)
    paper = run_experiment(dataclasses.replace(PRESETS["cartpole"]["paper"](), inputs=one), seed)
    beyond = run_experiment(dataclasses.replace(PRESETS["cartpole"]["beyond"](), inputs=one), seed)
    p, b = paper.summary(), beyond.summary()
    assert b["inputs"]["fingerprint"]["fresh_mean_return"] > p["inputs"]["fingerprint"]["fresh_mean_return"]
    assert b["inputs"]["fingerprint"]["check_env_steps"] <= 0.25 * b["dataset_env_steps"]


@pytest.mark.slow
def test_shipped_cartpole_beyond_run_checks_round_ends_until_the_cap_and_holds_in_gymnasium():
    """data/cartpole-beyond: the current preset, 2 checks a round (its start and its end), rounds ended by the
    25% cap, and its chosen policies re-run in plain gymnasium score what the run says, 90 or more on average."""
    from gym_reference import cartpole_episode_returns
    from pvnviz.core.ascent import check_steps

    folder = Path(__file__).resolve().parents[1] / "data" / "cartpole-beyond"
    result = load_result(folder, "cartpole")
    config = result.config
    assert config == PRESETS["cartpole"]["beyond"]()
    trace = result.traces["fingerprint"]
    rounds_run = len(trace.eval_steps) // 2
    ends = [[r * config.ascent_steps, (r + 1) * config.ascent_steps] for r in range(rounds_run)]
    np.testing.assert_array_equal(trace.eval_steps, np.ravel(ends))  # steps count on across rounds
    assert 10 < rounds_run < config.rounds  # the cap, not the round count, ended the rounds
    budget = Budget(config, result.dataset.num_env_steps)
    assert budget.checks_per_round == len(check_steps(config.ascent_steps, config.eval_every, ())) == 2
    # within the cap, and one more round at its most (every check running the whole horizon) would not fit
    assert budget.spent(trace) <= budget.cap < budget.spent(trace) + config.num_starts * 2 * 20 * config.horizon
    episodes = 200
    gym = cartpole_episode_returns(config.arch(), trace.best_params, episodes, config.horizon, seed=11)
    error = np.sqrt(gym.var(axis=1, ddof=1) * (1 / config.fresh_episodes + 1 / episodes))
    assert np.all(np.abs(trace.fresh_returns - gym.mean(axis=1)) < 4 * error + 0.5), (trace.fresh_returns, gym.mean(1))
    assert gym.mean() >= 90, gym.mean(axis=1)


def test_shipped_swimmer_beyond_run_opens_with_its_fresh_numbers():
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "data" / "swimmer-beyond"
    result = load_result(folder, "swimmer")
    summary = json.loads((folder / "summary.json").read_text())["inputs"]["fingerprint"]
    assert result.config == PRESETS["swimmer"]["beyond"]()
    trace = result.traces["fingerprint"]
    np.testing.assert_allclose(trace.fresh_returns, summary["fresh_return_per_start"], atol=1e-3)
    assert summary["check_env_steps"] <= 0.25 * 10_000_000
    assert trace.params.shape[:2] == trace.true_returns.shape  # re-runnable: (E, A, P) and (E, A)


@pytest.mark.parametrize("members", [1, 2])
@pytest.mark.slow
def test_active_rounds_keep_and_count_every_check(members):
    config = dataclasses.replace(
        NOISY, rounds=3, round_train_steps=20, num_starts=2, eval_every=10, eval_episodes=3, ensemble_size=members
    )
    result = run_experiment(config, seed=1)
    trace = result.traces["fingerprint"]
    per_round = config.ascent_steps // config.eval_every + 1
    assert trace.true_returns.shape == (3 * per_round, 2) and trace.params.shape[:2] == (3 * per_round, 2)
    assert len(trace.predicted) == 3 * config.ascent_steps + 1
    # Round r starts where round r-1 chose: its first check re-measures that policy, and is counted.
    first = dataclasses.replace(config, rounds=1)
    one = run_experiment(first, seed=1).traces["fingerprint"]
    np.testing.assert_allclose(trace.params[per_round], one.best_params)
    summary = result.summary()["inputs"]["fingerprint"]
    assert summary["check_env_steps"] == env_steps("cartpole", trace.true_returns, 3, config.horizon)


@pytest.mark.slow
def test_the_shipped_budget_comparison_is_drawn_on_the_cartpole_page():
    """Seeds 10-14 of `python -m pvnviz.cli.compare`, every method at a comparable budget, on the page."""
    from conftest import figures, open_page
    from pvnviz.cli.compare import load_rows

    rows = load_rows(Path(__file__).resolve().parents[1] / "data" / "cartpole-budget.jsonl")
    methods = {r["method"] for r in rows}
    assert methods == {"PVN paper", "PVN beyond", "best of random policies", "ARS V1-t", "ARS V2-t"}
    assert sorted({r["seed"] for r in rows}) == [10, 11, 12, 13, 14] and len(rows) == 25
    pvn = max(r["env_steps"] for r in rows if r["method"].startswith("PVN"))
    assert all(r["env_steps"] <= 1.02 * pvn for r in rows)  # ARS gets the larger PVN budget, no more
    at = open_page("pages/cartpole.py")
    budget = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("CartPole: the same"))
    assert {t["name"] for t in budget["data"]} == methods
    assert sum(len(t["x"]) for t in budget["data"]) == 25


@pytest.mark.slow
def test_the_shipped_swimmer_comparison_is_drawn_on_the_swimmer_page():
    """Seeds 40-41 of `python -m pvnviz.cli.compare --env swimmer`: ARS gets the larger PVN budget, no more."""
    from conftest import figures, open_page
    from pvnviz.cli.compare import load_rows

    rows = load_rows(Path(__file__).resolve().parents[1] / "data" / "swimmer-budget.jsonl")
    methods = {r["method"] for r in rows}
    assert methods == {"PVN budget-10000x1", "PVN beyond", "best of random policies", "ARS V1-t", "ARS V2-t"}
    assert sorted({r["seed"] for r in rows}) == [40, 41] and len(rows) == 10
    for seed in (40, 41):
        mine = {r["method"]: r["env_steps"] for r in rows if r["seed"] == seed}
        pvn = max(mine["PVN budget-10000x1"], mine["PVN beyond"])
        assert pvn <= mine["ARS V1-t"] <= pvn + 16_000 and mine["best of random policies"] == 10_000_000
    at = open_page("pages/swimmer.py")
    budget = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Swimmer: the same"))
    assert {t["name"] for t in budget["data"]} == methods


def test_a_damaged_comparison_file_names_its_line(tmp_path):
    from pvnviz.cli.compare import load_rows

    path = tmp_path / "rows.jsonl"
    path.write_text('{"method": "A", "seed": 1, "env_steps": 5, "fresh_mean": 1.0}\n{"method": "B"}\n')
    with pytest.raises(ValueError, match="line 2"):
        load_rows(path)


@pytest.mark.slow
def test_dataset_starts_are_the_best_training_policies_and_stay_choosable(tmp_path):
    config = dataclasses.replace(NOISY, start_from="dataset", num_starts=3, eval_every=10, eval_episodes=5)
    result = run_experiment(config, seed=2)
    dataset, parts = result.dataset, result.split
    # the three training policies with the highest measured means, found here by a plain sort over the rows
    ranked = sorted(parts.train_idx.tolist(), key=lambda i: (-float(dataset.mean_returns[i]), i))[:3]
    trace = result.traces["fingerprint"]
    np.testing.assert_array_equal(trace.params[0], dataset.params[ranked])
    assert all(i not in parts.val_idx for i in ranked)
    # the start is a candidate answer: Algorithm 3's choice is never below the start's own check
    assert trace.start_counts and np.all(trace.best_returns >= trace.true_returns[0])
    np.testing.assert_array_equal(trace.best_returns, trace.true_returns.max(axis=0))
    from pvnviz.runs.store import write_manifest, write_run

    save_result(result, tmp_path)
    write_run(tmp_path, "cartpole", 2, config, result.summary())
    write_manifest(tmp_path)
    loaded = load_result(tmp_path, "cartpole").traces["fingerprint"]
    assert loaded.start_counts
    np.testing.assert_array_equal(loaded.best_index, trace.best_index)


def test_random_starts_never_choose_the_untouched_start():
    trace = run_experiment(dataclasses.replace(NOISY, num_starts=3, eval_every=10), seed=2).traces["fingerprint"]
    assert not trace.start_counts and np.all(trace.best_index >= 1)


def test_an_unknown_start_rule_is_refused_with_the_choices():
    from pvnviz.core.configs import ConfigError

    with pytest.raises(ConfigError, match="start_from must be one of random, dataset"):
        dataclasses.replace(NOISY, start_from="best")


def test_compare_checks_a_saved_dataset_as_the_cli_does(monkeypatch, capsys):
    from pvnviz.cli import compare
    folder = str(Path(__file__).resolve().parents[1] / "data" / "swimmer-wide")  # seed 0's dataset
    monkeypatch.setattr("sys.argv", ["compare", "--env", "swimmer", "--seed", "1", "--dataset-from", folder])
    with pytest.raises(SystemExit) as stop:
        compare.main()
    assert stop.value.code == 2 and "pass --seed 0" in capsys.readouterr().err


def test_round_perturbations_join_the_data_as_antithetic_pairs_and_are_counted(monkeypatch):
    """ascend_in_rounds with perturbations: each refit sees every check and every perturbation so far, at their
    measured returns, and each is counted once. The round's steps are replaced by plain stand-ins here."""
    from types import SimpleNamespace

    import pvnviz.runs.pipeline as pipeline
    from pvnviz.core.ascent import AscentTrace

    def ascend_round(config, env, pvn, begin, seed, r, hooks):  # two checks per round: the start and one step of +1
        params = np.stack([begin, begin + 1.0])
        return AscentTrace("fingerprint", np.array([0, 1]), params.sum(axis=2), np.zeros((2, 2)), params, 0.0)

    seen = []

    def refit(config, pvn, dataset, parts, measured, means, seed):
        seen.append((measured.copy(), means.copy()))

    def explore(config, env, best, seed, r):
        pairs = np.concatenate([best + 0.5, best - 0.5])
        return pairs, pairs.sum(axis=1), 7 * len(pairs)

    for name, stand_in in [("ascend_round", ascend_round), ("refit", refit), ("explore", explore)]:
        monkeypatch.setattr(pipeline, name, stand_in)
    monkeypatch.setattr(pipeline, "starting_policies", lambda *args: np.zeros((2, 3)))
    config = dataclasses.replace(NOISY, rounds=3, round_perturbations=2, max_beyond_fraction=0.0)
    trace = pipeline.ascend_in_rounds(config, None, 0, SimpleNamespace(num_env_steps=1), None)
    assert len(seen) == 2 and trace.explore_env_steps == 2 * 7 * 4
    x, y = seen[-1]
    # round 1 and 2 checks (4 + 4 rows) and two rounds of 4 perturbations, targets at their measured returns
    assert x.shape == (16, 3) and np.allclose(y, x.sum(axis=1))
    np.testing.assert_allclose(x[-4:-2] + x[-2:], 2 * trace.params[3])  # antithetic around round 2's start
    assert trace.best_returns.tolist() == [9.0, 9.0]  # a perturbation (10.5) is data, never chosen


@pytest.mark.slow
def test_an_experiment_counts_its_perturbations_and_keeps_them_in_the_run(tmp_path):
    from pvnviz.runs.store import write_run

    config = dataclasses.replace(
        NOISY, rounds=3, round_train_steps=20, num_starts=2, eval_every=10, eval_episodes=3, round_perturbations=2
    )
    result = run_experiment(config, seed=2)
    trace = result.traces["fingerprint"]
    # 2 rounds x 2 starts x 2 pairs x 3 episodes, each as long as CartPole lets it run (1 to 100 steps)
    assert 2 * 2 * 4 * 3 <= trace.explore_env_steps <= 2 * 2 * 4 * 3 * config.horizon
    summary = result.summary()["inputs"]["fingerprint"]
    total = summary["check_env_steps"] + summary["explore_env_steps"]
    assert summary["beyond_dataset_fraction"] == round(total / result.dataset.num_env_steps, 4)
    save_result(result, tmp_path)
    write_run(tmp_path, "cartpole", 2, config, result.summary())
    assert load_result(tmp_path).traces["fingerprint"].explore_env_steps == trace.explore_env_steps


@pytest.mark.parametrize("cap", [0.2, 0.4])
@pytest.mark.slow
def test_rounds_end_before_the_cap_on_env_steps_beyond_the_dataset(cap):
    config = dataclasses.replace(
        NOISY,
        rounds=30,
        round_train_steps=5,
        num_starts=2,
        eval_every=10,
        eval_episodes=2,
        round_perturbations=1,
        max_beyond_fraction=cap,
    )
    result = run_experiment(config, seed=4)
    summary = result.summary()["inputs"]["fingerprint"]
    rounds_run = len(result.traces["fingerprint"].true_returns) // (config.ascent_steps // config.eval_every + 1)
    assert 1 < rounds_run < 30  # the cap, not the round count, ended it
    assert summary["beyond_dataset_fraction"] <= cap
    # one more round at its most (5 checks and 2 perturbations per start, whole horizons) would have passed the cap
    most = 2 * (5 + 2) * config.eval_episodes * config.horizon
    spent = summary["check_env_steps"] + summary["explore_env_steps"]
    assert spent + most > cap * result.dataset.num_env_steps


def test_early_checks_score_the_iterates_near_each_rounds_start():
    from pvnviz.core.ascent import check_steps
    from pvnviz.core.configs import ConfigError

    assert check_steps(1000, 200, (10, 25, 50, 100)) == [0, 10, 25, 50, 100, 200, 400, 600, 800, 1000]
    assert check_steps(210, 50) == [0, 50, 100, 150, 200, 210]
    config = dataclasses.replace(
        NOISY, rounds=2, round_train_steps=5, num_starts=2, eval_every=20, eval_episodes=2, early_checks=(3, 7)
    )
    result = run_experiment(config, seed=5)
    trace = result.traces["fingerprint"]
    assert trace.eval_steps.tolist() == [0, 3, 7, 20, 40, 40, 43, 47, 60, 80]  # two rounds of 40 steps
    # each scored iterate is the one the PVN's ascent reached at that step: re-scoring it gives the same returns
    again = evaluate_returns(get_env("cartpole"), config.arch(), trace.params[:5].reshape(-1, trace.params.shape[2]),
                             2, config.horizon, np.random.default_rng([5, STAGES["ascent"]]))  # fmt: skip
    np.testing.assert_allclose(again.reshape(5, 2), trace.true_returns[:5])
    summary = result.summary()["inputs"]["fingerprint"]
    assert summary["check_env_steps"] == env_steps("cartpole", trace.true_returns, 2, config.horizon)
    for bad in ((0,), (40,), (-3,)):
        with pytest.raises(ConfigError, match="early_checks"):
            dataclasses.replace(config, early_checks=bad)
