"""The polytope instrument's input-to-redraw times, for ``python -m pvnviz.bench ui``.

``components/polytope.js`` stamps each redraw: ``data-input-to-draw-ms`` is the time from the input event
(its ``timeStamp``, on the page's ``performance.now()`` clock) to the animation frame after the redraw, once
plotly and the canvas have drawn; ``data-drawn`` counts finished redraws. Here a control is moved 20 steps with
the keyboard (Left or Right, one redraw awaited per key) and 20 steps with the mouse held down (one redraw
awaited per move), and the server reruns that begin meanwhile are counted (Streamlit's ``data-test-script-state``
turning to ``running``). After a drag of the discount, the time from the mouse's release until the PVN's overlays
are no longer stale (``data-stale`` back to ``false``: the PVN retrained in a worker and its weights arrived).
"""

from __future__ import annotations

import statistics
import time

COUNT_RERUNS = """() => { window.__pvnReruns = 0; if (window.__pvnRerunsWatched) return;
  window.__pvnRerunsWatched = true; const app = document.querySelector("[data-testid='stApp']");
  new MutationObserver(() => { if (app.getAttribute('data-test-script-state') === 'running') window.__pvnReruns++; })
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }"""
SETTLE_MS = 1000  # after keys, the page sends the view 400 ms after the last one: its rerun is over by then
ROOT = ".pvn-poly"


def _drawn(page) -> int:
    return int(page.locator(ROOT).get_attribute("data-drawn") or 0)


def _await_redraw(page, before: int) -> float | None:
    """The input-to-redraw time of the redraw after ``before``, or None if the input changed nothing (a move
    smaller than one step of the slider) and no redraw came within 2 s."""
    try:
        page.wait_for_function(f"Number(document.querySelector('{ROOT}').dataset.drawn) > {before}", timeout=2_000)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError
        return None
    return float(page.locator(ROOT).get_attribute("data-input-to-draw-ms"))


def keyboard(page, control: str, steps: int = 20) -> tuple[list[float], int]:
    """(ms from each key press to its redraw, server reruns) over ``steps`` presses on ``control``'s input."""
    box = page.locator(f"{ROOT} input[name={control}]")
    box.scroll_into_view_if_needed()
    key = "ArrowLeft" if box.input_value() == box.get_attribute("max") else "ArrowRight"
    page.evaluate(COUNT_RERUNS)
    box.focus()
    times = []
    for _ in range(steps):
        before = _drawn(page)
        page.keyboard.press(key)
        if (ms := _await_redraw(page, before)) is not None:
            times.append(ms)
    reruns = page.evaluate("window.__pvnReruns")
    page.wait_for_timeout(SETTLE_MS)
    return times, reruns


def drag(page, control: str, steps: int = 20, release_wait: bool = False) -> tuple[list[float], int, float | None]:
    """(ms from each mouse move to its redraw, server reruns during the drag, seconds from the release until the
    PVN is no longer stale, or None when not asked) over a ``steps``-move drag of ``control``'s slider."""
    box = page.locator(f"{ROOT} input[name={control}]")
    box.scroll_into_view_if_needed()
    rect = box.bounding_box()
    lo, hi = (float(box.get_attribute(a)) for a in ("min", "max"))
    value = float(box.input_value())
    x = rect["x"] + 8 + (rect["width"] - 16) * (value - lo) / (hi - lo)
    y = rect["y"] + rect["height"] / 2
    direction = -1 if value > (lo + hi) / 2 else 1
    pixel = (rect["width"] - 16) / 60  # 20 moves across a third of the track
    page.evaluate(COUNT_RERUNS)
    page.mouse.move(x, y)
    page.mouse.down()
    times = []
    for k in range(1, steps + 1):
        before = _drawn(page)
        page.mouse.move(x + direction * pixel * k, y)
        if (ms := _await_redraw(page, before)) is not None:
            times.append(ms)
    reruns = page.evaluate("window.__pvnReruns")
    t0 = time.perf_counter()
    page.mouse.up()
    learned = None
    if release_wait:
        page.wait_for_function(f"document.querySelector('{ROOT}').dataset.stale === 'false'", timeout=120_000)
        learned = time.perf_counter() - t0
    return times, reruns, learned


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def summary(times: list[float]) -> str:
    if not times:
        return "no redraw measured"
    return f"median {statistics.median(times):6.1f} ms, p95 {p95(times):6.1f} ms ({len(times)} redraws)"
