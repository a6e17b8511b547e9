"""The polytope instrument's input in a real browser: a value out of a control's range is refused whole, and a
discount being dragged rescales the axes and updates the legend's optimum as it goes.

A refused value leaves every figure, the legend, the URL and the badges on the last valid view, and the field
says the range and the value the figures keep (`pages/components/polytope.js`, `changed`).
"""

import pytest

from conftest import wait_idle

pytestmark = pytest.mark.browser

STATE = """() => {
  const root = document.querySelector('.pvn-poly');
  const figs = [...root.querySelectorAll('.pvn-poly-fig')];
  const legend = figs[0].data.filter((t) => t.showlegend !== false).map((t) => t.name);
  const painted = figs.map((f) => JSON.stringify(f.pvnPainted?.map((p) => [p.x?.slice?.(0, 50), p.y?.slice?.(0, 50)])));
  return { optimum: root.querySelector('.pvn-poly-optimum').innerText, legend, painted,
           stale: root.dataset.stale, badge: !root.querySelector('.pvn-poly-badge').hidden };
}"""


def open_instrument(browser, server, query: str = ""):
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    page.goto(f"{server}/polytope{query}")
    wait_idle(page)
    page.wait_for_selector(".pvn-poly[data-drawn]", timeout=120_000)
    page.wait_for_function("document.querySelector('.pvn-poly').dataset.stale === 'false'", timeout=120_000)
    return page


def settle(page, frames: int = 30) -> None:
    """Until the instrument has drawn nothing new for a while (its redraws come on animation frames)."""
    page.evaluate(
        """(frames) => new Promise((done) => { let last = -1, quiet = 0;
          const look = () => { const n = document.querySelector('.pvn-poly').dataset.drawn;
            quiet = n === last ? quiet + 1 : 0; last = n; quiet >= frames ? done() : requestAnimationFrame(look); };
          requestAnimationFrame(look); })""",
        frames,
    )


@pytest.mark.parametrize("typed", ["1e9", "25", "-7"])
def test_an_out_of_range_reward_is_refused_whole(server, browser, typed):
    page = open_instrument(browser, server)
    before, url = page.evaluate(STATE), page.url
    field = page.locator(".pvn-poly input[name=r00]")
    field.scroll_into_view_if_needed()
    kept = float(field.input_value())
    field.click()
    field.press("Control+a")
    page.keyboard.type(typed, delay=30)  # as a person types it: its first digits may be a valid value
    field.press("Enter")
    settle(page)
    page.wait_for_timeout(1500)  # the page would have sent a view by now (400 ms after the last key)
    settle(page)
    assert field.get_attribute("aria-invalid") == "true"
    problem = page.locator(".pvn-poly-problem").filter(has_text="from -2")
    assert problem.inner_text() == f"Enter a number from -2 to 2; the figures keep {kept:.2f}."
    assert page.evaluate(STATE) == before  # every figure, the legend and the badge as they were
    assert page.url == url and "r00" not in page.url
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()
