"""The preset in a page's link (ui/settings.py): the URL holds the preset's id, the box shows its label, links
made when URLs held labels still open their preset, and a link naming no preset is named to the user."""

import pytest
from streamlit.testing.v1 import AppTest

from conftest import open_link, open_page
from pvnviz.runs.presets import PRESETS, preset_label

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

QUICK = PRESETS["cartpole"]["quick"]()
PAPER = PRESETS["cartpole"]["paper"]()
# a label that links held before they held ids
OLD_SWIMMER_BEYOND = "Beyond zero-shot: 10,000 x 1, best-policy starts, 6 active rounds"


def _in_url(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value[-1] if isinstance(value, list) else value


def _link_warning(at: AppTest) -> str:
    return next((w.value for w in at.warning if "link holds values" in w.value), "")


def _texts(at: AppTest) -> str:
    return " ".join(e.value for kind in ("caption", "info", "warning", "markdown") for e in at.get(kind))


def test_an_old_link_with_a_label_opens_its_preset_and_the_url_then_holds_the_id():
    at = open_link({"seed": "0", "cartpole_preset": "Quick"})
    assert at.selectbox(key="cartpole_preset").value == "quick"
    assert at.number_input(key="cartpole_num_policies").value == QUICK.num_policies  # Quick's fields, not Paper's
    assert "data/cartpole-quick" in _texts(at)
    assert _in_url(at, "cartpole_preset") == "quick"
    assert not _link_warning(at)  # the label was taken, so it is not reported as ignored


def test_the_old_swimmer_beyond_label_opens_beyond_whose_label_now_says_its_rounds():
    at = open_link({"swimmer_preset": OLD_SWIMMER_BEYOND}, "pages/swimmer.py")
    box = at.selectbox(key="swimmer_preset")
    assert box.value == "beyond" and _in_url(at, "swimmer_preset") == "beyond"
    rounds = PRESETS["swimmer"]["beyond"]().rounds
    shown = box.options[box.index]
    assert shown == preset_label("swimmer", "beyond") and f"{rounds} active rounds" in shown
    assert not _link_warning(at)


def test_a_link_with_an_id_opens_that_preset():
    at = open_link({"cartpole_preset": "beyond-linear"})
    assert at.selectbox(key="cartpole_preset").value == "beyond-linear"
    assert at.text_input(key="cartpole_policy_hidden").value == ""  # linear policies
    assert not _link_warning(at)


def test_a_link_naming_no_preset_is_named_and_the_page_opens_on_its_own():
    at = open_link({"cartpole_preset": "Mine"})
    warning = _link_warning(at)
    assert "`cartpole_preset=Mine`" in warning and "**cartpole_preset** is 'paper'" in warning, warning
    assert at.selectbox(key="cartpole_preset").value == "paper" and _in_url(at, "cartpole_preset") == "paper"
    at = open_link({"swimmer_preset": "beyond-linear"}, "pages/swimmer.py")  # an id of the other page only
    assert "`swimmer_preset=beyond-linear`" in _link_warning(at)


def test_the_box_shows_labels_and_puts_the_chosen_id_in_the_url():
    at = open_page("pages/cartpole.py")
    box = at.selectbox(key="cartpole_preset")
    assert box.options == [preset_label("cartpole", name) for name in PRESETS["cartpole"]]
    assert _in_url(at, "cartpole_preset") == "paper"  # the preset on screen is always named
    box.set_value("quick").run()
    assert _in_url(at, "cartpole_preset") == "quick"
    assert at.number_input(key="cartpole_num_policies").value == QUICK.num_policies
    copied = open_link({key: _in_url(at, key) for key in at.query_params})  # the URL, in a fresh tab
    assert copied.selectbox(key="cartpole_preset").value == "quick"
    assert copied.number_input(key="cartpole_num_policies").value == QUICK.num_policies


def test_the_preset_outlives_a_page_switch_and_follows_the_browsers_history():
    at = open_page("pages/cartpole.py")
    at.selectbox(key="cartpole_preset").set_value("quick").run()
    for page in ("pages/swimmer.py", "pages/cartpole.py"):
        at.switch_page(page)
        at.query_params.clear()  # as in the browser: a page opens without the other page's parameters
        at.run()
    assert at.selectbox(key="cartpole_preset").value == "quick" and _in_url(at, "cartpole_preset") == "quick"
    assert at.number_input(key="cartpole_num_policies").value == QUICK.num_policies
    at.query_params["cartpole_preset"] = "paper"  # Back: the URL before, which this session did not just write
    at.run()
    assert at.selectbox(key="cartpole_preset").value == "paper"
    at.run()  # and it stays: the box is not pulled back to the preset before
    assert at.selectbox(key="cartpole_preset").value == "paper" and _in_url(at, "cartpole_preset") == "paper"
