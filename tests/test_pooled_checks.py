"""Pooled checks (``ExperimentConfig.pool_checks``, ``AscentTrace.pooled_returns``): with active rounds, Algorithm 3
chooses each start's iterate on the mean of every check of the same policy, so a policy chosen on a lucky check is
re-measured when the next round starts from it, and loses the choice if the re-measurements say it was luck."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pvnviz.core.ascent import AscentTrace, join_rounds


def trace_of(params: np.ndarray, returns: np.ndarray, pool: bool, start_counts: bool = False) -> AscentTrace:
    """A trace of checks (E, A) of iterates (E, A, P)."""
    steps = np.arange(len(returns))
    predicted = np.zeros((len(returns), returns.shape[1]))
    return AscentTrace(
        "fingerprint", steps, returns, predicted, params, 0.0, start_counts=start_counts, pool_checks=pool
    )


def test_pooled_returns_average_the_checks_of_the_same_policy_of_the_same_start():
    p = np.array([[[0.0, 0.0]], [[1.0, 0.0]], [[2.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]]])  # (5, 1, 2)
    p = np.concatenate([p, p[::-1] * 0 + np.array([1.0, 0.0])], axis=1)  # start 1: the same policy all along
    returns = np.array([[10.0, 1.0], [90.0, 2.0], [70.0, 3.0], [60.0, 4.0], [30.0, 5.0]])
    pooled = trace_of(p, returns, pool=True).pooled_returns
    np.testing.assert_allclose(pooled[:, 0], [10.0, 60.0, 70.0, 60.0, 60.0])  # (90 + 60 + 30) / 3
    np.testing.assert_allclose(pooled[:, 1], [3.0] * 5)  # never pooled across starts: start 0's policy is here too


def test_a_lucky_check_re_measured_loses_the_choice_only_when_pooled():
    """Iterate 1 checked at 100 once, then re-measured at 55 and 60 (two rounds restarted from it); iterate 3
    checked at 85. Alone, the luckiest check wins; pooled (71.7 against 85), the steadier iterate does."""
    p = np.array([0.0, 1.0, 1.0, 3.0, 1.0])[:, None, None] * np.ones((1, 1, 4))
    returns = np.array([[20.0], [100.0], [55.0], [85.0], [60.0]])
    raw, pooled = trace_of(p, returns, pool=False), trace_of(p, returns, pool=True)
    assert raw.best_index.tolist() == [1] and raw.best_returns.tolist() == [100.0]
    assert pooled.best_index.tolist() == [3] and pooled.best_returns.tolist() == [85.0]
    np.testing.assert_array_equal(pooled.best_params, p[3])


def test_the_untouched_random_start_stays_unchosen_and_a_dataset_start_stays_choosable_when_pooled():
    p = np.array([0.0, 1.0, 1.0])[:, None, None] * np.ones((1, 1, 3))  # the start, then one iterate twice
    returns = np.array([[99.0], [50.0], [60.0]])
    assert trace_of(p, returns, pool=True).best_index.tolist() == [1]  # pooled 55, the start not a candidate
    assert trace_of(p, returns, pool=True, start_counts=True).best_index.tolist() == [0]
    p = np.array([0.0, 1.0, 0.0])[:, None, None] * np.ones((1, 1, 3))  # a dataset start chosen, re-measured
    returns = np.array([[80.0], [50.0], [70.0]])
    pooled = trace_of(p, returns, pool=True, start_counts=True)
    assert pooled.best_index.tolist() == [0] and pooled.best_returns.tolist() == [75.0]


def test_join_rounds_keeps_pooling():
    p = np.zeros((2, 1, 3))
    one = trace_of(p, np.array([[1.0], [2.0]]), pool=True)
    assert join_rounds([one, one]).pool_checks


def test_pooled_choice_is_less_biased_and_better_than_the_luckiest_check_monte_carlo():
    """Rounds as the pipeline runs them, with checks as Monte Carlo means of Bernoulli(0.01 * J) x 100 episodes
    of 20: each round re-measures the start (the iterate chosen so far) and checks one new iterate of random true
    return. Over 400 runs of 30 rounds, the pooled choice's true return is higher than the luckiest check's,
    and its selection estimate overstates it less."""
    rng = np.random.default_rng(0)
    chosen_true, bias = {False: [], True: []}, {False: [], True: []}
    for _ in range(400):
        for pool in (False, True):
            run = np.random.default_rng(rng.integers(2**32))
            truth = [run.uniform(50, 95)]
            params, returns = [np.array([[0.0]])], [[run.binomial(20, truth[0] / 100) * 5.0]]
            for _ in range(1, 30):
                so_far = trace_of(np.stack(params), np.array(returns), pool=pool)
                best = int(so_far.best_params[0, 0])  # which policy: its index in truth
                truth.append(run.uniform(50, 95))
                for index, value in ((best, truth[best]), (len(truth) - 1, truth[-1])):
                    params.append(np.array([[float(index)]]))
                    returns.append([run.binomial(20, value / 100) * 5.0])
            final = trace_of(np.stack(params), np.array(returns), pool=pool)
            picked = int(final.params[final.best_index[0], 0, 0])
            chosen_true[pool].append(truth[picked])
            bias[pool].append(final.best_returns[0] - truth[picked])
    assert np.mean(chosen_true[True]) > np.mean(chosen_true[False]) + 1.0
    assert np.mean(bias[True]) < np.mean(bias[False]) - 2.0


def test_the_rounds_restart_from_the_pooled_choice(monkeypatch):
    """ascend_in_rounds with stand-in rounds: round 0 checks iterate A at 100 (luck), round 1 starts from A and
    re-measures it at 40, and checks B at 80; round 2 starts from B when pooled (A: 70), from A when not."""
    from types import SimpleNamespace

    import pvnviz.runs.rounds as rounds
    from conftest import TINY_CARTPOLE
    from pvnviz.core.histogram import ReturnBins

    BINS = ReturnBins(0.0, 100.0, 10)

    def run(pool: bool) -> list[float]:
        begins, measured = [], iter([[0.0, 100.0], [40.0, 80.0], [50.0, 50.0]])

        def ascend_round(config, env, pvn, begin, seed, r, hooks, radius):
            begins.append(float(begin[0, 0]))
            params = np.stack([begin, np.full_like(begin, 10.0 * (r + 1))])  # round r's end: 10 (r + 1)
            trace = trace_of(params, np.array(next(measured))[:, None], pool=config.pool_checks)
            return trace

        monkeypatch.setattr(rounds, "ascend_round", ascend_round)
        monkeypatch.setattr(rounds, "refit", lambda *args: None)
        monkeypatch.setattr(rounds, "get_env", lambda name: None)
        monkeypatch.setattr(rounds, "starting_policies", lambda *args: np.zeros((1, 2)))
        config = dataclasses.replace(TINY_CARTPOLE, rounds=3, max_beyond_fraction=0.0, pool_checks=pool)
        rounds.ascend_in_rounds(config, None, 0, SimpleNamespace(num_env_steps=1), SimpleNamespace(bins=BINS))
        return begins

    assert run(pool=True) == [0.0, 10.0, 20.0]
    assert run(pool=False) == [0.0, 10.0, 10.0]


@pytest.mark.slow
def test_a_saved_run_keeps_its_pooled_choice(tmp_path):
    from conftest import TINY_CARTPOLE
    from pvnviz.runs.files import load_result, save_result
    from pvnviz.runs.pipeline import run_experiment
    from pvnviz.runs.store import write_manifest, write_run

    config = dataclasses.replace(
        TINY_CARTPOLE, inputs=("fingerprint",), rounds=4, round_train_steps=10, eval_every=5, pool_checks=True
    )
    result = run_experiment(config, seed=3)
    trace = result.traces["fingerprint"]
    assert trace.pool_checks
    np.testing.assert_array_equal(trace.best_returns, trace.pooled_returns[trace.best_index, np.arange(3)])
    save_result(result, tmp_path)
    write_run(tmp_path, "cartpole", 3, config, result.summary())
    write_manifest(tmp_path)
    loaded = load_result(tmp_path, "cartpole").traces["fingerprint"]
    assert loaded.pool_checks
    np.testing.assert_array_equal(loaded.best_index, trace.best_index)
