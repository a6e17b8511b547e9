"""A real browser (Chromium through Playwright) on what a link and the sidebar say: the sidebar's seed follows the
page it opens (a switch from the polytope page to CartPole shows CartPole's shipped run and its seed), a bad seed
in a link is named and replaced by the page's own, the page icons are Material icons drawn from Streamlit's bundled
font, and nothing (no favicon, no icon) is fetched from outside the app's server."""

import pytest

from conftest import PAGES, wait_idle

pytestmark = pytest.mark.browser


def _seed(page) -> str:
    return page.locator("[data-testid='stSidebar'] input[aria-label='Seed']").input_value()


def test_switching_pages_opens_each_on_its_own_seed(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((server, "blob:", "data:")) else None)
    page.goto(f"{server}/polytope")
    wait_idle(page)
    polytope_seed = _seed(page)
    nav = page.locator("[data-testid='stSidebarNav']")
    icons = nav.locator("[data-testid='stIconMaterial']")
    assert icons.count() == len(PAGES), nav.inner_html()[:500]  # one Material icon per page, no emoji
    assert "🛒" not in nav.inner_text() and "🏠" not in nav.inner_text()
    nav.get_by_text("CartPole (Section 6.2)").click()
    page.wait_for_url("**/cartpole**")
    wait_idle(page)
    assert _seed(page) == "0", (polytope_seed, page.url)
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "Showing the shipped run data/cartpole-paper" in body, body[:2000]
    assert not outside, outside
    page.close()


def test_a_bad_seed_in_a_link_is_named_and_the_page_s_own_used(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/cartpole?seed=-5&cartpole_preset=quick")
    wait_idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    warning = page.locator("[data-testid='stAlert']").filter(has_text="link holds values").first
    assert "seed=-5" in warning.inner_text() and "seed is 0" in warning.inner_text()
    assert _seed(page) == "0"
    assert "Showing the shipped run data/cartpole-quick" in page.locator("[data-testid='stMain']").inner_text()
    page.close()
