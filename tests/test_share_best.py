"""Shared restarts (``ExperimentConfig.share_best``, ``pvnviz.runs.rounds.restarts``): between two active rounds
the start whose best iterate is estimated lowest restarts from the best iterate of the start estimated highest;
every other start goes on from its own best."""

from __future__ import annotations

import numpy as np

from pvnviz.core.ascent import AscentTrace
from pvnviz.runs.rounds import restarts


def trace_of(params: np.ndarray, returns: np.ndarray, pool: bool = True) -> AscentTrace:
    """A trace of checks (E, A) of iterates (E, A, P), chosen on pooled checks."""
    predicted = np.zeros((len(returns), returns.shape[1]))
    return AscentTrace("fingerprint", np.arange(len(returns)), returns, predicted, params, 0.0, pool_checks=pool)


def three_starts() -> AscentTrace:
    """Start 0 stalled (its best 50), start 1 the highest (its best 95, at iterate 2), start 2 between (80).
    Row 0 is the random starts, never chosen."""
    params = np.arange(3 * 3 * 4, dtype=np.float32).reshape(3, 3, 4)  # every iterate its own policy
    returns = np.array([[99.0, 99.0, 99.0], [50.0, 60.0, 80.0], [40.0, 95.0, 70.0]])
    return trace_of(params, returns)


def test_without_sharing_every_start_goes_on_from_its_own_best():
    trace = three_starts()
    np.testing.assert_array_equal(restarts(trace, share_best=False), trace.best_params)


def test_the_lowest_start_takes_the_highest_starts_best_and_only_it():
    trace = three_starts()
    assert trace.best_returns.tolist() == [50.0, 95.0, 80.0]
    got = restarts(trace, share_best=True)
    np.testing.assert_array_equal(got[0], trace.params[2, 1])  # start 1's best iterate
    np.testing.assert_array_equal(got[1:], trace.best_params[1:])
    assert not np.shares_memory(got, trace.params)  # the trace keeps its own iterates
    got[0] += 1.0
    np.testing.assert_array_equal(trace.best_params[0], trace.params[1, 0])


def test_the_estimates_are_the_pooled_ones_that_choose():
    """Start 0's policy a checked at 90, then re-measured at 30 (pooled 60, below start 1's 70), its policy b at
    10: pooled, start 0 is the lowest and takes start 1's best; on single checks start 0's 90 is the highest, and
    start 1 takes policy a."""
    params = np.full((4, 2, 2), 9.0, dtype=np.float32)  # row 0: the random starts
    params[1:, 1] = 1.0  # start 1: one policy, checked 70 three times
    params[1:, 0] = [[2.0, 2.0], [3.0, 3.0], [2.0, 2.0]]  # start 0: a, b, a
    returns = np.array([[0.0, 0.0], [90.0, 70.0], [10.0, 70.0], [30.0, 70.0]])
    pooled, single = trace_of(params, returns), trace_of(params, returns, pool=False)
    assert pooled.best_returns.tolist() == [60.0, 70.0] and single.best_returns.tolist() == [90.0, 70.0]
    np.testing.assert_array_equal(restarts(pooled, share_best=True), [[1.0, 1.0], [1.0, 1.0]])
    np.testing.assert_array_equal(restarts(single, share_best=True), [[2.0, 2.0], [2.0, 2.0]])


def test_one_start_restarts_from_itself():
    trace = trace_of(np.arange(6, dtype=np.float32).reshape(2, 1, 3), np.array([[1.0], [2.0]]))
    np.testing.assert_array_equal(restarts(trace, share_best=True), trace.best_params)
