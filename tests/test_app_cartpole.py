"""The CartPole page through Streamlit's AppTest, as a class uses it: shipped runs and presets, its figures, Run
and Stop, two sessions sharing a job, links (good, bad and hostile), reset, saved runs and uploads (damaged and
hostile ones refused), projector mode, the shipped budget comparison."""

import json
import threading
import time
from pathlib import Path

import hostile_inputs as hostile
import pytest
from streamlit.testing.v1 import AppTest

import ui.experiment
import ui.server.queue
from conftest import (
    component_data,
    figures,
    frame_figures,
    no_training,
    open_link,
    open_page,
    players,
    press_run,
    press_stop,
    texts,
    trace_names,
)
from pvnviz.runs import archive
from pvnviz.runs.files import load_result
from pvnviz.runs.live import replays_key
from pvnviz.runs.presets import PRESETS
from ui.headline import answers_line

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

QUICK = PRESETS["cartpole"]["quick"]()
PAPER = PRESETS["cartpole"]["paper"]()
ROOT = Path(__file__).resolve().parents[1]
FIELDS = [field for _, fields in ui.experiment.FIELDS for field, _, kind, _ in fields if kind in ("int", "float")]



def test_cartpole_quick_preset_opens_its_shipped_run(monkeypatch):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_page("pages/cartpole.py")
    at.selectbox(key="cartpole_preset").set_value("quick").run()
    assert at.number_input(key="cartpole_num_policies").value == QUICK.num_policies
    assert "data/cartpole-quick" in texts(at)


def test_cartpole_beyond_preset_opens_its_shipped_run_with_fresh_numbers(monkeypatch):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_page("pages/cartpole.py")
    at.selectbox(key="cartpole_preset").set_value("beyond").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "data/cartpole-beyond" in texts(at)
    fresh = load_result("data/cartpole-beyond", "cartpole").summary()["inputs"]["fingerprint"]["fresh_mean_return"]
    shown = [m for m in at.metric if "fingerprint" in m.label and "fresh" in m.label]
    assert [m.value for m in shown] == [f"{fresh:.1f}"]
    spent = load_result("data/cartpole-beyond", "cartpole").summary()["inputs"]["fingerprint"]["check_env_steps"]
    assert f"checks {spent:,}" in shown[0].help  # every env step beyond the dataset is shown
    summary = load_result("data/cartpole-beyond", "cartpole").summary()
    assert answers_line(summary) in [c.value for c in at.caption]  # Algorithm 3's answers, under the headline


def test_a_run_s_replays_use_its_own_seed_whatever_the_sidebar_s(monkeypatch):
    """Seed 7's Quick settings have not been run, so the page shows seed 0's shipped run: its replays are that run's
    (seed 0), one job and one animation for every session showing it, not one per visitor's seed."""
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_link({"seed": "7", "cartpole_preset": "quick"})
    assert "have not been run yet (seed 7)" in texts(at)
    store, lock = ui.result_store()  # the server's shared cache: the replays made for the page (or by an earlier one)
    with lock:
        seeds = {key[2] for key in store if isinstance(key, tuple) and key[:2] == ("replays", QUICK)}
    assert seeds == {0}, seeds


def test_a_preset_link_fills_every_field_with_the_preset():
    at = open_link({"seed": "0", "cartpole_preset": "quick"})
    assert at.selectbox(key="cartpole_preset").value == "quick"
    for field in FIELDS:
        assert at.number_input(key=f"cartpole_{field}").value == pytest.approx(getattr(QUICK, field)), field
    assert "data/cartpole-quick" in texts(at)  # and the Quick results are drawn, not the Paper ones
    assert at.metric[0].value.endswith(f"/ {QUICK.num_policies}")


def test_a_link_with_a_changed_field_keeps_it_on_top_of_the_preset():
    at = open_link({"seed": "3", "cartpole_preset": "quick", "cartpole_train_steps": "700"})
    assert at.session_state["seed"] == 3
    assert at.number_input(key="cartpole_train_steps").value == 700
    assert at.number_input(key="cartpole_num_policies").value == QUICK.num_policies
    assert "not been run yet" in texts(at)  # shown honestly: no run of these settings exists


