"""The Swimmer experiment through the shared pipeline: tiny runs, bad input, the shipped run."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from pvnviz.cli.main import main
from pvnviz.core.configs import ConfigError
from pvnviz.runs.files import load_result
from pvnviz.runs.pipeline import run_experiment
from pvnviz.runs.presets import PRESETS
from pvnviz.runs.store import RunError, write_manifest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {"budget-2000x5": ROOT / "data" / "swimmer-paper", "budget-10000x1": ROOT / "data" / "swimmer-wide"}
TINY = dataclasses.replace(
    PRESETS["swimmer"]["quick"](),
    num_policies=40,
    num_episodes=2,
    horizon=60,
    train_steps=150,
    ascent_steps=30,
    eval_every=10,
    eval_episodes=2,
    num_starts=2,
    log_every=10,
)


def test_paper_preset_is_appendix_b():
    c = PRESETS["swimmer"]["paper"]()
    assert (c.num_policies, c.num_bins, c.pvn_hidden, c.learning_rate, c.train_steps, c.batch_size) == (
        2000,
        51,
        (80,),
        0.003,
        5000,
        32,
    )
    assert (c.num_starts, c.ascent_learning_rate, c.ascent_steps, c.policy_hidden, c.horizon) == (
        5,
        0.002,
        1000,
        (30,),
        1000,
    )
    assert c.return_limit is None and c.num_probes == 20 and c.train_probes and c.num_episodes == 500


def test_tiny_swimmer_run_and_deterministic_policies():
    r = run_experiment(TINY, seed=1)
    assert r.dataset.returns.shape == (40, 2)
    trace = r.traces["fingerprint"]
    assert trace.true_returns.shape == (4, 2)
    assert r.trained["fingerprint"].model.fingerprint.size == 20 * 2  # actions (2) at 20 probes
    # deterministic policies: the spread within a policy comes only from the reset noise
    assert r.dataset.returns.std(1).mean() < r.dataset.mean_returns.std()


@pytest.mark.parametrize("changes, message", [(dict(horizon=0), "horizon"), (dict(num_policies=0), "num_policies")])
def test_bad_settings(changes, message):
    with pytest.raises(ConfigError, match=message):
        dataclasses.replace(TINY, **changes)


def test_cli_bad_input_exit_2(tmp_path, capsys):
    assert main(["run", "swimmer", "--out", str(tmp_path), "--set", "horizon=0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "horizon" in err[0]


def test_a_folder_that_is_not_a_run(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "summary.json").write_text("{}")
    write_manifest(tmp_path)
    with pytest.raises(RunError, match="damaged"):
        load_result(tmp_path, "swimmer")


def test_shipped_runs_are_small():
    size = sum(f.stat().st_size for run in SHIPPED.values() for f in run.rglob("*") if f.is_file())
    assert size < 20 * 2**20, size


@pytest.mark.parametrize("preset", list(SHIPPED))
def test_shipped_paper_scale_runs_open_and_match_their_presets(preset):
    result = load_result(SHIPPED[preset], "swimmer")
    summary = json.loads((SHIPPED[preset] / "summary.json").read_text())
    config = PRESETS["swimmer"][preset]()
    assert result.config == config
    assert result.dataset.returns.shape == (config.num_policies, config.num_episodes)
    assert summary["dataset_env_steps"] == 10_000_000  # the paper's environment budget
    np.testing.assert_allclose(
        result.traces["fingerprint"].best_returns.mean(),
        summary["inputs"]["fingerprint"]["best_mean_return"],
        rtol=1e-6,
    )
