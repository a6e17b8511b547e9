"""A number entered in an experiment page's settings (ui/settings.py) is applied or refused whole: out of its
range, the field, the URL and the run shown keep the last valid value, and one error states the range; in range, it
is applied; a link's value out of range is named, and the preset's value used."""

import pytest
from streamlit.testing.v1 import AppTest

import ui.server.queue
from conftest import no_training, open_link, open_page, texts

pytestmark = pytest.mark.slow  # page runs: `make test` runs it


def _shown_run(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if "these settings" in c.value or "not been run" in c.value]


def _in_url(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value[-1] if isinstance(value, list) else value


@pytest.mark.parametrize(
    ("field", "typed", "range_text"),
    [
        ("num_policies", -5, "Policies K: -5 was not applied; enter a whole number from 2 to 20,000."),
        ("batch_size", 0, "Batch size: 0 was not applied; enter a whole number from 1 to 1,024."),
        ("val_fraction", 1.5, "Validation share: 1.5 was not applied; enter a number from 0.05 to 0.9."),
    ],
)
def test_an_out_of_range_number_is_refused_whole_and_the_range_stated(monkeypatch, field, typed, range_text):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)  # a refused value runs nothing
    at = open_page("pages/cartpole.py")
    key = f"cartpole_{field}"
    kept, shown = at.number_input(key=key).value, _shown_run(at)
    assert shown and "Showing the shipped run" in shown[0]
    at.number_input(key=key).set_value(typed).run()  # Enter in the browser sends the value
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key=key).value == kept  # the field shows the settings in force
    kept_text = f"{kept:,}" if isinstance(kept, int) else f"{kept:g}"
    assert [e.value for e in at.error] == [f"{range_text} The settings keep {kept_text}."]
    assert _in_url(at, key) in (None, str(kept))  # the URL keeps the last valid value (the browser writes it)
    assert _shown_run(at) == shown  # the run shown is the one of the settings on screen, as before
    at.run()
    assert not at.error  # said once


def test_a_number_in_range_is_applied(monkeypatch):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_page("pages/cartpole.py")
    at.number_input(key="cartpole_batch_size").set_value(64).run()
    assert at.number_input(key="cartpole_batch_size").value == 64 and not at.error
    assert "not been run yet" in texts(at)
    at.number_input(key="cartpole_batch_size").set_value(2000).run()  # then one out of range: the last valid stays
    assert at.number_input(key="cartpole_batch_size").value == 64
    assert [e.value for e in at.error] == [
        "Batch size: 2,000 was not applied; enter a whole number from 1 to 1,024. The settings keep 64."
    ]


def test_a_link_s_number_out_of_range_is_named_and_the_preset_s_value_used():
    at = open_link({"cartpole_num_policies": "-5", "cartpole_val_fraction": "1.5"})
    assert at.number_input(key="cartpole_num_policies").value == 1000
    assert at.number_input(key="cartpole_val_fraction").value == pytest.approx(0.1)
    warning = next(w.value for w in at.warning if "link holds values" in w.value)
    assert "`cartpole_num_policies=-5`" in warning and "`cartpole_val_fraction=1.5`" in warning
    assert "Showing the shipped run" in " ".join(_shown_run(at))
