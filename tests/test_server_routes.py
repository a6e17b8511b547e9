"""The app's own endpoints (``ui.server.routes``) and the store they answer from (``ui.server.store``), through
Starlette's ``TestClient``: status codes, content types, tokens (wrong, replayed, replaced, expired), hostile names
and queries, the held read, the bounds. The browser side is tests/test_browser_run_progress.py,
test_browser_player.py and test_browser_queue.py."""

import threading
import time
from dataclasses import replace

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

import ui.server.queue
from pvnviz.core.progress import Report, Stage
from pvnviz.workers.jobs import JobView
from ui.server import routes, store

QUEUED = JobView(
    id="7",
    key=("experiment", None, 3),
    label="cartpole seed 3",
    state="queued",
    progress=(0, 1, Report(Stage.WAITING)),
    history={},
    error="",
    elapsed=0.0,
    position=2,
    queued=3,
    eta=20.0,
    waiters=1,
)
RUNNING = replace(
    QUEUED,
    state="running",
    position=0,
    progress=(40, 100, Report(Stage.TRAIN_PVN, "step 40")),
    history={"fingerprint": [(0, 2.0, 2.5), (20, 1.0, 1.5), (40, 0.5, 0.9)]},
    elapsed=3.0,
)


def _wait_for(predicate, seconds: float = 5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("not within the time")


@pytest.fixture
def served():
    """(a TestClient of the routes, the jobs a fresh store describes, the store); job 7 waits 2nd of 3 in line."""
    jobs = {"7": QUEUED}

    def describe(job_id):
        job = jobs.get(job_id)
        queue = ui.server.queue
        return None if job is None else queue.payload(job, queue.waiting_text, queue.fraction)

    kept = store.start(describe)
    with TestClient(Starlette(routes=routes.routes())) as client:
        yield client, jobs, kept
    store.start(ui.server.queue.describe)  # the other tests' store again


def test_a_progress_read_gets_the_job_s_progress_as_it_goes(served):
    client, jobs, kept = served
    name, content = kept.watch("7")
    assert name.startswith("7-") and len(name) >= 2 + 16  # a random token: not readable by a guessed id
    assert content["text"] == "Waiting for a worker: 2nd of 3 in line, starts in about 20 s"
    answer = client.get(routes.url(f"progress/{name}"))
    assert answer.status_code == 200 and answer.json() == content
    assert answer.headers["content-type"] == "application/json" and answer.headers["cache-control"] == "no-store"
    jobs["7"] = RUNNING
    seen = _wait_for(lambda: (c := client.get(routes.url(f"progress/{name}")).json())["state"] == "running" and c)
    assert seen["fraction"] == pytest.approx(0.4) and "train PVN" in seen["text"]
    train, val = seen["chart"]["series"]
    assert train["x"] == [0, 20, 40] and train["y"] == [2.0, 1.0, 0.5] and val["y"] == [2.5, 1.5, 0.9]
    jobs["7"] = replace(RUNNING, state="done")
    ended = _wait_for(lambda: (c := client.get(routes.url(f"progress/{name}")).json())["state"] == "done" and c)
    assert not ended["active"] and ended["chart"] is None
    del jobs["7"]  # the queue forgets it: an ended job keeps its end
    time.sleep(3 * store.REFRESH)
    assert client.get(routes.url(f"progress/{name}")).json()["state"] == "done"
    assert kept.watch("7")[0] == name  # one name per job, for every session


def test_a_job_the_queue_forgot_reads_as_gone(served):
    client, jobs, kept = served
    name, _ = kept.watch("7")
    del jobs["7"]
    _wait_for(lambda: client.get(routes.url(f"progress/{name}")).json()["state"] == "gone")


def test_routes_live_under_the_base_url_path():
    with TestClient(Starlette(routes=routes.routes("course/pvn"))) as client:
        assert client.get("/course/pvn/pvn/plotly.min.js").status_code == 200
        assert client.get("/pvn/plotly.min.js").status_code == 404


def test_unknown_hostile_and_oversized_requests_get_a_4xx(served):
    client, _, kept = served
    name, _ = kept.watch("7")
    token = name.split("-", 1)[1]
    for path in (
        f"progress/7-{token[::-1]}",  # a wrong token
        f"progress/{name}x",
        "progress/",
        "progress/../../../etc/passwd",  # traversal: no file is ever read by name
        "anim/guessed.json",
        "nothing",
    ):
        assert client.get(routes.url(path)).status_code == 404, path
    for path in (f"progress/{'y' * 256}", "progress/..", "progress/.hidden", "anim/%2e%2e%2fetc", "progress/a%00b"):
        assert client.get(routes.url(path)).status_code in (400, 404), path
    assert client.get(routes.url(f"progress/{'y' * 256}")).status_code == 400  # oversized: before any lookup
    assert client.get(routes.url(f"progress/{name}") + "?" + "q" * (routes.MAX_QUERY + 1)).status_code == 400
    assert client.post(routes.url(f"progress/{name}")).status_code == 405
    assert client.get(routes.url("run")).status_code == 405
    assert client.get(routes.url(f"stop/{name}")).status_code == 405


def test_without_a_started_store_the_routes_answer_503():
    store.stop()
    try:
        with TestClient(Starlette(routes=routes.routes())) as client:
            assert client.get(routes.url("progress/7-abc")).status_code == 503
            assert client.post(routes.url("run?token=abc")).status_code == 503
    finally:
        store.start(ui.server.queue.describe)


def test_an_ended_job_s_progress_expires_with_its_stop_tokens(served, monkeypatch):
    client, jobs, kept = served
    monkeypatch.setattr(store, "KEEP_ENDED", 0.3)
    jobs["7"] = replace(QUEUED, state="cancelled")
    name, _ = kept.watch("7")
    kept.allow_stop(name, "tok", lambda: None)
    assert client.get(routes.url(f"progress/{name}")).status_code == 200
    _wait_for(lambda: client.get(routes.url(f"progress/{name}")).status_code == 404)
    assert client.post(routes.url(f"stop/{name}?token=tok")).status_code == 404  # no token outlives its job


def _timed_read(client, name: str) -> tuple[float, object]:
    started = time.monotonic()
    answer = client.get(routes.url(f"progress/{name}?t=1&wait=1"))  # what components/job_progress.js asks
    return time.monotonic() - started, answer


def test_a_read_that_waits_is_answered_as_soon_as_the_job_ends(served, monkeypatch):
    """The page learns its job's end at once, not at its next read: a held read goes when the store sees the end."""
    client, jobs, kept = served
    monkeypatch.setattr(routes, "HOLD", 5.0)
    name, _ = kept.watch("7")
    threading.Timer(0.5, jobs.__setitem__, ("7", replace(QUEUED, state="done"))).start()
    took, answer = _timed_read(client, name)
    assert answer.status_code == 200 and answer.json()["state"] == "done"
    assert 0.5 <= took < 0.5 + 4 * store.REFRESH, took  # the store looks every REFRESH s
    took, again = _timed_read(client, name)  # ended: answered at once
    assert again.content == answer.content and took < 0.3
    assert kept.held() == 0


def test_a_read_that_waits_on_a_going_job_is_answered_after_the_hold(served, monkeypatch):
    """While the job goes, a held read is answered after HOLD with the progress of that moment; a read without
    ``wait`` is answered at once."""
    client, jobs, kept = served
    monkeypatch.setattr(routes, "HOLD", 0.6)
    name, _ = kept.watch("7")
    jobs["7"] = RUNNING
    took, answer = _timed_read(client, name)
    assert answer.status_code == 200 and 0.6 <= took < 1.5, took
    assert answer.json()["state"] == "running"  # the store's update during the hold, not the queued state
    started = time.monotonic()
    assert client.get(routes.url(f"progress/{name}")).status_code == 200 and time.monotonic() - started < 0.3
    assert kept.held() == 0


def test_closing_the_store_releases_held_reads(served, monkeypatch):
    client, _, kept = served
    monkeypatch.setattr(routes, "HOLD", 5.0)
    name, _ = kept.watch("7")
    threading.Timer(0.3, kept.close).start()
    took, answer = _timed_read(client, name)
    assert answer.status_code == 200 and took < 2.0, took
    assert kept.held() == 0


def test_a_stop_with_its_session_s_token_is_taken_once(served):
    client, _, kept = served
    name, _ = kept.watch("7")
    stopped = []
    kept.allow_stop(name, "tok-a", lambda: stopped.append("a"))
    kept.allow_stop(name, "tok-b", lambda: stopped.append("b"))
    stop = routes.url(f"stop/{name}")
    for query, status in (("token=tok-c", 404), ("token=", 400), ("token=tok-a&token=tok-b", 400), ("t=1", 400),
                          ("token=%ff", 400), ("token=" + "a" * 200, 400)):  # fmt: skip
        assert client.post(f"{stop}?{query}").status_code == status, query
    assert client.get(f"{stop}?token=tok-a").status_code == 405 and stopped == []  # a read is no Stop
    answer = client.post(f"{stop}?token=tok-a")
    assert (answer.status_code, answer.content, stopped) == (200, routes.STOPPED, ["a"])
    assert answer.headers["content-type"] == "application/json" and answer.headers["cache-control"] == "no-store"
    assert client.post(f"{stop}?token=tok-a").status_code == 404  # replayed: once
    assert client.post(routes.url(f"stop/{name}x?token=tok-b")).status_code == 404  # another job
    assert stopped == ["a"]
    kept.allow_stop("7-never-watched", "tok", lambda: stopped.append("never"))  # only a watched job takes stops
    assert client.post(routes.url("stop/7-never-watched?token=tok")).status_code == 404 and stopped == ["a"]


def test_a_run_with_its_session_s_token_is_taken_once_and_a_new_token_replaces_the_last(served):
    client, _, kept = served
    started = []
    kept.allow_run(("s1", "cartpole"), "old", lambda: started.append("old") or b"{}")
    kept.allow_run(("s1", "cartpole"), "tok-a", lambda: started.append("a") or b'{"url":"x"}')
    kept.allow_run(("s2", "cartpole"), "tok-b", lambda: started.append("b") or b"{}")
    run = routes.url("run")
    for query, status in (("token=old", 404), ("token=tok-c", 404), ("token=", 400), ("t=1", 400),
                          ("token=tok-a&token=tok-b", 400), ("token=%ff", 400)):  # fmt: skip
        assert client.post(f"{run}?{query}").status_code == status, query
    assert client.get(f"{run}?token=tok-a").status_code == 405 and started == []  # a GET runs nothing
    answer = client.post(f"{run}?token=tok-a")
    assert (answer.status_code, answer.content, started) == (200, b'{"url":"x"}', ["a"])
    assert answer.headers["content-type"] == "application/json" and answer.headers["cache-control"] == "no-store"
    assert client.post(f"{run}?token=tok-a").status_code == 404 and started == ["a"]  # replayed
    kept.revoke_run(("s2", "cartpole"))  # its page now draws Run disabled
    assert client.post(f"{run}?token=tok-b").status_code == 404 and started == ["a"]


def test_what_the_store_keeps_is_bounded(served, monkeypatch):
    _, jobs, kept = served
    monkeypatch.setattr(store, "MAX_RUNS", 3)
    for i in range(5):
        kept.allow_run(("bound", i), f"bound-{i}", lambda: b"{}")
    assert kept.take_run("bound-0") is None and kept.take_run("bound-1") is None
    assert all(kept.take_run(f"bound-{i}") is not None for i in (2, 3, 4))
    monkeypatch.setattr(store, "MAX_HANDED", 2)
    for i in range(4):
        kept.hand_over(("s", i), i)
    assert [kept.take_over(("s", i)) for i in range(4)] == [None, None, 2, 3]
    assert kept.take_over(("s", 3)) is None  # once
    monkeypatch.setattr(store, "MAX_WATCHED", 2)
    for i in range(4):
        jobs[str(i)] = replace(QUEUED, id=str(i))
    names = [kept.watch(str(i))[0] for i in range(4)]
    assert [kept.progress(n) is not None for n in names] == [False, False, True, True]
    monkeypatch.setattr(store, "MAX_ANIMATION_BYTES", 3000)
    for i in range(5):
        kept.put_animation(f"a{i}.json", lambda i=i: bytes(1000 + i))
    assert kept.animation_bytes() <= 3000 and kept.animation("a0.json") is None and kept.animation("a4.json")


def test_plotly_js_is_the_wheel_s_own_file_cached_under_its_version(served):
    client, _, _ = served
    answer = client.get(routes.plotly_url())
    assert answer.status_code == 200 and answer.content == routes.PLOTLY_JS.read_bytes()
    assert answer.headers["content-type"].startswith("text/javascript")
    assert "immutable" in answer.headers["cache-control"]
    assert routes.PLOTLY_JS.parent.name == "package_data"  # read where pip put it: a read-only install works
    stale = client.get(routes.url("plotly.min.js") + "?v=000000000000")
    assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"


def test_every_way_of_serving_serves_asgi_py_s_app():
    """``make run`` and ``make dev`` start the same server (``ui.serve``: ``streamlit run asgi.py``), ``make dev``
    rerunning on save; the browser tests and benchmarks start it the same way; asgi.py's ``st.App`` has the routes,
    the request guard first, and the lifespan that starts the store."""
    import asgi
    from browserbench import browser
    from ui.server import app, guard

    makefile = (app.ROOT / "Makefile").read_text()
    run, dev = (makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0] for target in ("run", "dev"))
    assert "-m ui.serve" in run and "-m ui.serve" in dev and "--server.runOnSave true" in dev
    assert '"-m", "ui.serve"' in (app.ROOT / "browserbench" / "browser.py").read_text()
    assert browser.start_server.__kwdefaults__["script"] == "app.py"
    assert [r.path for r in asgi.app._user_routes] == [r.path for r in routes.routes()]
    assert [m.cls for m in asgi.app._user_middleware] == [guard.RequestGuard, app.EarlyPlotly]
    assert asgi.app._user_lifespan is app.lifespan
