"""The default views make the paper's points with zero clicks, read off the figures a real Chromium drew.

- Fig. 3 (the polytope page): tests/test_browser_polytope.py, the default view's test.
- Fig. 4 (the CartPole page): through the fingerprint the ascent's best check ends far above the training set's
  limit; through the flattened weights it stays near it.
- Fig. 5 (the Swimmer page): the glance figure shows every start of the `beyond` run above the baselines, beside
  the zero-shot runs.
"""

from __future__ import annotations

import pytest

from browserbench.browser import FIRST_SCREEN_DRAWN, draw_every_figure
from conftest import wait_idle

pytestmark = pytest.mark.browser

# The plotly figure (a drawn .js-plotly-plot) holding a trace with the role ``meta``, as {meta: y values} of its
# traces and its layout's shapes' y.
FIGURE_WITH_ROLE = """(role) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find((g) => (g.data || []).some((t) => t.meta === role));
  if (!gd) return null;
  const typed = {f8: Float64Array, f4: Float32Array, i4: Int32Array, i2: Int16Array, i1: Int8Array, u1: Uint8Array};
  const ys = (y) => {  // a plain array, or plotly's base64 typed array {dtype, bdata}
    if (y && y.bdata !== undefined) {
      const bytes = Uint8Array.from(atob(y.bdata), (c) => c.charCodeAt(0));
      return Array.from(new typed[y.dtype](bytes.buffer), Number);
    }
    return Array.from(y || [], Number);
  };
  return {
    traces: Object.fromEntries(gd.data.filter((t) => typeof t.meta === 'string').map((t) => [t.meta, ys(t.y)])),
    names: gd.data.map((t) => t.name),
    shapes: (gd.layout.shapes || []).map((s) => s.y0),
  };
}"""


def open_page(browser, server, path: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/{path}")
    wait_idle(page)
    page.wait_for_function(FIRST_SCREEN_DRAWN, timeout=120_000)
    assert page.locator("[data-testid='stException']").count() == 0
    return page


def figure_with(page, role: str) -> dict:
    found = page.evaluate(FIGURE_WITH_ROLE, role)
    if found is None:
        draw_every_figure(page, 1)  # below the fold: drawn once scrolled near
        found = page.evaluate(FIGURE_WITH_ROLE, role)
    assert found is not None, f"no figure drawn with a trace of role {role!r}"
    return found


def test_cartpole_opens_on_fig4s_point(server, browser):
    import json
    from pathlib import Path

    page = open_page(browser, server, "cartpole")
    ascent = figure_with(page, "best:fingerprint")
    limit = json.loads((Path(__file__).resolve().parents[1] / "data/cartpole-paper/summary.json").read_text())[
        "return_limit"
    ]
    assert limit in ascent["shapes"]  # the training set's limit is drawn
    fingerprint, flattened = ascent["traces"]["best:fingerprint"][-1], ascent["traces"]["best:flattened"][-1]
    assert fingerprint > 2 * limit, fingerprint  # far above the best policy it may train on
    assert abs(flattened - limit) < 0.25 * limit, flattened  # the flattened weights stay near it
    page.close()


def test_swimmer_opens_on_fig5s_point(server, browser):
    page = open_page(browser, server, "swimmer")
    glance = figure_with(page, "starts:0")
    ddpg = 143.0
    assert ddpg in glance["shapes"]  # the baselines are drawn
    columns = [glance["traces"][f"starts:{i}"] for i in range(3)]
    assert len(columns[2]) == 5 and min(columns[2]) > ddpg, columns[2]  # beyond: every start above DDPG
    assert max(columns[0] + columns[1]) < min(columns[2])  # zero-shot stays below, as the page says
    note = page.get_by_text("Starts above DDPG's 143").first.inner_text()
    assert "beyond: 10,000 x 1 + active rounds: 5 of 5" in note, note
    page.close()
