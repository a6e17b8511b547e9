"""What a worker's task reports (pvnviz.workers.tasks): throttled progress that still sends the first and the last
report of every stage (read from ``Report.stage``), losses before the progress after them, and Stop as Cancelled."""

import pytest

from pvnviz.core.progress import Cancelled, Report, Stage
from pvnviz.polytope.experiment import PolytopeConfig
from pvnviz.workers.tasks import Reporter, run_task


def reporter(cancelled=lambda: False) -> tuple[Reporter, list]:
    sent = []
    return Reporter(lambda kind, payload: sent.append((kind, payload)), cancelled, interval=1e9), sent


def test_the_throttle_keeps_the_first_and_last_report_of_every_stage():
    ours, sent = reporter()
    rollouts = [Report(Stage.ROLLOUTS, f"CartPole step {i}: {i}/3 running") for i in (1, 2, 3)]
    training = [Report(Stage.TRAIN_PVN, f"fingerprint, val KL {i}") for i in (1, 2, 3)]
    for i, report in enumerate(rollouts, 1):
        ours.on_progress(i, 10, report)  # a stage that stops short of its total (every episode ended)
    for i, report in enumerate(training, 1):
        ours.on_progress(i, 5, report)
    assert sent == [
        ("progress", (1, 10, rollouts[0])),  # the first of a stage goes at once
        ("progress", (3, 10, rollouts[2])),  # the last, held back by the throttle, goes when the next stage begins
        ("progress", (1, 5, training[0])),
    ]
    ours.on_progress(5, 5, training[2])  # a stage's end always goes
    assert sent[-1] == ("progress", (5, 5, training[2]))


def test_what_the_throttle_held_goes_when_the_task_ends():
    ours, sent = reporter()
    ours.on_progress(1, 10, Report(Stage.ASCENT, "a"))
    ours.on_progress(2, 10, Report(Stage.ASCENT, "b"))
    ours.on_metrics("fingerprint", 50, 0.5, 0.6)
    assert [payload[2].detail for kind, payload in sent if kind == "progress"] == ["a"]
    ours.finish()
    assert sent[1:] == [("metrics", [("fingerprint", 50, 0.5, 0.6)]), ("progress", (2, 10, Report(Stage.ASCENT, "b")))]


def test_losses_reported_with_the_progress_do_not_hold_it_back(monkeypatch):
    """Algorithm 2 reports its losses, then its progress, at the same steps: both go on each interval (the
    losses first). Both once shared one clock, and the losses held back every progress report of the training
    stage: the page's bar and text stood still for the whole training."""
    clock = [0.0]
    monkeypatch.setattr("pvnviz.workers.tasks.time.monotonic", lambda: clock[0])
    sent = []
    ours = Reporter(lambda kind, payload: sent.append((kind, payload)), lambda: False, interval=0.1)
    for step in range(0, 1001, 50):  # one log step every 0.05 s
        clock[0] = step / 1000
        ours.on_metrics("fingerprint", step, 1.0, 1.0)
        ours.on_progress(step, 1000, Report(Stage.TRAIN_PVN, f"val KL at {step}"))
    progress = [payload[0] for kind, payload in sent if kind == "progress"]
    assert len(progress) >= 9 and progress[-1] == 1000, progress  # about one per 0.1 s, and the end
    assert sum(len(payload) for kind, payload in sent if kind == "metrics") >= 20  # no loss lost
    first_progress = next(i for i, (kind, _) in enumerate(sent) if kind == "progress" and _[0] == 100)
    assert any(kind == "metrics" and payload[-1][1] == 100 for kind, payload in sent[:first_progress])


def test_stop_raises_cancelled_at_the_next_report():
    ours, sent = reporter(cancelled=lambda: True)
    report = Report(Stage.COLLECTING, "chunk 1/4")
    with pytest.raises(Cancelled) as caught:
        ours.on_progress(1, 4, report)
    assert caught.value.args == (report,) and sent == []


def test_a_task_sends_reports_of_its_stage_ending_at_its_total():
    sent = []
    run_task(
        "polytope_pvn",
        {"config": PolytopeConfig(train_steps=500, log_every=10), "seed": 0},
        lambda kind, payload: sent.append((kind, payload)),
        lambda: False,
    )
    progress = [payload for kind, payload in sent if kind == "progress"]
    assert progress and all(isinstance(r, Report) and r.stage is Stage.TRAIN_POLYTOPE_PVN for _, _, r in progress)
    assert progress[-1][:2] == (500, 500)


WARMED_RUN = """
import importlib, sys
sys.path.insert(0, "tests")
from pvnviz.workers.pool import WARM
for module in WARM["run"]:
    importlib.import_module(module)
from pvnviz.workers.tasks import run_task
from conftest import tiny_configs
for config in tiny_configs():
    before = set(sys.modules)
    run_task("live_experiment", {"config": config, "seed": 3}, lambda kind, payload: None, lambda: False)
    print(sorted(set(sys.modules) - before))
"""


@pytest.mark.slow  # a fresh interpreter importing torch and running two tiny experiments: about 15 s
def test_a_warmed_run_worker_imports_nothing_more_for_its_first_run():
    import ast
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", WARMED_RUN], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    cartpole, swimmer = (ast.literal_eval(line) for line in out.stdout.strip().splitlines()[-2:])
    # e.g. torch._dynamo (sympy and 800 more modules) on Adam's first step, when WARM lacked it: 1.5 s of a run
    assert len(cartpole) <= 3 and len(swimmer) <= 3, (cartpole, swimmer)
