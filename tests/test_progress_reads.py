"""ui.asgi.ProgressReads without a browser: a page's reads of its job's progress are answered from memory with
exactly what its file holds, and nothing else is (the browser side, through ``make run``'s server, is
tests/test_browser_queue.py and test_browser_cartpole.py)."""

import asyncio
import json
import threading
import time
from dataclasses import replace

from tests.test_ui_job_progress import QUEUED, _wait_for
from ui import asgi, job_progress, progress_memory
from ui.asgi import MIDDLEWARE, ProgressReads
from ui.plotly_js import static_url

BEHIND = b"from Streamlit"


def url(name: str, base: str = "") -> str:
    """The path a page fetches for the progress file ``name`` (``ui.components.static_url``)."""
    return static_url(name, base)


def get(path: str, method: str = "GET", query: bytes = b"t=1", headers=()) -> tuple[int, dict, bytes]:
    """``ProgressReads`` over an app that answers every request with 404 ``BEHIND``: (status, headers, body)."""
    sent = []

    async def streamlit(scope, receive, send):
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": BEHIND})

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "query_string": query, "headers": list(headers)}
    asyncio.run(ProgressReads(streamlit)(scope, receive, send))
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], dict(start["headers"]), body


def test_make_run_s_app_answers_progress_reads_first():
    assert MIDDLEWARE[0].cls is ProgressReads


def test_a_progress_read_gets_what_the_file_holds_from_memory_as_the_job_goes(progress_files):
    writer, jobs, static = progress_files
    name, content = writer.watch(QUEUED)
    for base in ("", "course"):  # any base URL path
        status, headers, body = get(url(name, base))
        assert status == 200 and body == (static / name).read_bytes()
        assert json.loads(body) == content
        assert headers[b"content-type"] == b"application/json" and headers[b"cache-control"] == b"no-store"
        assert headers[b"content-length"] == str(len(body)).encode()
    jobs["7"] = replace(QUEUED, state="done")
    body = _wait_for(lambda: (b := get(url(name))[2]) and json.loads(b)["state"] == "done" and b)
    assert body == (static / name).read_bytes() and not json.loads(body)["active"]


def test_other_requests_go_on_to_streamlit(progress_files):
    writer, _, _ = progress_files
    name, _ = writer.watch(QUEUED)
    token = name.rsplit("/", 1)[1].split("-", 1)[1]
    for path in (
        url(name) + "x",  # a wrong token
        url(f"jobs/{writer.folder.name}/7-{token[::-1]}"),
        url("plotly.min.js"),
        url(f"jobs/../{name}"),
        f"/{name}",  # not under the static files
        "/app/static/",
    ):
        assert get(path) == (404, {}, BEHIND), path
    assert get(url(name), method="POST") == (404, {}, BEHIND)


def test_an_expired_or_closed_job_file_is_no_longer_served(progress_files, monkeypatch):
    writer, jobs, static = progress_files
    monkeypatch.setattr(job_progress, "KEEP_ENDED", 0.3)
    jobs["7"] = replace(QUEUED, state="cancelled")
    name, _ = writer.watch(jobs["7"])
    assert get(url(name))[0] == 200
    _wait_for(lambda: not (static / name).exists())
    assert get(url(name)) == (404, {}, BEHIND)
    jobs["8"] = replace(QUEUED, id="8")
    other, _ = writer.watch(jobs["8"])
    assert get(url(other))[0] == 200
    writer.close()
    time.sleep(2 * job_progress.WRITE_EVERY)
    assert get(url(other)) == (404, {}, BEHIND)
    assert not [k for k in progress_memory.paths() if writer.folder.name in k]  # nothing of it kept after close


WAIT = b"t=1&wait=1"  # what components/job_progress.js asks


def timed_get(path: str) -> tuple[float, tuple[int, dict, bytes]]:
    started = time.monotonic()
    answer = get(path, query=WAIT)
    return time.monotonic() - started, answer


def test_a_read_that_waits_is_answered_as_soon_as_the_job_ends(progress_files, monkeypatch):
    """The page learns its job's end at once, not at its next read: a held read goes when the writer sees the end."""
    monkeypatch.setattr(asgi, "HOLD", 5.0)
    writer, jobs, static = progress_files
    name, _ = writer.watch(QUEUED)
    threading.Timer(0.5, jobs.__setitem__, ("7", replace(QUEUED, state="done"))).start()
    took, (status, _, body) = timed_get(url(name))
    assert status == 200 and json.loads(body)["state"] == "done" and body == (static / name).read_bytes()
    assert 0.5 <= took < 0.5 + 4 * job_progress.WRITE_EVERY, took  # the writer looks every WRITE_EVERY s
    took, (status, _, again) = timed_get(url(name))  # ended: answered at once
    assert status == 200 and again == body and took < 0.2
    assert progress_memory.held() == 0


def test_a_read_that_waits_on_a_going_job_is_answered_after_the_hold(progress_files, monkeypatch):
    """While the job goes, a held read is answered after HOLD with the progress of that moment (a page reads about
    once a second either way); a read without ``wait`` (a page whose component does not ask to wait) is answered
    at once."""
    monkeypatch.setattr(asgi, "HOLD", 0.6)
    writer, jobs, _ = progress_files
    name, _ = writer.watch(QUEUED)
    jobs["7"] = replace(QUEUED, state="running", position=0, progress=(1, 4, QUEUED.progress[2]))
    took, (status, _, body) = timed_get(url(name))
    assert status == 200 and 0.6 <= took < 1.5, took
    assert json.loads(body)["state"] == "running"  # the writer's update during the hold, not the queued state
    started = time.monotonic()
    assert get(url(name))[0] == 200 and time.monotonic() - started < 0.2
    assert progress_memory.held() == 0


