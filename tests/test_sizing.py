"""Work sized before it starts (``pvnviz.runs.sizing``): estimates, limits, refusals before any work.

References: the estimates are checked against runs' own measured seconds (the shipped runs' summary.json)
and against tracemalloc's peak of a real rollout; the refusals against settings that would exhaust memory or time.
"""

import dataclasses
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from pvnviz.cli.main import main
from pvnviz.core.config_fields import ConfigError, from_dict
from pvnviz.runs import sizing
from pvnviz.runs.pipeline import ExperimentConfig
from pvnviz.runs.presets import PRESETS

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [
    "cartpole-paper",
    "cartpole-quick",
    "cartpole-beyond",
    "swimmer-beyond",
    "swimmer-budget-2000x5",
    "swimmer-budget-10000x1",
]


@pytest.mark.parametrize("name", SHIPPED)
def test_time_estimate_is_within_a_factor_of_two_of_the_measured_run(name):
    meta = json.loads((ROOT / "data" / name / "config.json").read_text())
    measured = json.loads((ROOT / "data" / name / "summary.json").read_text())["timings_seconds"]["total"]
    estimate = sizing.estimate(from_dict(ExperimentConfig, meta["config"]))
    assert measured / 2 <= estimate.seconds <= measured * 2, (estimate.seconds, measured)


@pytest.mark.parametrize("env", ["cartpole", "swimmer"])
def test_memory_estimate_of_the_scoring_batch_covers_a_measured_rollout(env):
    """Algorithm 3 scores every kept iterate in one batch: the estimate per episode bounds tracemalloc's peak."""
    from pvnviz.core.ascent import measure_returns
    from pvnviz.core.policies import PolicyArch, glorot_params
    from pvnviz.envs.registry import get_env

    spec = get_env(env)
    arch = PolicyArch(spec.obs_dim, spec.act_dim, (30,), spec.discrete)
    k, b = (400, 100) if env == "cartpole" else (40, 5)
    params = glorot_params(arch, k, np.random.default_rng(0))
    tracemalloc.start()
    measure_returns(spec, arch, params, b, 50, np.random.default_rng(1))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= spec.bytes_per_episode * k * b, (peak, k * b)


def test_the_issues_oversized_settings_are_refused_before_work():
    big_ascent = dataclasses.replace(
        ExperimentConfig(), num_starts=100, ascent_steps=10000, eval_every=1, eval_episodes=1000
    )
    with pytest.raises(ConfigError, match="eval_episodes"):
        sizing.check_memory(big_ascent, available=24 * 2**30)
    long_training = dataclasses.replace(
        ExperimentConfig(), train_steps=50_000, batch_size=1024, num_probes=200, num_bins=201
    )
    est = sizing.estimate(long_training)
    assert 30 * 60 < est.parts["train"] / 2 < 150 * 60  # such a training run takes about an hour per input
    with pytest.raises(ConfigError, match="train_steps"):
        sizing.check_budget(long_training, 120)
    for preset in ("quick",):
        for env in ("cartpole", "swimmer"):
            sizing.check_budget(PRESETS[env][preset](), 120)  # what a class runs live fits the default budget


@pytest.mark.parametrize("name", list(sizing.LIMITS))
def test_every_count_has_limits_naming_the_setting(name):
    low, high = sizing.LIMITS[name]
    for value in (low - 1, high + 1):
        with pytest.raises(ConfigError, match=name):
            dataclasses.replace(ExperimentConfig(), **{name: value})


def test_layer_sizes_have_limits():
    for layers in ((80,) * 20_000, (5000,), (0,)):
        with pytest.raises(ConfigError, match="pvn_hidden|layer"):
            dataclasses.replace(ExperimentConfig(), pvn_hidden=layers)
    with pytest.raises(ConfigError, match="policy_hidden"):
        dataclasses.replace(ExperimentConfig(), policy_hidden=(30,) * 9)


def _one_line_exit(argv, capsys, status):
    assert main(argv) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:"), err
    return err[0]


def test_cli_refuses_above_free_memory_naming_the_setting(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    line = _one_line_exit(["run", "cartpole", "--out", str(out), "--set", "num_policies=1000000000"], capsys, 2)
    assert "num_policies" in line
    monkeypatch.setattr(sizing, "available_memory", lambda: 100 * 2**20)
    line = _one_line_exit(["run", "cartpole", "--out", str(out), "--preset", "quick"], capsys, 2)
    assert "free" in line and "lower" in line
    assert not out.exists()


@pytest.mark.slow
def test_polytope_estimate_is_within_a_factor_of_two_of_a_measured_run():
    from pvnviz.polytope.experiment import PolytopeConfig

    for config in (PolytopeConfig(), PolytopeConfig(train_steps=40000, hidden_size=200)):
        measured = _cpu_seconds_alone(config)
        assert measured / 2.5 <= sizing.estimate(config).seconds <= measured * 2.5, (config, measured)


def _busy_ticks() -> int:
    """CPU ticks (user + system) used so far by every process on the machine but this one."""
    me, total = os.getpid(), 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat.parent.name) != me:
            total += int(fields[11]) + int(fields[12])
    return total


def _wait_until_quiet(timeout: float = 90.0) -> None:
    """Wait (at most ``timeout`` s) until no other process used more than a tenth of a core for half a second.
    On this 2-vCPU machine a busy sibling (a worker an earlier page test left finishing its replays) doubles the
    CPU time of the run measured below, and would fail the check with the estimate unchanged."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = _busy_ticks()
        time.sleep(0.5)
        if _busy_ticks() - before <= 0.05 * os.sysconf("SC_CLK_TCK"):
            return


def _cpu_seconds_alone(config) -> float:
    """The least CPU time of three ``run_polytope(config, 0)`` in a fresh process, once the machine is quiet:
    this process's CPU time also counts whatever threads earlier tests left running (pools, script runners)."""
    _wait_until_quiet()
    code = (
        "import json, sys, time\n"
        "from pvnviz.polytope.experiment import PolytopeConfig, run_polytope\n"
        "config = PolytopeConfig(**json.loads(sys.argv[1]))\n"
        "best = float('inf')\n"
        "for _ in range(3):\n"
        "    started = time.process_time()\n"
        "    run_polytope(config, 0)\n"
        "    best = min(best, time.process_time() - started)\n"
        "print(best)\n"
    )
    changed = {"train_steps": config.train_steps, "hidden_size": config.hidden_size}
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(changed)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return float(out.stdout.strip().splitlines()[-1])


def test_a_rounds_perturbations_are_sized_in_memory_and_time():
    base = dataclasses.replace(ExperimentConfig(), rounds=3)
    many = dataclasses.replace(base, round_perturbations=1000)
    small, big = sizing.estimate(base), sizing.estimate(many)
    assert big.largest == "eval_episodes" and big.bytes > 3 * small.bytes and big.seconds > small.seconds
