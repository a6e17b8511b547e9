"""The app's caps (``ui/server/limits.py``): Streamlit's config states them, the uploader states and keeps the
upload cap, and the request guard (``ui/server/guard.py``) refuses what is over them, before reading a body, with a
4xx and at most one short log line. The served app's answers are in ``tests/test_browser_limits.py``."""

import asyncio
import logging
import tomllib
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket, WebSocketDisconnect

from pvnviz.runs import archive
from ui.server import guard, limits

ROOT = Path(__file__).resolve().parents[1]
UPLOAD = "/_stcore/upload_file/session/file"


def test_streamlit_s_config_states_the_app_s_caps():
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert server["maxUploadSize"] == limits.UPLOAD_MB == limits.UPLOAD_BYTES // 2**20
    assert server["maxMessageSize"] == limits.MESSAGE_MB == limits.MESSAGE_BYTES // 10**6
    assert limits.UPLOAD_BYTES == archive.MAX_ZIP_BYTES  # the zip reader refuses what the uploader would not send


def test_streamlit_reads_the_caps_from_the_repository_s_config():
    from streamlit import config

    config.get_config_options(force_reparse=True, options_from_flags={})
    assert config.get_option("server.maxUploadSize") == limits.UPLOAD_MB
    assert config.get_option("server.maxMessageSize") == limits.MESSAGE_MB


# -- the guard, around a small app that reads what it is sent ---------------------------------------------------

read: list[int] = []  # bytes each request's handler read of its body


async def _echo(request: Request) -> PlainTextResponse:
    n = 0
    async for chunk in request.stream():
        n += len(chunk)
        read.append(n)
    return PlainTextResponse(f"read {n}")


async def _socket(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("open")
    await websocket.close()


def _client() -> TestClient:
    app = Starlette(
        routes=[
            Route("/{path:path}", _echo, methods=["GET", "POST", "PUT"]),
            WebSocketRoute("/ws/{rest:path}", _socket),
        ],
        middleware=guard.MIDDLEWARE,
    )
    return TestClient(app)


@pytest.fixture(autouse=True)
def _fresh():
    read.clear()
    yield


@pytest.mark.parametrize(
    "path, status",
    [
        ("/app/static/jobs/" + "y" * 256, 404),  # a segment no file can be named
        ("/" + "y" * 256, 404),
        ("/app/static/%2e%2e/app.py", 400),  # traversal, percent-encoded so no client normalises it
        ("/app/static/..%2f..%2fapp.py", 400),
        ("/app/static/a%5c..%5capp.py", 400),
        ("/app/static/a%00.js", 400),
        ("/app/static/" + "a/" * 1100, 414),  # a path over PATH_BYTES, of short segments
        ("/cartpole?" + "a" * (limits.QUERY_BYTES + 1), 414),
    ],
)
def test_the_guard_refuses_a_request_the_app_does_not_serve_with_a_4xx(path, status):
    with _client() as client:
        answer = client.get(path)
    assert answer.status_code == status, (path[:60], answer.status_code)
    assert len(answer.content) < 32 and answer.headers["connection"] == "close"
    assert read == []  # never reached the app


@pytest.mark.parametrize(
    "path",
    [
        "/app/static/jobs/" + "y" * limits.SEGMENT_BYTES,
        "/app/static/" + "a/" * 1000,
        "/cartpole?" + "a" * limits.QUERY_BYTES,
        "/app/static/%C3%A9t%C3%A9.js",
        "/_stcore/upload_file/0f2d9e/1b7c",
    ],
)
def test_the_guard_passes_what_is_within_the_caps(path):
    with _client() as client:
        answer = client.get(path)
    assert answer.status_code == 200 and answer.text == "read 0"


def _asgi(path: str, headers: list[tuple[bytes, bytes]]) -> tuple[list[dict], list[str]]:
    """The messages ``RequestGuard`` sends for a POST that states ``headers``, and what it did with its body: the
    app and ``receive`` each note themselves when called."""
    called, sent = [], []

    async def app(scope, receive, send):
        called.append("app")

    async def receive():
        called.append("receive")
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "PUT", "path": path, "raw_path": path.encode(), "query_string": b""}
    asyncio.run(guard.RequestGuard(app)({**scope, "headers": headers}, receive, send))
    return sent, called


@pytest.mark.parametrize(
    "path, length, refused",
    [
        ("/pvn/run", limits.BODY_BYTES + 1, True),
        ("/pvn/run", limits.BODY_BYTES, False),
        (UPLOAD, 150 * 2**20, True),  # a 150 MB upload
        (UPLOAD, limits.UPLOAD_BODY_BYTES + 1, True),
        (UPLOAD, limits.UPLOAD_BODY_BYTES, False),
        ("/app/" + UPLOAD, limits.UPLOAD_BODY_BYTES, False),  # under a base URL path
    ],
)
def test_a_body_over_its_cap_by_content_length_is_refused_unread(path, length, refused):
    sent, called = _asgi(path, [(b"content-length", str(length).encode())])
    if refused:
        assert called == [] and sent[0]["status"] == 413
    else:
        assert called == ["app"] and sent == []


