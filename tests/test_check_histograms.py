"""Checks as histograms (``ExperimentConfig.check_histograms``, ``pvnviz.runs.rounds.check_targets``): the active
rounds may fine-tune the PVN on each check's histogram of episode returns, the kind of target the dataset's
policies give it (Section 3), instead of a point mass at the check's mean. The checks keep their episodes
(``AscentTrace.episode_returns``) for that."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pvnviz.core.ascent import AscentTrace, join_rounds
from pvnviz.core.histogram import ReturnBins
from pvnviz.runs.config import ExperimentConfig
from pvnviz.runs.pipeline import run_experiment
from pvnviz.runs.rounds import check_targets

BINS = ReturnBins(0.0, 100.0, 10)


def trace_of(episodes: np.ndarray) -> AscentTrace:
    """Checks (E, A) whose episodes are ``episodes`` (E, A, B)."""
    e, a, _ = episodes.shape
    params = np.arange(e * a * 2, dtype=np.float32).reshape(e, a, 2)
    returns = episodes.mean(axis=2)
    return AscentTrace("fingerprint", np.arange(e), returns, np.zeros((e, a)), params, 0.0, episode_returns=episodes)


def test_a_check_is_its_episodes_histogram_or_a_point_at_its_mean():
    """A check whose 4 episodes returned 5, 5, 95 and 95: half its mass in the first bin and half in the last, as
    a dataset policy's would be; without the option, all of it at the mean's bin (50: the sixth)."""
    episodes = np.array([[[5.0, 5.0, 95.0, 95.0], [50.0, 50.0, 50.0, 50.0]]])  # (1 check, 2 starts, 4 episodes)
    trace = trace_of(episodes)
    on, off = ExperimentConfig(check_histograms=True), ExperimentConfig()
    got = check_targets(on, BINS, trace)
    np.testing.assert_allclose(got[0], [0.5] + [0.0] * 8 + [0.5])
    np.testing.assert_allclose(got[1], BINS.pmf(np.array([[50.0]]))[0])
    points = check_targets(off, BINS, trace)
    np.testing.assert_allclose(points, [np.eye(10)[5], np.eye(10)[5]])
    np.testing.assert_allclose(BINS.expected(got), [50.0, 55.0])  # the episodes' bins' midpoints, averaged
    np.testing.assert_allclose(BINS.expected(points), [55.0, 55.0])  # the midpoint of the mean's bin


def test_the_rows_follow_the_checks_params_and_a_trace_without_episodes_is_refused():
    rng = np.random.default_rng(0)
    episodes = rng.uniform(0, 100, (3, 2, 5))
    trace = trace_of(episodes)
    got = check_targets(ExperimentConfig(check_histograms=True), BINS, trace)
    flat = trace.params.reshape(-1, 2)
    for row in range(6):  # row i of the targets is the check of flat params row i
        e, a = divmod(row, 2)
        np.testing.assert_array_equal(flat[row], trace.params[e, a])
        np.testing.assert_allclose(got[row], BINS.pmf(episodes[e, a][None])[0])
    with pytest.raises(ValueError, match="needs the checks' episode returns"):
        check_targets(ExperimentConfig(check_histograms=True), BINS, dataclasses.replace(trace, episode_returns=None))


def test_joined_rounds_keep_every_checks_episodes_in_order():
    a, b = trace_of(np.full((2, 1, 3), 10.0)), trace_of(np.full((3, 1, 3), 20.0))
    joined = join_rounds([a, b])
    assert joined.episode_returns.shape == (5, 1, 3)
    np.testing.assert_array_equal(joined.episode_returns.mean(axis=2), joined.true_returns)
    assert join_rounds([a, dataclasses.replace(b, episode_returns=None)]).episode_returns is None


def test_a_run_keeps_each_checks_episodes_and_fine_tunes_on_them():
    """CartPole, two rounds: every check's episodes average to its recorded return exactly, each is an episode
    length (a whole number of steps up to the horizon) and together they are the counted steps; with the option
    the second round ascends through another PVN than without it."""
    config = ExperimentConfig(
        num_policies=60, num_episodes=4, return_limit=None, train_steps=100, inputs=("fingerprint",), num_starts=2,
        ascent_steps=20, eval_every=10, eval_episodes=6, rounds=2, round_train_steps=30,
    )  # fmt: skip
    trace = run_experiment(config, seed=4).traces["fingerprint"]
    assert trace.episode_returns.shape == (*trace.true_returns.shape, 6)
    np.testing.assert_array_equal(trace.episode_returns.mean(axis=2), trace.true_returns)
    assert np.all(trace.episode_returns == np.round(trace.episode_returns)) and trace.episode_returns.max() <= 100
    assert trace.episode_returns.sum() == trace.check_env_steps
    on = run_experiment(dataclasses.replace(config, check_histograms=True), seed=4).traces["fingerprint"]
    np.testing.assert_array_equal(on.predicted[:21], trace.predicted[:21])  # round 0: the same PVN
    assert not np.allclose(on.predicted[21:], trace.predicted[21:])  # refitted towards other targets
