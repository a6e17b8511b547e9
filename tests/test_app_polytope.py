"""The polytope page through Streamlit's AppTest: the player's frame moves every view, Paper settings resets all."""

import pytest

from conftest import array, figures, open_page


def _by_title(at, prefix: str) -> dict:
    return next(f for f in figures(at) if f["layout"]["title"]["text"].startswith(prefix))


def test_stepping_moves_the_iterate_in_every_view():
    at = open_page("pages/polytope.py")
    at.button(key="ascent_first").click().run()
    at.button(key="ascent_forward").click().run()
    at.button(key="ascent_forward").click().run()
    assert not at.exception, [e.value for e in at.exception]
    square = _by_title(at, "Gradient ascent")
    assert square["layout"]["title"]["text"].endswith("step 2")
    traces = {t.get("meta"): t for t in square["data"] if t.get("meta")}
    for name in ("exact ascent", "learned ascent"):
        full = array(traces[f"full:{name}:1"]["x"])
        assert len(array(traces[f"upto:{name}:1"]["x"])) == 3  # iterates 0, 1, 2
        assert array(traces[f"ring:{name}:1"]["x"]) == pytest.approx([full[2]])
    returns = _by_title(at, "Objective along the ascent")
    ring = next(t for t in returns["data"] if t.get("meta") == "highlight")
    assert array(ring["x"]) == [2, 2, 2]
    exact_J = array(next(t for t in returns["data"] if t["name"] == "exact ascent: J")["y"])
    assert array(ring["y"])[0] == pytest.approx(exact_J[2])


def test_paper_settings_resets_every_control_and_the_seed():
    at = open_page("pages/polytope.py")
    at.number_input(key="seed").set_value(7)
    at.slider(key="gamma").set_value(0.9)
    at.slider(key="start1").set_value(0.2)
    at.slider(key="ascent_steps").set_value(40)
    at.number_input(key="r00").set_value(0.3).run()
    assert _by_title(at, "Gradient ascent")["layout"]["title"]["text"].endswith("step 40")
    next(b for b in at.button if b.label == "Paper settings").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="seed").value == 4
    assert at.slider(key="gamma").value == pytest.approx(0.8)
    assert at.slider(key="start1").value == pytest.approx(0.5)
    assert at.slider(key="ascent_steps").value == 100
    assert at.number_input(key="r00").value == pytest.approx(-0.45)
    assert _by_title(at, "Gradient ascent")["layout"]["title"]["text"].endswith("step 100")
