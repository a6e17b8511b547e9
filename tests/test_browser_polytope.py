"""The polytope instrument in a real browser.

Playwright drives Debian's Chromium against `streamlit run app.py` (the server fixture of conftest): dragging the
discount redraws the exact views on every input event before the mouse is released, with no server rerun; the
release puts the discount into the URL and retrains the PVN, whose stale overlays are labelled until its new
weights arrive; the figures' downloads (PNG from the modebar, GIF and MP4 of the ascent) still work.
"""

import re

import pytest
from test_browser_player import RERUNS

from conftest import wait_idle

pytestmark = pytest.mark.browser


def open_instrument(browser, server, query: str = ""):
    page = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True).new_page()
    page.goto(f"{server}/polytope{query}")
    wait_idle(page)
    page.wait_for_selector(".pvn-poly[data-drawn]", timeout=120_000)
    return page


def drawn(page) -> int:
    return int(page.locator(".pvn-poly").get_attribute("data-drawn"))


def test_a_drag_redraws_before_the_release_and_the_release_retrains(server, browser):
    page = open_instrument(browser, server)
    optimum = page.locator(".pvn-poly-optimum")
    before = optimum.inner_text()
    gamma = page.locator(".pvn-poly input[name=gamma]")
    gamma.scroll_into_view_if_needed()
    box = gamma.bounding_box()
    x = box["x"] + 8 + (box["width"] - 16) * 0.8 / 0.99  # the thumb at the paper's 0.8
    y = box["y"] + box["height"] / 2
    page.evaluate(RERUNS)
    page.mouse.move(x, y)
    page.mouse.down()
    values = []
    for k in range(1, 4):
        n = drawn(page)
        page.mouse.move(x - 25 * k, y)
        page.wait_for_function(f"Number(document.querySelector('.pvn-poly').dataset.drawn) > {n}", timeout=10_000)
        values.append(gamma.input_value())
    assert len(set(values)) == 3 and float(values[-1]) < 0.8, values  # the view followed every move
    assert optimum.inner_text() != before  # the exact optimum of the new discount, computed in the page
    assert page.evaluate("window.__reruns") == 0 and "gamma=" not in page.url  # nothing sent before the release
    assert page.locator(".pvn-poly").get_attribute("data-stale") == "true"  # the PVN was trained at 0.8
    assert page.locator(".pvn-poly-badge").is_visible()
    page.mouse.up()
    page.wait_for_function(f"location.search.includes('gamma={values[-1]}')", timeout=30_000)
    page.wait_for_function("document.querySelector('.pvn-poly').dataset.stale === 'false'", timeout=120_000)
    assert not page.locator(".pvn-poly-badge").is_visible()  # the PVN retrained on this discount
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_the_downloads_still_work(server, browser):
    page = open_instrument(browser, server)
    figure = page.locator(".pvn-poly .pvn-poly-fig").first  # the value polytope
    figure.scroll_into_view_if_needed()
    figure.hover()
    with page.expect_download(timeout=60_000) as download:
        figure.locator(".modebar-btn[data-title^='Download plot']").click()
    png = download.value
    assert png.suggested_filename.endswith(".png")
    content = open(png.path(), "rb").read()
    assert content[:8] == b"\x89PNG\r\n\x1a\n" and len(content) > 20_000  # the whole figure, the cloud included
    for label, magic, offset in (("(GIF)", b"GIF89a", 0), ("(MP4)", b"ftyp", 4)):
        button = page.locator("[data-testid='stDownloadButton'] button").filter(has_text=label).first
        button.scroll_into_view_if_needed()
        with page.expect_download(timeout=180_000) as download:
            button.click()
        data = open(download.value.path(), "rb").read()
        assert data[offset : offset + len(magic)] == magic, label
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_an_svg_download_holds_the_whole_figure(server, browser):
    """The sidebar's SVG format: the camera downloads the value polytope as SVG with the painted cloud in it
    (its 5,000 policies are drawn on a canvas in the page; in the download they are plotly's WebGL trace, which
    an SVG embeds as an image)."""
    page = open_instrument(browser, server, "?figure_format=SVG")
    figure = page.locator(".pvn-poly .pvn-poly-fig").first
    figure.scroll_into_view_if_needed()
    figure.hover()
    with page.expect_download(timeout=60_000) as download:
        figure.locator(".modebar-btn[data-title^='Download plot']").click()
    assert download.value.suggested_filename.endswith(".svg")
    svg = open(download.value.path(), encoding="utf-8").read()
    images = re.findall(r'<image[^>]*href="data:image/png;base64,([^"]+)"', svg)
    assert svg.startswith("<svg") and images and max(map(len, images)) > 10_000, svg[:200]
    assert "V(s1)" in svg and "V(s2)" in svg  # the axes' titles came along
    page.close()


def test_the_default_view_shows_both_ascents_at_the_optimum_as_the_readme_says(server, browser):
    """Fig. 3's point with zero clicks: a bare link opens the seed the README names, where the learned ascent
    ends at the optimum with the exact one, and the page says how often that happens over seeds."""
    from pathlib import Path

    from pvnviz.polytope.survey import PAPER_SURVEY

    page = open_instrument(browser, server)
    text = page.locator(".pvn-poly").inner_text()
    ends = re.search(r"Learned ascent ends at J = ([-\d.]+), exact ascent at ([-\d.]+), optimum ([-\d.]+)\.", text)
    assert ends, text
    assert ends.group(1) == ends.group(2) == ends.group(3), ends.groups()
    readme = Path(__file__).resolve().parents[1].joinpath("README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| Polytope"))
    seed = PAPER_SURVEY.first_at_optimum
    assert f"(J = {ends.group(3)}) at seed {seed}, the app's default" in row
    assert page.get_by_role("spinbutton", name="Seed").input_value() == str(seed)
    assert PAPER_SURVEY.sentence() in " ".join(text.split())
    page.close()
