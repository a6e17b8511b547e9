"""components/plotly_adapter.js against the plotly.js the installed plotly wheel ships, in headless Chromium.

The adapter is the one place that reads plotly.js internals (``_fullLayout``, an axis's ``_offset``, ``_length``,
``l2p`` and ``p2l``). Here the wheel's ``plotly.min.js`` draws a figure of known size, margins and axis ranges, with
a second subplot beside the first, in a blank page (no server, every network request refused), and the adapter's
answers are checked three ways: against the geometry the margins and domains give, against plotly's own drag
rectangle of each subplot (its SVG attributes), and against where plotly drew a marker. A plotly.js that renames or
changes any of these internals fails here, before the canvas layer paints points in the wrong place.
"""

from __future__ import annotations

from pathlib import Path

import plotly
import pytest

from browserbench.browser import launch
from conftest import require_chromium

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
WIDTH, HEIGHT = 600, 400
MARGIN = {"l": 80, "r": 40, "t": 30, "b": 50, "pad": 0}
PLOT_W, PLOT_H = WIDTH - MARGIN["l"] - MARGIN["r"], HEIGHT - MARGIN["t"] - MARGIN["b"]  # 480 x 320

DRAW = """async ([width, height, margin]) => {
  const gd = document.createElement("div");
  document.body.appendChild(gd);
  const before = plotlyDrawn(gd);
  const axis = { automargin: false, showgrid: false, zeroline: false };
  await Plotly.newPlot(gd, [
    { x: [5], y: [0], mode: "markers", marker: { size: 10 } },
    { x: [2], y: [30], xaxis: "x2", yaxis: "y2", mode: "markers" },
  ], {
    width, height, margin, showlegend: false, font: { family: "Courier New", color: "#123456" },
    xaxis: { ...axis, range: [0, 10], domain: [0, 0.5] }, yaxis: { ...axis, range: [-1, 1] },
    xaxis2: { ...axis, range: [0, 4], domain: [0.6, 1], anchor: "y2" },
    yaxis2: { ...axis, range: [0, 40], domain: [0.25, 1], anchor: "x2" },
  });
  const geometry = (ref) => {
    const a = plotlyAxis(gd, ref);
    return a && { offset: a.offset, length: a.length };
  };
  const x = plotlyAxis(gd, "x"), y = plotlyAxis(gd, "y"), x2 = plotlyAxis(gd, "x2"), y2 = plotlyAxis(gd, "y2");
  const drag = (subplot) => {
    const r = gd.querySelector(`.nsewdrag[data-subplot=${subplot}]`);
    return ["x", "y", "width", "height"].map((k) => Number(r.getAttribute(k)));
  };
  const box = gd.getBoundingClientRect();
  const point = gd.querySelector(".scatterlayer .trace .point").getBoundingClientRect();
  return {
    before, after: plotlyDrawn(gd), box: plotlyFigureBox(gd), empty: plotlyFigureBox(document.createElement("div")),
    x: geometry("x"), y: geometry("y"), x2: geometry("x2"), y2: geometry("y2"), xDomain: geometry("x domain"),
    missing: [plotlyAxis(gd, "x3"), plotlyAxis(gd, "z"), plotlyAxis(gd, "")],
    pixels: [x.toPixel(0), x.toPixel(10), x.toPixel(5), y.toPixel(1), y.toPixel(-1), x2.toPixel(2), y2.toPixel(30)],
    values: [x.toValue(120), y.toValue(80), x2.toValue(96), y2.toValue(0)],
    drag: { xy: drag("xy"), x2y2: drag("x2y2") },
    point: [point.left + point.width / 2 - box.left, point.top + point.height / 2 - box.top],
  };
}"""


@pytest.fixture(scope="module")
def drawn() -> dict:
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        requests = []
        page.route("**/*", lambda route: (requests.append(route.request.url), route.abort()))
        page.set_content("<!doctype html><title>plotly adapter</title><body style='margin:0'></body>")
        page.add_script_tag(content=PLOTLY_JS.read_text(encoding="utf-8"))
        page.add_script_tag(content=(ROOT / "components" / "plotly_adapter.js").read_text(encoding="utf-8"))
        out = page.evaluate(DRAW, [WIDTH, HEIGHT, MARGIN])
        out["version"] = page.evaluate("Plotly.version")
        browser.close()
    assert requests == []
    return out


def test_drawn_and_box(drawn):
    assert drawn["before"] is False and drawn["after"] is True
    assert drawn["box"] == {"width": WIDTH, "height": HEIGHT, "fontFamily": "Courier New", "fontColor": "#123456"}
    assert drawn["empty"] is None


def test_axes_geometry_from_margins_and_domains(drawn):
    left, top = MARGIN["l"], MARGIN["t"]
    assert drawn["x"] == {"offset": left, "length": PLOT_W / 2}
    assert drawn["y"] == {"offset": top, "length": PLOT_H}
    assert drawn["x2"] == {"offset": left + 0.6 * PLOT_W, "length": 0.4 * PLOT_W}
    assert drawn["y2"] == {"offset": top, "length": 0.75 * PLOT_H}  # y runs down: the domain's top is at the margin
    assert drawn["xDomain"] == drawn["x"]
    assert drawn["missing"] == [None, None, None]


def test_axes_geometry_matches_plotlys_own_drag_rectangles(drawn):
    for subplot, (xa, ya) in {"xy": ("x", "y"), "x2y2": ("x2", "y2")}.items():
        x, y, width, height = drawn["drag"][subplot]
        assert (x, width) == pytest.approx((drawn[xa]["offset"], drawn[xa]["length"]), abs=0.5), subplot
        assert (y, height) == pytest.approx((drawn[ya]["offset"], drawn[ya]["length"]), abs=0.5), subplot


def test_values_to_pixels_and_back(drawn):
    left, top = MARGIN["l"], MARGIN["t"]
    x2_left = left + 0.6 * PLOT_W
    expected = [left, left + PLOT_W / 2, left + PLOT_W / 4, top, top + PLOT_H, x2_left + 0.5 * 0.4 * PLOT_W,
                top + 0.75 * PLOT_H * (1 - 30 / 40)]  # fmt: skip
    assert drawn["pixels"] == pytest.approx(expected, abs=1e-6)
    # toValue takes a pixel from the plot area's start: 120 of 240 px is x = 5, 80 of 320 px down is y = 0.5
    assert drawn["values"] == pytest.approx([5, 0.5, 2, 40], abs=1e-9)


def test_a_marker_sits_where_the_adapter_says(drawn):
    x, y = drawn["pixels"][2], 0.5 * (drawn["pixels"][3] + drawn["pixels"][4])  # the marker at (5, 0)
    assert drawn["point"] == pytest.approx([x, y], abs=1.0), f"plotly.js {drawn['version']}"
