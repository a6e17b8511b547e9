"""Shared test fixtures: paths, a Streamlit AppTest factory, the browser tests' server and Chromium, and the
hostile inputs several modules' tests share (``bad_zips`` and ``fifo_runs``, from ``tests/hostile_inputs.py``).

The browser fixtures start the app's server (``make run``'s) and Debian's Chromium with ``browserbench.browser``,
the helpers the UI benchmark uses too (one server per test module). AppTest drives ``app.py`` with the server's
state started as its lifespan does (``server_state``), and presses Run and Stop through the server's routes.
Outside CI a missing Chromium skips the browser tests; under CI=true it fails them.
"""

import json
import os
import shutil
from pathlib import Path

import pvnviz  # noqa: F401  first, before anything loads NumPy or torch: AVX2's kernels (pvnviz.kernels)

# isort: split

import hostile_inputs as hostile
import pytest
from streamlit.testing.v1 import AppTest

import ui.server.queue
from browserbench.browser import CHROMIUM, IDLE, launch, start_server, stop_server

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))


@pytest.fixture(autouse=True)
def server_state():
    """The app's server-side state, as the server's lifespan starts it (``ui.server.app.start``, without starting
    workers: a page with Run asks for them itself): the store the pages put progress, tokens and animations in,
    which ``app.py`` refuses to run without. One per test session; a test that starts its own leaves a new one."""
    from ui.server import store

    if not store.started():
        store.start(ui.server.queue.describe)
    yield store.current()


def routes_client():
    """A Starlette ``TestClient`` of the app's routes (``ui.server.routes``) alone, answering from the current
    store, as the server's would."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from ui.server import routes

    return TestClient(Starlette(routes=routes.routes()))


def component_data(at: AppTest, name: str = "pvn_job_progress") -> dict:
    """The data the page sent its one component ``name`` (the job panel by default)."""
    (found,) = [e for e in at.get("bidi_component") if e.proto.component_name == name]
    return json.loads(found.proto.json)


def press_run(at: AppTest) -> dict:
    """What the job panel's Run does in a browser: POST its ``startUrl`` to the server's Run route (no script run);
    the route's answer (what the page then follows)."""
    with routes_client() as client:
        answer = client.post(component_data(at)["run"]["startUrl"])
    assert answer.status_code == 200, answer.text
    return answer.json()


def press_stop(url: str) -> bool:
    """What the job panel's Stop does in a browser: POST its ``stopUrl`` to the server's Stop route; whether the
    route took it."""
    with routes_client() as client:
        return client.post(url).status_code == 200


def open_page(page: str, timeout: float = 300) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    if page != "pages/home.py":
        at.switch_page(page)
        at.run()
    return at


def open_link(params: dict[str, str], page: str = "pages/cartpole.py", *, clean: bool = True) -> AppTest:
    """A fresh session opened on a copied URL: the query parameters are there before the first run. ``clean``:
    the page must run without an exception."""
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(page)
    at.run()
    if clean:
        assert not at.exception, [e.value for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    """The plotly figures on the page (``ui.components.chart``, drawn by its ``plotly_view``), as JSON dicts."""
    views = [e for e in at.get("bidi_component") if e.proto.component_name == "pvn_plotly_view"]
    return [json.loads(view.proto.json)["figure"] for view in views]


def players(at: AppTest) -> dict[str, dict]:
    """The browser players on the page (``ui.browser_player``), by key: the data each was sent, with the animation
    its page reads from its ``url`` (the server's animation route) as ``animation``."""
    found = {}
    for element in at.get("bidi_component"):
        if element.proto.component_name == "pvn_player":
            data = json.loads(element.proto.json)
            with routes_client() as client:
                data["animation"] = client.get(data["url"]).json()
            found[element.proto.id.rsplit("-", 1)[-1].removesuffix("_player")] = data
    return found


def frame_figures(player: dict, t: int | None = None) -> dict[str, dict]:
    """A player's figures at frame ``t`` (default: the frame it opens on), as the browser draws them: the first
    frame's figures with frame t's changed trace properties and layout entries."""
    anim = player["animation"]
    t = player["frame"] if t is None else t
    if "variants" in anim:  # one animation per view (the replay's PVN and start): the one chosen
        anim = anim["variants"]["|".join(str(player["choice"].get(c["key"], 0)) for c in player["choices"])]
    if "probes" in anim:  # the page projects the snapshots on its axes; what was sent is the template, frame 0
        t = 0
    out = {}
    for name, base in anim["figures"].items():
        change = anim["frames"][t].get(name, {"traces": {}, "layout": {}})
        data = [dict(trace, **change["traces"].get(str(i), {})) for i, trace in enumerate(base["data"])]
        out[name] = {"data": data, "layout": dict(base["layout"], **change["layout"])}
    return out


def trace_names(fig: dict) -> set[str]:
    return {t.get("name") for t in fig.get("data", [])}


def array(value) -> list:
    """A plotly data array as a list: plain JSON lists, or plotly's typed arrays {dtype, bdata}."""
    import base64

    import numpy as np

    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" in value:
            data = data.reshape([int(n) for n in str(value["shape"]).split(",")])
        return data.tolist()
    return list(value)


def at_once(call, sessions: int = 8) -> list:
    """``call()`` from ``sessions`` threads released together (the tabs that waited on one shared run rerun at
    once when it ends): each thread's return value, in order."""
    import threading

    start = threading.Barrier(sessions)
    out = [None] * sessions

    def session(i: int) -> None:
        start.wait()
        out[i] = call()

    threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def require_chromium() -> None:
    """Skip a browser test when Chromium is missing, except under CI (``make test`` installs it): fail there."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing under CI; `make test` installs it with apt-get.")
        pytest.skip("Chromium not installed (sudo apt-get install chromium)")


@pytest.fixture(scope="module")
def server():
    """URL of the app's server (``make run``'s) on a free port (file watcher off), for this test module."""
    require_chromium()
    try:
        proc, url = start_server(ROOT, watch_files=False)
    except RuntimeError as error:
        pytest.fail(str(error))
    yield url
    stop_server(proc)


@pytest.fixture(scope="module")
def browser(server):
    """Headless Chromium driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


