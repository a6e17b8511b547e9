"""The headless CLI: outputs of a run and one-line errors with exit status 2."""

import dataclasses
import errno
import hashlib
import json
import os
import re

import numpy as np
import pytest

from pvnviz.cli.main import main
from pvnviz.core.configs import ConfigError, apply_overrides
from pvnviz.core.ensemble import PVNEnsemble, train_ensemble
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.files import load_result
from pvnviz.runs.pipeline import ExperimentConfig, run_experiment, split
from pvnviz.runs.presets import PRESETS
from pvnviz.runs.store import RunError, read_run


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
def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path, args, message, capsys):
    """In-process (``python -m pvnviz`` itself, with its signal handlers, is run by tests/test_cli_endings.py)."""
    try:
        status = main(["run", "polytope", "--out", str(tmp_path / "r"), *args])
    except SystemExit as exit:  # argparse's own refusals
        status = exit.code
    assert status == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err
    assert not (tmp_path / "r").exists()


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


# Impossible combinations: refused by the config itself (so the pages show the same line), before any work.
REFUSED = [
    (["val_fraction=0"], "val_fraction must be above 0"),
    (["val_fraction=0.001"], "holds out no validation policy"),  # 0.001 x 300 rounds to 0
    (["num_policies=3"], "raise val_fraction to at least 0.17 or num_policies to at least 6"),
    (["num_policies=1", "val_fraction=0.6"], "num_policies must be at least 2"),
    (["start_from=dataset", "num_policies=10", "num_starts=10"], "start_from=dataset takes the num_starts=10"),
    (["inputs=fingerprint,fingerprint"], "each PVN input once"),
]


@pytest.mark.parametrize("overrides, message", REFUSED)
def test_impossible_combinations_exit_2_up_front_with_the_configs_own_line(tmp_path, capsys, overrides, message):
    sets = [item for o in overrides for item in ("--set", o)]
    assert main(["run", "cartpole", "--preset", "quick", "--out", str(tmp_path / "r"), "--quiet", *sets]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert list(tmp_path.iterdir()) == []  # refused before the run's folders (staging, chunks) were made
    with pytest.raises(ConfigError) as refused:  # what the page builds from its widgets
        apply_overrides(PRESETS["cartpole"]["quick"](), overrides)
    assert lines[0] == f"error: {refused.value}"


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


def test_a_return_limit_that_leaves_no_validation_policy_or_too_few_starts_is_named_before_training():
    config = ExperimentConfig(num_policies=20, num_episodes=2, return_limit=10.0)
    mean_returns = np.array([5.0] * 3 + [50.0] * 17)  # 3 of 20 pass the limit: 0.1 x 3 rounds to 0
    dataset = PolicyDataset("cartpole", config.arch(), np.zeros((20, config.arch().num_params), np.float32),
                            np.repeat(mean_returns[:, None], 2, axis=1), config.horizon)  # fmt: skip
    with pytest.raises(ValueError, match="only 3 of 20 policies pass the return limit 10.0.*raise return_limit"):
        split(config, dataset, 0)
    mean_returns[:10] = 5.0  # 10 pass: 1 validation, 9 training policies
    dataset = dataclasses.replace(dataset, returns=np.repeat(mean_returns[:, None], 2, axis=1))
    starts = dataclasses.replace(config, start_from="dataset", num_starts=10)
    with pytest.raises(ValueError, match="needs 10 training policies; the return limit 10.0 leaves 9"):
        split(starts, dataset, 0)


def test_an_out_name_too_long_for_the_file_system_exits_2_and_the_longest_allowed_runs(tmp_path, capsys):
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    room = name_max - len("..partial")  # the run is written beside --out, in .NAME.partial
    for length in (300, room + 1):
        assert main(["run", "polytope", "--out", str(tmp_path / ("x" * length)), "--quiet"]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and "too long" in lines[0] and f"at most {room} bytes" in lines[0], lines
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OSError) as refused:  # the reference: the OS itself refuses the staging folder's name
        os.mkdir(tmp_path / f".{'x' * (room + 1)}.partial")
    assert refused.value.errno == errno.ENAMETOOLONG
    out = tmp_path / ("x" * room)
    assert main(["run", "polytope", "--out", str(out), "--set", "train_steps=10", "--quiet"]) == 0
    assert read_run(out, "polytope").seed == 0


def test_manifest_vouches_only_for_a_run_whose_arrays_open_even_when_its_manifest_checks_out(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "cartpole", "--seed", "1", "--out", str(out), *SMALL]) == 0
    capsys.readouterr()
    assert main(["manifest", str(out)]) == 0
    assert "checks out and every file opens" in capsys.readouterr().err
    # Damage dataset.npz consistently: a wrong shape, and a manifest whose sizes and hashes match the damage.
    with np.load(out / "dataset.npz") as data:
        arrays = dict(data)
    arrays["params"] = arrays["params"][:-1]
    np.savez(out / "dataset.npz", **arrays)
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["files"]:
        body = (out / entry["name"]).read_bytes()
        entry["size"], entry["sha256"] = len(body), hashlib.sha256(body).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))
    read_run(out, "cartpole")  # the manifest checks out: what the old command vouched for
    with pytest.raises(RunError):
        load_result(out, "cartpole")  # and the run does not open
    assert main(["manifest", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "dataset.npz" in lines[0], lines
