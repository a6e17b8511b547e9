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
