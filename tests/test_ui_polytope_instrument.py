"""What the polytope page takes back from its browser instrument (``ui.polytope_instrument.accept_view``): only
the controls' numbers, each in its range, and a step in range."""

import math

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
