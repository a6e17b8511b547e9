"""The local worker pool (pvnviz.workers.pool.LocalPool) for real: results equal the same call in this process,
Stop within a second with every core busy (cooperative, and by a kill when a worker does not answer), a
dead worker replaced, failures as one message, and no worker left behind, even when the server is killed."""

import contextlib
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from pvnviz.core.progress import Stage
from pvnviz.polytope.experiment import PolytopeConfig, train_polytope_pvn
from pvnviz.runs.pipeline import ExperimentConfig, run_experiment
from pvnviz.workers.jobqueue import JobQueue
from pvnviz.workers.pool import KILL_AFTER, NICE, LocalPool

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

ROOT = Path(__file__).resolve().parents[1]
SMALL = ExperimentConfig(num_policies=30, num_episodes=3, train_steps=80, ascent_steps=10, eval_episodes=3)
LONG = ExperimentConfig(num_policies=30, num_episodes=3, train_steps=200_000, ascent_steps=10, eval_episodes=3)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}").exists() else "X"
    return state not in ("Z", "X")


def drive(pool: LocalPool, job_id: str, ends=("done", "failed", "cancelled"), timeout: float = 120):
    """Poll the pool until ``job_id`` has an event of a kind in ``ends``; (that event, every event of the job)."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in pool.poll(0.02):
            if event[0] == job_id:
                seen.append(event)
                if event[1] in ends:
                    return event, seen
    raise AssertionError(f"no end of {job_id} within {timeout} s; saw {[e[1] for e in seen]}")


def start_when_free(pool: LocalPool, job_id: str, lane: str, task: str, kwargs: dict, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while pool.free(lane) == 0:
        assert time.monotonic() < deadline, f"no {lane} worker became ready: {pool._workers}"
        pool.poll(0.05)
    pool.start(job_id, lane, task, kwargs)


@pytest.fixture(scope="module")
def pool():
    p = LocalPool(2, num_quick=1)
    yield p
    pids = p.pids()
    p.shutdown()
    assert not [pid for pid in pids if alive(pid)]


@contextlib.contextmanager
def busy_cores():
    """One process per core spinning at full speed, at the server's priority: every core of this machine busy.

    Started only once a job trains: against them a run worker gets a small share of a core (less still at a
    higher nice), so a job started under them may take minutes to reach training."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        yield
    finally:
        for s in spinners:
            s.kill()
            s.wait()


def test_the_polytope_pvn_trained_in_a_quick_worker_equals_training_it_here(pool):
    config = PolytopeConfig(train_steps=400)
    start_when_free(pool, "q1", "quick", "polytope_pvn", {"config": config, "seed": 3})
    (_, kind, remote), events = drive(pool, "q1")
    assert kind == "done"
    local = train_polytope_pvn(config, 3)
    np.testing.assert_array_equal(remote.test_loss, local.test_loss)
    np.testing.assert_array_equal(remote.net.forward(local.test_policies), local.net.forward(local.test_policies))
    progress = [payload for _, kind, payload in events if kind == "progress"]
    assert progress and progress[-1] == (400, 400, progress[-1][2])  # the stage's last report came through
    assert all(report.stage is Stage.TRAIN_POLYTOPE_PVN for _, _, report in progress)  # a Report, unpickled


def test_an_experiment_in_a_worker_equals_it_here_and_costs_this_process_little(pool):
    cpu0, wall0 = time.process_time(), time.monotonic()
    start_when_free(pool, "r1", "run", "experiment", {"config": SMALL, "seed": 5})
    (_, kind, remote), events = drive(pool, "r1")
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    assert kind == "done", remote
    local = run_experiment(SMALL, 5)
    np.testing.assert_array_equal(remote.dataset.mean_returns, local.dataset.mean_returns)
    for mode in SMALL.inputs:
        np.testing.assert_array_equal(remote.traces[mode].true_returns, local.traces[mode].true_returns)
        np.testing.assert_array_equal(remote.trained[mode].val_loss, local.trained[mode].val_loss)
    assert cpu < 0.25 * wall, (cpu, wall)  # this process only waited: the worker computed
    metrics = [row for _, kind, rows in events if kind == "metrics" for row in rows]
    assert {mode for mode, *_ in metrics} == set(SMALL.inputs)  # live losses came back from the worker


def test_stop_takes_effect_within_a_second_with_every_core_busy(pool):
    start_when_free(pool, "r2", "run", "experiment", {"config": LONG, "seed": 1})
    try:
        drive(pool, "r2", ends=("metrics",))  # training has begun
        with busy_cores():
            time.sleep(0.5)  # the spinners have the cores
            t0 = time.monotonic()
            pool.cancel("r2")
            (_, kind, _), _ = drive(pool, "r2", timeout=10)
            elapsed = time.monotonic() - t0
        assert kind == "cancelled"
        assert elapsed < 1.0
    finally:
        pool.cancel("r2")  # a failure here must not leave a long job holding a worker for the tests after


