"""The plotly components (ui/components.py, components/) in a real browser.

Playwright drives Debian's Chromium against ``streamlit run tests/components_app.py`` (a throwaway script, not a
page of the app): two ``plotly_view`` figures and a demo slider component. Checked: the figures are drawn by the
wheel's plotly.js, loaded once from the app's own server; dragging the slider redraws a trace on every ``input``
event with no rerun; releasing it (``change``) sends the value to Python with ``setStateValue``; the rerun that
follows leaves the figure as the browser drew it (same data, so Streamlit does not call the component again);
a figure more than a screen away is drawn, and redrawn with new data, only when the reader scrolls near it
(within half a screen, not a whole one); and no request leaves 127.0.0.1. Outside CI a missing Chromium skips
these tests; under CI=true it fails them.
"""

import math
from pathlib import Path
from urllib.parse import urlparse

import plotly
import pytest

from browserbench.browser import launch, start_server, stop_server
from conftest import require_chromium, wait_idle

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
RUNNING = """() => {
  window.pvnRuns = 0;
  const app = document.querySelector("[data-testid='stApp']");
  new MutationObserver(() => {
    if (app.getAttribute("data-test-script-state") === "running") window.pvnRuns += 1;
  }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
}"""
TRACE = "(key) => { const el = window.pvnPlotly.views.get(key).el; return el.data.map((t) => [t.name, t.type]); }"
FIRST_Y = "() => Array.from(window.pvnPlotly.views.get('demo_line').el.data[0].y.slice(0, 3))"
LINE_PATH = "() => document.querySelector('.pvn-plotly-view .scatterlayer .trace .js-line').getAttribute('d')"


