"""The teaching player and the polytope's links in a real browser.

Playwright drives Debian's Chromium against the app's server (the server fixture of conftest):
arrow keys and the step buttons move the ascent one iterate, Space plays and pauses, the selected iterate is
ringed in the policy square, the value polytope and the J curve together, a URL with non-default values opens
with every input holding them (also after a reload), and "Paper settings" resets every control and the seed.
Outside CI a missing Chromium skips these tests; under CI=true it fails them.
"""

import json
import re
from pathlib import Path

import pytest

from browserbench.browser import draw_every_figure
from conftest import CARTPOLE_FIGURES, wait_idle

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
STEP = re.compile(r"ascent step (\d+) \((\d+) of (\d+)\)")

# Widget label -> (URL parameter, non-default value, how the page shows it)
LINKED = {
    "Discount γ": ("gamma", "0.9", "0.9"),
    "d0(s1)": ("d0", "0.3", "0.3"),
    "r(s1, a1)": ("r00", "0.3", "0.3"),
    "P(s1 | s2, a1)": ("p10", "0.5", "0.5"),
    "Sampled policies (half train, half test)": ("num_policies", "60", "60"),
    "PVN learning rate (RMSProp)": ("pvn_lr", "0.02", "0.0200"),
    "Training steps": ("train_steps", "2000", "2000"),
    "Start P(a1 | s1)": ("start1", "0.2", "0.2"),
    "Start P(a1 | s2)": ("start2", "0.3", "0.3"),
    "Ascent step size (SGD)": ("ascent_lr", "0.2", "0.2"),
    "Ascent steps": ("ascent_steps", "50", "50"),
    "Seed": ("seed", "7", "7"),
}
PAPER = {"Discount γ": "0.8", "Start P(a1 | s1)": "0.5", "Ascent steps": "100", "Seed": "10", "r(s1, a1)": "-0.45"}


def open_polytope(browser, server, query: str = ""):
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    page.goto(f"{server}/polytope{query}")
    wait_idle(page)
    page.wait_for_function("document.body.innerText.match(/ascent step \\d+ \\(/)", timeout=120_000)
    assert page.locator("[data-testid='stException']").count() == 0
    return page


RERUNS = """() => { window.__reruns = 0; const app = document.querySelector("[data-testid='stApp']");
  new MutationObserver(() => { if (app.getAttribute('data-test-script-state') === 'running') window.__reruns++; })
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }"""


def player(page, label: str = "ascent step"):
    """The browser player (ui.browser_player) whose caption names ``label``."""
    return page.locator(".pvn-player").filter(has=page.locator(".pvn-player-caption", has_text=label)).first


def current_step(page, label: str = "ascent step") -> tuple[int, int]:
    """(frame shown, number of frames) from a player's caption."""
    caption = page.locator(".pvn-player-caption").filter(has_text=label).last
    match = STEP.search(caption.inner_text())
    return int(match.group(1)), int(match.group(3))


def press(page, key: str) -> None:
    page.locator("h1").first.click()  # focus on the page, not in an input
    page.keyboard.press(key)
    page.wait_for_timeout(300)
    wait_idle(page)


BUTTONS = {"⏮": "first", "◀": "back", "▶": "forward", "⏭": "last", "play": "play"}


def click(page, label: str, which: str = "ascent step") -> None:
    if label in BUTTONS:  # the player's own buttons (inline SVG icons)
        player(page, which).locator(f".pvn-{BUTTONS[label]}").click()
        page.wait_for_timeout(300)
    else:
        page.locator("button").filter(has_text=label).first.click()
    wait_idle(page)


def figure_data(page) -> list[list[dict]]:
    """Every plotly chart's traces (x, y, meta) as drawn in the browser: plotly's decoded full data, and the traces
    the polytope instrument paints on its canvas instead (``pvnPainted``)."""
    return json.loads(
        page.evaluate(
            """() => JSON.stringify([...document.querySelectorAll('.js-plotly-plot')].map(gd =>
                 [...gd._fullData.filter(t => !(t.x && t.x.length === 1 && isNaN(t.x[0]))), ...(gd.pvnPainted || [])]
                   .filter(t => t.x).map(t => ({meta: t.meta || null, x: Array.from(t.x), y: Array.from(t.y)}))))"""
        )
    )


