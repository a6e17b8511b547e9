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


SMALL = ["--preset", "quick", "--quiet", "--set", "num_policies=60", "--set", "num_episodes=4",
         "--set", "train_steps=60", "--set", "ascent_steps=20", "--set", "inputs=fingerprint"]  # fmt: skip


def test_dataset_from_reuses_a_saved_runs_dataset_and_refuses_another(tmp_path, capsys):
    import numpy as np

    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["run", "cartpole", "--seed", "3", "--out", str(first), *SMALL]) == 0
    assert main(["run", "cartpole", "--seed", "3", "--out", str(second), "--dataset-from", str(first), *SMALL,
                 "--set", "ascent_learning_rate=0.01"]) == 0  # fmt: skip
    with np.load(first / "dataset.npz") as a, np.load(second / "dataset.npz") as b:
        np.testing.assert_array_equal(a["params"], b["params"])
        np.testing.assert_array_equal(a["returns"], b["returns"])
    assert json.loads((second / "config.json").read_text())["config"]["ascent_learning_rate"] == 0.01
    capsys.readouterr()
    for extra, message in (
        (["--seed", "4"], "pass --seed 3"),
        (["--seed", "3", "--set", "num_episodes=5"], "num_episodes (4 there)"),
        (["--seed", "3", "--resume"], "drop --backend"),
    ):
        out = tmp_path / "refused"
        assert main(["run", "cartpole", "--out", str(out), "--dataset-from", str(first), *SMALL, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
        assert not out.exists()