def test_a_worker_that_does_not_answer_is_killed_and_replaced(pool):
    start_when_free(pool, "r3", "run", "experiment", {"config": LONG, "seed": 2})
    drive(pool, "r3", ends=("metrics",))
    worker = next(w for w in pool._workers if w.job == "r3")
    os.kill(worker.process.pid, signal.SIGSTOP)  # it can no longer reach its next progress report
    t0 = time.monotonic()
    pool.cancel("r3")
    (_, kind, _), _ = drive(pool, "r3", timeout=10)
    assert kind == "cancelled" and KILL_AFTER <= time.monotonic() - t0 < 1.0
    deadline = time.monotonic() + 2
    while alive(worker.process.pid) and time.monotonic() < deadline:  # SIGKILL is delivered asynchronously
        pool.poll(0.05)
    assert not alive(worker.process.pid)
    assert pool.capacity("run") == 2 and len([w for w in pool._workers if w.lane == "run"]) == 2
    start_when_free(pool, "r4", "run", "experiment", {"config": SMALL, "seed": 5})  # the new worker works
    assert drive(pool, "r4")[0][1] == "done"


def test_a_worker_that_dies_fails_its_job_with_a_message_and_is_replaced(pool):
    start_when_free(pool, "r5", "run", "experiment", {"config": LONG, "seed": 3})
    drive(pool, "r5", ends=("metrics",))
    worker = next(w for w in pool._workers if w.job == "r5")
    os.kill(worker.process.pid, signal.SIGKILL)  # as the kernel's OOM killer would
    (_, kind, message), _ = drive(pool, "r5", timeout=10)
    assert kind == "failed" and "worker process died" in message
    start_when_free(pool, "r6", "run", "experiment", {"config": SMALL, "seed": 5})
    assert drive(pool, "r6")[0][1] == "done"


@pytest.mark.parametrize(
    "task, kwargs, says",
    [
        ("experiment", {"config": SMALL, "seed": 0, "dataset": "not a dataset"}, "failed in its worker"),
        ("shell", {"command": "rm -rf /"}, "unknown task 'shell'"),
    ],
)
def test_a_failing_task_is_one_message_without_a_traceback(pool, task, kwargs, says):
    start_when_free(pool, f"f-{task}", "run", task, kwargs)
    (_, kind, message), _ = drive(pool, f"f-{task}")
    assert kind == "failed" and says in message
    assert "Traceback" not in message and "/" not in message.replace("rm -rf /", "")


