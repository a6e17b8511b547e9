"""Live runs on Ray (pvnviz.workers.ray_pool.RayPool) on a local Ray: the same results as here, progress from
the task, Stop within a second, a failure as one line; and the queue over it."""

import time

import numpy as np
import pytest
from test_pool import LONG, SMALL, drive

from pvnviz.core.progress import Stage
from pvnviz.polytope.experiment import PolytopeConfig, train_polytope_pvn
from pvnviz.runs.pipeline import ExperimentConfig
from pvnviz.workers.jobqueue import JobQueue

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pool():
    from pvnviz.workers.ray_pool import RayPool

    p = RayPool("local", num_cpus=2)
    yield p
    p.shutdown()
    import ray

    assert not ray.is_initialized()


def test_a_polytope_pvn_on_ray_equals_training_it_here(pool):
    config = PolytopeConfig(train_steps=400)
    assert pool.free("quick") >= 1 and pool.capacity("run") >= 1
    pool.start("q1", "quick", "polytope_pvn", {"config": config, "seed": 3})
    (_, kind, remote), events = drive(pool, "q1")
    assert kind == "done"
    np.testing.assert_array_equal(remote.test_loss, train_polytope_pvn(config, 3).test_loss)
    deadline = time.monotonic() + 5  # progress goes through the sink actor: it may land after the result
    while not any(kind == "progress" for _, kind, _ in events) and time.monotonic() < deadline:
        events += [e for e in pool.poll(0.1) if e[0] == "q1"]
    progress = [payload for _, kind, payload in events if kind == "progress"]
    assert progress and all(report.stage is Stage.TRAIN_POLYTOPE_PVN for _, _, report in progress)  # through Ray


def test_stop_on_ray_within_a_second_and_a_failure_is_one_line(pool):
    pool.start("r1", "run", "experiment", {"config": LONG, "seed": 1})
    drive(pool, "r1", ends=("metrics",))
    t0 = time.monotonic()
    pool.cancel("r1")
    (_, kind, _), _ = drive(pool, "r1", timeout=5)
    assert kind == "cancelled" and time.monotonic() - t0 < 1.0
    assert pool.free("run") == 2
    pool.start("f1", "run", "nonsense", {})
    (_, kind, message), _ = drive(pool, "f1")
    assert kind == "failed" and "unknown task 'nonsense'" in message


def test_the_queue_over_ray_shares_and_finishes_jobs(pool):
    results = {}
    queue = JobQueue(lambda: pool, on_done=lambda job, result: results.__setitem__(job.key, result), grace=600)
    config = ExperimentConfig(**{**SMALL.__dict__, "num_policies": 24})
    ids = {queue.submit(s, ("experiment", config, 2), "experiment", {"config": config, "seed": 2}).id for s in "ab"}
    assert len(ids) == 1
    job_id = ids.pop()
    deadline = time.monotonic() + 180
    while queue.view(job_id).active and time.monotonic() < deadline:
        time.sleep(0.2)
    assert queue.view(job_id).state == "done"
    assert results[("experiment", config, 2)].config == config
    queue.backend = None  # the module's pool is shut down by its fixture, not by the queue
    queue.shutdown()
