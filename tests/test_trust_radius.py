"""Trust regions for the active rounds (``ExperimentConfig.trust_radius``): each start ascends within an L2 ball
around where its round began (``pvnviz.core.ascent.ascend``'s ``radius``), and the ball doubles after a round whose
end beat its start and halves after one that did not (``pvnviz.runs.rounds.trust_radii``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from pvnviz.core.ascent import AscentTrace, _climb, join_rounds
from pvnviz.core.config_fields import ConfigError
from pvnviz.runs.config import ExperimentConfig
from pvnviz.runs.pipeline import run_experiment
from pvnviz.runs.rounds import trust_radii


class Bowl(torch.nn.Module):
    """J_hat(theta) = -|theta - peak|^2: its ascent walks straight to ``peak`` (a stand-in for a PVN)."""

    input_mode = "fingerprint"

    def __init__(self, peak: np.ndarray):
        super().__init__()
        self.peak = torch.as_tensor(peak, dtype=torch.float32)

    def expected_return(self, theta: torch.Tensor) -> torch.Tensor:
        return -((theta - self.peak) ** 2).sum(dim=1)


def climb(radius: np.ndarray | None, steps: int = 300) -> np.ndarray:
    starts = np.zeros((3, 4), dtype=np.float32)
    model = Bowl(np.full(4, 2.0))  # the peak is 4.0 away from every start
    _, kept, _, _ = _climb(model, starts, steps, 0.05, set(range(steps + 1)), lambda *a: None, radius)
    return kept  # (E, A, P)


def test_every_iterate_stays_in_its_own_ball_and_reaches_its_edge_toward_the_peak():
    radius = np.array([0.5, 1.0, 8.0])
    kept = climb(radius)
    distance = np.linalg.norm(kept, axis=-1)  # (E, A): from the starts at the origin
    assert np.all(distance <= radius + 1e-5)
    np.testing.assert_allclose(distance[-1, :2], radius[:2], rtol=1e-5)  # held at the edge, toward the peak
    np.testing.assert_allclose(kept[-1, 0], np.full(4, 0.25), rtol=1e-4)  # 0.5 along the diagonal
    free = climb(None)
    np.testing.assert_allclose(kept[:, 2], free[:, 2], atol=1e-6)  # a ball the path never leaves changes nothing
    assert np.linalg.norm(free[-1, 0]) > 3.5  # unbounded, the same start walks to the peak


def trace_of(returns: np.ndarray, params: np.ndarray, pool: bool) -> AscentTrace:
    predicted = np.zeros((len(returns), returns.shape[1]))
    return AscentTrace("fingerprint", np.arange(len(returns)), returns, predicted, params, 0.0, pool_checks=pool)


def test_a_ball_doubles_after_a_round_that_beat_its_start_and_halves_otherwise():
    """Two rounds of two checks (start, end). Round 1 began from round 0's end for both starts: start 0's end (70)
    beat that policy's checks (60 and 50; pooled 55), start 1's end (40) did not beat its (45 and 80; pooled 62.5,
    alone 80). On single checks start 0 compares 70 with 50."""
    params = np.array([[[0.0], [5.0]], [[1.0], [6.0]], [[1.0], [6.0]], [[2.0], [7.0]]], dtype=np.float32)
    returns = np.array([[10.0, 10.0], [60.0, 45.0], [50.0, 80.0], [70.0, 40.0]])
    first = trace_of(returns[:2], params[:2], pool=True)
    both = join_rounds([first, trace_of(returns[2:], params[2:], pool=True)])
    radius = np.array([1.0, 1.0])
    np.testing.assert_allclose(trust_radii(radius, first, 2), [2.0, 2.0])  # round 0: both ends beat their starts
    np.testing.assert_allclose(trust_radii(radius, both, 2), [2.0, 0.5])
    single = dataclasses.replace(both, pool_checks=False)
    np.testing.assert_allclose(trust_radii(radius, single, 2), [2.0, 0.5])  # 70 > 50; 40 < 80


def test_a_run_with_a_trust_radius_keeps_each_round_in_its_ball():
    """CartPole, three small rounds: every check of a round lies within that round's radius of the round's first
    check (its start), the radii following the rule from ``trust_radius``; 0 leaves the run as it was."""
    config = ExperimentConfig(
        num_policies=60, num_episodes=4, return_limit=None, train_steps=100, inputs=("fingerprint",), num_starts=2,
        ascent_steps=40, eval_every=20, eval_episodes=4, rounds=3, round_train_steps=20, trust_radius=0.05,
    )  # fmt: skip
    trace = run_experiment(config, seed=2).traces["fingerprint"]
    per_round = 3  # checks at steps 0, 20 and 40
    rounds = [trace.params[r * per_round : (r + 1) * per_round] for r in range(3)]
    radius = np.full(2, 0.05)
    for r, checks in enumerate(rounds):
        away = np.linalg.norm(checks - checks[0], axis=-1)  # (checks, A)
        assert np.all(away <= radius + 1e-5), (r, away, radius)
        assert np.any(away[-1] > 0.9 * radius), (r, away[-1], radius)  # the ascent reaches the edge
        so_far = dataclasses.replace(trace, true_returns=trace.true_returns[: (r + 1) * per_round],
                                     params=trace.params[: (r + 1) * per_round])  # fmt: skip
        radius = trust_radii(radius, so_far, per_round)
    plain = run_experiment(dataclasses.replace(config, trust_radius=0.0), seed=2).traces["fingerprint"]
    assert np.linalg.norm(plain.params[2] - plain.params[0], axis=-1).max() > 0.5  # unbounded it goes further


def test_a_negative_radius_is_refused_with_what_to_change():
    with pytest.raises(ConfigError, match="trust_radius must be 0"):
        ExperimentConfig(trust_radius=-1.0)
