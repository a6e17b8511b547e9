"""Progress reports (pvnviz.core.progress): stages are values, so the CLI's bars follow ``Report.stage`` and never
the detail's text; a report survives the pickles that carry it from a worker; ``cancellable`` stops work; and the
long loops of the package report the stage they are in, each stage ending at its total."""

import io
import pickle
from multiprocessing import Pipe

import numpy as np
import pytest
import tqdm

from pvnviz.core.progress import Cancelled, Hooks, Report, Stage, TerminalProgress, cancellable
from pvnviz.envs import cartpole
from pvnviz.envs.replay import replay_all
from pvnviz.polytope.experiment import PolytopeConfig, train_polytope_pvn
from pvnviz.runs.pipeline import ExperimentConfig, run_experiment


@pytest.fixture
def bars(monkeypatch) -> list:
    """Every tqdm bar TerminalProgress opens (real bars, recorded as they are made)."""
    opened = []

    class Recorded(tqdm.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(tqdm, "tqdm", Recorded)
    return opened


def test_a_report_reads_as_its_label_and_detail():
    assert str(Report(Stage.ROLLOUTS, "CartPole step 5, 3/10 running")) == "rollouts: CartPole step 5, 3/10 running"
    assert str(Report(Stage.WAITING)) == "waiting for a worker"
    assert Report("train PVN", "x").stage is Stage.TRAIN_PVN  # a label names its stage
    with pytest.raises(ValueError):
        Report("train", "a stage that does not exist")


def test_every_stage_has_its_own_label():
    labels = [stage.value for stage in Stage]
    assert len(set(labels)) == len(labels) and all(labels)


def test_a_terminal_bar_per_stage_however_the_detail_reads(bars):
    stream = io.StringIO()
    progress = TerminalProgress(stream)
    details = ["fingerprint: val KL 0.9", "fingerprint: val KL 0.5", "a: b: c", "", "no colon"]
    for done, detail in enumerate(details, 1):
        progress(done, 10, Report(Stage.TRAIN_PVN, detail))
    assert [bar.desc for bar in bars] == ["train PVN"]  # the detail changed, colons and all: the same bar
    assert bars[0].n == len(details)
    progress(1, 10, Report(Stage.ASCENT, "no colon"))  # the same detail, another stage: a new bar
    progress(2, 10, Report(Stage.ASCENT, "fingerprint: mean J_hat 3"))
    assert [bar.desc for bar in bars] == ["train PVN", "ascent"]
    assert bars[0].disable  # the first one was closed
    progress.close()
    text = stream.getvalue()
    assert "fingerprint: val KL 0.5" in text and "fingerprint: mean J_hat 3" in text  # the detail whole, as given


def test_a_stage_that_reached_its_total_is_a_new_bar_when_it_starts_again(bars):
    progress = TerminalProgress(io.StringIO())
    for run in range(2):
        for done in (5, 10):
            progress(done, 10, Report(Stage.ROLLOUTS, f"run {run}"))
    assert [bar.desc for bar in bars] == ["rollouts", "rollouts"]
    assert progress.drawn


def test_a_report_survives_the_pickles_that_carry_it_from_a_worker():
    from pvnviz.workers import pool

    report = Report(Stage.COLLECTING, "chunk 2/5")
    back = pickle.loads(pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == report and back.stage is Stage.COLLECTING and str(back) == "collecting: chunk 2/5"
    sender, receiver = Pipe()
    pool._send(sender, ("job-1", "progress", (2, 5, report)))  # a local worker's event, as the server reads it
    assert pool._recv(receiver) == ("job-1", "progress", (2, 5, report))
    cloudpickle = pytest.importorskip("cloudpickle")  # what Ray serialises a task's events with
    assert cloudpickle.loads(cloudpickle.dumps(report)).stage is Stage.COLLECTING


def test_cancellable_raises_cancelled_with_the_report_it_stopped_at():
    seen, stop = [], [False]
    on_progress = cancellable(lambda: stop[0], lambda done, total, report: seen.append((done, report.stage)))
    on_progress(1, 3, Report(Stage.ASCENT, "a"))
    stop[0] = True
    stopping = Report(Stage.ASCENT, "b")
    with pytest.raises(Cancelled) as caught:
        on_progress(2, 3, stopping)
    assert caught.value.args == (stopping,)
    assert seen == [(1, Stage.ASCENT)]  # the report after the request did not reach the inner callback


def test_a_rollout_reports_the_rollout_stage_until_its_horizon():
    calls = []
    rng = np.random.default_rng(0)
    states = cartpole.reset_states(rng, (3, 4))
    cartpole.batched_env().rollout_returns_from_states(
        lambda obs: np.zeros(obs.shape[:-1], dtype=int), states, horizon=60, on_progress=lambda *a: calls.append(a)
    )
    assert calls and calls[-1][:2] == (60, 60)
    assert all(isinstance(r, Report) and r.stage is Stage.ROLLOUTS for _, _, r in calls)
    assert all(r.detail.startswith("CartPole") for _, _, r in calls)  # which environment: in the detail


def test_replays_and_the_polytope_pvn_report_their_stages():
    calls = []
    pairs = {"fingerprint": np.zeros((2, 2, 3))}
    replay_all(lambda arch, params, horizon, seed: None, None, pairs, 10, 0, lambda *a: calls.append(a))
    assert [(done, total, r.stage) for done, total, r in calls] == [(i, 2, Stage.REPLAYS) for i in (0, 1, 2)]
    calls.clear()
    train_polytope_pvn(PolytopeConfig(train_steps=300, log_every=10), 0, lambda *a: calls.append(a))
    assert {r.stage for _, _, r in calls} == {Stage.TRAIN_POLYTOPE_PVN} and calls[-1][:2] == (300, 300)


def test_a_run_reports_its_stages_in_order_each_ending_at_its_total():
    calls = []
    config = ExperimentConfig(
        num_policies=20, num_episodes=2, horizon=20, train_steps=20, ascent_steps=83, eval_every=83, eval_episodes=2,
        inputs=("fingerprint", "flattened"), num_starts=1,
    )  # fmt: skip; 83 ascent steps: a report every 2, and the last one
    run_experiment(config, 0, Hooks(lambda *a: calls.append(a)))
    runs = []  # (stage, last done, total) of each uninterrupted run of one stage and total
    for done, total, report in calls:
        if runs and runs[-1][0] is report.stage and runs[-1][2] == total and runs[-1][1] < total:
            runs[-1][1] = done
        else:
            runs.append([report.stage, done, total])
    assert all(done == total for _, done, total in runs), runs  # a bar per stage closes at its end
    order = [stage for stage, _, _ in runs]
    assert order[0] is Stage.ROLLOUTS and Stage.TRAIN_PVN in order and Stage.ASCENT in order
    assert order.index(Stage.TRAIN_PVN) < order.index(Stage.ASCENT)
    assert sum(stage is Stage.ASCENT for stage in order) >= 2  # one ascent per input, each its own bar
