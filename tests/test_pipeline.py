"""The CartPole and Swimmer experiments end to end (``pvnviz.runs.pipeline``): the paper's CartPole result,
the ascent's scores against gymnasium, the split, Stop at a progress report, and honest Algorithm 3 (fresh
re-measurement, env-step accounting, dataset starts, active rounds and their perturbations, the cap on the
steps beyond the dataset, early checks, beyond against paper)."""

import dataclasses
import json

import numpy as np
import pytest

from conftest import TINY_CARTPOLE, TINY_SWIMMER
from gym_reference import cartpole_episode_returns
from pvnviz.cli.main import main
from pvnviz.core.config_fields import ConfigError
from pvnviz.core.progress import Cancelled, Hooks, cancellable
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.files import load_result, save_result
from pvnviz.runs.pipeline import ExperimentConfig, collect, run_experiment, split
from pvnviz.runs.presets import PRESETS
from pvnviz.runs.store import write_manifest

TINY, SWIMMER_TINY = TINY_CARTPOLE, TINY_SWIMMER
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
def tiny_run():
    return run_experiment(TINY, seed=0)


@pytest.fixture(scope="module")
def noisy_run():
    return run_experiment(NOISY, seed=3)


@pytest.mark.slow
def test_run_structure_and_filter(tiny_run):
    r = tiny_run
    kept = r.split.kept
    assert np.all(r.dataset.mean_returns[kept] <= 30) and np.all(r.dataset.mean_returns[~kept] > 30)
    assert set(r.split.train_idx) | set(r.split.val_idx) == set(np.flatnonzero(kept))
    assert not set(r.split.train_idx) & set(r.split.val_idx)
    for mode in ("fingerprint", "flattened"):
        trace = r.traces[mode]
        assert trace.true_returns.shape == (5, 3) and list(trace.checked_steps) == [0, 10, 20, 30, 40]
        np.testing.assert_array_equal(trace.params[0], r.traces["fingerprint"].params[0])  # same starts
    s = r.summary()
    assert s["num_policies"] == 120 and s["num_kept"] == kept.sum() and s["return_limit"] == 30.0


@pytest.mark.parametrize("mode", ["fingerprint", "flattened"])
def test_ascent_scores_agree_with_gymnasium(tiny_run, mode):
    """Algorithm 3's numbers are Monte Carlo returns of the right policies in the right environment: gymnasium's
    CartPole-v1 runs the same parameters (one step at a time, its own random numbers) and agrees within sampling
    error with (a) the fresh re-measurement of each start's chosen iterate and (b) the mean score of all scored
    iterates. CartPole returns have a long right tail (one scored iterate here drew 10 episodes averaging 34 where
    its mean is 20, a 1-in-1000 draw measured over 200,000 resamples), so the checks compare means of many episodes."""
    trace = tiny_run.traces[mode]
    kept, starts, size = trace.params.shape
    episodes = 200
    arch, horizon = TINY.arch(), TINY.horizon
    chosen = cartpole_episode_returns(arch, trace.best_params, episodes, horizon, seed=1)
    error = np.sqrt(chosen.var(axis=1, ddof=1) * (1 / TINY.fresh_episodes + 1 / episodes))
    assert np.all(np.abs(trace.fresh_returns - chosen.mean(axis=1)) < 4 * error), (trace.fresh_returns, chosen.mean(1))
    scored = cartpole_episode_returns(arch, trace.params.reshape(-1, size), 40, horizon, seed=2)
    error = np.sqrt(np.sum(scored.var(axis=1, ddof=1) * (1 / TINY.eval_episodes + 1 / 40))) / scored.shape[0]
    assert abs(trace.true_returns.mean() - scored.mean()) < 4 * error, (trace.true_returns.mean(), scored.mean())


@pytest.mark.slow
def test_same_seed_same_run(tiny_run):
    again = run_experiment(TINY, seed=0)
    np.testing.assert_array_equal(again.traces["fingerprint"].true_returns, tiny_run.traces["fingerprint"].true_returns)


def test_later_stage_settings_do_not_change_the_dataset():
    a = collect(TINY, 5)
    b = collect(dataclasses.replace(TINY, train_steps=7, num_probes=3), 5)
    np.testing.assert_array_equal(a.returns, b.returns)


