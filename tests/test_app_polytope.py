"""The polytope page through Streamlit's AppTest: the figures and what it sends the browser instrument, new
controls and MDPs, a step and a value in the URL, Paper settings (what it takes back from the instrument:
tests/test_ui_polytope_instrument.py)."""

import pytest
from streamlit.testing.v1 import AppTest

from conftest import APP, figures, instrument, open_link, open_page, trace_names
from pvnviz.polytope.survey import PAPER_SURVEY
from ui.polytope_instrument import CONTROLS


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
    assert at.number_input(key="seed").value == PAPER_SURVEY.first_at_optimum  # the default, where both arrive
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
    default_seed = PAPER_SURVEY.first_at_optimum  # the page's default seed
    assert sent == pytest.approx(exact_view(PolytopeConfig(), default_seed).cloud_policies)


@pytest.mark.slow
def test_polytope_page_figures():
    at = open_page("pages/polytope.py")
    sent = instrument(at)  # the exact views are computed and drawn in the browser (ui.polytope_instrument)
    figs = figures(at) + list(sent["figures"].values())
    assert len(figs) == 6  # the PVN's loss and predictions, drawn by the server; four in the instrument
    names = set().union(*(trace_names(f) for f in figs))
    for name in (
        "train policies",
        "test policies",
        "exact ascent",
        "learned ascent",
        "exact gradient field",
        "learned gradient field",
        "deterministic policies (corners)",
        "policies (coloured by J)",
    ):
        assert name in names, name
    assert sent["frame"] is None and sent["controls"]["ascent_steps"] == 100  # opens on the last iterate
    assert sent["learned"]["hidden"] == 50 and sent["learned"]["controls"]["gamma"] == 0.8  # Appendix B's PVN
    for f in figs:  # every axis has a title
        for key, axis in f["layout"].items():
            if key.startswith(("xaxis", "yaxis")):
                assert axis.get("title", {}).get("text"), key


@pytest.mark.slow
def test_polytope_page_after_changing_controls():
    at = open_page("pages/polytope.py")
    for key, value in {"gamma": 0.9, "start1": 0.2, "r00": 0.3, "p10": 0.5}.items():
        at.session_state[key] = value  # what the browser's instrument sends on release
    at.slider(key="train_steps").set_value(2000)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    sent = instrument(at)
    assert sent["controls"]["start1"] == 0.2 and sent["controls"]["gamma"] == 0.9
    learned = sent["learned"]["controls"]  # the PVN was retrained on the new MDP
    assert learned["gamma"] == 0.9 and learned["r00"] == 0.3 and learned["p10"] == 0.5
    assert at.query_params["gamma"] == "0.9" and at.query_params["start1"] == "0.2"


@pytest.mark.slow
def test_random_mdp_and_paper_buttons():
    at = open_page("pages/polytope.py")
    revision = instrument(at)["revision"]
    next(b for b in at.button if b.label == "Random MDP").click().run()
    assert not at.exception
    sent = instrument(at)
    assert sent["controls"]["r00"] != -0.45 and sent["revision"] > revision  # the browser takes the new MDP
    next(b for b in at.button if b.label == "Paper settings").click().run()
    assert instrument(at)["controls"]["r00"] == -0.45
    assert not at.exception


@pytest.mark.slow
def test_polytope_link_out_of_range_is_named():
    at = open_link(dict(gamma="7", start1="0.25"), "pages/polytope.py", clean=False)
    assert not at.exception
    warning = next(w.value for w in at.warning if "link holds values" in w.value)
    assert "gamma" in warning and "start1" not in warning  # a valid value is taken silently
    assert at.session_state["start1"] == 0.25 and at.session_state["gamma"] == 0.8  # the instrument's controls
