"""The polytope page through Streamlit's AppTest: each frame the browser player is sent moves the iterate in
every view; a frame in the URL opens on it; Paper settings resets all."""

import pytest

from conftest import array, frame_figures, open_page, players


def _ascent(at, t: int | None = None) -> dict[str, dict]:
    return frame_figures(players(at)["ascent"], t)


def test_each_frame_moves_the_iterate_in_every_view():
    at = open_page("pages/polytope.py")
    assert not at.exception, [e.value for e in at.exception]
    square = _ascent(at, 2)["square"]
    assert square["layout"]["title"]["text"].endswith("step 2")
    traces = {t.get("meta"): t for t in square["data"] if t.get("meta")}
    for name in ("exact ascent", "learned ascent"):
        full = array(traces[f"full:{name}:1"]["x"])
        assert len(array(traces[f"upto:{name}:1"]["x"])) == 3  # iterates 0, 1, 2
        assert array(traces[f"ring:{name}:1"]["x"]) == pytest.approx([full[2]])
    returns = _ascent(at, 2)["returns"]
    assert returns["layout"]["title"]["text"].startswith("Objective along the ascent")
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
    assert _ascent(at)["square"]["layout"]["title"]["text"].endswith("step 40")
    next(b for b in at.button if b.label == "Paper settings").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="seed").value == 4
    assert at.slider(key="gamma").value == pytest.approx(0.8)
    assert at.slider(key="start1").value == pytest.approx(0.5)
    assert at.slider(key="ascent_steps").value == 100
    assert at.number_input(key="r00").value == pytest.approx(-0.45)
    assert _ascent(at)["square"]["layout"]["title"]["text"].endswith("step 100")


def test_a_frame_in_the_url_opens_on_it():
    from streamlit.testing.v1 import AppTest

    from conftest import APP

    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["ascent"] = "7"
    at.switch_page("pages/polytope.py")
    at.run()
    assert players(at)["ascent"]["frame"] == 7
    assert _ascent(at)["square"]["layout"]["title"]["text"].endswith("step 7")
    at.query_params["ascent"] = "1000"  # past the last frame: the opening frame instead
    at.run()
    assert players(at)["ascent"]["frame"] == 100
