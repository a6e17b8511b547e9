"""The polytope instrument's input in a real browser: a value out of a control's range is refused whole, and a
discount being dragged rescales the axes and updates the legend's optimum as it goes.

A refused value leaves every figure, the legend, the URL and the badges on the last valid view, and the field
says the range and the value the figures keep (`components/polytope_controls.js`, `refuseValue`).
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


DRAWN = """() => {
  const root = document.querySelector('.pvn-poly');
  const gd = root.querySelector('.pvn-poly-fig');
  const cloud = gd.pvnPainted.find((t) => t.meta === 'cloud');
  const fill = (values, range) => {
    let lo = Infinity, hi = -Infinity;
    for (const v of values) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    return (hi - lo) / (range[1] - range[0]);
  };
  const optimum = gd.data.find((t) => (t.name || '').startsWith('optimum'));
  return { fillX: fill(cloud.x, gd.layout.xaxis.range), fillY: fill(cloud.y, gd.layout.yaxis.range),
           legend: optimum.name, line: root.querySelector('.pvn-poly-optimum').innerText,
           drawn: Number(root.dataset.drawn) };
}"""


def test_a_dragged_discount_rescales_the_axes_and_the_legend_s_optimum_as_it_goes(server, browser):
    page = open_instrument(browser, server)
    gamma = page.locator(".pvn-poly input[name=gamma]")
    gamma.scroll_into_view_if_needed()
    box = gamma.bounding_box()
    x = box["x"] + 8 + (box["width"] - 16) * 0.8 / 0.99  # the thumb at the paper's 0.8
    y = box["y"] + box["height"] / 2
    rest = page.evaluate(DRAWN)
    page.mouse.move(x, y)
    page.mouse.down()
    seen = []
    for k in range(1, 9):  # down to a discount of about 0.2: values shrink to a quarter of the paper's
        n = page.evaluate(DRAWN)["drawn"]
        page.mouse.move(x - 20 * k, y)
        page.wait_for_function(f"Number(document.querySelector('.pvn-poly').dataset.drawn) > {n}", timeout=10_000)
        settle(page, 5)
        now = page.evaluate(DRAWN)
        seen.append((gamma.input_value(), now))
        j = float(now["line"].rsplit("J = ", 1)[1])
        assert now["legend"] == f"optimum (J={j:.3f})", seen  # the legend's optimum is the dragged discount's
        # the cloud fills its axes as at rest (the exact ranges), not a corner of them
        assert now["fillX"] >= 0.7 * rest["fillX"] and now["fillY"] >= 0.7 * rest["fillY"], (rest, seen)
    assert float(seen[-1][0]) < 0.45, seen
    page.mouse.up()
    page.close()
