"""CartPole and Swimmer pages as a class uses them: shipped runs, Run and Stop, links, reset, run zips, GIFs,
projector mode; and the core pieces behind them (Cancelled, run zips, GIF encoders)."""

import io
import time
import zipfile

import imageio.v3 as iio
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import ui.experiment
import ui.jobs
from conftest import APP, figures, open_page, players
from pvnviz.core.progress import Cancelled, Hooks, cancellable
from pvnviz.envs.scene import Panel, Part, Replay
from pvnviz.figures import gif
from pvnviz.runs import archive
from pvnviz.runs.files import load_result
from pvnviz.runs.pipeline import ExperimentConfig, run_experiment
from pvnviz.runs.presets import PRESETS

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

QUICK = PRESETS["cartpole"]["quick"]()
PAPER = PRESETS["cartpole"]["paper"]()
FIELDS = [field for _, fields in ui.experiment.FIELDS for field, _, kind, _ in fields if kind in ("int", "float")]


_SUBMIT = ui.jobs.submit


def _no_training(key, task, *args, **kwargs):
    """``jobs.submit`` refusing an experiment (replays of the run shown still go to a worker)."""
    if task == "experiment":
        raise AssertionError("the page trained although a shipped run matches")
    return _SUBMIT(key, task, *args, **kwargs)


def _texts(at: AppTest) -> str:
    return " ".join(e.value for kind in ("caption", "info", "warning", "markdown") for e in at.get(kind))


@pytest.mark.parametrize(
    "page, folder", [("pages/cartpole.py", "cartpole-paper"), ("pages/swimmer.py", "swimmer-beyond")]
)
def test_pages_open_on_shipped_runs_without_training(monkeypatch, page, folder):
    monkeypatch.setattr(ui.jobs, "submit", _no_training)
    at = open_page(page)
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["seed"] == 0  # the sidebar shows the seed of what is drawn
    assert f"data/{folder}" in _texts(at)
    assert len(figures(at)) >= 5


def test_cartpole_quick_preset_opens_its_shipped_run(monkeypatch):
    monkeypatch.setattr(ui.jobs, "submit", _no_training)
    at = open_page("pages/cartpole.py")
    at.selectbox(key="cartpole_preset").set_value("quick").run()
    assert at.number_input(key="cartpole_num_policies").value == QUICK.num_policies
    assert "data/cartpole-quick" in _texts(at)


def test_cartpole_beyond_preset_opens_its_shipped_run_with_fresh_numbers(monkeypatch):
    monkeypatch.setattr(ui.jobs, "submit", _no_training)
    at = open_page("pages/cartpole.py")
    at.selectbox(key="cartpole_preset").set_value("beyond").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "data/cartpole-beyond" in _texts(at)
    fresh = load_result("data/cartpole-beyond", "cartpole").summary()["inputs"]["fingerprint"]["fresh_mean_return"]
    shown = [m for m in at.metric if "fingerprint" in m.label and "fresh" in m.label]
    assert [m.value for m in shown] == [f"{fresh:.1f}"]
    spent = load_result("data/cartpole-beyond", "cartpole").summary()["inputs"]["fingerprint"]["check_env_steps"]
    assert f"checks {spent:,}" in shown[0].help  # every env step beyond the dataset is shown


def _open_link(params: dict[str, str], page: str = "pages/cartpole.py") -> AppTest:
    """A fresh session opened on a copied URL: the query parameters are there before the first run."""
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_preset_link_fills_every_field_with_the_preset():
    at = _open_link({"seed": "0", "cartpole_preset": "quick"})
    assert at.selectbox(key="cartpole_preset").value == "quick"
    for field in FIELDS:
        assert at.number_input(key=f"cartpole_{field}").value == pytest.approx(getattr(QUICK, field)), field
    assert "data/cartpole-quick" in _texts(at)  # and the Quick results are drawn, not the Paper ones
    assert at.metric[0].value.endswith(f"/ {QUICK.num_policies}")


