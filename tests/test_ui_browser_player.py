"""The player's views (``ui.browser_player``): a choice the browser sends back is taken only when it names one of
the player's views."""


def test_a_choice_the_browser_sends_is_taken_only_when_it_is_a_view():
    from ui.browser_player import Choice, valid_choice

    choices = (Choice("mode", "Ascent through", ["a", "b"]), Choice("start", "Start", ["1", "2", "3"]))
    assert valid_choice({"mode": 1, "start": 2}, choices) == {"mode": 1, "start": 2}
    for hostile in (None, [], "x", {"mode": 1}, {"mode": 2, "start": 0}, {"mode": 0, "start": -1},
                    {"mode": True, "start": 0}, {"mode": 0.0, "start": 0}, {"mode": 0, "start": 0, "x": 1},
                    {"mode": "1", "start": 0}):  # fmt: skip
        assert valid_choice(hostile, choices) is None, hostile


def test_sessions_asking_for_one_animation_at_once_wait_for_one_build():
    """When a shared run ends, every tab that waited on it reruns within a second: its animations are built once,
    not once per tab (each built them again before: 4-6 builds of each with 8 tabs), and a failed build is tried
    again by the next session."""
    import time

    import pytest

    from conftest import at_once
    from ui import browser_player

    built = []

    def prebuilt(projector: bool) -> dict:
        built.append(projector)
        time.sleep(0.2)  # drawing every frame takes a while: the other sessions arrive meanwhile
        return {"figures": {"f": {"data": [], "layout": {}}}, "frames": [{}], "labels": [len(built)]}

    out = at_once(lambda: browser_player._frames("single-flight-test", ("config", 1), None, 1, None, prebuilt))
    assert built == [False]
    assert all(o[0] == out[0][0] and o[1] is out[0][1] for o in out)  # one id, one animation object
    assert '"labels":[1]' in out[0][0]["animation"]

    def fails(projector: bool) -> dict:
        raise RuntimeError("an animation that cannot be built")

    with pytest.raises(RuntimeError):
        browser_player._frames("single-flight-test", ("config", 2), None, 1, None, fails)
    again = browser_player._frames("single-flight-test", ("config", 2), None, 1, None, prebuilt)
    assert '"labels":[2]' in again[0]["animation"]
