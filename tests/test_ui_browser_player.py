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
    assert out[0][1]["labels"] == [1]

    def fails(projector: bool) -> dict:
        raise RuntimeError("an animation that cannot be built")

    with pytest.raises(RuntimeError):
        browser_player._frames("single-flight-test", ("config", 2), None, 1, None, fails)
    again = browser_player._frames("single-flight-test", ("config", 2), None, 1, None, prebuilt)
    assert again[1]["labels"] == [2]


def test_a_player_gets_its_animation_by_url_and_the_route_serves_it():
    """A player gets a URL, not the animation inside the page's script run; the server's animation route answers
    it with the animation's JSON, cached by the browser, gzipped when asked; pushed out of the store, it is 404
    (the page then asks for a rerun), and served again at the next page run that shows it."""
    import gzip
    import json
    from urllib.parse import urlsplit

    from conftest import routes_client
    from ui import browser_player
    from ui.server import store

    def prebuilt(projector: bool) -> dict:
        return {"figures": {"f": {"data": [{"y": [1.5, 2] * 200}], "layout": {}}}, "frames": [{}], "labels": ["0"]}

    args = ("by-url-test", ("config", 3), None, 1, None, prebuilt)
    data, anim = browser_player._frames(*args)
    assert set(data) == {"id", "url"}
    path = urlsplit(data["url"]).path
    named = f"/pvn/anim/{data['id']}-"
    assert path.startswith(named) and path.endswith(".json") and len(path) >= len(named) + 16 + 5  # a random token
    with routes_client() as client:
        plain = client.get(path, headers={"accept-encoding": "identity"})
        assert plain.status_code == 200 and json.loads(plain.content) == anim
        assert "immutable" in plain.headers["cache-control"] and plain.headers["content-type"] == "application/json"
        assert "content-encoding" not in plain.headers
        zipped = client.get(path, headers={"accept-encoding": "gzip, deflate, br"})  # as browsers ask
        assert zipped.headers["content-encoding"] == "gzip" and zipped.headers["vary"] == "accept-encoding"
        assert zipped.content == plain.content  # (the client decodes it)
        kept = store.current().animation(path.rsplit("/", 1)[1], gzipped=True)
        assert gzip.decompress(kept) == plain.content and len(kept) < len(plain.content)
        assert client.get(f"{named}guessed.json").status_code == 404  # a guessed name
        store.current().drop_animation(path.rsplit("/", 1)[1])  # pushed out by newer animations
        assert client.get(path).status_code == 404
        assert browser_player._frames(*args)[0] == data and client.get(path).content == plain.content  # again
