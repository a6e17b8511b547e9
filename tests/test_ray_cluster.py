"""The README's Ray cluster recipe, run as written: token, head, a second node, the CLI, one-line refusals, teardown.

Two "machines" on this host: each has its own HOME (where ``~/.ray/auth_token`` lives) and its own
``--temp-dir``. The head gets ``RAY_AUTH_MODE=token`` and a token from ``ray get-auth-token
--generate``; the second node gets a copy of the token file (the README's ``scp``); the CLI gets
the token as ``RAY_AUTH_TOKEN`` only. Flags beyond the README's are for two nodes of a shared test
machine: ``--temp-dir`` (one per node), ``--num-cpus`` (head 0, so every task must run on the
second node), ``--include-dashboard=false``, ``--dashboard-port`` and ``--object-store-memory``.
Ray 2.60 rewrites ``--node-ip-address=127.0.0.1`` to the host's address and its GCS and raylets
listen on every interface; the token is what keeps others out while the test runs.

Teardown stops only the processes the two ``ray start`` calls started, by their process groups
(``ray stop`` would stop every Ray process on the machine, other people's too).
"""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from pvnviz.runs.dataset import PolicyDataset

pytestmark = pytest.mark.slow  # starts Ray or CLI subprocesses: `make test` runs it

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).with_name("ray"))
AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")
SMALL = ["num_policies=12", "num_episodes=4", "horizon=50", "train_steps=20", "ascent_steps=2", "num_starts=1",
         "eval_episodes=1", "fresh_episodes=0"]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def machine_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of one 'machine': its own HOME, no Ray auth settings but ``extra``."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in AUTH_VARS}
    return env | {"HOME": str(home), "PYTHONUNBUFFERED": "1"} | extra


def live_processes() -> list[tuple[int, int, int, str]]:
    """(pid, ppid, pgid, command line) of every process on this machine that is not a zombie."""
    ps = subprocess.run(["ps", "-eo", "pid=,ppid=,pgid=,stat=,args="], capture_output=True, text=True).stdout
    rows = [(line.split(None, 4) + [""])[:5] for line in ps.splitlines()]
    return [(int(pid), int(ppid), int(pgid), args) for pid, ppid, pgid, stat, args in rows if not stat.startswith("Z")]


def group_processes(pgid: int) -> dict[int, str]:
    """Processes of group ``pgid`` and their children: pid -> command line.

    Ray's task workers are children of a raylet in a session of their own, hence the children.
    """
    live = live_processes()
    members = {pid for pid, _, group, _ in live if group == pgid}
    return {pid: args for pid, ppid, _, args in live if pid in members or ppid in members}


def stop_group(pgid: int, grace: float = 15.0) -> dict[int, str]:
    """Stop group ``pgid`` in ``ray stop``'s order (raylet, the others, gcs_server); what is still alive.

    Only the processes of that group and their children (found before any is stopped) get signals.
    """
    ours = group_processes(pgid)

    def alive() -> dict[int, str]:
        pids = {pid for pid, *_ in live_processes()}
        return {pid: args for pid, args in ours.items() if pid in pids} | group_processes(pgid)

    for first in ("raylet", None, "gcs_server"):
        pids = [p for p, args in alive().items() if first is None or first in args.split()[0]]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.time() + grace / 3
        while time.time() < deadline and set(pids) & set(alive()):
            time.sleep(0.2)
    for pid in alive():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    time.sleep(1.0)
    return alive()


@dataclass
class Cluster:
    address: str
    token: str
    root: Path
    groups: list[int]
    seconds_to_start: float


