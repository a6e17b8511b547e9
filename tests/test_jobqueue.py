"""The fair queue (pvnviz.workers.jobqueue) over a scripted backend: sharing, order, one running job per session,
positions and estimates, Stop, sessions that go away, results handed on and not kept."""

import time

import pytest

from pvnviz.core.progress import Report, Stage
from pvnviz.workers.jobqueue import JobQueue


class ScriptedBackend:
    """A backend whose workers do nothing until the test says a job progressed or ended."""

    name = "scripted"

    def __init__(self, run: int = 2, quick: int = 1):
        self.slots = {"run": run, "quick": quick}
        self.running: dict[str, str] = {}  # job id -> lane
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self.pending: list[tuple[str, str, object]] = []
        self.shut = False

    def capacity(self, lane):
        return self.slots[lane]

    def free(self, lane):
        return self.slots[lane] - sum(v == lane for v in self.running.values())

    def start(self, job_id, lane, task, kwargs):
        self.running[job_id] = lane
        self.started.append(job_id)

    def cancel(self, job_id):
        self.cancelled.append(job_id)
        self.end(job_id, "cancelled", None)

    def end(self, job_id, kind, payload):
        self.running.pop(job_id, None)
        self.pending.append((job_id, kind, payload))

    def poll(self, timeout):
        time.sleep(min(timeout, 0.01))
        events, self.pending = self.pending, []
        return events

    def shutdown(self):
        self.shut = True


def settle(queue: JobQueue, seconds: float = 0.3) -> None:
    time.sleep(seconds)  # a few dispatcher ticks (POLL_SECONDS = 0.05)


@pytest.fixture
def queue_and_backend():
    backend, done = ScriptedBackend(), []
    queue = JobQueue(lambda: backend, on_done=lambda job, result: done.append((job.key, result)), grace=60)
    yield queue, backend, done
    queue.shutdown()


@pytest.mark.slow
def test_identical_requests_share_one_job_and_every_waiter_sees_it(queue_and_backend):
    queue, backend, done = queue_and_backend
    views = [queue.submit(f"s{i}", ("exp", 7), "experiment", {}) for i in range(8)]
    assert len({v.id for v in views}) == 1
    settle(queue)
    assert backend.started == [views[0].id]
    report = Report(Stage.TRAIN_PVN, "fingerprint, val KL 0.5")
    backend.pending.append((views[0].id, "progress", (3, 10, report)))
    settle(queue)
    assert all(queue.view(views[0].id, f"s{i}").progress == (3, 10, report) for i in range(8))
    assert queue.view(views[0].id).waiters == 8
    backend.end(views[0].id, "done", "RESULT")
    settle(queue)
    assert done == [(("exp", 7), "RESULT")]  # handed on once, for all eight
    assert queue.view(views[0].id).state == "done"


def test_jobs_start_in_order_as_workers_free_up_with_positions_and_estimates(queue_and_backend):
    queue, backend, _ = queue_and_backend
    ids = [queue.submit(f"s{i}", ("exp", i), "experiment", {}, estimate=10).id for i in range(5)]
    settle(queue)
    assert backend.started == ids[:2]  # two workers
    waiting = [queue.view(i) for i in ids[2:]]
    assert [v.position for v in waiting] == [1, 2, 3] and all(v.queued == 3 for v in waiting)
    etas = [v.eta for v in waiting]
    running = queue.view(ids[0]).eta
    assert etas[0] == pytest.approx(running, abs=0.5)  # the first in line starts when a worker frees
    assert etas[1] == pytest.approx(running, abs=0.5)  # so does the second: two workers free at about once
    assert etas[2] > etas[1] + 5  # the third waits for one of the first two to run too
    backend.end(ids[1], "done", None)
    settle(queue)
    assert backend.started == ids[:3]  # the first in line took the freed worker
    assert [queue.view(i).position for i in ids[3:]] == [1, 2]


def test_a_session_runs_one_job_at_a_time_and_others_go_first(queue_and_backend):
    queue, backend, _ = queue_and_backend
    a1 = queue.submit("a", ("exp", 1), "experiment", {}).id
    a2 = queue.submit("a", ("exp", 2), "experiment", {}).id
    b1 = queue.submit("b", ("exp", 3), "experiment", {}).id
    settle(queue)
    assert backend.started == [a1, b1]  # a's second job waits although a worker was free when b asked
    assert queue.view(a2).state == "queued"
    backend.end(a1, "done", None)
    settle(queue)
    assert backend.started == [a1, b1, a2]


def test_quick_tasks_have_their_own_lane(queue_and_backend):
    queue, backend, _ = queue_and_backend
    runs = [queue.submit(f"s{i}", ("exp", i), "experiment", {}).id for i in range(3)]
    quick = queue.submit("s0", ("pvn", 0), "polytope_pvn", {}, lane="quick").id
    settle(queue)
    assert quick in backend.started and runs[2] not in backend.started  # not behind the runs' queue


