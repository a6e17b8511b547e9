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


def test_under_make_run_a_player_gets_its_animation_by_url_from_memory():
    """Served by make run (the middleware is in the process), a player gets a URL, not the animation inside the
    page's script run; the middleware answers it with exactly the JSON that went inline before, cached by the
    browser; pushed out of memory, it is served again at the next page run that shows it."""
    import gzip
    import json
    from urllib.parse import urlsplit

    from tests.test_progress_reads import get
    from ui import asgi, browser_player, served_memory

    def prebuilt(projector: bool) -> dict:
        return {"figures": {"f": {"data": [{"y": [1.5, 2] * 200}], "layout": {}}}, "frames": [{}], "labels": ["0"]}

    args = ("by-url-test", ("config", 3), None, 1, None, prebuilt)
    inline, anim = browser_player._frames(*args)
    assert set(inline) == {"id", "animation"}  # streamlit run app.py: no middleware, inline
    asgi.ProgressReads(None)  # make run builds its app with the middleware: from then on, animations go by URL
    assert served_memory.enabled()  # (until this test ends: conftest's animations_inline)
    data, same = browser_player._frames(*args)
    assert set(data) == {"id", "url"} and data["id"] == inline["id"] and same is anim
    path = urlsplit(data["url"]).path
    named = f"/app/static/anim/{data['id']}-"
    assert path.startswith(named) and path.endswith(".json") and len(path) >= len(named) + 16 + 5  # a random token
    status, headers, body = get(path)
    assert status == 200 and body.decode() == inline["animation"] and json.loads(body) == anim
    assert b"immutable" in headers[b"cache-control"] and headers[b"content-type"] == b"application/json"
    assert b"content-encoding" not in headers
    status, zipped_headers, zipped = get(path, headers=[(b"accept-encoding", b"gzip, deflate, br")])  # as browsers ask
    assert status == 200 and zipped_headers[b"content-encoding"] == b"gzip" and gzip.decompress(zipped) == body
    assert len(zipped) < len(body) and zipped_headers[b"vary"] == b"accept-encoding"
    assert get(f"{named}guessed.json")[0] == 404  # a guessed name goes on to Streamlit
    with served_memory._LOCK:  # pushed out by newer animations
        served_memory._BODIES.pop(path.partition("/app/static/")[2])
    assert get(path)[0] == 404
    assert browser_player._frames(*args)[0] == data and get(path)[1:] == (headers, body)  # served again