def test_arrow_keys_and_step_buttons_move_one_iterate(server, browser):
    page = open_polytope(browser, server)
    assert current_step(page) == (100, 101)  # opens on the last iterate
    press(page, "ArrowLeft")
    assert current_step(page)[0] == 99
    press(page, "ArrowLeft")
    assert current_step(page)[0] == 98
    press(page, "ArrowRight")
    assert current_step(page)[0] == 99
    click(page, "◀")
    assert current_step(page)[0] == 98
    click(page, "▶")
    click(page, "▶")
    assert current_step(page)[0] == 100
    click(page, "▶")  # stops at the last iterate
    assert current_step(page)[0] == 100
    click(page, "⏮")
    assert current_step(page)[0] == 0
    page.close()


def test_space_plays_to_the_end_without_a_rerun_and_pauses(server, browser):
    page = open_polytope(browser, server)
    click(page, "⏮")
    page.evaluate(RERUNS)
    page.locator("h1").first.click()
    page.keyboard.press("Space")  # play: 101 iterates at 30 a second
    page.wait_for_function("document.body.innerText.includes('— playing')", timeout=30_000)
    page.wait_for_function(
        "document.querySelector('.pvn-player').dataset.playing === 'false'", timeout=60_000
    )  # it reached the last iterate and paused there
    assert current_step(page) == (100, 101)
    drawn = int(player(page).get_attribute("data-drawn"))
    assert drawn >= 20, drawn  # it drew frames on its way (how many a second: python -m pvnviz.bench ui)
    assert page.evaluate("window.__reruns") <= 1  # only the pause at the end told the server its frame
    click(page, "⏮")
    page.evaluate(RERUNS)
    page.locator("h1").first.click()
    page.keyboard.press("Space")
    page.wait_for_timeout(1000)
    assert page.evaluate("window.__reruns") == 0  # playing: no server rerun
    page.keyboard.press("Space")  # pause
    wait_idle(page)
    step, total = current_step(page)
    assert 0 < step < total - 1, step
    assert player(page).get_attribute("data-playing") == "false"
    page.wait_for_function(f"location.search.includes('ascent={step}')", timeout=10_000)  # paused: in the URL
    page.wait_for_timeout(1000)
    assert current_step(page)[0] == step  # paused: it stays
    page.close()


def test_selected_iterate_is_ringed_in_all_three_views(server, browser):
    page = open_polytope(browser, server)
    for _ in range(3):
        click(page, "◀")
    step, _ = current_step(page)
    assert step == 97
    traces = [t for chart in figure_data(page) for t in chart]
    by_meta = {t["meta"]: t for t in traces if t["meta"]}
    for name in ("exact ascent", "learned ascent"):
        square_path, square_ring = by_meta[f"upto:{name}:1"], by_meta[f"ring:{name}:1"]
        assert len(square_path["x"]) == step + 1  # the path drawn up to the selected iterate
        assert square_ring["x"] == [square_path["x"][step]] and square_ring["y"] == [square_path["y"][step]]
        polytope_path, polytope_ring = by_meta[f"upto:{name}:2"], by_meta[f"ring:{name}:2"]
        assert polytope_ring["x"] == [polytope_path["x"][step]]  # the same iterate at its values V(s1), V(s2)
    assert by_meta["highlight"]["x"] == [step, step, step]  # ringed on the J curve
    page.screenshot(path=str(_artifact("player-polytope.png")), full_page=True)
    page.close()


def _input_value(page, label: str) -> str:
    param = LINKED[label][0] if label in LINKED else None
    control = page.locator(f".pvn-poly input[name={param}]")
    if param and control.count():  # the polytope instrument's own controls: the number itself
        return control.input_value()
    if label == "Seed" or page.locator("[data-testid='stNumberInput']").filter(has_text=label).count():
        box = page.locator("[data-testid='stNumberInput']").filter(has_text=label).first
        return box.locator("input").input_value()
    slider = page.locator("[data-testid='stSlider']").filter(has_text=label).first
    return slider.locator("input[type='range']").get_attribute("aria-valuetext")