def test_a_limit_that_filters_out_every_policy():
    config = dataclasses.replace(TINY, return_limit=1.0)
    with pytest.raises(ValueError, match="filters out every policy.*raise the limit"):
        split(config, collect(config, 0), 0)


@pytest.mark.slow
def test_saved_run_round_trip(tmp_path, tiny_run):
    assert (
        main(
            [
                "run",
                "cartpole",
                "--preset",
                "quick",
                "--seed",
                "0",
                "--out",
                str(tmp_path),
                "--quiet",
                "--set",
                "num_policies=120",
                "--set",
                "num_episodes=10",
                "--set",
                "train_steps=200",
                "--set",
                "ascent_steps=40",
                "--set",
                "eval_every=10",
                "--set",
                "eval_episodes=10",
                "--set",
                "num_starts=3",
                "--set",
                "log_every=20",
            ]
        )
        == 0
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    for key in ("num_policies", "num_kept", "return_limit", "inputs", "timings_seconds"):
        assert key in summary
    for mode in ("fingerprint", "flattened"):
        per = summary["inputs"][mode]
        assert len(per["ascent_true_returns_per_start"]) == 3
        assert {"final_mean_return", "best_mean_return"} <= set(per)
    loaded = load_result(tmp_path, "cartpole")
    assert loaded.config == TINY
    np.testing.assert_array_equal(loaded.dataset.returns, tiny_run.dataset.returns)  # same seed, same run
    params = loaded.dataset.params[:4]
    for mode in ("fingerprint", "flattened"):
        np.testing.assert_allclose(
            loaded.trained[mode].predict(params)[1], tiny_run.trained[mode].predict(params)[1], rtol=1e-5
        )
    assert (tmp_path / "dataset.npz").exists() and (tmp_path / "pvn_fingerprint.pt").exists()


def test_a_return_limit_that_leaves_no_validation_policy_or_too_few_starts_is_named_before_training():
    config = ExperimentConfig(num_policies=20, num_episodes=2, return_limit=10.0)
    mean_returns = np.array([5.0] * 3 + [50.0] * 17)  # 3 of 20 pass the limit: 0.1 x 3 rounds to 0
    dataset = PolicyDataset("cartpole", config.arch(), np.zeros((20, config.arch().num_params), np.float32),
                            np.repeat(mean_returns[:, None], 2, axis=1), config.horizon)  # fmt: skip
    with pytest.raises(ValueError, match="only 3 of 20 policies pass the return limit 10.0.*raise return_limit"):
        split(config, dataset, 0)
    mean_returns[:10] = 5.0  # 10 pass: 1 validation, 9 training policies
    dataset = dataclasses.replace(dataset, returns=np.repeat(mean_returns[:, None], 2, axis=1))
    starts = dataclasses.replace(config, start_from="dataset", num_starts=10)
    with pytest.raises(ValueError, match="needs 10 training policies; the return limit 10.0 leaves 9"):
        split(starts, dataset, 0)


def test_tiny_swimmer_run_and_deterministic_policies():
    r = run_experiment(SWIMMER_TINY, seed=1)
    assert r.dataset.returns.shape == (40, 2)
    trace = r.traces["fingerprint"]
    assert trace.true_returns.shape == (4, 2)
    assert r.trained["fingerprint"].model.fingerprint.size == 20 * 2  # actions (2) at 20 probes
    # deterministic policies: the spread within a policy comes only from the reset noise
    assert r.dataset.returns.std(1).mean() < r.dataset.mean_returns.std()


@pytest.mark.slow
def test_cancelled_propagates_out_of_the_core_at_the_next_progress_report():
    calls = []
    state = {"stop": False}

    def inner(done, total, info):
        calls.append(info)
        state["stop"] = len(calls) >= 3  # ask to stop after the third report

    config = ExperimentConfig(num_policies=20, num_episodes=2, train_steps=2000, ascent_steps=10, eval_episodes=2)
    with pytest.raises(Cancelled):
        run_experiment(config, 0, Hooks(cancellable(lambda: state["stop"], inner)))
    assert len(calls) == 3  # nothing ran past the report after the request


@pytest.mark.slow
def test_fresh_remeasurement_is_unbiased_where_the_selection_is_not(noisy_run):
    """The best of 21 one-episode checks overstates the chosen policy; fresh episodes do not share that luck.

    The reference is gymnasium's CartPole-v1 running each start's chosen policy anew (one step at a time, its own
    random numbers): the selection estimate lies well above it, the fresh re-measurement agrees with it within
    sampling error, start by start and on average."""
    trace = noisy_run.traces["fingerprint"]
    assert trace.fresh_returns.shape == (NOISY.num_starts,)
    episodes = 200
    gym = cartpole_episode_returns(NOISY.arch(), trace.best_params, episodes, NOISY.horizon, seed=5)
    truth, spread = gym.mean(axis=1), gym.var(axis=1, ddof=1) * (1 / NOISY.fresh_episodes + 1 / episodes)
    assert (trace.best_returns - truth).mean() > 5.0  # winner's curse of the selection estimate (measured: 38)
    assert np.all(np.abs(trace.fresh_returns - truth) < 4 * np.sqrt(spread) + 0.5), (trace.fresh_returns, truth)
    # on average too (bounded as if every start's error were the same: the starts may share their episodes' starts)
    assert abs((trace.fresh_returns - truth).mean()) < 4 * np.sqrt(spread).mean()
    summary = noisy_run.summary()["inputs"]["fingerprint"]
    assert summary["fresh_mean_return"] == pytest.approx(trace.fresh_returns.mean())
    # a CartPole return is its episode's length: the checks, one episode each, cost the sum of their returns
    assert summary["check_env_steps"] == round(trace.true_returns.sum() * NOISY.eval_episodes)


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


@pytest.mark.slow
@pytest.mark.parametrize("seed", [20])
def test_beyond_beats_paper_on_cartpole_fresh_episodes(seed):
    one = ("fingerprint",)
    paper = run_experiment(dataclasses.replace(PRESETS["cartpole"]["paper"](), inputs=one), seed)
    beyond = run_experiment(dataclasses.replace(PRESETS["cartpole"]["beyond"](), inputs=one), seed)
    p, b = paper.summary(), beyond.summary()
    assert b["inputs"]["fingerprint"]["fresh_mean_return"] > p["inputs"]["fingerprint"]["fresh_mean_return"]
    assert b["inputs"]["fingerprint"]["check_env_steps"] <= 0.25 * b["dataset_env_steps"]


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
    assert summary["check_env_steps"] == round(trace.true_returns.sum() * config.eval_episodes)  # returns are lengths


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
    from pvnviz.runs.store import write_run

    save_result(result, tmp_path)
    write_run(tmp_path, "cartpole", 2, config, result.summary())
    write_manifest(tmp_path)
    loaded = load_result(tmp_path, "cartpole").traces["fingerprint"]
    assert loaded.start_counts
    np.testing.assert_array_equal(loaded.best_index, trace.best_index)


def test_random_starts_never_choose_the_untouched_start():
    trace = run_experiment(dataclasses.replace(NOISY, num_starts=3, eval_every=10), seed=2).traces["fingerprint"]
    assert not trace.start_counts and np.all(trace.best_index >= 1)


def test_round_perturbations_join_the_data_as_antithetic_pairs_and_are_counted(monkeypatch):
    """ascend_in_rounds with perturbations: each refit sees every check and every perturbation so far, at their
    measured returns, and each is counted once. The round's steps are replaced by plain stand-ins here."""
    from types import SimpleNamespace

    import pvnviz.runs.rounds as rounds
    from pvnviz.core.ascent import AscentTrace
    from pvnviz.core.histogram import ReturnBins

    def ascend_round(config, env, pvn, begin, seed, r, hooks, radius):  # two checks a round: the start and a +1 step
        params = np.stack([begin, begin + 1.0])
        return AscentTrace("fingerprint", np.array([0, 1]), params.sum(axis=2), np.zeros((2, 2)), params, 0.0)

    seen = []
    bins = ReturnBins(-20.0, 20.0, 80)  # half-unit bins: every return here has its own

    def refit(config, pvn, dataset, parts, measured, targets, seed):
        seen.append((measured.copy(), targets.copy()))

    def explore(config, env, best, seed, r):
        pairs = np.concatenate([best + 0.5, best - 0.5])
        return pairs, pairs.sum(axis=1), 7 * len(pairs)

    for name, stand_in in [("ascend_round", ascend_round), ("refit", refit), ("explore", explore)]:
        monkeypatch.setattr(rounds, name, stand_in)
    monkeypatch.setattr(rounds, "starting_policies", lambda *args: np.zeros((2, 3)))
    config = dataclasses.replace(NOISY, rounds=3, round_perturbations=2, max_beyond_fraction=0.0)
    trace = rounds.ascend_in_rounds(config, None, 0, SimpleNamespace(num_env_steps=1), SimpleNamespace(bins=bins))
    assert len(seen) == 2 and trace.explore_env_steps == 2 * 7 * 4
    x, y = seen[-1]
    # round 1 and 2 checks (4 + 4 rows) and two rounds of 4 perturbations, targets at their measured returns
    assert x.shape == (16, 3) and y.shape == (16, 80)
    np.testing.assert_array_equal(y, bins.pmf(x.sum(axis=1)[:, None]))
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


@pytest.mark.slow
def test_a_measured_round_budget_counts_each_round_at_the_steps_its_policies_took():
    """round_budget "measured": a CartPole return is its episode's length, so each round's checks cost
    (sum of its mean returns) x eval_episodes steps, and the rounds run are re-derived from the trace by hand."""
    config = dataclasses.replace(
        NOISY, rounds=40, round_train_steps=5, num_starts=2, eval_every=10, eval_episodes=2,
        max_beyond_fraction=0.2, round_budget="measured",
    )  # fmt: skip
    result = run_experiment(config, seed=4)
    checks = config.ascent_steps // config.eval_every + 1  # 5 checks a start, 10 policies a round
    per_round = result.traces["fingerprint"].true_returns.reshape(-1, checks, 2)
    steps = per_round.sum(axis=(1, 2)) * config.eval_episodes
    cap = config.max_beyond_fraction * result.dataset.num_env_steps

    def next_round(r: int) -> float:  # 10 policies at the highest steps per policy of rounds 0..r-1
        return 10 * max(steps[:r] / 10)

    rounds = len(steps)
    assert all(steps[:r].sum() + next_round(r) <= cap + 1e-6 for r in range(1, rounds))  # each round allowed
    assert rounds < config.rounds and steps.sum() + next_round(rounds) > cap  # and one more was not
    at_most = 10 * config.eval_episodes * config.horizon
    assert rounds > 1 + (cap - steps[0]) // at_most  # more rounds than counting each at its most would run
    summary = result.summary()["inputs"]["fingerprint"]
    assert summary["check_env_steps"] == round(steps.sum())


def test_early_checks_score_the_iterates_near_each_rounds_start():
    from pvnviz.core.ascent import check_steps

    assert check_steps(1000, 200, (10, 25, 50, 100)) == [0, 10, 25, 50, 100, 200, 400, 600, 800, 1000]
    assert check_steps(210, 50) == [0, 50, 100, 150, 200, 210]
    config = dataclasses.replace(
        NOISY, rounds=2, round_train_steps=5, num_starts=2, eval_every=20, eval_episodes=30, early_checks=(3, 7)
    )
    result = run_experiment(config, seed=5)
    trace = result.traces["fingerprint"]
    assert trace.checked_steps.tolist() == [0, 3, 7, 20, 40, 40, 43, 47, 60, 80]  # two rounds of 40 steps
    # each early score is a Monte Carlo return of its iterate: gymnasium runs round 1's iterates of steps 3 and 7 anew
    episodes = 100
    gym = cartpole_episode_returns(config.arch(), trace.params[1:3].reshape(4, -1), episodes, config.horizon, seed=6)
    error = np.sqrt(gym.var(axis=1, ddof=1) * (1 / config.eval_episodes + 1 / episodes))
    scored = trace.true_returns[1:3].reshape(4)
    assert np.all(np.abs(scored - gym.mean(axis=1)) < 4 * error + 0.5), (scored, gym.mean(axis=1))
    summary = result.summary()["inputs"]["fingerprint"]
    assert summary["check_env_steps"] == round(trace.true_returns.sum() * config.eval_episodes)  # returns are lengths
    for bad in ((0,), (40,), (-3,)):
        with pytest.raises(ConfigError, match="early_checks"):
            dataclasses.replace(config, early_checks=bad)
