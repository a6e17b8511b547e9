"""A real browser: Playwright drives Debian's Chromium against `streamlit run app.py`.

Opens every page, waits until the app is idle, checks there is no exception and the
expected charts are drawn, presses the animation's play button, and saves
screenshots in tests/artifacts. docs/screenshot.png (shown in the README) is rewritten only by
`make screenshot` (PVN_SCREENSHOT=1): no test run changes a tracked file.
The server and browser fixtures live in conftest.py; outside CI a missing Chromium skips these tests,
under CI=true it fails them.
"""

import os
from pathlib import Path

import pytest

from browserbench.browser import FIRST_SCREEN_DRAWN, draw_every_figure
from conftest import CARTPOLE_FIGURES, wait_idle

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
# URL path -> (charts expected at least, screenshot name)
PAGES = {
    "": (0, "home"),
    "polytope": (6, "polytope"),
    "cartpole": (CARTPOLE_FIGURES, "cartpole"),
    "swimmer": (7, "swimmer"),
}
LONG_PAGES = ("cartpole", "swimmer")  # results pages several screens long


def test_url_reproduces_the_view(server, browser):
    """Controls live in the URL: a shared link, opened first on a fresh server, shows the same settings."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/polytope?gamma=0.5&start1=0.2")
    wait_idle(page)
    nav = page.locator("[data-testid='stSidebarNav']").text_content()
    assert "Start here" in nav and "Value polytope" in nav, nav  # app.py's navigation, not pages/ alone
    assert page.locator("[data-testid='stException']").count() == 0
    page.wait_for_selector(".pvn-poly[data-drawn]", timeout=120_000)
    assert page.locator(".pvn-poly input[name=gamma]").input_value() == "0.5"  # the instrument's control
    assert page.locator(".pvn-poly input[name=start1]").input_value() == "0.2"
    page.close()


def test_a_link_with_inf_opens_the_page_and_names_the_value(server, browser):
    """``?seed=inf`` crashed Streamlit 1.67's integer number_input; now it is dropped from the URL and named."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/polytope?seed=inf&gamma=0.5")
    wait_idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    warning = page.locator("[data-testid='stAlert']").filter(has_text="link holds values").first
    assert "seed=inf" in warning.inner_text()
    assert "seed=inf" not in page.url and "gamma=0.5" in page.url, page.url
    page.wait_for_selector(".pvn-poly[data-drawn]", timeout=120_000)
    assert page.locator(".pvn-poly input[name=gamma]").input_value() == "0.5"  # the link's other values are kept
    page.close()


@pytest.mark.parametrize("path", list(PAGES))
def test_page_in_a_real_browser(server, browser, path):
    expected_charts, shot = PAGES[path]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    outside: list[str] = []  # nothing is fetched from anywhere but the app's own server (plotly.js included)
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((server, "blob:", "data:")) else None)
    scripts: list[str] = []
    page.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
    page.goto(f"{server}/{path}")
    wait_idle(page)
    if expected_charts:
        page.wait_for_function(FIRST_SCREEN_DRAWN, timeout=120_000)
        if path in LONG_PAGES:  # what is far below the fold waits for the reader: not drawn at the page's open
            assert page.locator(".pvn-plotly-view:not(.js-plotly-plot)").count() >= 1
            assert page.locator(".pvn-player:not([data-drawn])").count() >= 1
        draw_every_figure(page, expected_charts)  # ui.components.chart's figures and the browser players'
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator(".js-plotly-plot").count() >= expected_charts
    # one plotly.js for every figure: the app's own (the players need it), not Streamlit's bundled copy as well
    assert not [url for url in scripts if "PlotlyChart" in url], "st.plotly_chart is back: a second plotly.js"
    assert sum("plotly.min.js" in url for url in scripts) <= 1, scripts
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    if path == "polytope":
        readme_shot = os.environ.get("PVN_SCREENSHOT") == "1"  # set by `make screenshot` only
        page.screenshot(path=str(ROOT / "docs" / "screenshot.png" if readme_shot else ARTIFACTS / "screenshot.png"))
        play = page.locator(".pvn-player .pvn-play").first  # the player's Play (plays from the start)
        play.scroll_into_view_if_needed()
        play.click()
        page.wait_for_function("document.body.innerText.includes('— playing')", timeout=30_000)
        label = page.locator(".pvn-player-caption").filter(has_text="ascent step").first.inner_text()
        assert int(label.split()[2]) < 100, label  # mid-animation, not at the last step
    page.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)
    assert not errors, errors
    assert not outside, outside
    page.close()