def test_a_link_with_a_changed_field_keeps_it_on_top_of_the_preset():
    at = _open_link({"seed": "3", "cartpole_preset": "quick", "cartpole_train_steps": "700"})
    assert at.session_state["seed"] == 3
    assert at.number_input(key="cartpole_train_steps").value == 700
    assert at.number_input(key="cartpole_num_policies").value == QUICK.num_policies
    assert "not been run yet" in _texts(at)  # shown honestly: no run of these settings exists


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
    assert "data/cartpole-paper" in _texts(at)


def _small(at: AppTest, train_steps: int) -> None:
    for key, value in (("num_policies", 40), ("num_episodes", 5), ("train_steps", train_steps), ("ascent_steps", 20)):
        at.number_input(key=f"cartpole_{key}").set_value(value)
    at.number_input(key="cartpole_eval_episodes").set_value(5).run()


def _wait_for_job(at: AppTest, key: str = "cartpole_job", seconds: float = 180) -> ui.jobs.JobView:
    """Rerun the page (as its polling fragment would) until this session's job has ended; its last view."""
    job_id = at.session_state[key]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = ui.jobs.job_queue().view(job_id)
        if not job.active:
            at.run()
            return job
        at.run()  # a page's look at its job also keeps it counted as waiting (the queue's heartbeat)
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} still running after {seconds} s")


def test_run_button_trains_in_a_worker_and_the_page_shows_the_result():
    at = open_page("pages/cartpole.py")
    _small(at, train_steps=60)
    assert "not been run yet" in _texts(at)
    at.button(key="cartpole_run_button").click().run()
    job = _wait_for_job(at)
    assert job.state == "done" and not job.error
    assert ("experiment", job.key[1], job.key[2]) == job.key and job.key[2] == at.session_state["seed"]
    at.run()
    assert "live run of these settings" in _texts(at)
    assert not at.exception


def test_stop_cancels_a_running_job_and_keeps_the_last_result():
    at = open_page("pages/cartpole.py")
    _small(at, train_steps=50000)
    at.button(key="cartpole_run_button").click().run()
    job_id = at.session_state["cartpole_job"]
    assert ui.jobs.job_queue().view(job_id).active
    assert "cartpole_stop" in [b.key for b in at.button]
    at.button(key="cartpole_stop").click().run()
    deadline = time.monotonic() + 5
    while ui.jobs.job_queue().view(job_id).active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ui.jobs.job_queue().view(job_id).state == "cancelled"  # nobody else waited: the worker stopped it
    at.run()
    assert "Run stopped" in _texts(at)
    assert "Shown below: preset Paper (MLP [30]), seed 0" in _texts(at)  # the last finished result stays
    assert len(figures(at)) >= 5


def test_two_sessions_with_the_same_settings_share_one_job():
    first, second = open_page("pages/cartpole.py"), open_page("pages/cartpole.py")
    for at in (first, second):
        _small(at, train_steps=3000)
        at.session_state["seed"] = 11
        at.run()
    first.button(key="cartpole_run_button").click().run()
    second.run()  # the second session finds the job of its settings and waits on it: no second job, no Run
    job_id = first.session_state["cartpole_job"]
    assert second.session_state["cartpole_job"] == job_id
    assert ui.jobs.job_queue().view(job_id).waiters == 2
    assert second.button(key="cartpole_run_button").disabled
    same = [j for j in ui.jobs.job_queue().jobs() if j.key == ui.jobs.job_queue().view(job_id).key]
    assert len(same) == 1
    second.button(key="cartpole_stop").click().run()  # one session leaves: the job goes on for the other
    time.sleep(0.5)
    assert ui.jobs.job_queue().view(job_id).active
    job = _wait_for_job(first)
    assert job.state == "done", job
    first.run()
    assert "live run of these settings" in _texts(first)


def test_cancelled_propagates_out_of_the_core_at_the_next_progress_report():
    calls = []
    state = {"stop": False}

    def inner(done, total, info):
        calls.append(info)
        state["stop"] = len(calls) >= 3  # ask to stop after the third report

    config = ExperimentConfig(num_policies=20, num_episodes=2, train_steps=2000, ascent_steps=10, eval_episodes=2)
    with pytest.raises(Cancelled):
        run_experiment(config, 0, Hooks(cancellable(lambda: state["stop"], inner)))
    assert len(calls) == 3  # nothing ran past the report after the request


