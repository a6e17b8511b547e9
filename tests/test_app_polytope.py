"""The polytope page through Streamlit's AppTest: what it sends the browser instrument, what it takes back from it
(``ui.polytope_instrument.accept_view``: only the controls' numbers in range), a step in the URL, Paper settings."""

import math

import pytest
from streamlit.testing.v1 import AppTest

from conftest import APP, instrument, open_page
from ui.polytope_instrument import CONTROLS, accept_view

PAPER_VIEW = {"controls": {c.key: c.paper for c in CONTROLS}, "frame": 3}


def test_a_view_from_the_browser_is_taken_only_when_every_control_is_in_range():
    controls, frame = accept_view(PAPER_VIEW)
    assert controls["gamma"] == 0.8 and controls["ascent_steps"] == 100 and frame == 3
    assert accept_view({**PAPER_VIEW, "frame": 100}) == (controls, None)  # the last step: not in the URL
    for key, bad in [
        ("gamma", 1.0),  # gamma < 1
        ("gamma", "0.5; drop"),
        ("gamma", math.nan),
        ("r00", 1e308),
        ("p00", -0.01),
        ("ascent_steps", 2.5),
        ("ascent_steps", True),
        ("start1", None),
        ("start1", [0.2]),
    ]:
        view = {"controls": {**PAPER_VIEW["controls"], key: bad}, "frame": 0}
        assert accept_view(view) is None, (key, bad)
    for hostile in (None, [], "view", {"controls": []}, {"controls": {"gamma": 0.5}}):
        assert accept_view(hostile) is None, hostile
    assert accept_view({**PAPER_VIEW, "frame": "7"})[1] is None  # a frame that is not an int: the last


@pytest.mark.slow
def test_paper_settings_resets_every_control_and_the_seed():
    at = open_page("pages/polytope.py")
    at.number_input(key="seed").set_value(7)
    for key, value in {"gamma": 0.9, "start1": 0.2, "ascent_steps": 40, "r00": 0.3}.items():
        at.session_state[key] = value
    at.run()
    assert instrument(at)["controls"]["ascent_steps"] == 40
    next(b for b in at.button if b.label == "Paper settings").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="seed").value == 4
    sent = instrument(at)["controls"]
    assert sent == {c.key: c.paper for c in CONTROLS}
    assert "gamma" not in at.query_params and "r00" not in at.query_params  # paper values leave the URL


def test_a_step_in_the_url_opens_on_it():
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["ascent"] = "7"
    at.switch_page("pages/polytope.py")
    at.run()
    assert instrument(at)["frame"] == 7
    at.query_params["ascent"] = "1000"  # past the last step: the last instead
    at.run()
    assert instrument(at)["frame"] is None


def test_the_cloud_sent_is_the_exact_views_cloud():
    import base64

    import numpy as np

    from pvnviz.polytope.experiment import PolytopeConfig, exact_view

    at = open_page("pages/polytope.py")
    cloud = instrument(at)["cloud"]
    sent = np.frombuffer(base64.b64decode(cloud["bdata"]), dtype="<f8").reshape(-1, 2)
    assert sent == pytest.approx(exact_view(PolytopeConfig(), 4).cloud_policies)  # seed 4, the page's default
