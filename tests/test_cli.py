"""The headless CLI: outputs of a run and one-line errors with exit status 2."""

import json
import subprocess
import sys

import pytest

from pvnviz.cli import main
from pvnviz.runs import RunError, read_run


def test_polytope_run_writes_config_and_summary(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "polytope", "--seed", "4", "--out", str(out), "--set", "train_steps=500", "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    config = json.loads((out / "config.json").read_text())
    assert config["experiment"] == "polytope" and config["config"]["train_steps"] == 500
    for key in (
        "optimal_policy",
        "optimal_J",
        "exact_ascent_final_policy",
        "exact_ascent_final_J",
        "pvn_final_train_loss",
        "pvn_final_test_loss",
        "learned_ascent_final_policy",
        "learned_ascent_final_exact_J",
        "timings_seconds",
    ):
        assert key in summary
    assert summary["optimal_policy"] == [1.0, 1.0]
    assert read_run(out, "polytope").summary == summary


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "gamma=1.5"], "gamma"),
        (["--set", "nonsense=1"], "unknown setting"),
        (["--set", "num_train=abc"], "must be int"),
        (["--preset", "huge"], "unknown preset"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path, args, message):
    proc = subprocess.run(
        [sys.executable, "-m", "pvnviz", "run", "polytope", "--out", str(tmp_path / "r"), *args],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in proc.stderr


def test_unknown_experiment_exits_2(tmp_path, capsys):
    assert main(["run", "pong", "--out", str(tmp_path)]) == 2
    assert "unknown experiment" in capsys.readouterr().err


def test_reading_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(RunError, match="config.json is missing"):
        read_run(tmp_path)
    with pytest.raises(RunError, match="not a folder"):
        read_run(tmp_path / "nope")