def ray_start(args: list[str], env: dict[str, str], groups: list[int]) -> subprocess.CompletedProcess:
    """``ray start ARGS`` in a process group of its own (Ray's daemons stay in it), recorded in ``groups``."""
    proc = subprocess.Popen([RAY, "start", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)  # fmt: skip
    groups.append(proc.pid)
    out, _ = proc.communicate(timeout=180)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")


@pytest.fixture(scope="module")
def cluster():
    """The README's recipe on 127.0.0.1: a 0-CPU head and a 1-CPU node, both with token auth; stopped after."""
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="pvnray-", dir="/tmp"))  # short: Ray's unix sockets live under --temp-dir
    head_env = machine_env(root / "head-home", RAY_AUTH_MODE="token")
    token = subprocess.run([RAY, "get-auth-token", "--generate"], env=head_env, capture_output=True, text=True,
                           check=True, timeout=120).stdout.strip()  # fmt: skip
    assert len(token) == 64 and (root / "head-home/.ray/auth_token").read_text().strip() == token
    port, groups = free_port(), []
    try:
        head = ray_start([
            "--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=0", f"--temp-dir={root}/head",
            "--include-dashboard=false", f"--dashboard-port={free_port()}", "--object-store-memory=100000000",
            "--disable-usage-stats"], head_env, groups)  # fmt: skip
        assert head.returncode == 0, head.stdout[-3000:]
        node_env = machine_env(root / "node-home", RAY_AUTH_MODE="token")
        (root / "node-home/.ray").mkdir()
        shutil.copy(root / "head-home/.ray/auth_token", root / "node-home/.ray/auth_token")  # the README's scp
        node = ray_start([f"--address=127.0.0.1:{port}", "--num-cpus=1", f"--temp-dir={root}/node",
                          "--object-store-memory=100000000", "--disable-usage-stats"], node_env, groups)  # fmt: skip
        assert node.returncode == 0, node.stdout[-3000:]
        yield Cluster(f"127.0.0.1:{port}", token, root, groups, time.perf_counter() - started)
    finally:
        left = {pgid: stop_group(pgid) for pgid in groups}
        shutil.rmtree(root, ignore_errors=True)
    assert not any(left.values()), f"Ray processes left running: {left}"


def run_cli(out: Path, env: dict[str, str], *backend: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "pvnviz", "run", "cartpole", "--preset", "quick", "--seed", "3", "--out", str(out),
            "--chunk-policies", "3", *backend]  # fmt: skip
    for item in SMALL:
        args += ["--set", item]
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def last_line(proc: subprocess.CompletedProcess) -> str:
    return proc.stderr.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.ray_cluster
def test_the_readme_cluster_collects_the_local_dataset_on_the_second_node(cluster, tmp_path):
    started = time.perf_counter()
    cli_env = machine_env(tmp_path / "cli-home", RAY_AUTH_TOKEN=cluster.token)  # no RAY_AUTH_MODE: pvnviz sets it
    on_ray = run_cli(tmp_path / "ray", cli_env, "--backend", "ray", "--address", cluster.address)
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    ray_seconds = time.perf_counter() - started
    assert "1 workers alive" in on_ray.stderr  # the head has no CPU: the second node's one CPU is the only worker
    # every task ran on the second node: task workers log under its --temp-dir, none under the head's
    assert list((cluster.root / "node").glob("session_*/logs/python-core-worker-*.log"))
    assert not list((cluster.root / "head").glob("session_*/logs/python-core-worker-*.log"))

    local = run_cli(tmp_path / "local", machine_env(tmp_path / "cli-home"), "--backend", "local")
    assert local.returncode == 0, local.stderr[-3000:]
    from_ray, from_local = (PolicyDataset.load(tmp_path / name / "dataset.npz") for name in ("ray", "local"))
    assert from_ray.returns.shape == (12, 4)
    np.testing.assert_array_equal(from_ray.params, from_local.params)
    np.testing.assert_array_equal(from_ray.returns, from_local.returns)
    print(f"\ncluster up in {cluster.seconds_to_start:.1f} s; CLI on Ray {ray_seconds:.1f} s")


LIVE_DRIVER = """
import json, time
from pvnviz.runs.pipeline import ExperimentConfig
from pvnviz.workers.jobqueue import JobQueue
from pvnviz.workers.backend import make_backend
config = ExperimentConfig(num_policies=12, num_episodes=4, horizon=50, train_steps=20, ascent_steps=2,
                          num_starts=1, eval_episodes=2, fresh_episodes=2)
results = {}
queue = JobQueue(make_backend, on_done=lambda job, result: results.__setitem__("r", result), grace=3600)
job = queue.submit("student", "key", "experiment", {"config": config, "seed": 3})
while queue.view(job.id).active:
    time.sleep(0.1)
view = queue.view(job.id)
print(json.dumps({"state": view.state, "error": view.error, "backend": queue.backend.name,
                  "returns": results["r"].dataset.mean_returns.tolist() if "r" in results else None}))
"""


