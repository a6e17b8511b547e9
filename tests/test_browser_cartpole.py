"""A real browser on the CartPole page and the dark theme: Stop, copied links, marker colours.

Uses the streamlit server and Chromium fixtures of tests/conftest.py (one server per module).
"""

import subprocess
import sys
import time

import pytest
from playwright.sync_api import expect

from browserbench.browser import free_port
from conftest import ROOT, wait_idle

pytestmark = pytest.mark.browser

DARK = {"black", "#000", "#000000", "#111111", "#222222", "rgb(0, 0, 0)"}


def _text(page) -> str:
    return page.locator("[data-testid='stMain']").inner_text()


def test_stop_in_the_browser_cancels_and_keeps_the_last_result(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    received = []  # the server's messages to the tab: a page's rerun sends one per element (about 130 here)
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: received.append(len(frame))))
    page.goto(f"{server}/cartpole?seed=0&cartpole_preset=quick&cartpole_train_steps=50000")
    wait_idle(page)
    assert "not been run yet" in _text(page)
    assert len(received) > 100 and sum(received) > 300_000, (len(received), sum(received))  # the first run
    received.clear()
    with page.expect_response(lambda r: "/pvn/run?" in r.url) as started:  # the server's Run route takes Run
        page.get_by_role("button", name="Run with these settings").click()
    assert (started.value.request.method, started.value.status) == ("POST", 200)
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(timeout=60_000)
    panel = page.locator(".pvn-job-progress[data-state='running'] .pvn-job-text")
    panel.wait_for(timeout=60_000)
    expect(page.get_by_role("button", name="Run with these settings")).to_be_disabled()
    # Run needs no script run (make run's middleware takes it), and Stop reruns only the job panel (a fragment):
    # a few messages at most, not one per element
    assert len(received) < 50, f"{len(received)} messages sent to the tab for the Run click"
    # the page follows the worker's progress in the browser: its text moves on, and the server reruns nothing
    page.evaluate(
        "() => { window.__runs = 0; const app = document.querySelector(\"[data-testid='stApp']\");"
        " new MutationObserver(() => { if (app.dataset.testScriptState === 'running') window.__runs += 1; })"
        ".observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }"
    )
    before = panel.inner_text()
    page.wait_for_timeout(3000)
    assert panel.inner_text() != before, "the progress text did not move"
    # ... and its bar moves with Algorithm 2's training (the losses once held every progress report back)
    track, training = page.locator(".pvn-job-track"), set()
    for _ in range(40):
        if "train PVN" in panel.inner_text():
            training.add(track.get_attribute("aria-valuenow"))
            if len(training) > 1:
                break
        page.wait_for_timeout(500)
    assert len(training) > 1, f"the bar stood still while the PVN trained: {training}"
    assert page.evaluate("window.__runs") == 0, "the server reran the page while the run went"
    received.clear()
    with page.expect_response(lambda r: "/pvn/stop/" in r.url) as taken:  # the Stop route takes the Stop
        stop.click()
    assert (taken.value.request.method, taken.value.status) == ("POST", 200)
    page.get_by_text("Run stopped").first.wait_for(timeout=15_000)
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)  # the panel's rerun the Stop asked for
    expect(page.get_by_role("button", name="Run with these settings")).to_be_enabled()
    page.wait_for_timeout(1000)
    assert len(received) < 50, f"{len(received)} messages sent to the tab for Stop"
    assert page.locator(".pvn-plotly-view").count() >= 5  # the last result is still drawn (chart figures)
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_streamlit_run_app_py_refuses_in_one_line_naming_make_run(browser):
    """``streamlit run app.py`` serves no routes (no Run, Stop or players): the app says so in one line, naming
    ``make run``, and draws nothing else."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless",
               "true", "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]  # fmt: skip
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for _ in range(150):
            try:
                page.goto(f"http://127.0.0.1:{port}/cartpole")
                break
            except Exception:  # noqa: BLE001 - not listening yet
                time.sleep(0.2)
        wait_idle(page)
        errors = page.locator("[data-testid='stAlertContentError']")
        expect(errors).to_have_count(1)
        assert "make run" in errors.inner_text()
        assert page.locator(".pvn-plotly-view").count() == 0
        assert page.locator("[data-testid='stException']").count() == 0
        page.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_player_the_reader_scrolled_past_takes_a_new_run_only_when_near(server, browser):
    """A new result (another preset's run) reaches a player the reader has seen but scrolled away from: it parses
    and draws the new animation when the reader comes back near it, not at once (a class's tabs that waited on
    one run each draw what they show)."""
    from browserbench.playback import player

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/cartpole?seed=0&cartpole_preset=quick")
    wait_idle(page)
    replay = player(page, "time step")
    replay.scroll_into_view_if_needed()
    page.wait_for_function("(el) => Number(el.dataset.drawn) > 0", arg=replay.element_handle(), timeout=60_000)
    drawn = replay.get_attribute("data-drawn")
    page.locator("h1").first.scroll_into_view_if_needed()  # back to the top: the replay is screens away
    page.locator(".st-key-cartpole_preset [aria-haspopup='listbox']").first.click()
    page.get_by_role("option", name="Paper (MLP [30])", exact=True).click()
    page.wait_for_url("**cartpole_preset=paper**", timeout=30_000)
    wait_idle(page)
    assert "data/cartpole-paper" in _text(page)  # the paper preset's shipped run is shown
    page.wait_for_timeout(1000)
    assert replay.get_attribute("data-drawn") == drawn, "the replay drew the new run while screens away"
    replay.scroll_into_view_if_needed()
    page.wait_for_function(f"(el) => Number(el.dataset.drawn) > {drawn}", arg=replay.element_handle(), timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_a_copied_url_reproduces_every_input_in_a_fresh_context(server, browser):
    first = browser.new_context(viewport={"width": 1280, "height": 900})
    page = first.new_page()
    page.goto(f"{server}/cartpole")
    wait_idle(page)
    assert "data/cartpole-paper" in _text(page)
    page.locator(".st-key-cartpole_preset [aria-haspopup='listbox']").first.click()
    page.get_by_role("option", name="Quick", exact=True).click()  # the box shows the label...
    page.wait_for_url("**cartpole_preset=quick**", timeout=30_000)  # ...and the URL holds the id
    wait_idle(page)
    page.locator("summary").filter(has_text="PVN (Sections 3-4").click()
    steps = page.get_by_label("Training steps", exact=True)
    steps.fill("1234")
    steps.press("Enter")
    page.wait_for_url("**cartpole_train_steps=1234**", timeout=30_000)
    wait_idle(page)
    url = page.url
    first.close()

    fresh = browser.new_context(viewport={"width": 1280, "height": 900})
    page = fresh.new_page()
    page.goto(url)
    wait_idle(page)
    # expect() waits for the value: on a loaded machine the idle marker can show before the first run's widgets
    expect(page.get_by_label("Training steps", exact=True)).to_have_value("1234", timeout=30_000)
    expect(page.get_by_label("Policies K", exact=True)).to_have_value("300")  # Quick's value, not Paper's
    expect(page.get_by_label("Rollouts per policy B", exact=True)).to_have_value("30")
    expect(page.locator(".st-key-cartpole_preset input").first).to_have_value("Quick")
    expect(page.get_by_label("Seed", exact=True)).to_have_value("0")
    fresh.close()


def test_an_old_link_opens_its_preset_by_id_and_back_returns_to_it(server, browser):
    """A link that holds the preset's label (as links did before they held ids) opens its preset and the URL then
    holds the id; after another preset is chosen, the browser's Back button brings the linked one back."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/cartpole?seed=0&cartpole_preset=Quick")
    wait_idle(page)
    page.wait_for_url("**cartpole_preset=quick**", timeout=30_000)
    expect(page.get_by_label("Policies K", exact=True)).to_have_value("300", timeout=30_000)  # Quick's
    assert "link holds values" not in _text(page)  # the old label was taken, not reported
    page.locator(".st-key-cartpole_preset [aria-haspopup='listbox']").first.click()
    page.get_by_role("option", name="Paper (MLP [30])", exact=True).click()
    page.wait_for_url("**cartpole_preset=paper**", timeout=30_000)
    wait_idle(page)
    expect(page.get_by_label("Policies K", exact=True)).to_have_value("1000", timeout=30_000)
    page.go_back()
    page.wait_for_url("**cartpole_preset=quick**", timeout=30_000)
    wait_idle(page)
    expect(page.locator(".st-key-cartpole_preset input").first).to_have_value("Quick", timeout=30_000)
    expect(page.get_by_label("Policies K", exact=True)).to_have_value("300", timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_dark_theme_keeps_the_markers_visible(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page.goto(f"{server}/polytope?embed_options=dark_theme")
    wait_idle(page)
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=120_000)
    background = page.evaluate("getComputedStyle(document.querySelector(\"[data-testid='stApp']\")).backgroundColor")
    channels = [int(c) for c in background[background.index("(") + 1 : background.index(")")].split(",")[:3]]
    assert max(channels) < 80, background  # the dark theme is on
    colours = page.evaluate(
        """() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap(
            el => (el.data || []).filter(t => ['corners', 'start'].includes(t.meta))
                                 .map(t => [t.meta, String(t.marker.color)]))"""
    )
    roles = {role for role, _ in colours}  # the traces by their roles (pvnviz/figures/roles.py), not their names
    assert roles == {"corners", "start"}, colours
    for name, colour in colours:
        assert colour.lower() not in DARK, (name, colour)
    page.close()
