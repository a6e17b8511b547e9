"""Algorithm 1 on a real local Ray cluster (2 CPUs): identical to local, survives a killed worker, cleans up."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import ray

from pvnviz.core.policies import PolicyArch
from pvnviz.runs.collection import Plan, collect_chunk, collect_plan
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.store import chunks_dir, staging_dir
from pvnviz.workers.collect_ray import RayExecutor, connect

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

ROOT = Path(__file__).resolve().parents[1]
PLANS = {
    "cartpole": Plan("cartpole", PolicyArch(4, 2, (30,), True), 12, 6, 80, entropy=99),
    "swimmer": Plan("swimmer", PolicyArch(8, 2, (30,), False), 8, 2, 40, entropy=99),
}
RAY_DAEMONS = ("raylet", "gcs_server")


def ray_daemons() -> set[int]:
    """PIDs of Ray's per-node daemons on this machine."""
    pids = set()
    for name in RAY_DAEMONS:
        found = subprocess.run(["pgrep", "-f", name], capture_output=True, text=True).stdout.split()
        pids |= {int(p) for p in found}
    return pids


def wait_until_gone(pids: set[int], seconds: float = 20.0) -> set[int]:
    deadline = time.time() + seconds
    while time.time() < deadline:
        left = pids & ray_daemons()
        if not left:
            return left
        time.sleep(0.2)
    return pids & ray_daemons()


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster with 2 CPUs for this module; shut down and checked gone afterwards."""
    before = ray_daemons()
    assert connect(None, num_cpus=2)
    ours = ray_daemons() - before
    assert ours, "ray.init started no raylet"
    yield
    ray.shutdown()
    assert not wait_until_gone(ours), "Ray daemons left running after ray.shutdown()"


def _chunked(plan: Plan, size: int) -> Plan:
    return Plan(plan.env_name, plan.arch, plan.num_policies, plan.num_episodes, plan.horizon, plan.entropy, size)


@pytest.mark.parametrize("env_name", ["cartpole", "swimmer"])
def test_ray_dataset_is_bit_identical_to_local_for_1_2_and_4_chunks(cluster, env_name):
    plan = PLANS[env_name]
    local = collect_plan(plan)
    for chunks in (1, 2, 4):
        on_ray = collect_plan(_chunked(plan, -(-plan.num_policies // chunks)), RayExecutor(num_cpus=1))
        assert len(_chunked(plan, -(-plan.num_policies // chunks)).chunks()) == chunks
        np.testing.assert_array_equal(on_ray.params, local.params)
        np.testing.assert_array_equal(on_ray.returns, local.returns)
    assert ray.is_initialized()  # the executor leaves a connection it did not make alone


def test_a_killed_worker_is_retried_and_the_dataset_is_complete_and_identical(cluster, tmp_path):
    marker = tmp_path / "killed-once"

    def kill_own_worker_once(spec, nthread):
        if spec.start == 4 and not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies mid-collection
        return collect_chunk(spec, nthread)

    plan = _chunked(PLANS["cartpole"], 4)
    result = collect_plan(plan, RayExecutor(num_cpus=1, max_retries=2, task=kill_own_worker_once))
    assert marker.exists()  # the kill really happened (and the task ran again in a new worker)
    local = collect_plan(PLANS["cartpole"])
    np.testing.assert_array_equal(result.params, local.params)
    np.testing.assert_array_equal(result.returns, local.returns)


def test_without_retries_a_killed_worker_fails_loudly(cluster, tmp_path):
    marker = tmp_path / "killed"

    def kill_own_worker(spec, nthread):
        marker.write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(ray.exceptions.WorkerCrashedError):
        collect_plan(_chunked(PLANS["cartpole"], 6), RayExecutor(num_cpus=1, max_retries=0, task=kill_own_worker))


@pytest.mark.slow
def test_cli_ray_backend_writes_the_local_dataset_and_leaves_no_ray_behind(cluster, tmp_path):
    """The CLI starts its own Ray (a second cluster), collects, shuts it down, and the run matches local."""
    before = ray_daemons()
    out = tmp_path / "run"
    overrides = ["num_policies=6", "num_episodes=2", "horizon=60"]
    args = [sys.executable, "-m", "pvnviz", "run", "swimmer", "--out", str(out), "--seed", "5", "--backend", "ray",
            "--chunk-policies", "2", "--set", "train_steps=20", "--set", "ascent_steps=2", "--set", "num_starts=2",
            "--set", "eval_episodes=1"]  # fmt: skip
    for item in overrides:
        args += ["--set", item]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "workers alive" in proc.stderr and "?swimmer_run=" in proc.stderr
    assert not wait_until_gone(ray_daemons() - before), "the CLI left Ray daemons running"
    assert not staging_dir(out).exists() and not chunks_dir(out).exists()

    from pvnviz.core.config_fields import apply_overrides
    from pvnviz.runs.files import load_result
    from pvnviz.runs.pipeline import collect as collect_stage
    from pvnviz.runs.presets import PRESETS

    expected = collect_stage(apply_overrides(PRESETS["swimmer"]["paper"](), overrides), 5)
    saved = PolicyDataset.load(out / "dataset.npz")
    np.testing.assert_array_equal(saved.params, expected.params)
    np.testing.assert_array_equal(saved.returns, expected.returns)
    assert load_result(out, "swimmer").dataset.returns.shape == (6, 2)  # opens like any run
