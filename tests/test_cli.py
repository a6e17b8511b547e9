"""The headless CLI (``pvnviz.cli.main``): outputs of a run, the manifest command, one-line errors with exit
status 2 before any work, failures ending in one line and a distinct status (signals, in real processes:
tests/test_cli_endings.py)."""

import errno
import hashlib
import json
import os

import numpy as np
import pytest

from pvnviz.cli.main import main
from pvnviz.core.config_fields import ConfigError, apply_overrides
from pvnviz.runs.files import load_result
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


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "Infinity"])
def test_cli_refuses_non_finite_settings_naming_them(value, capsys, tmp_path):
    out = str(tmp_path / "r")
    status = main(["run", "cartpole", "--preset", "quick", "--out", out, "--set", f"learning_rate={value}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and "learning_rate" in err[0] and "finite" in err[0], err
    assert not (tmp_path / "r").exists()  # refused before any work


def test_cli_bad_input_exit_2(tmp_path, capsys):
    assert main(["run", "swimmer", "--out", str(tmp_path), "--set", "horizon=0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "horizon" in err[0]


def _one_line_exit(argv, capsys, status):
    assert main(argv) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:"), err
    return err[0]


def test_cli_seed_errors_name_the_flag(tmp_path, capsys):
    with pytest.raises(SystemExit) as code:
        main(["run", "cartpole", "--out", str(tmp_path / "r"), "--seed", "-1"])
    assert code.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seed" in err[0], err


@pytest.mark.parametrize(
    ("error", "status", "words"),
    [
        (MemoryError(), 1, "out of memory"),
        (OSError(28, "No space left on device"), 1, "disk is full"),
        (RuntimeError("boom"), 1, "RuntimeError: boom"),
        (KeyboardInterrupt(), 130, "interrupted"),
    ],
)
def test_cli_failures_end_in_one_line_and_a_distinct_status(error, status, words, tmp_path, capsys, monkeypatch):
    import pvnviz.runs.pipeline as experiment

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(experiment, "run_experiment", fail)
    out = tmp_path / "run"
    line = _one_line_exit(["run", "cartpole", "--out", str(out), "--preset", "quick", "--quiet"], capsys, status)
    assert words in line
    assert not out.exists()
