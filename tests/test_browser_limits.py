"""The app's caps on a real served app (``make run``'s server, ``browserbench.browser.start_server``) and in
Chromium: requests the app does not serve get a 4xx and no traceback in the server's log; an upload over the cap
is refused by the page before it is sent, and by the server before its body is read."""

import http.client
import re
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from browserbench.browser import launch, start_server, stop_server
from conftest import ROOT, require_chromium, wait_idle
from ui.server import limits

pytestmark = pytest.mark.browser

UPLOADER = "[data-testid='stSidebar'] [data-testid='stFileUploader'] input[type=file]"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(URL, log file) of the app's server for this module, its output kept in that file."""
    require_chromium()
    log = tmp_path_factory.mktemp("server") / "server.log"
    proc, url = start_server(ROOT, watch_files=False, log_path=log)
    yield url, log
    stop_server(proc)


@pytest.fixture(scope="module")
def chromium(served):
    """Headless Chromium (on the module's own server: not conftest's ``browser``, which starts another)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def _status(url: str) -> int:
    try:
        return urllib.request.urlopen(url, timeout=30).status
    except urllib.error.HTTPError as err:
        return err.code


def _get_raw(url: str, target: str) -> int:
    """The status of ``GET target``, sent as written (no client normalises its dots or escapes)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("GET", target)
        return conn.getresponse().status
    finally:
        conn.close()


def test_requests_the_app_does_not_serve_get_a_4xx_and_no_traceback(served):
    url, log = served
    y = "y" * 256
    assert _status(f"{url}/app/static/jobs/{y}") == 404  # a 256-byte segment under the static files
    assert _status(f"{url}/app/static/{y}") == 404
    assert _status(f"{url}/pvn/progress/{y}") == 404
    assert _status(f"{url}/{y}") == 404
    assert _status(f"{url}/app/static/" + "a/" * 2100) == 414  # a path over about 4 kB
    assert _status(f"{url}/cartpole?q=" + "a" * limits.QUERY_BYTES) == 414
    assert _get_raw(url, "/app/static/%2e%2e/app.py") == 400
    assert _get_raw(url, "/_stcore/upload_file/..%2f..%2fapp.py/x") == 400
    assert _status(f"{url}/app/static/jobs/" + "y" * 255) == 404  # served as before: no such file
    assert _status(f"{url}/_stcore/health") == 200
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "Exception in ASGI" not in text, text[-2000:]
    refused = [line for line in text.splitlines() if "Refused" in line]
    assert 1 <= len(refused) <= 2 and all(len(line) < 200 for line in refused), refused  # one per 10 s at most


def test_an_upload_over_the_cap_is_refused_before_it_is_sent_or_read(served, chromium, tmp_path):
    url, _ = served
    big = tmp_path / "big.zip"
    with open(big, "wb") as f:
        f.truncate(limits.UPLOAD_BYTES + 2**20)  # one MB over the cap (sparse: no disk written)
    small = tmp_path / "small.zip"
    small.write_bytes(b"not a zip")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    sent = []
    page.on("request", lambda r: sent.append(r) if "/_stcore/upload_file/" in r.url and r.method == "PUT" else None)
    page.goto(f"{url}/cartpole")
    wait_idle(page)
    # the uploader states the cap (drawn with the rest of the sidebar, which a slow first run may still be drawing)
    page.locator("[data-testid='stSidebar']").get_by_text(f"{limits.UPLOAD_MB}MB per file").wait_for(timeout=60_000)
    wait_idle(page)
    main = page.locator("[data-testid='stMain']")
    before = main.inner_text()

    page.set_input_files(UPLOADER, str(big))
    page.get_by_text(re.compile(r"File must be 50(\.0)?MB or smaller")).wait_for(timeout=30_000)
    wait_idle(page)
    assert sent == []  # the page refused it: not a byte went to the server
    assert main.inner_text() == before  # what the page showed stays

    with page.expect_request(lambda r: "/_stcore/upload_file/" in r.url and r.method == "PUT") as info:
        page.set_input_files(UPLOADER, str(small))
    wait_idle(page)
    assert "Cannot open that zip" in main.inner_text()
    # the uploader's own request, stating a body over the cap: refused on its headers, before any body is sent
    request = info.value
    headers = {k: v for k, v in request.all_headers().items() if k in ("cookie", "x-xsrftoken", "origin")}
    parts = urlsplit(request.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.putrequest("PUT", parts.path)
        for name, value in {**headers, "content-type": "multipart/form-data; boundary=b"}.items():
            conn.putheader(name, value)
        conn.putheader("content-length", str(150 * 2**20))
        conn.endheaders()
        assert conn.getresponse().status == 413
    finally:
        conn.close()
    page.close()
