"""The experiment settings' number fields in a real browser (ui/settings.py): Enter does what the field's hint
promises. A value out of range is refused whole with its range stated: the field goes back to the value in force,
the URL keeps it, and the page's run is the one of the settings on screen; a value in range is applied."""

import pytest
from playwright.sync_api import expect

from conftest import wait_idle

pytestmark = pytest.mark.browser


def _text(page) -> str:
    return page.locator("[data-testid='stMain']").inner_text()


@pytest.mark.parametrize(
    ("section", "label", "typed", "kept", "says"),
    [
        ("Dataset (Appendix C)", "Policies K", "-5", "1000", "enter a whole number from 2 to 20,000"),
        ("PVN (Sections 3-4", "Batch size", "0", "32", "enter a whole number from 1 to 1,024"),
        ("PVN (Sections 3-4", "Validation share", "1.5", "0.10", "enter a number from 0.05 to 0.9"),
    ],
)
def test_enter_refuses_a_number_out_of_range_whole(server, browser, section, label, typed, kept, says):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{server}/cartpole")
    wait_idle(page)
    shown = "Showing the shipped run `data/cartpole-paper` of these settings"
    expect(page.get_by_text("Showing the shipped run")).to_be_visible(timeout=60_000)
    url = page.url
    page.locator("summary").filter(has_text=section).click()
    box = page.get_by_label(label, exact=True)
    expect(box).to_have_value(kept)
    box.fill(typed)
    box.press("Enter")
    error = page.locator("[data-testid='stSidebar'] [data-testid='stAlertContentError']")
    expect(error).to_contain_text(f"{label}: {typed} was not applied; {says}.", timeout=30_000)
    wait_idle(page)
    expect(box).to_have_value(kept)  # back to the value in force, not red and waiting for another Enter
    assert page.get_by_text("Press Enter to apply").count() == 0
    assert page.url == url  # the URL keeps the last valid settings
    assert shown.replace("`", "") in _text(page).replace("`", "")  # and the run shown is theirs
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_enter_applies_a_number_in_range(server, browser):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{server}/cartpole")
    wait_idle(page)
    page.locator("summary").filter(has_text="PVN (Sections 3-4").click()
    box = page.get_by_label("Batch size", exact=True)
    box.fill("64")
    box.press("Enter")
    page.wait_for_url("**cartpole_batch_size=64**", timeout=30_000)
    wait_idle(page)
    expect(box).to_have_value("64")
    assert page.locator("[data-testid='stSidebar'] [data-testid='stAlertContentError']").count() == 0
    assert "Showing the shipped run" not in _text(page)  # no run of these settings is claimed
    page.close()
