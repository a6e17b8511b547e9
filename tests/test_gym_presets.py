"""Presets of gym: environments (pvnviz.runs.presets.presets_for): the paper's shapes by action kind, beyond's
active rounds, quick under its estimate, each horizon the environment's own limit."""

from pathlib import Path

import pytest

from pvnviz.core.config_fields import ConfigError
from pvnviz.envs.gym_id import EnvRefused
from pvnviz.runs.presets import DISCRETE_ROUNDS, PRESETS, QUICK_SECONDS, SWIMMER_PAPER, presets_for
from pvnviz.runs.sizing import estimate


def test_discrete_actions_take_cartpoles_shape():
    presets = presets_for("gym:Acrobot-v1")
    assert list(presets) == ["paper", "beyond", "quick", "beyond-1M"]
    paper = presets["paper"]()
    assert (paper.num_policies, paper.num_episodes, paper.num_bins, paper.horizon) == (1000, 100, 41, 500)
    assert paper.return_limit is None and paper.policy_hidden == (30,)
    beyond = presets["beyond"]()
    assert beyond.rounds == DISCRETE_ROUNDS.rounds > 1 and beyond.num_policies == paper.num_policies
    table = (Path(__file__).resolve().parents[1] / "docs" / "environments.md").read_text()
    said = f"active rounds as CartPole's, {beyond.eval_episodes} episodes a check, at most {beyond.rounds} rounds |"
    assert f"| `beyond` | `paper` plus {said}" in table


def test_a_box_takes_the_swimmers_shape():
    presets = presets_for("gym:Pendulum-v1?g=9.81")
    assert list(presets) == ["paper", "budget-10000x1", "beyond", "quick", "beyond-1M"]
    paper = presets["paper"]()
    assert paper.env_name == "gym:Pendulum-v1?g=9.81" and paper.horizon == 200
    assert (paper.num_policies, paper.num_episodes, paper.num_bins) == (2000, 500, SWIMMER_PAPER.num_bins)
    beyond, budget = presets["beyond"](), presets["budget-10000x1"]()
    swimmer = PRESETS["swimmer"]["beyond"]()
    assert (beyond.num_policies, beyond.num_episodes, beyond.rounds) == (10000, 1, swimmer.rounds)
    assert (budget.num_policies, budget.num_episodes) == (beyond.num_policies, beyond.num_episodes)  # one dataset


QUICK = ["gym:Acrobot-v1", "gym:MountainCar-v0", "gym:MountainCarContinuous-v0", "gym:Pendulum-v1", "gym:CartPole-v1"]


@pytest.mark.parametrize("name", QUICK)
def test_quick_stays_under_its_estimate(name):
    config = presets_for(name)["quick"]()
    assert estimate(config).seconds <= QUICK_SECONDS
    assert config.num_policies >= 40 and config.rounds == 1


def test_a_refused_environment_has_no_presets_and_no_horizon_passes_its_own_limit():
    with pytest.raises(EnvRefused, match="doesn't exist"):
        presets_for("gym:NoSuchThing-v3")
    config_class = type(presets_for("gym:Acrobot-v1")["paper"]())
    with pytest.raises(ConfigError, match="horizon must be at most 500"):
        config_class(env_name="gym:Acrobot-v1", horizon=501)
    assert config_class(env_name="gym:Acrobot-v1", horizon=500).horizon == 500
