"""The CartPole page's view controls switch in the browser, in a real Chromium.

The probing states' axes: the page projects the snapshots it was sent once, and what it draws equals
``figures.experiment.probes_animation`` for those axes (traces, bounds, axis titles and ranges) at the frame
shown. The replay's start and PVN: the page switches to that start's animation, which equals
``figures.replay.replay_figure`` of ``BatchedEnv.replay`` for that start, drawn in Python. Each switch redraws
before the server hears of it, then goes into the URL once; a reload opens the same views.
"""

import numpy as np
import pytest
from test_browser_player import RERUNS

from browserbench.browser import draw_every_figure
from conftest import CARTPOLE_FIGURES, array, wait_idle

pytestmark = pytest.mark.browser

FIGURE = """(key) => { const div = [...document.querySelectorAll('.pvn-player')].find((p) =>
  p.querySelector('.pvn-player-caption')?.textContent.startsWith(key))?.querySelector('.js-plotly-plot');
  const arr = (v) => (v == null ? null : Array.from(v, (x) => (Number.isNaN(x) ? null : x)));
  return { data: div.data.map((t) => ({ x: arr(t.x), y: arr(t.y), name: t.name ?? null })),
    shapes: (div.layout.shapes || []).map(({ x0, x1, y0, y1, xref, yref }) => ({ x0, x1, y0, y1, xref, yref })),
    xtitle: div.layout.xaxis.title.text, ytitle: div.layout.yaxis.title.text,
    xrange: div.layout.xaxis.range, yrange: div.layout.yaxis.range, title: div.layout.title.text,
    annotations: (div.layout.annotations || []).map((a) => a.text) }; }"""


def choose(page, caption: str, label: str, index: int) -> None:
    """Pick option ``index`` of the drop-down ``label`` of the player whose caption starts with ``caption``."""
    player = page.locator(".pvn-player").filter(has=page.locator(".pvn-player-caption", has_text=caption)).first
    player.locator("label", has_text=label).locator("select").select_option(index=index)


def same(a, b) -> None:
    a = np.array([np.nan if v is None else v for v in a], dtype=float)
    np.testing.assert_allclose(a, np.asarray(array(b), dtype=float), rtol=1e-12, atol=0)


def open_cartpole(browser, server, query: str = ""):
    page = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True).new_page()
    page.goto(f"{server}/cartpole{query}")
    wait_idle(page, 300_000)
    draw_every_figure(page, CARTPOLE_FIGURES)  # its players are below the fold: drawn once scrolled near
    page.wait_for_function("document.body.innerText.includes('time step 0 (1 of')", timeout=300_000)
    return page


def test_probe_axes_and_replay_start_switch_in_the_page_and_equal_python(server, browser):
    from pvnviz.envs.registry import get_env
    from pvnviz.figures.experiment import probes_animation
    from pvnviz.figures.replay import replay_figure
    from pvnviz.runs.files import load_result
    from pvnviz.runs.live import policy_pair
    from ui.results import REPLAY_NAMES

    result = load_result("data/cartpole-paper", "cartpole")
    env = get_env("cartpole")
    trained = result.trained["fingerprint"]
    last = len(trained.probe_snapshots) - 1
    page = open_cartpole(browser, server)
    page.evaluate(RERUNS)
    for dims in ((1, 3), (3, 3), (2, 0)):  # a pair with no bounds, the same axis twice, both bounded
        choose(page, "snapshot", "Horizontal axis", dims[0])
        choose(page, "snapshot", "Vertical axis", dims[1])
        shown = page.evaluate(FIGURE, "snapshot")  # read at once: the page drew it before any rerun could
        python = probes_animation(trained, env, dims, frame=last).to_plotly_json()
        for got, want in zip(shown["data"], python["data"]):
            same(got["x"], want["x"])
            same(got["y"], want["y"])
        assert shown["shapes"] == [
            {k: s[k] for k in ("x0", "x1", "y0", "y1", "xref", "yref")} for s in python["layout"].get("shapes", [])
        ]
        assert (shown["xtitle"], shown["ytitle"]) == (env.state_labels[dims[0]], env.state_labels[dims[1]])
        same(shown["xrange"], python["layout"]["xaxis"]["range"])
        same(shown["yrange"], python["layout"]["yaxis"]["range"])
        assert python["layout"]["title"]["text"] in shown["title"]
    # six switches within a rerun or two: the URL ends on the last view
    page.wait_for_function("location.search.includes('cartpole_probe_x=2')", timeout=30_000)
    page.wait_for_function("location.search.includes('cartpole_probe_y=0')", timeout=30_000)
    wait_idle(page)
    page.locator(".pvn-player").filter(has_text="snapshot").first.locator(".pvn-back").click()
    shown = page.evaluate(FIGURE, "snapshot")
    python = probes_animation(trained, env, (2, 0), frame=last - 1).to_plotly_json()
    same(shown["data"][2]["x"], python["data"][2]["x"])  # stepping plays the projected snapshots
    assert python["layout"]["title"]["text"] in shown["title"]

    choose(page, "time step", "Start", 2)  # the third start, through the first PVN (fingerprint)
    shown = page.evaluate(FIGURE, "time step")
    mode = next(iter(result.traces))
    replay = env.replay(result.config.arch(), policy_pair(result.traces[mode], 2), result.config.horizon, 0)
    labels = [f"{n}: {panel.summary}" for n, panel in zip(REPLAY_NAMES, replay.panels)]
    python = replay_figure(replay, labels, frame=0).to_plotly_json()
    assert [a for a in shown["annotations"] if ":" in a] == labels  # the panels' titles: this start's episodes
    for got, want in zip(shown["data"], python["data"]):
        same(got["x"], want["x"])
        same(got["y"], want["y"])
    wait_idle(page)
    page.wait_for_function("location.search.includes('cartpole_replay_start=3')", timeout=30_000)
    assert "cartpole_probe_x=2" in page.url and "cartpole_probe_y=0" in page.url
    assert page.evaluate("window.__reruns") <= 8  # at most one per action (7 switches, 1 step): the URL
    page.goto(page.url)  # a copied link opens the same views
    wait_idle(page, 300_000)
    draw_every_figure(page, CARTPOLE_FIGURES)
    page.wait_for_function("document.body.innerText.includes('time step 0 (1 of')", timeout=300_000)
    assert page.evaluate(FIGURE, "time step")["annotations"] == shown["annotations"]
    assert page.evaluate(FIGURE, "snapshot")["xtitle"] == env.state_labels[2]
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_a_player_downloads_its_figure_as_svg_on_the_axes_shown(server, browser):
    page = open_cartpole(browser, server, "?figure_format=SVG&cartpole_probe_x=1&cartpole_probe_y=3")
    player = page.locator(".pvn-player").filter(has=page.locator(".pvn-player-caption", has_text="snapshot")).first
    figure = player.locator(".js-plotly-plot").first
    figure.scroll_into_view_if_needed()
    figure.hover()
    with page.expect_download(timeout=60_000) as download:
        figure.locator(".modebar-btn[data-title^='Download plot']").click()
    assert download.value.suggested_filename == "cartpole_probes.svg"
    svg = open(download.value.path(), encoding="utf-8").read()
    from pvnviz.envs.registry import get_env

    labels = get_env("cartpole").state_labels
    assert svg.startswith("<svg") and labels[1] in svg and labels[3] in svg  # the axes picked in the page
    page.close()
