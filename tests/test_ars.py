"""ARS (Mania et al., 2018): converges on a quadratic with a known optimum; improves CartPole with steps counted."""

import numpy as np
import pytest

from pvnviz.baselines.ars import EnvObjective, ars
from pvnviz.core.policies import PolicyArch
from pvnviz.envs.registry import get_env


def quadratic(optimum: np.ndarray):
    def objective(params: np.ndarray) -> tuple[np.ndarray, int]:
        return -((params - optimum) ** 2).sum(axis=1), len(params)

    return objective


@pytest.mark.parametrize("top", [8, 3])  # V1 (all directions) and V1-t (top 3)
def test_ars_converges_to_the_optimum_of_a_quadratic(top):
    optimum = np.array([1.0, -2.0, 0.5, 3.0, 0.0])
    result = ars(quadratic(optimum), np.zeros(5), 400, 8, top, 0.02, 0.05, np.random.default_rng(0))
    np.testing.assert_allclose(result.theta, optimum, atol=0.1)
    assert result.env_steps[-1] == 400 * 16  # every evaluation counted
    assert result.mean_returns[-1] > result.mean_returns[0]


def test_ars_stops_at_the_step_budget_and_rejects_bad_top():
    result = ars(quadratic(np.ones(3)), np.zeros(3), 100, 4, 2, 0.02, 0.05, np.random.default_rng(1), 80)
    assert len(result.env_steps) == 10 and result.env_steps[-1] == 80
    with pytest.raises(ValueError, match="top"):
        ars(quadratic(np.ones(3)), np.zeros(3), 1, 4, 5, 0.02, 0.05, np.random.default_rng(1))


def test_v2_normalisation_tracks_the_states_seen():
    arch = PolicyArch(4, 2, (), True)
    objective = EnvObjective(get_env("cartpole"), arch, 4, 50, np.random.default_rng(2), normalise=True)
    returns, steps = objective(np.zeros((3, arch.num_params)))
    assert steps == pytest.approx(returns.sum() * 4)
    assert objective.count >= steps  # every state an acting policy saw (and a few after termination)
    mean, std = objective.stats()
    assert np.all(std > 0) and np.all(np.abs(mean) < 1)


def test_ars_improves_a_linear_cartpole_policy():
    arch = PolicyArch(4, 2, (), True)
    rng = np.random.default_rng(3)
    objective = EnvObjective(get_env("cartpole"), arch, 2, 100, rng)
    start = np.zeros(arch.num_params)
    result = ars(objective, start, 30, 8, 4, 0.5, 0.5, rng)
    before, _ = EnvObjective(get_env("cartpole"), arch, 100, 100, np.random.default_rng(4))(start[None])
    after, _ = EnvObjective(get_env("cartpole"), arch, 100, 100, np.random.default_rng(4))(result.theta[None])
    assert after[0] > before[0] + 30