@pytest.fixture(scope="module")
def quick_run():
    return load_result("data/cartpole-quick", "cartpole")


def test_run_zip_round_trip_keeps_every_array(quick_run):
    opened = archive.read_run_zip(archive.run_zip(quick_run), "cartpole")
    assert opened.config == quick_run.config and opened.seed == quick_run.seed
    np.testing.assert_array_equal(opened.dataset.returns, quick_run.dataset.returns)
    np.testing.assert_array_equal(opened.dataset.params, quick_run.dataset.params)
    for mode, trace in quick_run.traces.items():
        np.testing.assert_array_equal(opened.traces[mode].true_returns, trace.true_returns)
        np.testing.assert_array_equal(opened.trained[mode].val_loss, quick_run.trained[mode].val_loss)
        params = quick_run.dataset.params[:7]
        np.testing.assert_allclose(opened.trained[mode].predict(params)[1], quick_run.trained[mode].predict(params)[1])


def _rezip(data: bytes, change) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            name, content = change(info.filename, src.read(info))
            if name:
                dst.writestr(name, content)
    return out.getvalue()


def test_damaged_or_foreign_zips_are_refused_with_a_message(quick_run):
    good = archive.run_zip(quick_run)
    bad = {
        "truncated": good[: len(good) // 2],
        "not a zip": b"PK but not really" * 10,
        "zip slip": _rezip(good, lambda n, c: ("../" + n if n == "split.json" else n, c)),
        "missing dataset": _rezip(good, lambda n, c: (None if n == "dataset.npz" else n, c)),
        "corrupt array": _rezip(good, lambda n, c: (n, c[:100] if n == "dataset.npz" else c)),
        "pickled array": _rezip(good, lambda n, c: (n, _pickled_npz() if n == "curves_fingerprint.npz" else c)),
    }
    for what, data in bad.items():
        with pytest.raises(archive.ArchiveError) as err:
            archive.read_run_zip(data, "cartpole")
        assert str(err.value), what
    with pytest.raises(archive.ArchiveError, match="not a swimmer run"):
        archive.read_run_zip(good, "swimmer")
    with pytest.raises(archive.ArchiveError, match="at most"):
        archive.read_run_zip(b"0" * (archive.MAX_ZIP_BYTES + 1))


def _pickled_npz() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, steps=np.array([{"a": 1}], dtype=object))
    return buffer.getvalue()


def test_page_opens_an_uploaded_zip_and_refuses_a_damaged_one(quick_run):
    at = open_page("pages/cartpole.py")
    at.file_uploader(key="cartpole_upload").set_value(("broken.zip", b"not a zip at all", "application/zip")).run()
    assert any("Cannot open that zip" in e.value and "damaged" in e.value for e in at.error)
    assert len(figures(at)) >= 5  # what was on screen stays
    zipped = archive.run_zip(quick_run)
    at.file_uploader(key="cartpole_upload").set_value(("run.zip", zipped, "application/zip")).run()
    assert not at.error and not at.exception
    assert "uploaded run `run.zip` (preset Quick, seed 0)" in _texts(at)


def test_gifs_decode_with_one_frame_per_animation_step(quick_run):
    trained = quick_run.trained["fingerprint"]
    frames = iio.imread(gif.probes_gif(trained, (0, 2)), index=None)
    assert frames.shape[0] == len(trained.snapshot_steps)
    rng = np.random.default_rng(0)
    track = Part("track", np.array([[[-2.4, 0.0], [2.4, 0.0]]]))
    short, long = (Panel((track, Part("pole", rng.normal(size=(n, 2, 2)))), n, f"{n} frames") for n in (21, 31))
    columns = Replay("t", (short, long), "x", "y", (-3, 3), (-1, 1), "columns", 2, 40, "")
    frames = iio.imread(gif.replay_gif(columns, ["a", "b"]), index=None)
    assert frames.shape[0] == 16  # steps 0, 2, ..., 30: the longer episode sets the length
    assert not np.array_equal(frames[0], frames[-1])
    stacked = [Panel((Part("links", rng.normal(size=(21, 4, 2))),), 21, "") for _ in range(2)]
    rows = Replay("t", tuple(stacked), "x", "y", None, None, "rows", 10, 50, "")
    frames = iio.imread(gif.replay_gif(rows, ["a", "b"]), index=None)
    assert frames.shape[0] == 3
    assert frames.shape[1] > frames.shape[2] / 2  # panels stacked: taller than a row of panels


