"""``python -m pvnviz`` with gym:ID (a subprocess, as a person types it): refusals in one line with exit 2 and no
process left behind, ``settings gym:ID`` and ``settings gym:``, and a quick run end to end whose keywords reach the
environment and the run's config.json, and which opens as the app opens runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pvnviz(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The CLI in a fresh process; tests/ on its path, so gym_test_envs' environments can be named."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.run(
        [sys.executable, "-m", "pvnviz", *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )


SUBPROCESS_REFUSALS = [
    (["run", "gym:gym_test_envs:DictObs-v0"], "observes Dict"),
    (["run", "gym:gym_test_envs:MultiDiscreteAct-v0"], "acts in MultiDiscrete"),
    (["run", "gym:Pendulum-v1?gravity=9.81"], "the constructor refuses the keywords"),
]
REFUSALS = [
    (["run", "gym:NoSuchThing-v3"], "doesn't exist"),
    (["run", "gym:Pendulum-v1?g"], "is not key=value"),
    (["run", "gym:Pendulum-v1", "--set", "horizon=300"], "horizon must be at most 200"),
    (["run", "gym:Pendulum-v1?g=[1, 2]"], "fails its first step"),
    (["settings", "gym:gym_test_envs:DictObs-v0"], "observes Dict"),
    (["compare", "--env", "gym:gym_test_envs:MultiDiscreteAct-v0"], "acts in MultiDiscrete"),
]


def _with_out(command: list[str], tmp_path: Path) -> list[str]:
    return [*command, "--out", str(tmp_path / "run"), "--preset", "quick"] if command[0] == "run" else command


def _one_line(stderr: str, words: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize("command, words", SUBPROCESS_REFUSALS)
def test_an_environment_that_does_not_qualify_is_one_line_and_exit_2(tmp_path, command, words):
    done = pvnviz(*_with_out(command, tmp_path))  # returns once every process holding its pipes ended: no worker
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    _one_line(done.stderr, words)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("command, words", REFUSALS)
def test_each_refusal_in_process(tmp_path, capsys, command, words):
    import gym_test_envs  # noqa: F401 - registers the environments that do not qualify

    from pvnviz.cli.main import main

    try:
        status = main(_with_out(command, tmp_path))
    except SystemExit as exit:  # argparse's one line (compare's --env type)
        status = exit.code
    assert status == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    _one_line(captured.err, words)
    assert not (tmp_path / "run").exists()


def test_settings_of_a_gym_environment(capsys):
    from pvnviz.cli.main import main

    assert main(["settings", "gym:Acrobot-v1", "--preset", "quick"]) == 0
    lines = capsys.readouterr().out.splitlines()
    from pvnviz.runs.presets import presets_for

    assert lines[0] == f"# gym:Acrobot-v1: {len(presets_for('gym:Acrobot-v1'))} presets (--preset NAME)"
    assert {"paper", "beyond", "quick"} <= set(presets_for("gym:Acrobot-v1"))
    assert any(line.startswith("#   quick") and "<- listed below" in line for line in lines)
    pairs = [line.split("  #")[0].split(" = ") for line in lines if " = " in line]
    settings = {key: json.loads(value) for key, value in pairs}
    assert settings["env_name"] == "gym:Acrobot-v1" and settings["horizon"] == 500  # its own time limit
    assert settings["return_limit"] is None
    assert main(["settings", "gym:Pendulum-v1?g=9.81", "--preset", "paper"]) == 0
    box = capsys.readouterr().out
    assert "budget-10000x1" in box and 'env_name = "gym:Pendulum-v1?g=9.81"' in box
    assert "num_episodes = 500" in box and "horizon = 200" in box  # the Swimmer's shape


def test_settings_gym_lists_the_ids_that_qualify(capsys):
    from pvnviz.cli.main import main

    assert main(["settings", "gym:"]) == 0
    listed = {line for line in capsys.readouterr().out.splitlines() if line.startswith("gym:")}
    assert {"gym:Pendulum-v1", "gym:Acrobot-v1", "gym:MountainCarContinuous-v0", "gym:Hopper-v5"} <= listed
    assert "gym:Blackjack-v1" not in listed and "gym:FrozenLake-v1" not in listed


@pytest.mark.slow
def test_run_quick_end_to_end_with_keywords(tmp_path):
    out = tmp_path / "pendulum"
    done = pvnviz("run", "gym:Pendulum-v1?g=2.0", "--preset", "quick", "--set", "num_policies=60", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("gym:Pendulum-v1?g=2.0, preset quick, seed 0")
    meta = json.loads((out / "config.json").read_text())
    assert meta["experiment"] == "gym:Pendulum-v1?g=2.0"
    assert meta["config"]["env_name"] == "gym:Pendulum-v1?g=2.0"  # the keywords are in the run's config
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dataset_env_steps"] == 60 * 1 * 200  # every Pendulum episode runs its 200 steps
    opened = pvnviz("manifest", str(out))  # opens every array and network, as the app does
    assert opened.returncode == 0, opened.stderr

    from pvnviz.runs.files import load_result

    result = load_result(out, "gym:Pendulum-v1?g=2.0")
    assert result.dataset.env_steps == 12000
    assert result.config.env_name == "gym:Pendulum-v1?g=2.0"

    from pvnviz.runs.archive import read_run_zip, run_zip

    shared = read_run_zip(run_zip(result), "gym:Pendulum-v1?g=2.0")  # the app's download and upload
    assert shared.config == result.config and shared.dataset.env_steps == 12000
