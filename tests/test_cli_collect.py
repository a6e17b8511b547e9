"""The CLI's collection stage (``pvnviz.cli.collect``): Ctrl-C leaves the chunks and --resume finishes the same
dataset, a new run clears stale chunks, bad collection flags are one line and status 2."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.store import chunks_dir, staging_dir

ROOT = Path(__file__).resolve().parents[1]


# 64 chunks of one policy (4 episodes of 1000 steps): Ctrl-C, sent once 2 are saved, lands long before the last, however
# the machine's load delays the signal against the workers (chunks never change the data: tests/test_core_collect.py).
def _run_cli(out: Path, *extra: str, **kwargs) -> subprocess.Popen:
    args = [
        sys.executable, "-m", "pvnviz", "run", "swimmer", "--out", str(out), "--seed", "3",
        "--set", "num_policies=64", "--set", "num_episodes=4", "--set", "horizon=1000",
        "--set", "train_steps=20", "--set", "ascent_steps=2", "--set", "num_starts=2", "--set", "eval_episodes=1",
        "--chunk-policies", "1", *extra,
    ]  # fmt: skip
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _expected_swimmer_dataset() -> PolicyDataset:
    from pvnviz.core.config_fields import apply_overrides
    from pvnviz.runs.pipeline import collect as collect_stage
    from pvnviz.runs.presets import PRESETS

    config = apply_overrides(PRESETS["swimmer"]["paper"](), ["num_policies=64", "num_episodes=4", "horizon=1000"])
    return collect_stage(config, 3)


@pytest.mark.slow
def test_cli_interrupted_by_ctrl_c_resumes_and_gives_the_same_dataset(tmp_path):
    out = tmp_path / "run"
    chunks = chunks_dir(out)
    proc = _run_cli(out)
    deadline = time.time() + 60
    while len(list(chunks.glob("chunk-*.npz"))) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err.splitlines()[-1]
    saved = len(list(chunks.glob("chunk-*.npz")))
    assert 2 <= saved < 64
    assert not (out / "config.json").exists()  # no run that looks whole
    proc = _run_cli(out, "--resume")
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert f"resuming: {saved} of 64 chunks are already collected" in err
    assert "?swimmer_run=" in err
    np.testing.assert_array_equal(PolicyDataset.load(out / "dataset.npz").returns, _expected_swimmer_dataset().returns)
    assert not staging_dir(out).exists() and not chunks_dir(out).exists()  # chunks removed once the run is written


@pytest.mark.slow
def test_cli_new_run_clears_stale_chunks(tmp_path):
    out = tmp_path / "run"
    stale = chunks_dir(out)
    stale.mkdir(parents=True)
    (stale / "chunk-00000.npz").write_bytes(b"garbage from an older run")
    proc = _run_cli(out, "--set", "horizon=20", "--quiet")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert (out / "dataset.npz").is_file() and not staging_dir(out).exists()


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--backend", "spark"], "unknown --backend"),
        (["--address", "auto"], "--address needs --backend ray"),
        (["--chunk-policies", "0"], "--chunk-policies must be at least 1"),
        (["--cpus-per-task", "0"], "--cpus-per-task must be at least 1"),
        (["--backend", "ray", "--address", "127.0.0.1:1"], "cannot reach a Ray cluster at 127.0.0.1:1"),
        (["--backend", "ray", "--address", "head-node"], "--address must be auto or HOST:PORT"),
    ],
)
def test_bad_collection_flags_are_one_line_and_exit_2(tmp_path, flags, message, capsys):
    from pvnviz.cli.main import main

    try:  # in-process: the argument checks come before any work
        status = main(["run", "cartpole", "--out", str(tmp_path / "x"), *flags])
    except SystemExit as exit:  # argparse's own refusals
        status = exit.code
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()