def test_reset_to_the_paper_restores_preset_fields_and_seed():
    at = open_page("pages/cartpole.py")
    at.selectbox(key="cartpole_preset").set_value("quick").run()
    at.number_input(key="cartpole_train_steps").set_value(900).run()
    at.session_state["seed"] = 7
    at.run()
    at.button(key="cartpole_reset").click().run()
    assert at.session_state["seed"] == 0
    assert at.selectbox(key="cartpole_preset").value == "paper"
    for field in FIELDS:
        assert at.number_input(key=f"cartpole_{field}").value == pytest.approx(getattr(PAPER, field)), field
    assert "data/cartpole-paper" in texts(at)


def _small(at: AppTest, train_steps: int) -> None:
    for key, value in (("num_policies", 40), ("num_episodes", 5), ("train_steps", train_steps), ("ascent_steps", 20)):
        at.number_input(key=f"cartpole_{key}").set_value(value)
    at.number_input(key="cartpole_eval_episodes").set_value(5).run()


def _wait_for_job(at: AppTest, key: str = "cartpole_job", seconds: float = 180) -> ui.server.queue.JobView:
    """Rerun the page (as its polling fragment would) until this session's job has ended; its last view."""
    job_id = at.session_state[key]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = ui.server.queue.job_queue().view(job_id)
        if not job.active:
            at.run()
            return job
        at.run()  # a page's look at its job also keeps it counted as waiting (the queue's heartbeat)
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} still running after {seconds} s")


def _press_stop(at: AppTest) -> None:
    """What the job panel's Stop does in a browser: the server's Stop route takes the POST of its ``stopUrl``,
    then the page's panel reruns (here: the next run)."""
    assert press_stop(component_data(at)["stopUrl"])
    at.run()


def _press_run(at: AppTest) -> None:
    """What the job panel's Run does in a browser: the server's Run route queues the job, and the page's next
    script run adopts it."""
    press_run(at)
    at.run()


def test_run_button_trains_in_a_worker_and_the_page_shows_the_result(monkeypatch):
    at = open_page("pages/cartpole.py")
    _small(at, train_steps=60)
    assert "not been run yet" in texts(at)
    _press_run(at)
    job = _wait_for_job(at)
    assert job.state == "done" and not job.error
    assert ("experiment", job.key[1], job.key[2]) == job.key and job.key[2] == at.session_state["seed"]
    # the run brought its replays (pvnviz.runs.live): the page that draws it asks a worker for nothing more
    asked, submit = [], ui.server.queue.submit

    def recorded(key, task, *args, **kwargs):
        asked.append(task)
        return submit(key, task, *args, **kwargs)

    monkeypatch.setattr(ui.server.queue, "submit", recorded)
    at.run()
    assert "live run of these settings" in texts(at)
    assert asked == [] and "cartpole_replay" in players(at)
    store, _ = ui.result_store()
    assert replays_key(store[job.key]) in store
    assert not at.exception


def test_stop_cancels_a_running_job_and_keeps_the_last_result():
    at = open_page("pages/cartpole.py")
    _small(at, train_steps=50000)
    _press_run(at)
    job_id = at.session_state["cartpole_job"]
    assert ui.server.queue.job_queue().view(job_id).active
    _press_stop(at)
    deadline = time.monotonic() + 5
    while ui.server.queue.job_queue().view(job_id).active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ui.server.queue.job_queue().view(job_id).state == "cancelled"  # nobody else waited: the worker stopped it
    at.run()
    assert "Run stopped" in texts(at)
    assert "Shown below: preset Paper (MLP [30]), seed 0" in texts(at)  # the last finished result stays
    assert len(figures(at)) >= 5


_panel_data = component_data
_press_browser_run = press_run


def _stop_by(answer: dict) -> bool:
    return press_stop(answer["stopUrl"])


