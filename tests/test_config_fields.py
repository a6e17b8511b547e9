"""The configs' shared checks (``pvnviz.core.config_fields``): inf and nan are refused, naming the setting, in every
config and through ``apply_overrides``."""

import math

import pytest

from pvnviz.core.config_fields import ConfigError, apply_overrides
from pvnviz.polytope.experiment import PolytopeConfig
from pvnviz.runs.pipeline import ExperimentConfig


@pytest.mark.parametrize(
    "make",
    [
        lambda: ExperimentConfig(temperature=math.nan),
        lambda: ExperimentConfig(return_limit=math.inf),
        lambda: apply_overrides(ExperimentConfig(), ["ascent_learning_rate=inf"]),
        lambda: PolytopeConfig(learning_rate=math.inf),
        lambda: PolytopeConfig(transitions=((math.nan, 1.0), (0.5, 0.5), (0.5, 0.5), (0.5, 0.5))),
    ],
)
def test_configs_refuse_inf_and_nan(make):
    with pytest.raises(ConfigError, match="finite"):
        make()