def test_stop_by_the_only_waiter_cancels_a_running_and_a_queued_job(queue_and_backend):
    queue, backend, _ = queue_and_backend
    ids = [queue.submit(f"s{i}", ("exp", i), "experiment", {}).id for i in range(3)]
    settle(queue)
    queue.detach(ids[0], "s0")  # running
    queue.detach(ids[2], "s2")  # queued
    assert queue.view(ids[2]).state == "cancelled"  # at once: it never started
    settle(queue)
    assert backend.cancelled == [ids[0]] and queue.view(ids[0]).state == "cancelled"
    assert ids[2] not in backend.started


def test_stop_by_one_of_two_waiters_leaves_the_job_running(queue_and_backend):
    queue, backend, _ = queue_and_backend
    job = queue.submit("a", ("exp", 1), "experiment", {}).id
    queue.submit("b", ("exp", 1), "experiment", {})
    settle(queue)
    assert queue.waits(job, "a") and queue.waits(job, "b")
    queue.detach(job, "a")
    settle(queue)
    assert backend.cancelled == [] and queue.view(job).state == "running" and queue.view(job).waiters == 1
    assert not queue.waits(job, "a") and queue.waits(job, "b")  # what a page of "a" asks after a Stop in its browser
    assert not queue.waits("no-such-job", "b")


@pytest.mark.slow
def test_a_job_nobody_looks_at_any_more_is_cancelled_after_the_grace():
    backend = ScriptedBackend()
    queue = JobQueue(lambda: backend, grace=0.5)
    watched = queue.submit("a", ("exp", 1), "experiment", {}).id
    left = queue.submit("b", ("exp", 2), "experiment", {}).id
    for _ in range(10):  # 1 s: session a keeps looking (as its page's polling does); b's tab was closed
        queue.view(watched, "a")
        time.sleep(0.1)
    assert queue.view(left).state == "cancelled" and backend.cancelled == [left]
    assert queue.view(watched).state == "running"
    queue.shutdown()


@pytest.mark.slow
def test_a_connected_session_keeps_its_job_without_looking():
    backend = ScriptedBackend()
    queue = JobQueue(lambda: backend, is_alive=lambda session: session == "connected", grace=0.2)
    try:
        kept = queue.submit("connected", ("exp", 1), "experiment", {}).id
        gone = queue.submit("gone", ("exp", 2), "experiment", {}).id
        settle(queue, 0.8)
        assert queue.view(kept).state == "running" and queue.view(gone).state == "cancelled"
    finally:
        queue.shutdown()


@pytest.mark.slow
def test_a_failed_job_says_why_and_a_backend_that_cannot_start_fails_every_job():
    backend = ScriptedBackend()
    queue = JobQueue(lambda: backend)
    job = queue.submit("a", ("exp", 1), "experiment", {}).id
    settle(queue)
    backend.end(job, "failed", "num_policies must be at least 2")
    settle(queue)
    assert queue.view(job).state == "failed" and queue.view(job).error == "num_policies must be at least 2"
    queue.shutdown()
    assert backend.shut

    def unreachable():
        raise ValueError("cannot reach a Ray cluster at '10.0.0.1:6379'")

    broken = JobQueue(unreachable)
    job = broken.submit("a", ("exp", 1), "experiment", {}).id
    settle(broken)
    assert broken.view(job).state == "failed" and "cannot reach a Ray cluster" in broken.view(job).error
    broken.shutdown()


@pytest.mark.slow
def test_finished_jobs_are_forgotten_and_their_results_not_kept():
    backend = ScriptedBackend()
    queue = JobQueue(lambda: backend, on_done=lambda job, result: None, keep_finished=0.2)
    job = queue.submit("a", ("exp", 1), "experiment", {"big": "x"}).id
    settle(queue)
    backend.end(job, "done", bytearray(10**6))
    settle(queue, 0.6)
    assert queue.view(job) is None and queue.jobs() == []
    queue.shutdown()


@pytest.mark.slow
def test_the_estimate_learns_from_finished_jobs():
    backend = ScriptedBackend(run=1)
    queue = JobQueue(lambda: backend, grace=60)
    first = queue.submit("a", ("exp", 1), "experiment", {}, estimate=0.5).id
    settle(queue)
    time.sleep(2.0)
    backend.end(first, "done", None)  # took about 2 s against 0.5 s estimated (4x, the queue assumed 2x)
    settle(queue)
    queue.submit("b", ("exp", 2), "experiment", {}, estimate=0.5)
    queue.submit("c", ("exp", 3), "experiment", {}, estimate=0.5)
    last = queue.submit("d", ("exp", 4), "experiment", {}, estimate=0.5)
    settle(queue, 0.1)
    # behind b (running) and c: 2 x 0.5 s x the corrected ratio 0.7 x 2 + 0.3 x 4 = 2.6, not 2 x 0.5 x 2
    assert queue.view(last.id).eta == pytest.approx(2 * 0.5 * 2.6, abs=0.3)
    queue.shutdown()