def test_the_run_route_takes_run_and_the_next_script_run_adopts_the_job():
    """Run is the job panel's component's: the server's Run route queues the job with no script run and answers
    what the page follows; two sessions pressing it share one job; each session's next script run adopts its job,
    whose Stop keeps working; a token is good once."""
    first, second = open_page("pages/cartpole.py"), open_page("pages/cartpole.py")
    for at in (first, second):
        _small(at, train_steps=3000)
        at.session_state["seed"] = 12
        at.run()
        assert not [b for b in at.button if b.key == "cartpole_run_button"]  # Run is the component's
        assert _panel_data(at)["run"]["label"] == "Run with these settings" and _panel_data(at)["payload"] is None
    start_url = _panel_data(first)["run"]["startUrl"]
    answer = _press_browser_run(first)
    job_id = answer["payload"]["id"]
    assert answer["payload"]["active"] and "/pvn/stop/" in answer["stopUrl"] and "?token=" in answer["stopUrl"]
    from conftest import routes_client

    with routes_client() as client:
        assert client.post(start_url).status_code == 404  # the same token again: used
    assert "cartpole_job" not in first.session_state  # no script run yet
    assert ui.server.queue.job_queue().view(job_id).waiters == 1
    again = _press_browser_run(second)  # the same settings: the same job
    assert again["payload"]["id"] == job_id and ui.server.queue.job_queue().view(job_id).waiters == 2
    first.run()  # its next script run adopts the job: the panel follows it, with the same Stop
    assert first.session_state["cartpole_job"] == job_id
    data = _panel_data(first)
    assert data["payload"]["id"] == job_id and data["run"]["disabled"] and data["stopUrl"] == answer["stopUrl"]
    assert _stop_by(again)  # the second leaves before any script run of its own: the job goes on for the first
    second.run()
    assert second.session_state["cartpole_job"] is None and "Run stopped" in texts(second)
    assert ui.server.queue.job_queue().view(job_id).active and ui.server.queue.job_queue().view(job_id).waiters == 1
    job = _wait_for_job(first)
    assert job.state == "done", job
    assert "live run of these settings" in texts(first) and not first.exception


def test_a_browser_run_with_the_settings_before_the_last_change_runs_the_new_ones():
    """A setting typed, then Run at once: the click's POST carries the token of the page's last script run (the old
    settings) and outruns the rerun the typing asked for. That rerun adopts the job, sees other settings than its
    own, leaves the job and queues its own settings instead."""
    at = open_page("pages/cartpole.py")
    _small(at, train_steps=3000)
    at.session_state["seed"] = 13
    at.run()
    at.number_input(key="cartpole_train_steps").set_value(3100)  # typed; its rerun comes after the POST,
    first = _press_browser_run(at)["payload"]["id"]  # whose token is the 3000-step render's
    at.run()
    job_id = at.session_state["cartpole_job"]
    job = ui.server.queue.job_queue().view(job_id)
    assert job_id != first and job.active and job.key[1].train_steps == 3100 and job.key[2] == 13
    deadline = time.monotonic() + 5  # nobody else waited on the stale one: cancelled (at its worker's next report)
    while ui.server.queue.job_queue().view(first).active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ui.server.queue.job_queue().view(first).state == "cancelled"
    assert _panel_data(at)["payload"]["id"] == job_id
    assert _stop_by(_panel_data(at))  # its Stop works as any other's
    at.run()
    assert "Run stopped" in texts(at)
    deadline = time.monotonic() + 5
    while ui.server.queue.job_queue().view(job_id).active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ui.server.queue.job_queue().view(job_id).state == "cancelled"


def test_a_second_browser_run_before_any_script_run_replaces_the_first():
    """Two Runs reach the Run route before the session's next script run (two tabs' worth of tokens, or a forged
    POST): the session waits on the last one only, and the first, which nobody else waits on, is cancelled."""
    from pvnviz.runs.pipeline import ExperimentConfig
    from ui import result_store, run_panel

    queue = ui.server.queue.job_queue()
    config = ExperimentConfig(num_policies=10, num_episodes=2, horizon=20, train_steps=50000, ascent_steps=20)
    answers = [
        json.loads(run_panel._run_in_server(queue, result_store(), "s/two", "cartpole", None, config, seed))
        for seed in (14, 15)
    ]
    first, second = (a["payload"]["id"] for a in answers)
    assert first != second and answers[0]["settings"] != answers[1]["settings"]
    assert not queue.waits(first, "s/two") and queue.waits(second, "s/two")
    deadline = time.monotonic() + 5
    while queue.view(first).active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert queue.view(first).state == "cancelled"
    queue.detach(second, "s/two")


def test_a_run_the_server_cannot_queue_is_refused_and_logged(caplog):
    """Anything that goes wrong in the browser's Run answers ``REFUSED`` (the page then asks by a rerun, which says
    what went wrong); the traceback goes to the server's log."""
    from pvnviz.runs.pipeline import ExperimentConfig
    from ui import run_panel

    class Broken:
        def submit(self, *args, **kwargs):
            raise OSError("no worker can start")

    config = ExperimentConfig(num_policies=10, num_episodes=2, horizon=20, train_steps=20, ascent_steps=20)
    answer = run_panel._run_in_server(Broken(), ({}, threading.Lock()), "s/x", "cartpole", None, config, 3)
    assert answer == run_panel.REFUSED
    assert "no worker can start" in caplog.text


