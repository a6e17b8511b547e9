"""A live run's progress bar in a real browser (components/job_progress.js, drawn from ui.server.queue's
payload): one bar from 0 to 100% over all the run's stages, never going back, its line naming the stage and the
time left."""

import re

import pytest

from conftest import wait_idle

pytestmark = pytest.mark.browser


def test_one_bar_over_the_whole_run_with_its_stage_and_time_left(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/cartpole?seed=2&cartpole_preset=quick&cartpole_train_steps=4000")
    wait_idle(page)
    page.get_by_role("button", name="Run with these settings").click()
    panel = page.locator(".pvn-job-progress[data-state='running']")
    panel.wait_for(timeout=60_000)
    seen = []  # (bar's percent, line) while the run goes
    root = page.locator(".pvn-job-progress")  # in the component's shadow root, which locators reach
    for _ in range(600):
        state = root.evaluate(
            """(p) => p.dataset.state !== 'running' ? null :
              [Number(p.querySelector('.pvn-job-track').getAttribute('aria-valuenow')),
               p.querySelector('.pvn-job-text').textContent]"""
        )
        if state is None:
            break
        seen.append(tuple(state))
        page.wait_for_timeout(200)
    # Before the worker's first report the panel says only that the run is starting, at 0%.
    while seen and seen[0][1].endswith(": starting in a worker"):
        assert seen.pop(0)[0] == 0
    shares = [percent for percent, _ in seen]
    # The page draws the reports it reads, a few a second: on a busy machine a short run shows only a few shares.
    assert len(set(shares)) >= 3, seen
    assert shares == sorted(shares), seen  # never back, across the stages (and the PVNs of both inputs)
    assert shares[-1] >= 50, seen
    for percent, line in seen:  # the line's share is the bar's
        said = re.search(r" · (\d+)% of the run", line)
        assert said and abs(int(said.group(1)) - percent) <= 1, (percent, line)
    assert all(re.search(r"\): (collecting|rollouts|train PVN|ascent|replays)", line) for _, line in seen), seen
    assert any(re.search(r"% of the run, about (\d+ s|\d+ min|a second) left$", line) for _, line in seen), seen
    page.close()
