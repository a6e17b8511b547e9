"""Every page through Streamlit's AppTest: each renders on its defaults, the environment pages open on their
shipped runs without training, and a fuzz over random links and widget values never breaks a page.

The fuzz (seeded) opens a page in a fresh session from a link holding random values for the page's own
URL parameters (valid, out of range, the wrong type, paths, 5,000 characters), then moves up to three
of the page's widgets to random values its widget allows, and sometimes presses Run. The oracle:
- no exception reaches the page;
- the page either draws its figures or says why not (an error, a warning or an info box);
- a link value the page could not use is named in a warning (``ui.urlcheck``);
- no message shows a server path;
- Run never starts work over the live-run budget (set tiny here, so every live run must be refused).

The tests of one page are in tests/test_app_<page>.py.
"""

import json
import random
import string
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import ui.server.queue
from conftest import APP, PAGES, figures, no_training, open_page, texts

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

ROOT = Path(__file__).resolve().parents[1]
COMBINATIONS = 120  # the fuzz's: random pages, links and widget values
FUZZ_PAGES = ["pages/polytope.py", "pages/cartpole.py", "pages/swimmer.py", "pages/home.py"]
JUNK = [
    "", "abc", "-1", "0", "1", "7", "0.5", "1e9", "-1e9", "1e308", "nan", "inf", "-inf", "true", "false",
    "30,30", "64,64,64,64,64", "99999", "[1, 2]", "{}", "/etc", "../../etc/passwd", "~", "data/cartpole-paper",
    "runs/none", "x" * 5000, "☃", "0x10", " 5 ", "1,000",
]  # fmt: skip
WIDGETS = ("number_input", "slider", "text_input", "selectbox", "checkbox", "toggle", "radio", "select_slider")
# AppTest cannot set a select_slider whose options are formatted (the validation policy's): links only, not set_value
SETTABLE = tuple(w for w in WIDGETS if w != "select_slider")


@pytest.mark.parametrize("page_path", PAGES)
def test_every_page_renders_on_defaults(page_path):
    at = open_page(page_path)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize(
    "page, folder", [("pages/cartpole.py", "cartpole-paper"), ("pages/swimmer.py", "swimmer-budget-2000x5")]
)
def test_pages_open_on_shipped_runs_without_training(monkeypatch, page, folder):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_page(page)
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["seed"] == 0  # the sidebar shows the seed of what is drawn
    assert f"data/{folder}" in texts(at)
    assert len(figures(at)) >= 5


def _session(page: str, params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page(page)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


@pytest.fixture(scope="module")
def page_keys() -> dict[str, list[str]]:
    """Every widget key of each page (what its links may carry)."""
    keys = {}
    for page in FUZZ_PAGES:
        at = _session(page, {})
        keys[page] = sorted({w.key for kind in WIDGETS for w in getattr(at, kind) if w.key})
    return keys


def _random_value(rng: random.Random, widget, kind: str):
    if kind in ("checkbox", "toggle"):
        return rng.random() < 0.5
    if kind in ("selectbox", "radio"):
        return rng.choice(list(widget.options)) if widget.options else None
    if kind == "text_input":
        return rng.choice(JUNK[:25] + ["".join(rng.choices(string.printable, k=rng.randint(1, 30)))])
    low, high = widget.min, widget.max
    if kind == "slider" and isinstance(widget.value, (list, tuple)):
        return widget.value
    if low is None or high is None:
        low, high = (widget.value or 0) - 100, (widget.value or 0) + 100
    value = rng.choice([low, high, low + (high - low) * rng.random()])
    return int(round(value)) if isinstance(widget.value, int) else float(value)


def _messages(at: AppTest) -> list[str]:
    return [m.value for kind in ("error", "warning", "info") for m in getattr(at, kind)]


def test_random_links_and_widget_values_never_break_a_page(page_keys, monkeypatch):
    monkeypatch.setenv("PVN_LIVE_TIME_LIMIT_SECONDS", "0.001")  # any live run is over the limit: Run refuses
    rng = random.Random(20261122)
    tried = refused = warned = 0
    for _ in range(COMBINATIONS):
        page = rng.choice(FUZZ_PAGES)
        keys = page_keys[page] + ["unknown_param"]
        params = {k: rng.choice(JUNK) for k in rng.sample(keys, k=min(len(keys), rng.randint(0, 3)))}
        at = _session(page, params)
        assert not at.exception, (page, params, [e.value for e in at.exception])
        messages = _messages(at)
        if any("link holds values" in m for m in messages):
            warned += 1
        for _ in range(rng.randint(0, 3)):
            kind = rng.choice(SETTABLE)
            widgets = [w for w in getattr(at, kind) if w.key and not w.disabled]
            if not widgets:
                continue
            widget = rng.choice(widgets)
            value = _random_value(rng, widget, kind)
            if value is None:
                continue
            widget.set_value(value).run()
            assert not at.exception, (page, params, widget.key, value, [e.value for e in at.exception])
        if page != "pages/home.py" and rng.random() < 0.2:
            panels = [e for e in at.get("bidi_component") if e.proto.component_name == "pvn_job_progress"]
            run = json.loads(panels[0].proto.json)["run"] if panels else None
            if run:  # over the time limit: refused, and the sidebar says why (or a setting to change)
                said = _messages(at) + [c.value for c in at.caption]  # a preset as shipped: a caption, no warning
                assert run["disabled"] and run["startUrl"] is None, page
                assert any("Too big to run live" in m or "change a setting" in m for m in said), page
        messages = _messages(at)
        charts = figures(at) or at.get("bidi_component")  # ui.components.chart's figures, or players
        assert page == "pages/home.py" or charts or messages, (page, params)  # figures, or a reason
        if at.error:
            refused += 1
        for message in messages:
            assert str(ROOT) not in message and "Traceback" not in message, message
        tried += 1
    print(f"fuzz: {tried} combinations, {refused} refused with st.error, {warned} links warned about")
