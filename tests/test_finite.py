"""Issue 10, item 5: configs refuse inf and nan, and a run never writes NaN or Infinity into JSON."""

import json
import math

import pytest

from pvnviz.cli.main import main
from pvnviz.core.configs import ConfigError, apply_overrides
from pvnviz.polytope.experiment import PolytopeConfig
from pvnviz.runs.pipeline import ExperimentConfig
from pvnviz.runs.store import RunError, write_run


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "Infinity"])
def test_cli_refuses_non_finite_settings_naming_them(value, capsys, tmp_path):
    out = str(tmp_path / "r")
    status = main(["run", "cartpole", "--preset", "quick", "--out", out, "--set", f"learning_rate={value}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and "learning_rate" in err[0] and "finite" in err[0], err
    assert not (tmp_path / "r").exists()  # refused before any work


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


def test_a_nan_result_is_a_failed_run_and_writes_no_json(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(RunError, match="NaN"):
        write_run(out, "cartpole", 0, ExperimentConfig(), {"final_mean_return": float("nan")})
    assert not (out / "config.json").exists() and not (out / "summary.json").exists()
    write_run(out, "cartpole", 0, ExperimentConfig(), {"final_mean_return": 1.5})
    assert json.loads((out / "summary.json").read_text()) == {"final_mean_return": 1.5}
