"""ui/job_progress.py without a browser: the progress files a live run's page reads (the browser side, and that
the page then reruns nothing while a run goes, is tests/test_browser_cartpole.py and test_browser_queue.py)."""

import json
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from pvnviz.core.progress import Report, Stage
from pvnviz.workers.jobs import JobView
from ui import job_progress
from ui.jobs import fraction, waiting_text

QUEUED = JobView(
    id="7",
    key=("experiment", None, 3),
    label="cartpole seed 3",
    state="queued",
    progress=(0, 1, Report(Stage.WAITING)),
    history={},
    error="",
    elapsed=0.0,
    position=2,
    queued=3,
    eta=20.0,
    waiters=1,
)


def _wait_for(predicate, seconds: float = 5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("not within the time")


def _read(static, name):
    return json.loads((static / name).read_text())


def test_a_watched_job_s_file_is_written_at_once_and_follows_the_job(progress_files):
    writer, jobs, static = progress_files
    name, content = writer.watch(QUEUED)
    assert name.startswith(f"jobs/{writer.folder.name}/7-") and name.endswith(".json")
    assert _read(static, name) == content
    assert content["text"] == "Waiting for a worker: 2nd of 3 in line, starts in about 20 s"
    assert content["state"] == "queued" and content["active"] and content["chart"] is None
    running = replace(
        QUEUED,
        state="running",
        position=0,
        progress=(40, 100, Report(Stage.TRAIN_PVN, "step 40")),
        history={"fingerprint": [(0, 2.0, 2.5), (20, 1.0, 1.5), (40, 0.5, 0.9)]},
        elapsed=3.0,
    )
    jobs["7"] = running
    seen = _wait_for(lambda: (c := _read(static, name))["state"] == "running" and c)
    assert seen["fraction"] == pytest.approx(0.4)
    assert seen["text"] == waiting_text(running) and "train PVN" in seen["text"]
    train, val = seen["chart"]["series"]
    assert train["x"] == [0, 20, 40] and train["y"] == [2.0, 1.0, 0.5] and val["y"] == [2.5, 1.5, 0.9]
    jobs["7"] = replace(running, state="done")
    ended = _wait_for(lambda: (c := _read(static, name))["state"] == "done" and c)
    assert not ended["active"] and ended["chart"] is None
    del jobs["7"]  # the queue forgets it: an ended job's file keeps its end
    time.sleep(3 * job_progress.WRITE_EVERY)
    assert _read(static, name)["state"] == "done"


def test_an_ended_job_s_file_goes_after_a_while_and_the_folder_at_close(progress_files, monkeypatch):
    writer, jobs, static = progress_files
    monkeypatch.setattr(job_progress, "KEEP_ENDED", 0.3)
    jobs["7"] = replace(QUEUED, state="cancelled")
    name, _ = writer.watch(jobs["7"])
    assert (static / name).exists()
    _wait_for(lambda: not (static / name).exists())
    folder = writer.folder
    writer.close()
    assert not folder.exists()


def test_a_job_the_queue_forgot_reads_as_gone(progress_files):
    writer, jobs, static = progress_files
    name, _ = writer.watch(QUEUED)
    del jobs["7"]
    assert _wait_for(lambda: _read(static, name)["state"] == "gone")


def test_folders_of_servers_that_are_gone_are_removed_at_start(tmp_path):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / "static" / "jobs" / f"{int(ended.stdout)}-abcd"
    alive = tmp_path / "static" / "jobs" / f"{subprocess.os.getpid()}-efgh"  # this process: running
    for folder in (dead, alive):
        folder.mkdir(parents=True)
        (folder / "1-x.json").write_text("{}")
    writer = job_progress.ProgressFiles(tmp_path / "static", {}.get, waiting_text, fraction)
    try:
        assert not dead.exists() and (alive / "1-x.json").exists()
    finally:
        writer.close()


def test_the_loss_chart_keeps_at_most_max_points_per_curve_and_the_last_step():
    rows = [(step, 1.0 / (step + 1), 2.0 / (step + 1)) for step in range(1000)]
    chart = job_progress.chart_data({"fingerprint": rows})
    for series, column in zip(chart["series"], (1, 2)):
        assert len(series["x"]) <= job_progress.MAX_POINTS + 1 and series["x"][-1] == 999
        by_step = {r[0]: r[column] for r in rows}
        assert all(by_step[int(x)] == y for x, y in zip(series["x"], series["y"]))
    assert job_progress.chart_data({"fingerprint": []}) is None