CARTPOLE_FIGURES = 7  # plotly figures of the CartPole page's shipped run, its players' included


def wait_idle(page, timeout_ms: int = 120_000) -> None:
    """Wait until the app's script is idle, and still idle a moment later (a rerun may follow the first)."""
    page.wait_for_selector(IDLE, timeout=timeout_ms)
    page.wait_for_timeout(600)
    page.wait_for_selector(IDLE, timeout=timeout_ms)


def instrument(at: AppTest) -> dict:
    """The data the polytope page sends its browser instrument (``ui.polytope_instrument``)."""
    found = [e for e in at.get("bidi_component") if e.proto.component_name == "pvn_polytope"]
    assert len(found) == 1, [e.proto.component_name for e in at.get("bidi_component")]
    return json.loads(found[0].proto.json)


@pytest.fixture(scope="module")
def bad_zips() -> dict[str, tuple[bytes, str]]:
    """Each hostile run zip, by what is wrong with it: (its bytes, a phrase the refusal must contain)."""
    return hostile.bad_zips()


@pytest.fixture
def fifo_runs(tmp_path):
    """A runs root with two runs holding a FIFO: one as config.json, one as dataset.npz (manifest intact)."""
    root = tmp_path / "runs"
    root.mkdir()
    fifos = []
    for name, target in (("fifo-config", "config.json"), ("fifo-dataset", "dataset.npz")):
        folder = shutil.copytree(hostile.QUICK, root / name)
        (folder / target).unlink()
        os.mkfifo(folder / target)
        fifos.append(folder / target)
    yield root
    for fifo in fifos:  # should a reader be blocked on a FIFO after all, let it go
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # no reader: nothing waits on it


def tiny_configs() -> tuple:
    """A CartPole and a Swimmer experiment small enough for a unit test (seconds), every stage included."""
    import dataclasses

    from pvnviz.runs.config import ExperimentConfig
    from pvnviz.runs.presets import PRESETS

    cartpole = ExperimentConfig(
        num_policies=120,
        num_episodes=10,
        train_steps=200,
        ascent_steps=40,
        eval_every=10,
        eval_episodes=10,
        num_starts=3,
        log_every=20,
    )
    swimmer = dataclasses.replace(
        PRESETS["swimmer"]["quick"](),
        num_policies=40,
        num_episodes=2,
        horizon=60,
        train_steps=150,
        ascent_steps=30,
        eval_every=10,
        eval_episodes=2,
        num_starts=2,
        log_every=10,
    )
    return cartpole, swimmer


TINY_CARTPOLE, TINY_SWIMMER = tiny_configs()
_REAL_SUBMIT = ui.server.queue.submit


def no_training(key, task, *args, **kwargs):
    """``ui.server.queue.submit`` refusing an experiment (replays of the run shown still go to a worker); monkeypatch
    it in."""
    if task in ("experiment", "live_experiment"):
        raise AssertionError("the page trained although a shipped run matches")
    return _REAL_SUBMIT(key, task, *args, **kwargs)


def texts(at: AppTest) -> str:
    """The page's captions, infos, warnings and markdown, as one string."""
    return " ".join(e.value for kind in ("caption", "info", "warning", "markdown") for e in at.get(kind))