def test_a_backend_error_fails_one_job_and_the_queue_goes_on():
    backend = ScriptedBackend()
    real_start = backend.start

    def start(job_id, lane, task, kwargs):
        if task == "explodes":
            raise BrokenPipeError("the worker died between poll and start")
        real_start(job_id, lane, task, kwargs)

    backend.start = start
    queue = JobQueue(lambda: backend, grace=60)
    bad = queue.submit("a", ("exp", 1), "explodes", {}).id
    good = queue.submit("b", ("exp", 2), "experiment", {}).id
    settle(queue)
    assert queue.view(bad).state == "failed" and "could not start" in queue.view(bad).error
    assert queue.view(good).state == "running"
    later = queue.submit("c", ("exp", 3), "experiment", {}).id
    settle(queue)
    assert queue.view(later).state == "running"  # the dispatcher lived on
    queue.shutdown()


def test_workers_that_cannot_start_are_tried_again_by_the_next_job():
    attempts = []

    def factory():
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError("cannot reach a Ray cluster at '127.0.0.1:1'")
        return ScriptedBackend()

    queue = JobQueue(factory, grace=60)
    first = queue.submit("a", ("exp", 1), "experiment", {}).id
    settle(queue)
    assert queue.view(first).state == "failed"
    second = queue.submit("a", ("exp", 2), "experiment", {}).id  # the cluster is back
    settle(queue)
    assert queue.view(second).state == "running" and len(attempts) == 2
    queue.shutdown()


@pytest.mark.slow
def test_nobody_joins_a_job_being_cancelled_and_a_left_job_passes_to_its_other_waiter(queue_and_backend):
    queue, backend, _ = queue_and_backend
    backend.cancel = lambda job_id: backend.cancelled.append(job_id)  # the worker takes its time to stop
    job = queue.submit("a", ("exp", 1), "experiment", {}).id
    settle(queue)
    queue.detach(job, "a")
    settle(queue)
    assert backend.cancelled == [job]
    fresh = queue.submit("b", ("exp", 1), "experiment", {}).id
    assert fresh != job and queue.attach(job, "b") is None  # a new job, not the dying one

    backend.slots["run"] = 4  # room for every job below: only the one-running-job rule holds one back
    shared = queue.submit("c", ("exp", 2), "experiment", {}).id
    queue.submit("d", ("exp", 2), "experiment", {})
    own = queue.submit("c", ("exp", 3), "experiment", {}).id
    settle(queue)
    assert queue.view(shared).state == "running" and queue.view(own).state == "queued"  # c runs one job at a time
    queue.detach(shared, "c")  # c leaves its first job; d still waits on it, so it runs on as d's
    settle(queue)
    assert queue.view(shared).state == "running" and queue.view(own).state == "running"
    # The slow worker stops at last, and the others stop when told: the queue shuts down at once, not in 30 s.
    del backend.cancel
    for dying in backend.cancelled:
        backend.end(dying, "cancelled", None)


def test_prepare_starts_a_lane_s_workers_before_its_first_job():
    """A page with a Run button asks for the run workers early: the backend is made and asked for that lane at
    once, once, with no job; a lane that is not one is refused."""
    backend, asked = ScriptedBackend(), []
    free = backend.free
    backend.free = lambda lane: asked.append(lane) or free(lane)
    queue = JobQueue(lambda: backend)
    try:
        assert queue.backend is None  # nothing starts before a page asks
        queue.prepare("run")
        queue.prepare("run")
        settle(queue)
        assert queue.backend is backend and asked == ["run"]
        with pytest.raises(ValueError, match="lane must be one of"):
            queue.prepare("gpu")
    finally:
        queue.shutdown()


def test_each_ended_job_logs_its_wait_and_run_and_the_load_bench_reads_them_back(queue_and_backend, caplog):
    from browserbench.load import job_times

    queue, backend, _ = queue_and_backend
    caplog.set_level("INFO", logger="pvnlab.jobqueue")
    done = queue.submit("a", ("exp", 1), "experiment", {}, label="cartpole seed 1").id
    queue.submit("b", ("exp", 1), "experiment", {})
    stopped = queue.submit("c", ("exp", 2), "experiment", {}, label="swimmer (wide) seed 2").id
    never = queue.submit("d", ("exp", 3), "experiment", {}, label="third").id  # both run workers busy: queued
    settle(queue, 0.4)
    backend.end(done, "done", "RESULT")
    queue.detach(stopped, "c")
    queue.detach(never, "d")
    settle(queue)
    times = job_times(caplog.text)
    assert [label for label, _, _ in times] == ["cartpole seed 1 done", "swimmer (wide) seed 2 cancelled"]
    assert all(waited < 0.2 and 0.3 <= ran < 2.0 for _, waited, ran in times)  # each ran about 0.4 s
    assert "cartpole seed 1) done" in caplog.text and "2 sessions waiting" in caplog.text
    assert "(third) cancelled: waited" in caplog.text and "never started" in caplog.text
