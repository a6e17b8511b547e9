"""A live run as the app runs it (pvnviz.runs.live): the run, then its replays, equal to what the ``replays`` task
makes on its own from the run's result, under the key the page looks them up by; a Stop during the replays stops
the run."""

import dataclasses

import numpy as np
import pytest

from conftest import tiny_configs
from pvnviz.core.progress import Cancelled, Stage
from pvnviz.runs.live import LiveRun, policy_pair, replay_pairs_of, replays_key
from pvnviz.workers.tasks import run_task

pytestmark = pytest.mark.slow  # tiny experiments in this process: a few seconds


def _fields(value):
    """A replay's content, comparable with numpy's assert_equal (dataclasses to dicts, arrays kept)."""
    if dataclasses.is_dataclass(value):
        return {f.name: _fields(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_fields(v) for v in value]
    if isinstance(value, dict):
        return {k: _fields(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def live_cartpole() -> tuple[LiveRun, list]:
    sent = []
    live = run_task("live_experiment", {"config": tiny_configs()[0], "seed": 3}, lambda k, p: sent.append((k, p)), bool)
    return live, sent


def test_a_live_run_brings_the_replays_the_replays_task_makes_from_its_result(live_cartpole):
    from ui.results import _replays_job  # what a page showing this result would ask a worker for

    live, _ = live_cartpole
    key, task, kwargs, _ = _replays_job(live.result)
    assert key == replays_key(live.result) and key[:3] == ("replays", live.result.config, 3)
    alone = run_task(task, kwargs, lambda kind, payload: None, lambda: False)
    starts = live.result.config.num_starts
    assert set(live.replays) == set(alone) == {(mode, s) for mode in live.result.traces for s in range(starts)}
    for k in alone:
        np.testing.assert_equal(_fields(live.replays[k]), _fields(alone[k]))


def test_the_replays_are_each_start_before_and_after_its_ascent(live_cartpole):
    live, _ = live_cartpole
    pairs = replay_pairs_of(live.result)
    for mode, trace in live.result.traces.items():
        assert pairs[mode].shape == (trace.params.shape[1], 2, trace.params.shape[2])
        np.testing.assert_array_equal(pairs[mode][1, 0], trace.params[0, 1])  # start 2 before its ascent
        np.testing.assert_array_equal(pairs[mode][1, 1], trace.best_params[1])  # and the best policy it saw
        np.testing.assert_array_equal(policy_pair(trace, 1), pairs[mode][1])
    other = dataclasses.replace(live.result, traces={m: t for m, t in list(live.result.traces.items())[:1]})
    assert replays_key(other) != replays_key(live.result)  # other policies, another key


def test_the_replays_are_the_live_run_s_last_stage(live_cartpole):
    _, sent = live_cartpole
    stages = [payload[2].stage for kind, payload in sent if kind == "progress"]
    assert Stage.TRAIN_PVN in stages and Stage.ASCENT in stages
    first = stages.index(Stage.REPLAYS)
    assert set(stages[first:]) == {Stage.REPLAYS}
    done, total, _ = [payload for kind, payload in sent if kind == "progress"][-1]
    assert done == total > 0


def test_a_stop_during_the_replays_stops_the_live_run():
    sent = []

    def replaying() -> bool:
        return any(kind == "progress" and payload[2].stage is Stage.REPLAYS for kind, payload in sent)

    with pytest.raises(Cancelled):
        run_task("live_experiment", {"config": tiny_configs()[0], "seed": 4}, lambda *e: sent.append(e), replaying)
    assert replaying()  # it was stopped there, not before


def test_a_run_without_ascent_traces_brings_no_replays(monkeypatch):
    import pvnviz.runs.pipeline as pipeline

    real = pipeline.run_experiment
    monkeypatch.setattr(pipeline, "run_experiment", lambda *a, **k: dataclasses.replace(real(*a, **k), traces={}))
    live = run_task("live_experiment", {"config": tiny_configs()[0], "seed": 5}, lambda k, p: None, lambda: False)
    assert live.replays is None and live.result.traces == {}


def test_a_live_swimmer_run_brings_every_start_s_replay_from_one_batch():
    from ui.results import _replays_job

    config = tiny_configs()[1]
    sent = []
    live = run_task("live_experiment", {"config": config, "seed": 3}, lambda *e: sent.append(e), lambda: False)
    _, task, kwargs, _ = _replays_job(live.result)
    alone = run_task(task, kwargs, lambda kind, payload: None, lambda: False)
    assert set(live.replays) == set(alone) == {(m, s) for m in live.result.traces for s in range(config.num_starts)}
    for k in alone:
        np.testing.assert_equal(_fields(live.replays[k]), _fields(alone[k]))
    assert any("one batch" in str(payload[2]) for kind, payload in sent if kind == "progress")


def test_replays_that_fail_leave_the_run_whole_and_logged(monkeypatch, caplog):
    import pvnviz.envs.registry as registry

    def broken(*args, **kwargs):
        raise RuntimeError("no replay today")

    monkeypatch.setattr(registry, "replay_pairs", broken)
    live = run_task("live_experiment", {"config": tiny_configs()[0], "seed": 6}, lambda k, p: None, lambda: False)
    assert live.replays is None and live.result.traces  # the run is kept; the page asks a worker for its replays
    assert "no replay today" in caplog.text and "kept without them" in caplog.text