@pytest.mark.slow
@pytest.mark.ray_cluster
def test_a_live_run_goes_to_the_cluster_named_by_pvn_ray_address(cluster, tmp_path):
    from pvnviz.runs.pipeline import ExperimentConfig, run_experiment

    env = machine_env(tmp_path / "server-home", RAY_AUTH_TOKEN=cluster.token, PVN_RAY_ADDRESS=cluster.address)
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", LIVE_DRIVER], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["state"] == "done" and out["backend"] == "ray", out
    # the head has no CPU, so the run's one-CPU task ran on the second node; it computed what this process does
    config = ExperimentConfig(num_policies=12, num_episodes=4, horizon=50, train_steps=20, ascent_steps=2,
                              num_starts=1, eval_episodes=2, fresh_episodes=2)  # fmt: skip
    np.testing.assert_array_equal(out["returns"], run_experiment(config, 3).dataset.mean_returns)


@pytest.mark.slow
@pytest.mark.ray_cluster
@pytest.mark.parametrize(
    "auth, expected",
    [
        ({}, "requires a token and this machine has none"),
        ({"RAY_AUTH_TOKEN": "0" * 64}, "refused the token from RAY_AUTH_TOKEN"),
        ({"RAY_AUTH_MODE": "disabled"}, "RAY_AUTH_MODE=disabled here"),
    ],
)
def test_a_refused_token_ends_the_cli_with_one_line_saying_what_to_set(cluster, tmp_path, auth, expected):
    started = time.perf_counter()
    proc = run_cli(tmp_path / "run", machine_env(tmp_path / "home", **auth), "--backend", "ray",
                   "--address", cluster.address)  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-3000:]
    line = last_line(proc)
    assert expected in line and cluster.address in line
    assert "RAY_AUTH_TOKEN=" in line and "~/.ray/auth_token" in line
    assert "Traceback" not in proc.stderr and "InvalidAuthToken" not in proc.stderr  # no 20 s of Ray's retries
    assert time.perf_counter() - started < 30
    assert not (tmp_path / "run").exists()


RAY_LOADER = """
from ray._raylet import AuthenticationTokenLoader
loader = AuthenticationTokenLoader.instance()
print(loader.get_raw_token(ignore_auth_mode=True) if loader.has_token(ignore_auth_mode=True) else "", end="")
"""


@pytest.mark.parametrize(
    "sources",
    [(), ("home",), ("home", "path"), ("home", "path", "env"), ("home", "env"), ("path",)],
)
def test_find_token_picks_the_token_ray_itself_loads(tmp_path, sources):
    """Ray's own C++ token loader, in a child process, is the reference for the order and the trimming."""
    from pvnviz.workers.ray_cluster import find_token

    extra = {}
    if "home" in sources:
        (tmp_path / "home/.ray").mkdir(parents=True)
        (tmp_path / "home/.ray/auth_token").write_text("a" * 64 + "\n")
    if "path" in sources:
        (tmp_path / "elsewhere").write_text("b" * 64 + "\n")
        extra["RAY_AUTH_TOKEN_PATH"] = str(tmp_path / "elsewhere")
    if "env" in sources:
        extra["RAY_AUTH_TOKEN"] = "c" * 64
    env = machine_env(tmp_path / "home", **extra)
    ray_token = subprocess.run([sys.executable, "-c", RAY_LOADER], env=env, capture_output=True, text=True,
                               check=True).stdout  # fmt: skip
    found = find_token(env)
    assert (found.value if found else "") == ray_token
    expected = "c" if "env" in sources else "b" if "path" in sources else "a" if "home" in sources else ""
    assert ray_token == expected * 64  # env before path before ~/.ray/auth_token, newline trimmed


@pytest.mark.parametrize(
    "auth, expected",
    [
        ({"RAY_AUTH_MODE": "token"}, "RAY_AUTH_MODE=token but no Ray token was found"),
        ({"RAY_AUTH_TOKEN_PATH": "/nonexistent/token"}, "RAY_AUTH_TOKEN_PATH=/nonexistent/token cannot be read"),
    ],
)
def test_a_missing_token_ends_the_cli_with_one_line_before_ray_is_asked(tmp_path, auth, expected):
    """Ray itself would abort the process (token mode without a token) or fail a minute later: exit 2, one line."""
    with socket.socket() as listener:  # something listens at the address, so only the token can be wrong
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        proc = run_cli(tmp_path / "run", machine_env(tmp_path / "home", **auth), "--backend", "ray",
                       "--address", address)  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.count("\n") == 1 and expected in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "run").exists()