def test_two_sessions_with_the_same_settings_share_one_job():
    first, second = open_page("pages/cartpole.py"), open_page("pages/cartpole.py")
    for at in (first, second):
        _small(at, train_steps=3000)
        at.session_state["seed"] = 11
        at.run()
    _press_run(first)
    second.run()  # the second session finds the job of its settings and waits on it: no second job, no Run
    job_id = first.session_state["cartpole_job"]
    assert second.session_state["cartpole_job"] == job_id
    assert ui.server.queue.job_queue().view(job_id).waiters == 2
    assert component_data(second)["run"]["disabled"]
    same = [j for j in ui.server.queue.job_queue().jobs() if j.key == ui.server.queue.job_queue().view(job_id).key]
    assert len(same) == 1
    _press_stop(second)  # one session leaves: the job goes on for the other
    time.sleep(0.5)
    assert ui.server.queue.job_queue().view(job_id).active
    assert second.session_state["cartpole_job"] is None and "Run stopped" in texts(second)
    second.run()  # its settings still match the running job: it does not join it again
    assert second.session_state["cartpole_job"] is None and not component_data(second)["run"]["disabled"]
    job = _wait_for_job(first)
    assert job.state == "done", job
    first.run()
    assert "live run of these settings" in texts(first)


@pytest.fixture(scope="module")
def quick_run():
    return load_result("data/cartpole-quick", "cartpole")


def test_page_opens_an_uploaded_zip_and_refuses_a_damaged_one(quick_run):
    at = open_page("pages/cartpole.py")
    at.file_uploader(key="cartpole_upload").set_value(("broken.zip", b"not a zip at all", "application/zip")).run()
    assert any("Cannot open that zip" in e.value and "damaged" in e.value for e in at.error)
    assert len(figures(at)) >= 5  # what was on screen stays
    zipped = archive.run_zip(quick_run)
    at.file_uploader(key="cartpole_upload").set_value(("run.zip", zipped, "application/zip")).run()
    assert not at.error and not at.exception
    assert "uploaded run `run.zip` (preset Quick, seed 0)" in texts(at)


def test_projector_toggle_enlarges_fonts_and_lines():
    at = open_page("pages/cartpole.py")
    before = figures(at)
    at.toggle(key="projector").set_value(True).run()
    after = figures(at)
    assert len(before) == len(after)
    for small, big in zip(before, after):
        assert big["layout"]["font"]["size"] > small["layout"]["font"]["size"]
    ascent = next(f for f in after if f["layout"]["title"]["text"].startswith("Zero-shot"))
    widths = [t["line"]["width"] for t in ascent["data"] if t.get("line", {}).get("width")]
    assert min(widths) >= 1.5 * 1.5  # the thinnest ascent line (1.5) scaled up


def test_validation_policies_switch_in_the_browser():
    """Every validation policy's return distribution is sent once, to a browser player."""
    at = open_page("pages/cartpole.py")
    val = players(at)["cartpole_val"]
    labels = val["animation"]["labels"]
    assert len(labels) > 10 and labels == sorted(labels, key=int)  # the policies' dataset numbers
    for k in (0, len(labels) - 1):
        fig = frame_figures(val, k)["policy"]
        assert fig["layout"]["title"]["text"] == f"Policy #{labels[k]}: return distribution"
        assert "empirical (Monte Carlo)" in trace_names(fig) and len(fig["data"]) == 3  # and both PVNs