def test_polytope_ascent_gif_has_a_frame_per_shown_step():
    from pvnviz.polytope.experiment import PolytopeConfig, exact_view

    exact = exact_view(PolytopeConfig(ascent_steps=30, num_polytope_points=200), 4)
    frames = iio.imread(gif.ascent_gif(exact), index=None)
    assert frames.shape[0] == 31


def test_mp4_export_holds_the_gifs_frames():
    """The MP4 download decodes (ffmpeg, independently of the encoder's code path) to the GIF's frames."""
    import imageio_ffmpeg

    from pvnviz.polytope.experiment import PolytopeConfig, exact_view

    animation = gif.ascent_gif(exact_view(PolytopeConfig(ascent_steps=30, num_polytope_points=200), 4))
    frames = iio.imread(animation, index=None)[..., :3].astype(int)
    video = gif.to_mp4(animation)
    reader = imageio_ffmpeg.read_frames(_tmp_file(video))
    meta = reader.__next__()
    width, height = meta["size"]
    assert width % 2 == 0 and height % 2 == 0 and width >= frames.shape[2] and height >= frames.shape[1]
    rows, cols = frames.shape[1:3]
    decoded = [np.frombuffer(f, np.uint8).reshape(height, width, 3)[:rows, :cols] for f in reader]
    assert len(decoded) == len(frames)
    for shown, original in ((decoded[0], frames[0]), (decoded[-1], frames[-1])):
        assert np.abs(shown.astype(int) - original).mean() < 8  # lossy H.264, same picture


def _tmp_file(data: bytes) -> str:
    import tempfile

    handle = tempfile.NamedTemporaryFile(suffix=".mp4", delete=False)
    handle.write(data)
    handle.close()
    return handle.name


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


def test_swimmer_spread_within_a_policy_only_with_several_rollouts():
    at = open_page("pages/swimmer.py")
    labels = [m.label for m in at.metric]
    assert not any("within a policy" in label for label in labels)  # the shipped beyond run has 1 rollout
    assert "1 rollouts" not in _texts(at)
    at.selectbox(key="swimmer_preset").set_value("budget-2000x5").run()
    assert any("within a policy" in m.label for m in at.metric)
    assert "data/swimmer-paper" in _texts(at)


def test_ascent_figure_labels_neither_placeholder_nor_overlapping(quick_run):
    from pvnviz.figures import experiment as figs

    baselines = {"DDPG 143": 143.0, "PPO 117": 117.0, "TD3 91": 91.0, "VPG 52": 52.0, "SAC 43": 43.0}
    fig = figs.ascent_figure(quick_run.traces, 30.0, 29.9, baselines, "Spinning Up baselines")
    texts = [a.text for a in fig.layout.annotations]
    assert "new text" not in texts  # plotly's placeholder for an annotation without text (flattened panel)
    labels = sorted((a.y, a.text) for a in fig.layout.annotations if a.text in baselines)
    assert [t for _, t in labels] == ["SAC 43", "VPG 52", "TD3 91", "PPO 117", "DDPG 143"]
    ys = [y for y, _ in labels]
    assert min(np.diff(ys)) >= 0.06 * (max(ys) - min(ys)) * 0.99  # at least one text line apart
    assert fig.layout.margin.r >= 80  # in the right margin, not clipped


def test_loss_curve_uses_a_log_step_axis(quick_run):
    from pvnviz.figures import experiment as figs

    fig = figs.loss_figure(figs.trained_curves(quick_run.trained))
    assert fig.layout.xaxis.type == "log"
    assert min(min(t.x) for t in fig.data) >= 1


def test_swimmer_replay_opens_on_the_best_start():
    at = open_page("pages/swimmer.py")
    best = load_result("data/swimmer-beyond", "swimmer").traces["fingerprint"].best_returns
    assert players(at)["swimmer_replay"]["choice"] == {"mode": 0, "start": int(np.argmax(best))}
    assert at.query_params["swimmer_replay_start"] == str(int(np.argmax(best)) + 1)