def test_no_worker_outlives_a_killed_server(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from pvnviz.workers.pool import LocalPool
        if __name__ == "__main__":
            pool = LocalPool(2, num_quick=1)
            pool.free("run"); pool.free("quick")
            print(" ".join(map(str, pool.pids())), flush=True)
            time.sleep(600)
        """
    )
    path = tmp_path / "server.py"
    path.write_text(script)
    server = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in server.stdout.readline().split()]
    assert len(pids) == 3 and all(alive(p) for p in pids)
    server.kill()  # no atexit, no cleanup: only PR_SET_PDEATHSIG can end the workers
    server.wait()
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in pids if alive(p)]


def test_stop_of_one_job_takes_effect_within_a_second_while_another_runs_and_finishes(pool):
    from pvnviz.workers.jobqueue import JobQueue

    done = {}
    queue = JobQueue(lambda: pool, on_done=lambda job, result: done.__setitem__(job.key, result), grace=600)
    try:
        stopped = queue.submit("a", "long", "experiment", {"config": LONG, "seed": 4}).id
        other = queue.submit("b", "small", "experiment", {"config": SMALL, "seed": 5}).id
        deadline = time.monotonic() + 120
        # training has begun, and the other job has a worker too (a worker replaced by an earlier test may still be
        # importing what it warms)
        while (not queue.view(stopped).history or queue.view(other).state == "queued") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert queue.view(stopped).state == "running" and queue.view(other).state in ("running", "done")
        t0 = time.monotonic()
        queue.detach(stopped, "a")
        while queue.view(stopped).active and time.monotonic() - t0 < 5:
            time.sleep(0.01)
        assert queue.view(stopped).state == "cancelled" and time.monotonic() - t0 < 1.0
        while queue.view(other).active and time.monotonic() < deadline:
            time.sleep(0.1)
        assert queue.view(other).state == "done" and "small" in done and "long" not in done
    finally:
        queue.backend = None  # the module's pool is shut down by its fixture
        queue.shutdown()


def test_a_worker_starts_whatever_script_the_server_is_running(tmp_path, monkeypatch):
    """Streamlit makes each page script ``__main__`` while it runs; multiprocessing's spawn would run it again
    in every new worker (this failed in CI). Our workers are ``python -m pvnviz.workers.pool``: they never do."""
    import types

    page = tmp_path / "page.py"
    page.write_text("raise SystemExit('a page script ran in a worker')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    fresh = LocalPool(1, num_quick=1)
    try:
        start_when_free(fresh, "q", "quick", "polytope_pvn", {"config": PolytopeConfig(train_steps=100), "seed": 0})
        assert drive(fresh, "q")[0][1] == "done"
    finally:
        fresh.shutdown()


# The Linux scheduler's weight of a nice level (kernel/sched/core.c, sched_prio_to_weight), nice 0 to 10.
WEIGHT = {0: 1024, 1: 820, 2: 655, 3: 526, 4: 423, 5: 335, 6: 272, 7: 215, 8: 172, 9: 137, 10: 110}


def _spin_for(seconds: float, lowered: bool) -> subprocess.Popen:
    """A process spinning ``seconds`` of wall time, then printing its CPU seconds: ``lowered`` through
    ``lower_priority`` at a run worker's nice, else in a session of its own at nice 0, as a browser tab's process."""
    code = (
        "import os, sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from pvnviz.workers.pool import lower_priority\n"
        f"lower_priority({NICE['run']}) if {lowered} else None\n"
        f"end = time.time() + {seconds}\n"
        "while time.time() < end: pass\n"
        "print(time.process_time())\n"
    )
    command = [sys.executable, "-c", code]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=not lowered)


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no autogroup scheduling on this kernel")
def test_a_lowered_worker_yields_the_cpu_to_other_sessions_too():
    """With autogroup scheduling a plain nice-19 process still takes half of the CPU from another session's
    processes (the CPU is shared between sessions first): measured 69% left for them. Lowered as the workers are,
    the other session's processes keep what the scheduler's weights give them: 1024 / (1024 + 335) = 0.75 of a core
    at a run worker's nice 5; a worker whose lowering failed leaves them about half of it."""
    cores = os.cpu_count() or 2
    workers = [_spin_for(4.0, lowered=True) for _ in range(cores)]
    time.sleep(0.3)  # the workers are lowered and spinning
    browsers = [_spin_for(3.0, lowered=False) for _ in range(cores)]
    cpu = [float(p.communicate(timeout=60)[0]) for p in browsers]
    for p in workers:
        p.communicate(timeout=60)
    share = 1024 / (1024 + WEIGHT[NICE["run"]])  # the kernel's sched_prio_to_weight; 0.75 at nice 5, 0.9 at nice 10
    # a failed lowering leaves them about half (each session's group gets an equal share whatever the nice inside it)
    assert min(cpu) > (share - 0.1) * 3.0, f"the other session's processes got {cpu} CPU seconds of 3.0 each"
    assert share - 0.1 > 0.6


def test_workers_run_in_a_session_of_their_own_at_their_lane_s_nice():
    pool = LocalPool(1, num_quick=1)
    try:
        pool.free("run"), pool.free("quick")
        by_lane = {w.lane: w.process.pid for w in pool._workers}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and pool.free("run") + pool.free("quick") < 2:
            pool.poll(0.05)  # ready: lowered before it says so
        for lane, pid in by_lane.items():
            assert os.getsid(pid) == pid
            assert os.getpriority(os.PRIO_PROCESS, pid) == NICE[lane]
            if Path(f"/proc/{pid}/autogroup").exists():
                assert Path(f"/proc/{pid}/autogroup").read_text().split()[-1] == str(NICE[lane])
    finally:
        pool.shutdown()


def test_prepared_run_workers_start_the_first_run_at_once(caplog):
    """``JobQueue.prepare``: the run lane's workers start (torch imported) before any job, so the first Run is
    running within a tick instead of waiting for a worker's start; the quick lane is not started with them. The
    server's log says when each is ready, as the load benchmark reads it."""
    from browserbench.load import READY

    pool = LocalPool(1, num_quick=1)
    queue = JobQueue(lambda: pool, grace=3600)
    try:
        with caplog.at_level(logging.INFO, logger="pvnlab.workers"):
            queue.prepare("run")
            deadline = time.monotonic() + 120
            while not any(w.lane == "run" and w.ready for w in list(pool._workers)):
                assert time.monotonic() < deadline, "the prepared run worker did not start"
                time.sleep(0.05)
        assert {w.lane for w in pool._workers} == {"run"}
        ready = [m for r in caplog.records if (m := READY.search(r.getMessage()))]
        assert len(ready) == 1 and 0 < float(ready[0]["after"]) < 120, caplog.text
        assert f"run worker {pool.pids()[0]} ready" in caplog.text
        job = queue.submit("s", "k", "experiment", {"config": SMALL, "seed": 0}, lane="run")
        time.sleep(1.0)  # the idle dispatcher looks every 0.5 s; a worker's start alone takes seconds
        assert queue.view(job.id).state in ("running", "done")
    finally:
        pids = pool.pids()
        queue.shutdown()
        assert not [pid for pid in pids if alive(pid)]
