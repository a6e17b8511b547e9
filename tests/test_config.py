"""The settings of a Section 6 experiment (``pvnviz.runs.config``, ``ExperimentConfig``): bad and impossible
settings are refused when the config is built, with the line the CLI and the pages show; the advice of a
refused split is exact."""

import dataclasses
import json
import re

import numpy as np
import pytest

from conftest import TINY_CARTPOLE, TINY_SWIMMER
from pvnviz.core.config_fields import ConfigError
from pvnviz.core.ensemble import PVNEnsemble, train_ensemble
from pvnviz.runs.pipeline import ExperimentConfig, run_experiment

CARTPOLE, SWIMMER = TINY_CARTPOLE, TINY_SWIMMER


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(num_bins=0), "num_bins"),
        (dict(num_probes=0), "num_probes"),
        (dict(horizon=0), "horizon"),
        (dict(num_policies=0), "num_policies"),
        (dict(inputs=("pixels",)), "inputs"),
        (dict(env_name="pong"), "env_name must be one of cartpole, swimmer"),
        (dict(fingerprint_outputs="logits"), "fingerprint_outputs must be one of probabilities, log_probabilities"),
        (dict(pvn_activation="tanh"), "pvn_activation must be one of relu, leaky_relu"),
    ],
)
def test_bad_settings_are_refused(changes, message):
    with pytest.raises(ConfigError, match=message):
        dataclasses.replace(CARTPOLE, **changes)


@pytest.mark.parametrize("changes, message", [(dict(horizon=0), "horizon"), (dict(num_policies=0), "num_policies")])
def test_bad_swimmer_settings_are_refused(changes, message):
    with pytest.raises(ConfigError, match=message):
        dataclasses.replace(SWIMMER, **changes)


def test_an_unknown_start_rule_is_refused_with_the_choices():
    with pytest.raises(ConfigError, match="start_from must be one of random, dataset"):
        dataclasses.replace(CARTPOLE, start_from="best")


def test_the_advice_of_a_refused_split_is_exact_and_following_it_gives_a_finite_run():
    tiny = dict(num_episodes=2, horizon=20, train_steps=20, ascent_steps=2, eval_every=1, eval_episodes=1,
                num_starts=1, inputs=("fingerprint",), fresh_episodes=1, log_every=5)  # fmt: skip
    with pytest.raises(ConfigError) as refused:
        ExperimentConfig(num_policies=3, val_fraction=0.1, **tiny)
    least = re.search(r"at least ([\d.]+) or num_policies to at least (\d+)", str(refused.value))
    fraction, policies = float(least.group(1)), int(least.group(2))
    for just_below in (dict(num_policies=3, val_fraction=fraction - 0.01), dict(num_policies=policies - 1)):
        with pytest.raises(ConfigError):
            ExperimentConfig(**{"val_fraction": 0.1, **just_below}, **tiny)
    for advice in (dict(num_policies=3, val_fraction=fraction), dict(num_policies=policies, val_fraction=0.1)):
        result = run_experiment(ExperimentConfig(**advice, **tiny), seed=0)
        assert len(result.split.val_idx) >= 1
        json.dumps(result.summary(), allow_nan=False)  # the validation loss is a number, not NaN
    # The independent reference for "would fail later": training with no held-out policy gives a NaN loss.
    x, y = result.dataset.params[:4], result.split.bins.pmf(result.dataset.returns[:4])
    one = PVNEnsemble([result.trained["fingerprint"].model])
    empty = train_ensemble(one, params=x, targets=y, val_params=x[:0], val_targets=y[:0],
                           train_steps=2, batch_size=4, learning_rate=1e-3, rng=np.random.default_rng(0))  # fmt: skip
    assert np.isnan(empty.summary.val_loss).all()


def test_a_saved_config_with_the_setting_env_still_opens_and_is_saved_as_env_name():
    """config.json written with ``env`` (the shipped runs) reads into ``env_name``; ``--set env=`` does too."""
    from pvnviz.core.config_fields import apply_overrides, from_dict, to_dict

    saved = {**to_dict(SWIMMER)}
    saved["env"] = saved.pop("env_name")
    assert from_dict(ExperimentConfig, saved) == SWIMMER
    assert "env_name" in to_dict(SWIMMER) and "env" not in to_dict(SWIMMER)
    assert apply_overrides(CARTPOLE, ["env=swimmer"]).env_name == "swimmer"
    with pytest.raises(ConfigError, match="env_name must be one of"):
        from_dict(ExperimentConfig, {**saved, "env": "pong"})