def test_cartpole_page_figures_and_bad_input():
    at = open_page("pages/cartpole.py")
    at.selectbox(key="cartpole_preset").set_value("quick").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="cartpole_num_policies").value == 300  # the preset filled the controls
    figs = {f["layout"]["title"]["text"]: f for f in figures(at)}
    hist = figs["The dataset: random policies' mean returns"]
    assert {t["type"] for t in hist["data"]} == {"histogram"}
    assert any("kept for training" in t["name"] for t in hist["data"])
    ascent = next(f for title, f in figs.items() if title.startswith("Zero-shot gradient ascent"))
    names = trace_names(ascent)
    assert {"mean: fingerprint PVN", "mean: flattened-weights PVN", "each start"} <= names
    played = players(at)  # the animations play in the browser (ui.browser_player)
    probes = frame_figures(played["cartpole_probes"])["cartpole_probes"]
    assert probes["layout"]["title"]["text"].startswith("Probing states through training: step")
    replay = frame_figures(played["cartpole_replay"])["cartpole_replay"]
    assert replay["layout"]["title"]["text"].startswith("Replay: the same start state, before and after ascent")
    assert played["cartpole_probes"]["animation"]["probes"]["shape"][0] > 1  # snapshots the page projects
    shown = played["cartpole_replay"]["choice"]
    assert len(played["cartpole_replay"]["animation"]["variants"][f"{shown['mode']}|{shown['start']}"]["frames"]) > 1
    before = len(figures(at))
    for key, bad in (("cartpole_num_bins", 0), ("cartpole_horizon", 0), ("cartpole_num_probes", 0)):
        at.number_input(key=key).set_value(bad).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.error and "Please change a setting" in at.error[0].value
        assert len(figures(at)) == before  # the last valid run is still on screen
        at.number_input(key=key).set_value(
            {"cartpole_num_bins": 41, "cartpole_horizon": 100, "cartpole_num_probes": 20}[key]
        ).run()
    at.text_input(key="cartpole_policy_hidden").set_value("abc").run()
    assert at.error and "layer sizes" in at.error[0].value


def test_cartpole_page_opens_a_saved_run(tmp_path, monkeypatch):
    """A run written by the CLI under the runs root is listed and opens; nothing outside the root can be named."""
    from pvnviz.cli.main import main

    root = tmp_path / "runs"
    monkeypatch.setenv("PVN_RUNS_ROOTS", str(root))
    assert (
        main(
            [
                "run",
                "cartpole",
                "--preset",
                "quick",
                "--out",
                str(root / "mine"),
                "--quiet",
                "--set",
                "num_policies=100",
                "--set",
                "train_steps=200",
                "--set",
                "ascent_steps=20",
            ]
        )
        == 0
    )
    at = open_page("pages/cartpole.py")
    assert at.selectbox(key="cartpole_run").options[1:] == ["runs/mine"]  # only runs under the root are listed
    at.selectbox(key="cartpole_run").set_value("runs/mine").run()
    assert not at.exception and not at.error
    assert any("Showing the saved run" in i.value for i in at.info)
    (root / "mine" / "split.json").write_text('{"train_idx": [99999], "val_idx": [], "bins": [0, 1, 41]}')
    at.selectbox(key="cartpole_run").set_value("runs/mine").run()  # damaged after listing: refused, nothing lost
    assert at.error and "Cannot open that run" in at.error[0].value and str(tmp_path) not in at.error[0].value
    assert not at.exception and len(figures(at)) > 0


def test_a_link_to_a_server_path_opens_nothing_and_says_so():
    for path in ("/etc", "~", "../../etc", "data/../../etc", "x" * 5000):
        at = open_link(dict(cartpole_run=path), clean=False)
        assert not at.exception, [e.value for e in at.exception]
        assert at.selectbox(key="cartpole_run").value == ""  # not opened
        warning = next(w.value for w in at.warning if "link holds values" in w.value)
        assert "cartpole_run" in warning and str(ROOT) not in warning
        assert figures(at)  # the page still shows its shipped run


def test_a_shipped_run_opens_from_its_name_in_a_link():
    at = open_link(dict(cartpole_run="data/cartpole-quick"), clean=False)
    assert not at.exception and not at.error
    assert any("Showing the saved run in `data/cartpole-quick`" in i.value for i in at.info)


def test_bad_link_values_are_named_with_the_value_used_instead():
    at = open_link(dict(cartpole_num_policies="lots", seed="inf", cartpole_preset="Mine"), clean=False)
    assert not at.exception, [e.value for e in at.exception]
    warning = next(w.value for w in at.warning if "link holds values" in w.value)
    for key in ("cartpole_num_policies", "seed", "cartpole_preset"):
        assert f"`{key}=" in warning and f"**{key}** is" in warning, warning


