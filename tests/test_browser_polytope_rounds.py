"""The polytope's active rounds in a real Chromium: the page opened with the mode on from its link draws the
rounds' player, which plays every frame with no server rerun while it plays (its frame rate measured as
``python -m pvnviz.bench ui`` measures every player, ``browserbench.playback``, and printed); screenshots of the
page and of the player under tests/artifacts/ for a person to look at."""

from pathlib import Path

import pytest

from browserbench.playback import playback, player
from conftest import wait_idle

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[1] / "tests" / "artifacts"


def open_rounds(browser, server, query: str = "?beyond=true"):
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/polytope{query}")
    wait_idle(page)
    root = player(page, "round")
    root.scroll_into_view_if_needed()
    page.wait_for_function(
        "document.body.innerText.match(/round 7 of 7, step 100 · checks: 19 of 20 \\(70 of 70\\)/)", timeout=120_000
    )
    assert page.locator("[data-testid='stException']").count() == 0
    return page, errors


def test_the_rounds_play_through_without_a_rerun(server, browser):
    """At 1x and 2x the player draws the rounds' frames from the first to the last with no server rerun. Its frame
    rate is printed, not asserted: it depends on the machine's CPU (Chromium draws without a GPU here), so the
    30 frames a second goal is a benchmark's to measure against a baseline on the same machine, not a test's."""
    page, errors = open_rounds(browser, server)
    root = player(page, "round")
    found = {}
    for speed in ("1", "2"):
        root.locator("select.pvn-player-speed").select_option(speed)
        found[speed] = [playback(page, "round") for _ in range(3)]
    print("active rounds (fps, reruns, frames) at 1x and 2x:", found)
    for runs in found.values():
        assert [reruns for _, reruns, _ in runs] == [0, 0, 0], runs
        assert all(frames >= 60 for _, _, frames in runs), found  # played through (70 frames, from the first)
        assert all(fps > 0 for fps, _, _ in runs), found
    assert not errors, errors


@pytest.mark.parametrize("checks", ["exact", "10 episodes"])
def test_screenshots_of_the_rounds(server, browser, checks):
    page, errors = open_rounds(browser, server, f"?beyond=true&beyond_checks={checks.replace(' ', '+')}")
    root = player(page, "round")
    root.scroll_into_view_if_needed()
    page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = checks.replace(" ", "-")
    root.screenshot(path=str(ARTIFACTS / f"polytope-rounds-{name}.png"))
    page.get_by_text("Beyond the paper: active rounds", exact=True).first.evaluate("e => e.scrollIntoView()")
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / f"polytope-rounds-{name}-page.png"))
    page.get_by_text("How often it arrives", exact=True).evaluate("e => e.scrollIntoView({block: 'end'})")
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / f"polytope-rounds-{name}-text.png"))
    assert not errors, errors


@pytest.mark.parametrize("mode", ["beyond=true", "beyond=true&projector=true"])
def test_the_tour_checks_pass_with_the_mode_on(server, browser, mode, monkeypatch):
    """The screenshot tour's checks (tests/test_browser_tour.py: cut titles and labels, empty columns, repeated
    titles, errors, projector text sizes) on the polytope page with the rounds on; its screenshot under
    tests/artifacts/tour/."""
    import test_browser_tour as tour

    name = "rounds-projector" if "projector" in mode else "rounds"
    monkeypatch.setitem(tour.MODES, name, mode)
    problems, shot = tour.visit(browser, server, "polytope", "1280x720", name)
    assert problems == [], (problems, shot)


def _stage_shot(root):
    """The player's figures, as a PIL image."""
    from io import BytesIO

    from PIL import Image

    return Image.open(BytesIO(root.locator(".pvn-player-stage").screenshot())).convert("RGB")


def _difference(a, b) -> int:
    """Pixels of two screenshots that differ by more than 60 (of 255) in a channel: anti-aliasing moves a few
    edges by less, a marker or a path drawn elsewhere changes hundreds of pixels by more."""
    import numpy as np

    return int((np.abs(np.asarray(a, dtype=int) - np.asarray(b, dtype=int)).max(axis=-1) > 60).sum())


def test_a_painted_frame_looks_like_plotlys_exact_frame(server, browser):
    """While the rounds play, what the frames move is painted over plotly's plot (components/player_paint.js), not
    drawn by plotly: a screenshot of frame F while it plays (the page's animation frames held back, so that the
    player's clock waits on it) is nearly plotly's own drawing of frame F once paused
    (a few pixels of anti-aliasing apart), and much further from plotly's frame F + 5, in another round; plotly's
    own moving traces are empty while it plays, and the painted canvas is blank again once paused."""
    page, errors = open_rounds(browser, server)
    root = player(page, "round")
    root.locator(".pvn-first").click()
    page.wait_for_timeout(1500)
    root.locator(".pvn-play").click()
    page.wait_for_function("document.querySelector('.pvn-player[data-playing=\"true\"]')?.dataset.frame >= 25")
    page.evaluate("() => { window.__raf = window.requestAnimationFrame; window.requestAnimationFrame = () => 0; }")
    page.wait_for_timeout(300)  # the frame asked for last is painted; the player's clock waits for a frame
    assert root.get_attribute("data-playing") == "true"
    frame = int(root.get_attribute("data-frame"))
    painted = _stage_shot(root)
    page.evaluate("() => { window.requestAnimationFrame = window.__raf; }")
    canvas = root.locator("canvas.pvn-overlay")
    assert canvas.count() == 1
    empty = root.evaluate(
        "r => [...r.querySelectorAll('.scatterlayer .trace.scatter')].filter(g => !g.querySelector('path.point')"
        " && !(g.querySelector('path.js-line')?.getAttribute('d'))).length"
    )
    assert empty >= 4, empty  # this round's ascent and the checks, in both panels: painted, not drawn by plotly
    root.locator(".pvn-play").click()  # pause

    def exact(k: int):
        root.evaluate(
            "(r, k) => { const s = r.querySelector('.pvn-player-slider'); s.value = String(k);"
            " s.dispatchEvent(new Event('input')); }",
            k,
        )
        page.wait_for_function("(k) => document.querySelector(`.pvn-player[data-frame=\"${k}\"]`)", arg=k)
        page.wait_for_timeout(800)
        return _stage_shot(root)

    same, other = exact(frame), exact(frame + 5)
    blank = canvas.evaluate(
        "c => !c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v, i) => i % 4 === 3 && v > 0)"
    )
    assert blank, "the painted frame stayed on the canvas after the pause"
    near, far = _difference(painted, same), _difference(painted, other)
    print(f"frame {frame}: pixels apart, painted vs plotly's same frame {near}, vs frame {frame + 5} {far}")
    assert near < far / 5, (near, far)
    assert not errors, errors