def _streamed(path: str, chunks: int, size: int = 2**16) -> tuple[list[dict], int, int]:
    """What ``RequestGuard`` sends for a PUT whose body comes in ``chunks`` parts of ``size`` bytes with no
    Content-Length, to an app that reads it all and answers 200; and the bytes the app got and the client sent."""
    sent, got, given = [], [0], [0]

    async def app(scope, receive, send):
        while True:
            message = await receive()
            got[0] += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive():
        given[0] += size
        return {"type": "http.request", "body": b"x" * size, "more_body": given[0] < chunks * size}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "PUT", "path": path, "raw_path": path.encode(), "query_string": b""}
    asyncio.run(guard.RequestGuard(app)({**scope, "headers": []}, receive, send))
    return sent, got[0], given[0]


def test_a_streamed_body_over_its_cap_is_refused_once_past_it():
    per_cap = limits.BODY_BYTES // 2**16
    sent, got, given = _streamed("/pvn/run", per_cap * 100)  # a body 100 times the cap, no Content-Length
    assert sent[0]["status"] == 413 and len(sent) == 2
    assert got <= limits.BODY_BYTES and given == limits.BODY_BYTES + 2**16  # the rest was never read
    sent, got, _ = _streamed("/pvn/run", per_cap)
    assert sent[0]["status"] == 200 and got == limits.BODY_BYTES
    sent, got, _ = _streamed(UPLOAD, per_cap * 3)  # an upload may be larger
    assert sent[0]["status"] == 200 and got == 3 * limits.BODY_BYTES
    sent, got, given = _streamed(UPLOAD, 150 * 2**20 // 2**16)  # a 150 MB upload
    assert sent[0]["status"] == 413 and got <= limits.UPLOAD_BODY_BYTES < given <= limits.UPLOAD_BODY_BYTES + 2**16


def test_a_chunked_body_over_its_cap_gets_413_through_starlette():
    with _client() as client:
        over = client.post("/pvn/run", content=(b"x" * 2**16 for _ in range(100)))  # chunked: no Content-Length
    assert over.status_code == 413 and max(read, default=0) <= limits.BODY_BYTES


def test_a_websocket_on_a_path_over_the_caps_is_closed_before_it_opens():
    with _client() as client:
        with client.websocket_connect("/ws/ok") as ws:
            assert ws.receive_text() == "open"
        with pytest.raises(WebSocketDisconnect) as closed:
            with client.websocket_connect("/ws/" + "y" * 256):
                pass
    assert closed.value.code == 1008


def test_a_flood_of_refused_requests_writes_one_short_log_line(caplog):
    caplog.set_level(logging.WARNING, logger=guard.LOG.name)
    with _client() as client:
        for _ in range(50):
            assert client.get("/app/static/jobs/" + "y" * 300).status_code == 404
    lines = [r.getMessage() for r in caplog.records if r.name == guard.LOG.name]
    assert len(lines) == 1 and len(lines[0]) < 160 and "404" in lines[0], lines
    assert not any(r.exc_info for r in caplog.records)  # no traceback


@pytest.mark.slow
def test_an_upload_over_the_cap_gets_the_page_s_message_and_leaves_what_it_showed():
    """AppTest hands the page what a browser's uploader would never send (a file over the cap): the page says so,
    and what it showed, and the session's last result, stay."""
    from conftest import figures, open_page

    at = open_page("pages/cartpole.py")
    uploader = at.get("file_uploader")[0]
    assert uploader.proto.max_upload_size_mb == limits.UPLOAD_MB  # the cap the uploader states and keeps
    assert f"at most {limits.UPLOAD_MB} MB" in uploader.help
    shown, last = figures(at), at.session_state["cartpole_last_result"]
    big = b"PK\x03\x04" + bytes(limits.UPLOAD_BYTES + 2**20 - 4)
    at.file_uploader(key="cartpole_upload").set_value(("big.zip", big, "application/zip")).run()
    assert not at.exception, [e.value for e in at.exception]
    (error,) = [e.value for e in at.error]
    assert error == f"Cannot open that zip: the file is 51 MB; a run zip may be at most {limits.UPLOAD_MB} MB."
    assert figures(at) == shown
    assert at.session_state["cartpole_last_result"] is last


def test_the_upload_benchmark_refuses_bad_input_in_one_line():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pvnviz.bench", "upload", "--mb", "0"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--mb" in done.stderr