def test_a_held_read_of_a_job_file_that_goes_away_goes_on_to_streamlit(progress_files, monkeypatch):
    monkeypatch.setattr(asgi, "HOLD", 5.0)
    writer, _, _ = progress_files
    name, _ = writer.watch(QUEUED)
    threading.Timer(0.3, writer.close).start()
    took, answer = timed_get(url(name))
    assert answer == (404, {}, BEHIND) and took < 2.0, took
    assert progress_memory.held() == 0


def test_a_stop_with_its_session_s_token_is_taken_once_without_streamlit(progress_files):
    """A page's Stop (``job_progress.js``): a POST of the job's file with the token its session was given runs that
    session's Stop in the middleware, once; any other POST, and a GET that names a token, go on to Streamlit."""
    writer, _, _ = progress_files
    name, _ = writer.watch(QUEUED)
    stopped = []
    progress_memory.allow_stop(name, "tok-a", lambda: stopped.append("a"))
    progress_memory.allow_stop(name, "tok-b", lambda: stopped.append("b"))
    # a wrong token, an empty one, two, none, one that is not UTF-8
    for query in (b"stop=tok-c", b"stop=", b"stop=tok-a&stop=tok-b", b"t=1", b"stop=%ff"):
        assert get(url(name), method="POST", query=query) == (404, {}, BEHIND), query
    assert get(url(name), query=b"stop=tok-a")[0] == 200 and stopped == []  # a read, not a Stop
    assert get(url(name), query=b"t=%ff&wait=%fe")[0] == 200  # any query: no exception in the middleware
    status, headers, body = get(url(name), method="POST", query=b"stop=tok-a")
    assert (status, body, stopped) == (200, asgi.STOPPED, ["a"])
    assert headers[b"content-type"] == b"application/json" and headers[b"cache-control"] == b"no-store"
    assert get(url(name), method="POST", query=b"stop=tok-a") == (404, {}, BEHIND)  # once
    assert get(url(name + "x"), method="POST", query=b"stop=tok-b") == (404, {}, BEHIND)  # another file
    assert stopped == ["a"]


def test_a_stop_for_a_file_that_is_gone_is_not_taken(progress_files):
    writer, _, _ = progress_files
    progress_memory.allow_stop("jobs/none/7-x.json", "tok", lambda: None)  # never kept: not allowed
    assert not progress_memory.stop("jobs/none/7-x.json", "tok")
    name, _ = writer.watch(QUEUED)
    stopped = []
    progress_memory.allow_stop(name, "tok", lambda: stopped.append(1))
    writer.close()
    assert get(url(name), method="POST", query=b"stop=tok") == (404, {}, BEHIND) and stopped == []
    assert progress_memory.take_stop(name, "tok") is None  # forgotten with its file: no token outlives it


def test_a_run_with_its_session_s_token_is_taken_once_without_streamlit():
    """A page's Run (``job_progress.js``): a POST of ``static/jobs/start`` with the token its session's panel was
    given runs that session's Run in the middleware, once, and answers what it returns; a panel's new token replaces
    its last; any other POST, and a GET, go on to Streamlit."""
    started = []
    progress_memory.allow_start(("s1", "cartpole"), "old", lambda: started.append("old") or b"{}")
    progress_memory.allow_start(("s1", "cartpole"), "tok-a", lambda: started.append("a") or b'{"url":"x"}')
    progress_memory.allow_start(("s2", "cartpole"), "tok-b", lambda: started.append("b") or b"{}")
    start = url(progress_memory.START_PATH)
    for query in (b"run=old", b"run=tok-c", b"run=", b"run=tok-a&run=tok-b", b"t=1", b"run=%ff", b"stop=tok-a"):
        assert get(start, method="POST", query=query) == (404, {}, BEHIND), query
    assert get(start, query=b"run=tok-a") == (404, {}, BEHIND) and started == []  # a GET runs nothing
    assert get(url("jobs/starts"), method="POST", query=b"run=tok-a") == (404, {}, BEHIND)  # another path
    for base in ("", "course"):  # the first takes it, at any base URL path; the second finds it used
        answer = get(url(progress_memory.START_PATH, base), method="POST", query=b"run=tok-a")
        assert answer[2] == (b'{"url":"x"}' if base == "" else BEHIND), base
    assert started == ["a"]
    status, headers, body = get(start, method="POST", query=b"run=tok-b")
    assert (status, body, started) == (200, b"{}", ["a", "b"])
    assert headers[b"content-type"] == b"application/json" and headers[b"cache-control"] == b"no-store"


def test_the_start_tokens_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(progress_memory, "MAX_STARTS", 3)
    for i in range(5):
        progress_memory.allow_start(("bound", i), f"bound-{i}", lambda: b"{}")
    assert progress_memory.take_start("bound-0") is None and progress_memory.take_start("bound-1") is None
    assert all(progress_memory.take_start(f"bound-{i}") is not None for i in (2, 3, 4))
