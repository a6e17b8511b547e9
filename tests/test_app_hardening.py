"""The pages against bad links and oversized settings (issue 10): explained, never a traceback or a path."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import APP, figures

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

ROOT = Path(__file__).resolve().parents[1]


def _open(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page(page)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_a_link_to_a_server_path_opens_nothing_and_says_so():
    for path in ("/etc", "~", "../../etc", "data/../../etc", "x" * 5000):
        at = _open("pages/cartpole.py", cartpole_run=path)
        assert not at.exception, [e.value for e in at.exception]
        assert at.selectbox(key="cartpole_run").value == ""  # not opened
        warning = next(w.value for w in at.warning if "link holds values" in w.value)
        assert "cartpole_run" in warning and str(ROOT) not in warning
        assert figures(at)  # the page still shows its shipped run


def test_a_shipped_run_opens_from_its_name_in_a_link():
    at = _open("pages/cartpole.py", cartpole_run="data/cartpole-quick")
    assert not at.exception and not at.error
    assert any("Showing the saved run in `data/cartpole-quick`" in i.value for i in at.info)


def test_bad_link_values_are_named_with_the_value_used_instead():
    at = _open("pages/cartpole.py", cartpole_num_policies="lots", seed="inf", cartpole_preset="Mine")
    assert not at.exception, [e.value for e in at.exception]
    warning = next(w.value for w in at.warning if "link holds values" in w.value)
    for key in ("cartpole_num_policies", "seed", "cartpole_preset"):
        assert f"`{key}=" in warning and f"**{key}** is" in warning, warning


def test_run_refuses_settings_over_the_live_budget_and_says_what_to_lower(monkeypatch):
    monkeypatch.setenv("PVN_LIVE_BUDGET_SECONDS", "60")
    at = _open("pages/cartpole.py")
    assert not at.button(key="cartpole_run_button").disabled  # the paper preset fits (about 7 s)
    at.number_input(key="cartpole_train_steps").set_value(50000).run()
    at.number_input(key="cartpole_batch_size").set_value(1024).run()
    button = at.button(key="cartpole_run_button")
    assert button.disabled
    refusal = next(w.value for w in at.warning if "Too big to run live" in w.value)
    assert "train_steps" in refusal and "budget" in refusal
    assert figures(at)  # what was on screen stays


def test_polytope_link_out_of_range_is_named():
    at = _open("pages/polytope.py", gamma="7", start1="0.25")
    assert not at.exception
    warning = next(w.value for w in at.warning if "link holds values" in w.value)
    assert "gamma" in warning and "start1" not in warning  # a valid value is taken silently
    assert at.session_state["start1"] == 0.25 and at.session_state["gamma"] == 0.8  # the instrument's controls


def test_the_replay_start_shown_is_always_in_the_url():
    """Issue 18, item 5: the opening start is written too, so a copied link opens the start on screen; the
    player opens on the link's start and PVN, and a start this result does not have is named."""
    from conftest import players

    at = _open("pages/cartpole.py")
    replay = players(at)["cartpole_replay"]
    shown = replay["choice"]["start"] + 1
    assert at.query_params["cartpole_replay_start"] == str(shown)
    assert replay["choices"][1]["options"] == ["1", "2", "3", "4", "5"]
    at = _open("pages/cartpole.py", cartpole_replay_start="2", cartpole_replay_mode="flattened")
    assert players(at)["cartpole_replay"]["choice"] == {"mode": 1, "start": 1}
    at = _open("pages/cartpole.py", cartpole_replay_start="99")  # not a start of this result
    assert not at.exception
    assert players(at)["cartpole_replay"]["choice"]["start"] + 1 == shown
    assert at.query_params["cartpole_replay_start"] == str(shown)
    assert any("cartpole_replay_start" in w.value for w in at.warning if "link holds values" in w.value)


def test_the_probe_axes_of_a_link_open_and_a_bad_one_is_named():
    from conftest import players

    at = _open("pages/cartpole.py", cartpole_probe_x="1", cartpole_probe_y="3")
    assert players(at)["cartpole_probes"]["choice"] == {"x": 1, "y": 3}
    at = _open("pages/cartpole.py", cartpole_probe_x="9")
    assert not at.exception and players(at)["cartpole_probes"]["choice"] == {"x": 0, "y": 2}
    assert any("cartpole_probe_x" in w.value for w in at.warning if "link holds values" in w.value)


def test_a_choice_the_browser_sends_is_taken_only_when_it_is_a_view():
    from ui.browser_player import Choice, valid_choice

    choices = (Choice("mode", "Ascent through", ["a", "b"]), Choice("start", "Start", ["1", "2", "3"]))
    assert valid_choice({"mode": 1, "start": 2}, choices) == {"mode": 1, "start": 2}
    for hostile in (None, [], "x", {"mode": 1}, {"mode": 2, "start": 0}, {"mode": 0, "start": -1},
                    {"mode": True, "start": 0}, {"mode": 0.0, "start": 0}, {"mode": 0, "start": 0, "x": 1},
                    {"mode": "1", "start": 0}):  # fmt: skip
        assert valid_choice(hostile, choices) is None, hostile
