"""Playback of the browser player (``ui.browser_player``), for ``python -m pvnviz.bench ui``.

For one player on an open page: go to its first frame, press its Play button, and over at most 5 s take the page's
clock at each finished redraw (the player's ``data-drawn`` counter, which counts finished redraws, not requests):
frames a second = (redraws - 1) / (last - first). Also the server reruns that began while it played (Streamlit's
``data-test-script-state`` turning to ``running``).
"""

from __future__ import annotations

import time

DRAW_TIMES = """(root) => { window.__pvnDrawTimes = []; if (root.__pvnTimed) return; root.__pvnTimed = true;
  new MutationObserver(() => { if (root.dataset.playing === 'true') window.__pvnDrawTimes.push(performance.now()); })
    .observe(root, {attributes: true, attributeFilter: ['data-drawn']}); }"""
COUNT_RERUNS = """(root) => { window.__pvnPlayReruns = 0; if (root.__pvnCounted) return; root.__pvnCounted = true;
  const app = document.querySelector("[data-testid='stApp']");
  new MutationObserver(() => { if (app.getAttribute('data-test-script-state') === 'running'
      && root.dataset.playing === 'true') window.__pvnPlayReruns++; })
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }"""


def player(page, caption: str):
    """The player whose caption names ``caption`` (e.g. "ascent step", "time step", "snapshot")."""
    return page.locator(".pvn-player").filter(has=page.locator(".pvn-player-caption", has_text=caption)).first


def playback(page, caption: str, seconds: float = 5.0) -> tuple[float, int, int]:
    """(frames drawn per second while playing, server reruns while playing, frames drawn) of one player."""
    root = player(page, caption)
    root.scroll_into_view_if_needed()
    root.locator(".pvn-first").click()
    page.wait_for_timeout(1500)  # the step's report to the server and its rerun are over
    root.evaluate(COUNT_RERUNS)
    root.evaluate(DRAW_TIMES)
    t0 = time.perf_counter()
    root.locator(".pvn-play").click()
    while time.perf_counter() - t0 < seconds and root.get_attribute("data-playing") != "false":
        time.sleep(0.05)
    if root.get_attribute("data-playing") == "true":
        root.locator(".pvn-play").click()  # pause
    reruns = page.evaluate("window.__pvnPlayReruns")
    times = page.evaluate("window.__pvnDrawTimes")  # the page's clock at each finished redraw while playing
    frames = len(times)
    fps = (frames - 1) / ((times[-1] - times[0]) / 1000) if frames > 1 and times[-1] > times[0] else 0.0
    return fps, reruns, frames
