"""One progress bar per live run (pvnviz.core.progress.RunProgress over pvnviz.runs.live.run_plan): the stages'
own reports, which restart at 0 each, map to one share of the whole run that never falls and ends at 1, and the
page's bar and line show that share, the stage, and the time left."""

from dataclasses import replace

import pytest

from conftest import tiny_configs
from pvnviz.core.progress import Report, RunProgress, Segment, Stage, overall_text, time_left
from pvnviz.runs.live import run_plan
from pvnviz.workers.jobs import JobView
from pvnviz.workers.tasks import run_task
from ui.server.queue import fraction, payload, waiting_text


def _seg(stage: Stage, weight: float, passes: int = 1) -> Segment:
    return Segment(frozenset({stage}), weight, passes)


def test_stages_that_each_restart_at_zero_give_one_rising_share():
    plan = [_seg(Stage.COLLECTING, 1), _seg(Stage.TRAIN_PVN, 2), _seg(Stage.ASCENT, 1), _seg(Stage.REPLAYS, 1)]
    progress = RunProgress(plan)
    reports = [(s, d) for s in (Stage.COLLECTING, Stage.TRAIN_PVN, Stage.ASCENT, Stage.REPLAYS) for d in range(11)]
    shares = [progress.update(done, 10, stage) for stage, done in reports]
    assert shares == sorted(shares) and shares[0] == 0.0 and shares[-1] == pytest.approx(1.0)
    assert shares[10] == pytest.approx(0.2) and shares[21] == pytest.approx(0.6)  # weighted by the plan's costs
    assert progress.stage_number == 4 and progress.stages == 4


def test_a_skipped_segment_counts_as_done_and_a_stage_s_second_pass_goes_on():
    progress = RunProgress([_seg(Stage.TRAIN_PVN, 1), _seg(Stage.ASCENT, 1), _seg(Stage.ROLLOUTS, 2, passes=2),
                            _seg(Stage.REPLAYS, 1)])  # fmt: skip
    progress.update(5, 10, Stage.TRAIN_PVN)
    assert progress.update(1, 10, Stage.ROLLOUTS) == pytest.approx(0.4 + 0.4 * 0.05)  # the ascent was skipped
    assert progress.update(10, 10, Stage.ROLLOUTS) == pytest.approx(0.6)
    assert progress.update(5, 10, Stage.ROLLOUTS) == pytest.approx(0.7)  # back to 5 of 10: its second pass
    assert progress.update(9, 10, Stage.TRAIN_PVN) == pytest.approx(0.7)  # no later segment trains: no fall
    assert progress.update(10, 10, Stage.REPLAYS) == pytest.approx(1.0)


def test_the_time_left_comes_from_the_pace_once_there_is_one():
    assert time_left(1.0, 0.01, estimate=30.0) == 30.0  # too early to read a pace
    assert time_left(10.0, 0.25) == pytest.approx(30.0)
    assert time_left(10.0, 1.0) == 0.0
    text = overall_text(Report(Stage.TRAIN_PVN, "fingerprint val 0.4", 0.25), 30.0)
    assert text == "train PVN: fingerprint val 0.4 · 25% of the run, about 30 s left"
    assert overall_text(Report(Stage.ROLLOUTS, "step 3"), 5.0) == "rollouts: step 3"  # no share, no claim


@pytest.mark.slow
def test_a_live_run_s_reports_rise_from_zero_to_one_over_all_its_stages():
    sent = []
    config = tiny_configs()[0]
    run_task("live_experiment", {"config": config, "seed": 3}, lambda kind, p: sent.append((kind, p)), bool)
    reports = [p for kind, p in sent if kind == "progress"]
    shares = [report.overall for _, _, report in reports]
    assert None not in shares and shares == sorted(shares)
    assert shares[-1] == pytest.approx(1.0) and shares[0] < 0.5
    stages = [report.stage for _, _, report in reports]
    assert {Stage.TRAIN_PVN, Stage.ASCENT, Stage.REPLAYS} <= set(stages) and stages[-1] is Stage.REPLAYS
    # the per-stage shares restart; the run's share does not
    per_stage = [done / total for done, total, _ in reports]
    assert per_stage != sorted(per_stage)
    plan = run_plan(config)
    assert plan[0].stages >= {Stage.COLLECTING} and all(s.weight >= 0 for s in plan)


RUNNING = JobView(
    id="7", key=("experiment", None, 3), label="cartpole seed 3", state="running",
    progress=(3, 10, Report(Stage.ASCENT, "fingerprint, mean J_hat 40", overall=0.6)), history={}, error="",
    elapsed=12.0, position=0, queued=0, eta=50.0, waiters=1,
)  # fmt: skip


def test_the_page_s_bar_and_line_show_the_run_s_share_and_time_left():
    shown = payload(RUNNING, waiting_text, fraction)  # what job_progress.js draws: its bar's width and line
    assert shown["fraction"] == pytest.approx(0.6)  # not the stage's 3 of 10
    assert shown["text"] == (
        "Running in a worker (12 s): ascent: fingerprint, mean J_hat 40 · 60% of the run, about 8 s left"
    )
    early = replace(RUNNING, elapsed=1.0, progress=(1, 10, Report(Stage.COLLECTING, "chunk 1/10", overall=0.01)))
    assert waiting_text(early).endswith("1% of the run, about 50 s left")  # the queue's estimate, before a pace
    assert fraction(early) == pytest.approx(0.01)