def test_a_copied_url_reproduces_every_input_and_a_reload_keeps_it(server, browser):
    query = "?" + "&".join(f"{param}={value}" for param, value, _ in LINKED.values()) + "&ascent=20"
    page = open_polytope(browser, server, query)
    for label, (_, _, shown) in LINKED.items():
        assert _input_value(page, label) == shown, label
    assert current_step(page) == (20, 51)  # the player's frame is in the link too
    click(page, "◀")
    assert "ascent=19" in page.url
    page.reload()
    wait_idle(page)
    page.wait_for_function("document.body.innerText.match(/ascent step \\d+ \\(/)", timeout=120_000)
    for label, (_, _, shown) in LINKED.items():
        assert _input_value(page, label) == shown, label
    assert current_step(page) == (19, 51)
    page.close()


def test_paper_settings_resets_every_control_and_the_seed(server, browser):
    query = "?" + "&".join(f"{param}={value}" for param, value, _ in LINKED.values())
    page = open_polytope(browser, server, query)
    click(page, "Paper settings")
    page.wait_for_function("document.body.innerText.match(/ascent step 100 \\(101 of 101\\)/)", timeout=60_000)
    for label, shown in PAPER.items():
        assert _input_value(page, label) == shown, label
    assert "?" not in page.url or not any(f"{p}=" in page.url for p, _, _ in LINKED.values()), page.url
    page.close()


def _artifact(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name


def test_cartpole_players_step_and_the_keys_follow_the_last_used(server, browser):
    """CartPole has three players (validation policies, probing states, replay); the keys drive the one used last."""
    page = open_polytope(browser, server)  # the polytope's player owns the keys there, not on CartPole
    read = []  # the players' animations, read from the server's animation route, not sent in the script run
    page.on("response", lambda r: "/pvn/anim/" in r.url and read.append((r.request.method, r.status)))
    page.locator("[data-testid='stSidebarNav'] a").filter(has_text="CartPole").click()
    wait_idle(page, 300_000)
    draw_every_figure(page, CARTPOLE_FIGURES)  # its players are below the fold: drawn once scrolled near
    page.wait_for_function("document.body.innerText.includes('time step 0 (1 of')", timeout=300_000)

    def caption(text: str) -> str:
        box = page.locator(".pvn-player-caption").filter(has_text=text).last
        box.scroll_into_view_if_needed()  # a player the rerun mounted anew below the fold draws its frame once near
        page.wait_for_function("(el) => / of \\d+\\)/.test(el.textContent)", arg=box.element_handle(), timeout=30_000)
        return box.inner_text()

    assert caption("time step").startswith("time step 0 (1 of")  # the replay opens on its first frame
    assert caption("validation policy").startswith("validation policy #")
    assert "(1 of" in caption("validation policy")  # it opens on the first validation policy
    probes_before = caption("snapshot")
    press(page, "ArrowRight")  # on a page not used yet, the keys drive its first player: the validation policies
    assert "(2 of" in caption("validation policy"), caption("validation policy")
    assert caption("snapshot") == probes_before
    click(page, "▶", "time step")
    assert caption("time step").startswith("time step 2 (2 of"), caption("time step")  # every 2nd time step
    press(page, "ArrowRight")  # the replay was used last: the keys drive it
    assert caption("time step").startswith("time step 4 (3 of"), caption("time step")
    assert caption("snapshot") == probes_before
    assert read.count(("GET", 200)) >= 3 and len(set(read)) == 1, read  # the three players' animations
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_a_player_whose_animation_is_not_served_asks_again_and_draws(server, browser):
    """An animation pushed out of the server's store (``ui.server.store``) is answered 404: the player asks its
    server for a rerun (which serves it again) and reads it once more, and draws it."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    refused: list[str] = []

    def first_read_refused(route) -> None:
        if route.request.url not in refused:
            refused.append(route.request.url)
            route.fulfill(status=404, body="gone")
        else:
            route.continue_()

    page.route("**/pvn/anim/**", first_read_refused)
    page.goto(f"{server}/cartpole?seed=0&cartpole_preset=quick")
    wait_idle(page, 300_000)
    box = page.locator(".pvn-player-caption").filter(has_text="time step").last
    box.scroll_into_view_if_needed()  # near: the replay reads its animation, is refused once, and reads it again
    page.wait_for_function("(el) => / of \\d+\\)/.test(el.textContent)", arg=box.element_handle(), timeout=60_000)
    assert box.inner_text().startswith("time step 0 (1 of") and refused, refused
    assert "could not be loaded" not in page.locator("[data-testid='stMain']").inner_text()
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()