def test_run_refuses_settings_over_the_live_time_limit_and_says_what_to_lower(monkeypatch):
    monkeypatch.setenv("PVN_LIVE_TIME_LIMIT_SECONDS", "60")
    at = open_link({}, clean=False)
    assert not component_data(at)["run"]["disabled"]  # the paper preset fits (about 7 s)
    at.number_input(key="cartpole_train_steps").set_value(50000).run()
    at.number_input(key="cartpole_batch_size").set_value(1024).run()
    run = component_data(at)["run"]
    assert run["disabled"] and run["startUrl"] is None
    refusal = next(w.value for w in at.warning if "Too big to run live" in w.value)
    assert "train_steps" in refusal and "budget" in refusal
    assert figures(at)  # what was on screen stays


def test_the_replay_start_shown_is_always_in_the_url():
    """The opening start is written to the URL too, so a copied link opens the start on screen; the
    player opens on the link's start and PVN, and a start this result does not have is named."""
    at = open_link({}, clean=False)
    replay = players(at)["cartpole_replay"]
    shown = replay["choice"]["start"] + 1
    assert at.query_params["cartpole_replay_start"] == str(shown)
    assert replay["choices"][1]["options"] == ["1", "2", "3", "4", "5"]
    at = open_link(dict(cartpole_replay_start="2", cartpole_replay_mode="flattened"), clean=False)
    assert players(at)["cartpole_replay"]["choice"] == {"mode": 1, "start": 1}
    at = open_link(dict(cartpole_replay_start="99"), clean=False)  # not a start of this result
    assert not at.exception
    assert players(at)["cartpole_replay"]["choice"]["start"] + 1 == shown
    assert at.query_params["cartpole_replay_start"] == str(shown)
    assert any("cartpole_replay_start" in w.value for w in at.warning if "link holds values" in w.value)


def test_the_probe_axes_of_a_link_open_and_a_bad_one_is_named():
    at = open_link(dict(cartpole_probe_x="1", cartpole_probe_y="3"), clean=False)
    assert players(at)["cartpole_probes"]["choice"] == {"x": 1, "y": 3}
    at = open_link(dict(cartpole_probe_x="9"), clean=False)
    assert not at.exception and players(at)["cartpole_probes"]["choice"] == {"x": 0, "y": 2}
    assert any("cartpole_probe_x" in w.value for w in at.warning if "link holds values" in w.value)


def test_the_page_refuses_every_hostile_upload_with_an_error_and_no_exception(bad_zips):
    at = open_page("pages/cartpole.py")
    for what, (data, phrase) in bad_zips.items():
        at.file_uploader(key="cartpole_upload").set_value((f"{what}.zip", data, "application/zip")).run()
        assert not at.exception, (what, [e.value for e in at.exception])
        shown = [e.value for e in at.error]
        assert any("Cannot open that zip" in e and phrase in e for e in shown), (what, shown)
        assert all(hostile.no_server_path(e) for e in shown), shown
    assert len(figures(at)) >= 5  # the last good result stays on screen


def test_the_page_lists_and_refuses_a_run_holding_a_fifo(fifo_runs, monkeypatch):
    monkeypatch.setenv("PVN_RUNS_ROOTS", str(fifo_runs))
    at = open_page("pages/cartpole.py", timeout=120)
    assert "runs/fifo-dataset" in at.selectbox(key="cartpole_run").options
    at.selectbox(key="cartpole_run").set_value("runs/fifo-dataset").run()
    assert not at.exception
    assert any("Cannot open that run" in e.value and "dataset.npz" in e.value for e in at.error)
    assert all(hostile.no_server_path(e.value, fifo_runs) for e in at.error)


def test_the_shipped_budget_comparison_is_drawn_on_the_cartpole_page():
    """Seeds 10-14 of `python -m pvnviz.cli.compare`, every method at a comparable budget, on the page."""
    from pvnviz.baselines.compare import load_rows

    rows = load_rows(Path(__file__).resolve().parents[1] / "data" / "cartpole-compare.jsonl")
    methods = {r["method"] for r in rows}
    assert methods == {"PVN paper", "PVN beyond", "best of random policies", "ARS V1-t", "ARS V2-t"}
    assert sorted({r["seed"] for r in rows}) == [10, 11, 12, 13, 14] and len(rows) == 25
    pvn = max(r["env_steps"] for r in rows if r["method"].startswith("PVN"))
    assert all(r["env_steps"] <= 1.02 * pvn for r in rows)  # ARS gets the larger PVN budget, no more
    at = open_page("pages/cartpole.py")
    budget = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("CartPole: the same"))
    assert {t["name"] for t in budget["data"]} == methods
    assert sum(len(t["x"]) for t in budget["data"]) == 25