@pytest.fixture(scope="module")
def page():
    """A 1280x720 page of ``streamlit run tests/components_app.py``, with every request's URL in ``page.urls``."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    proc, url = start_server(ROOT, watch_files=False, script="tests/components_app.py")
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            page.urls = []
            page.on("request", lambda request: page.urls.append(request.url))
            page.goto(url)
            wait_idle(page)
            page.wait_for_function("window.pvnPlotly && window.pvnPlotly.views.size === 2", timeout=60_000)
            yield page
            browser.close()
    finally:
        stop_server(proc)


def test_figures_drawn_by_the_wheels_plotly_js(page):
    assert page.locator(".pvn-plotly-view.js-plotly-plot").count() == 2
    assert page.evaluate(TRACE, "demo_line") == [["sine", "scatter"], ["zeros", "scatter"]]
    assert page.evaluate(TRACE, "demo_bars") == [["bars", "bar"]]
    wheel = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()[:200]
    assert f"plotly.js v{page.evaluate('window.pvnPlotly.Plotly.version')}" in wheel
    context = page.evaluate("(() => window.pvnPlotly.views.get('demo_line').el._context)()")
    assert context["displaylogo"] is False
    assert context["toImageButtonOptions"] == {"format": "png", "filename": "sine", "scale": 2}
    scripts = [u for u in page.urls if urlparse(u).path.endswith("/plotly.min.js")]
    assert len(scripts) == 1 and urlparse(scripts[0]).path == "/pvn/plotly.min.js"  # once for both views
    assert page.locator("[data-testid='stException'], .pvn-plotly-error").count() == 0


def test_slider_redraws_in_the_browser_and_reports_on_change(page):
    page.evaluate(RUNNING)
    before = page.evaluate(LINE_PATH)
    box = page.locator("input.pvn-demo").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 6, y)
    page.mouse.down()
    for step in range(1, 9):
        page.mouse.move(box["x"] + 6 + 20 * step, y, steps=2)
        page.wait_for_function("window.pvnDemo.redraws === window.pvnDemo.inputs", timeout=10_000)
    demo = page.evaluate("window.pvnDemo")
    assert demo["inputs"] >= 8 and demo["changes"] == 0, demo
    assert page.evaluate("window.pvnRuns") == 0  # every input redrew the trace, and no script ran
    phase = demo["phase"]
    assert phase > 0
    assert page.evaluate(FIRST_Y) == pytest.approx([math.sin(i * 2 * math.pi / 100 + phase / 10) for i in range(3)])
    assert page.evaluate(LINE_PATH) != before

    page.mouse.up()  # `change`: setStateValue, then a rerun
    page.get_by_text(f"phase from the browser: {phase}").wait_for(timeout=60_000)
    wait_idle(page)
    assert page.evaluate("window.pvnRuns") >= 1
    # The rerun sent the same figure: Streamlit did not call plotly_view again, the browser's redraw stays.
    assert page.evaluate(FIRST_Y)[0] == pytest.approx(math.sin(phase / 10))

    page.get_by_role("button", name="Rerun").click()
    wait_idle(page)
    assert page.evaluate(FIRST_Y)[0] == pytest.approx(math.sin(phase / 10))
    assert page.get_by_text(f"phase from the browser: {phase}").count() == 1  # state values persist


FAR_Y = "() => window.pvnPlotly.views.get('far_line')?.el.data[0].y[0] ?? null"


def test_a_figure_far_away_is_drawn_and_redrawn_only_when_the_reader_comes_near(page):
    """A finished run's page in a tab of a class: each tab redraws the figures it shows, not the ones it scrolled
    past (those are redrawn when the reader comes back near them)."""
    far = page.locator(".st-key-far_line")
    assert page.evaluate(FAR_Y) is None  # more than a screen below: not drawn while the page opened
    far.scroll_into_view_if_needed()
    page.wait_for_function(f"({FAR_Y})() === 0", timeout=30_000)
    page.get_by_role("button", name="Next data").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.get_by_role("button", name="Next data").click()
    wait_idle(page)
    page.wait_for_timeout(1000)
    assert page.evaluate(FAR_Y) == 0, "a figure a screen away was redrawn with its new data at once"
    far.scroll_into_view_if_needed()
    page.wait_for_function(f"({FAR_Y})() === 1", timeout=30_000)  # near again: the new data is drawn
    names = page.evaluate("() => window.pvnPlotly.views.get('far_line').el.data.map((t) => t.name)")
    assert names == ["data 1"]


PUT_BELOW = """(screens) => {  // scroll the page so the far figure's top is `screens` screens below its bottom edge
  const main = document.querySelector("[data-testid='stMain']");
  const top = document.querySelector(".st-key-far_line").getBoundingClientRect().top - main.getBoundingClientRect().top;
  main.scrollTo(0, main.scrollTop + top - main.clientHeight * (1 + screens));
}"""


def test_a_new_figure_is_drawn_within_half_a_screen_not_a_whole_one(page):
    """Each tab of a class that waited on one run draws the figures within half a screen of what it shows, not a
    whole screen's worth more (one figure draw less per tab on the CartPole page, docs/sharing.md)."""
    page.locator(".st-key-far_line").scroll_into_view_if_needed()
    page.wait_for_function(f"({FAR_Y})() !== null", timeout=30_000)
    shown = page.evaluate(FAR_Y)
    page.get_by_role("button", name="Next data").scroll_into_view_if_needed()  # a screen and more away from it
    page.get_by_role("button", name="Next data").click()
    wait_idle(page)
    page.evaluate(PUT_BELOW, 0.75)
    page.wait_for_timeout(1000)
    assert page.evaluate(FAR_Y) == shown, "a figure three quarters of a screen below was drawn"
    page.evaluate(PUT_BELOW, 0.4)
    page.wait_for_function(f"({FAR_Y})() === {shown + 1}", timeout=30_000)  # within half a screen: drawn


def test_no_request_leaves_the_machine(page):
    hosts = set()
    for url in page.urls:
        parsed = urlparse(url[len("blob:") :] if url.startswith("blob:") else url)  # blob:http://127.0.0.1:port/...
        hosts.add(parsed.hostname if parsed.scheme in ("http", "https", "ws", "wss") else parsed.scheme)
    hosts.discard("data")  # inline data: URLs, if any, are not requests to anywhere
    assert hosts == {"127.0.0.1"}, sorted(u for u in page.urls if "127.0.0.1" not in u)