def test_clicking_the_exact_field_sets_the_ascent_start(server, browser):
    """Fig. 3a: a click on the policy square moves the start at once (no rerun); the URL records it."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/polytope")
    wait_idle(page)
    page.wait_for_selector(".pvn-poly[data-drawn]", timeout=120_000)
    area = page.locator(".pvn-poly-fields .nsewdrag[data-subplot=xy]")
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    # plotly's x axis spans [-0.03, 1.03] over the area: (0.25, 0.75) in policy coordinates
    at = lambda v, start, length: start + (v + 0.03) / 1.06 * length  # noqa: E731
    page.mouse.click(at(0.25, box["x"], box["width"]), box["y"] + box["height"] - (0.75 + 0.03) / 1.06 * box["height"])
    start1 = float(page.locator(".pvn-poly input[name=start1]").input_value())
    start2 = float(page.locator(".pvn-poly input[name=start2]").input_value())
    assert abs(start1 - 0.25) < 0.01 and abs(start2 - 0.75) < 0.01, (start1, start2)
    page.wait_for_function("location.search.includes('start1=') && location.search.includes('start2=')", timeout=30_000)
    wait_idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


# The script state of Streamlit's app element when plotly.js's <script> is appended to the page (ui/early_plotly.py)
PLOTLY_STARTED = """
new MutationObserver((records, watch) => {
  if (!document.querySelector('script[data-pvn-plotly]')) return;
  const app = document.querySelector('[data-test-script-state]');
  window.plotlyStartedWhile = app?.getAttribute('data-test-script-state');
  watch.disconnect();
}).observe(document, {subtree: true, childList: true});
"""


# One plotly.js <script> in the page, and it is the plotly.js the figures were drawn with
ONE_PLOTLY = """() => document.querySelectorAll('script[data-pvn-plotly]').length === 1
  && window.pvnPlotly.Plotly !== undefined
  && [...document.querySelectorAll('.js-plotly-plot')].every((el) => el._fullLayout !== undefined)"""


def test_a_page_starts_plotly_while_its_first_run_is_on_the_server(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_init_script(PLOTLY_STARTED)
    page = context.new_page()
    scripts: list[str] = []
    page.on("request", lambda r: scripts.append(r.url) if "plotly.min.js" in r.url else None)
    page.goto(f"{server}/cartpole")
    wait_idle(page)
    page.wait_for_function(FIRST_SCREEN_DRAWN, timeout=120_000)
    assert page.evaluate("window.plotlyStartedWhile") == "running"  # not after the run, when the figures mount
    # the figures drew with that copy, fetched once (the <head>'s preload)
    assert page.evaluate(ONE_PLOTLY)
    assert len(scripts) == 1, scripts
    home = context.new_page()  # the home page too (Fig. 1); then to CartPole within the page, as a reader goes
    home.goto(server)
    wait_idle(home)
    home.wait_for_function(FIRST_SCREEN_DRAWN, timeout=120_000)  # its short first run may end within one render
    assert home.evaluate(ONE_PLOTLY)
    home.get_by_role("link", name="CartPole (Section 6.2)").click()
    wait_idle(home)
    home.wait_for_function(FIRST_SCREEN_DRAWN, timeout=120_000)
    assert home.locator("[data-testid='stException']").count() == 0
    context.close()
