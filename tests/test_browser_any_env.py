"""A real browser on the Any environment page: Pendulum-v1, Acrobot-v1 and Hopper-v5 run from the Run button with
their progress followed in the page, then draw the CartPole page's results and a replay that plays; Stop cancels each
and keeps the page; the environment box picks another environment into the URL; an environment that does not
qualify is one error, with no Run button and no traceback.

Uses the server and Chromium fixtures of tests/conftest.py (one server per module).
"""

from urllib.parse import quote, unquote

import pytest
from playwright.sync_api import expect

from browserbench.playback import player
from conftest import wait_idle

pytestmark = pytest.mark.browser

SMALL = {"num_policies": 60, "horizon": 150, "train_steps": 600, "ascent_steps": 40, "eval_every": 20, "num_starts": 2}


def _link(server: str, env: str, seed: int, **fields: int) -> str:
    """The page's URL on ``env`` with ``fields`` over its quick preset (each under the environment's own key)."""
    settings = "".join(f"&{quote(f'gym:{env}_{k}')}={v}" for k, v in {**SMALL, **fields}.items())
    return f"{server}/any_env?anyenv_env={env}&seed={seed}{settings}"


def _text(page) -> str:
    return page.locator("[data-testid='stMain']").inner_text()


@pytest.mark.parametrize("env", ["Pendulum-v1", "Acrobot-v1", "Hopper-v5"])
def test_run_follows_the_progress_then_draws_the_results_and_a_replay_that_plays(server, browser, env):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(_link(server, env, seed=21))
    wait_idle(page)
    assert f"gym:{env}" in _text(page) and "Observation: Box(" in _text(page)
    said = _text(page)  # nothing made these settings: nothing, or the page's shipped run (Pendulum's) is shown
    assert "No result for these settings yet" in said or "have not been run yet" in said
    shown = player(page, "time step")
    before = int(shown.get_attribute("data-drawn") or 0) if shown.count() else 0  # the shipped run's replay
    page.get_by_role("button", name="Run with these settings").click()
    running = page.locator(".pvn-job-progress[data-state='running'] .pvn-job-text")
    running.wait_for(timeout=120_000)
    expect(running).to_contain_text("% of the run", timeout=60_000)  # the stage and its share, read in the page
    page.get_by_text("live run of these settings").first.wait_for(timeout=300_000)
    wait_idle(page)
    assert page.locator(".pvn-plotly-view").count() >= 4  # dataset, PVN training, ascent, predictions, ...
    replay = player(page, "time step")
    replay.scroll_into_view_if_needed()
    page.wait_for_function(  # the live run's replay, drawn once near
        f"(el) => Number(el.dataset.drawn) > {before}", arg=replay.element_handle(), timeout=60_000
    )
    assert "before and after ascent" in replay.inner_text()
    replay.locator(".pvn-play").click()  # plays in the page: the drawn frame count goes up
    drawn = int(replay.get_attribute("data-drawn"))
    page.wait_for_function(f"(el) => Number(el.dataset.drawn) > {drawn}", arg=replay.element_handle(), timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    page.close()


# training long enough to press Stop during it, within the live-run budget (Hopper's larger fingerprint trains slower)
@pytest.mark.parametrize("env, train_steps", [("Pendulum-v1", 50000), ("Acrobot-v1", 50000), ("Hopper-v5", 30000)])
def test_stop_cancels_the_run_and_keeps_the_page(server, browser, env, train_steps):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(_link(server, env, seed=22, train_steps=train_steps))
    wait_idle(page)
    page.get_by_role("button", name="Run with these settings").click()
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(timeout=120_000)
    page.locator(".pvn-job-progress[data-state='running']").wait_for(timeout=120_000)
    with page.expect_response(lambda r: "/pvn/stop/" in r.url) as taken:
        stop.click()
    assert taken.value.status == 200
    page.get_by_text("Run stopped").first.wait_for(timeout=30_000)
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    expect(page.get_by_role("button", name="Run with these settings")).to_be_enabled()
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_the_environment_box_puts_another_environment_in_the_url(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/any_env")
    wait_idle(page)
    assert "gym:Pendulum-v1" in _text(page)  # the page opens on Pendulum-v1, quick preset
    page.wait_for_url(lambda url: "gym:Pendulum-v1_preset=quick" in unquote(url), timeout=30_000)  # the preset's id
    page.locator(".st-key-anyenv_env [aria-haspopup='listbox']").first.click()
    page.get_by_role("option", name="Acrobot-v1  ·  classic control").click()
    page.wait_for_url("**anyenv_env=Acrobot-v1**", timeout=30_000)
    wait_idle(page)
    assert "gym:Acrobot-v1" in _text(page) and "Discrete(3)" in _text(page)
    page.close()


@pytest.mark.parametrize(
    "query, said",
    [("anyenv_env=NoSuchEnvironment-v3", "doesn't exist"), ("anyenv_kwargs=bogus%3D1", "refuses the keywords")],
)
def test_an_environment_that_does_not_qualify_is_one_error_and_no_run(server, browser, query, said):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/any_env?{query}")
    wait_idle(page)
    errors = page.locator("[data-testid='stAlertContentError']")
    expect(errors).to_have_count(1)
    assert said in errors.inner_text()
    assert page.get_by_role("button", name="Run with these settings").count() == 0
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()
