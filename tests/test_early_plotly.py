"""ui/server/early_plotly.py without a browser: what the middleware does to the HTML page and to everything else
(the browser side is in tests/test_browser.py)."""

import asyncio

from ui.server import early_plotly, routes

INDEX = b"<!doctype html><html><head><title>Streamlit</title></head><body><div id=root></div></body></html>"


def serve(
    path: str,
    body: bytes,
    content_type: bytes,
    *,
    accept: bytes = b"text/html",
    chunks: int = 1,
    status: int = 200,
    request: tuple = (),
    **scope,
):
    """Run ``EarlyPlotly`` over an app answering ``body`` in ``chunks`` parts: (the scope the app saw, the
    messages sent)."""
    seen, sent = {}, []

    async def inner(scope, receive, send):
        seen.update(scope)
        headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), (b"etag", b'"f1"')]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        step = max(1, -(-len(body) // chunks))
        for i in range(0, len(body), step):
            await send({"type": "http.response.body", "body": body[i : i + step], "more_body": i + step < len(body)})

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    headers = [(b"accept", accept), (b"accept-encoding", b"gzip, deflate"), *request]
    full = {"type": "http", "method": "GET", "path": path, "headers": headers, **scope}
    asyncio.run(early_plotly.EarlyPlotly(inner)(full, receive, send))
    return seen, sent


def page_of(sent) -> bytes:
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_the_page_gets_the_preload_and_the_script_before_its_head_ends():
    seen, sent = serve("/cartpole", INDEX, b"text/html; charset=UTF-8", chunks=3)
    page = page_of(sent)
    url = routes.plotly_url("")
    head, _, rest = page.partition(b"</head>")
    assert f'<link rel="preload" as="script" href="{url}"><script data-plotly="{url}">'.encode() in head
    assert early_plotly.EARLY_JS.read_bytes() in head and early_plotly.PRELUDE.read_bytes() in head
    assert rest == INDEX.partition(b"</head>")[2]
    assert dict(sent[0]["headers"])[b"content-length"] == str(len(page)).encode()
    assert b"accept-encoding" not in dict(seen["headers"])  # asked uncompressed, so it could be rewritten
    assert b"etag" not in dict(sent[0]["headers"])  # the file's validator is not the rewritten page's


def test_a_conditional_or_partial_request_still_gets_the_whole_rewritten_page():
    # the browser's copy is a rewritten page: a 304 or a byte range of the file on disk would not match it
    asked = ((b"if-none-match", b'"f1"'), (b"range", b"bytes=0-10"), (b"if-range", b'"f1"'))
    seen, sent = serve("/cartpole", INDEX, b"text/html", request=asked)
    assert not {b"if-none-match", b"range", b"if-range"} & set(dict(seen["headers"]))
    assert b"pvnPlotly.load(url)" in page_of(sent)


def test_a_base_url_path_is_in_the_file_s_url():
    from streamlit import config

    before = config.get_option("server.baseUrlPath")
    config.set_option("server.baseUrlPath", "course/pvn")
    try:
        page = page_of(serve("/course/pvn/swimmer/", INDEX, b"text/html")[1])
    finally:
        config.set_option("server.baseUrlPath", before)
    assert b'href="/course/pvn/pvn/plotly.min.js?v=' in page


def test_other_responses_pass_through_as_they_came():
    script = b"x" * 5000
    seen, sent = serve("/static/js/index.js", script, b"application/javascript", accept=b"*/*", chunks=4)
    assert page_of(sent) == script and len(sent) == 5 and dict(seen["headers"])[b"accept-encoding"]
    _, sent = serve("/app/static/data.json", b"{}", b"application/json")  # asked as HTML, answered as JSON
    assert page_of(sent) == b"{}" and dict(sent[0]["headers"])[b"content-length"] == b"2"
    _, sent = serve("/cartpole", INDEX, b"text/html", method="HEAD")
    assert page_of(sent) == INDEX
    _, sent = serve("/nothing", b"<html><head></head>not found</html>", b"text/html", status=404)
    assert page_of(sent) == b"<html><head></head>not found</html>"
    _, sent = serve("/cartpole", b"<p>no head</p>", b"text/html")
    assert page_of(sent) == b"<p>no head</p>"


def test_an_html_response_over_the_cap_is_sent_unchanged():
    big = b"<html><head></head>" + b"a" * (2 * early_plotly.MAX_HTML) + b"</html>"
    _, sent = serve("/cartpole", big, b"text/html", chunks=64)  # chunks after the cap pass through as they come
    assert page_of(sent) == big and len(sent) > 10
    assert dict(sent[0]["headers"])[b"content-length"] == str(len(big)).encode()


def test_a_snippet_that_cannot_be_made_leaves_the_page_as_it_was(monkeypatch, caplog):
    def unreadable(base_url_path):
        raise PermissionError("components/ is unreadable")

    monkeypatch.setattr(early_plotly, "head_snippet", unreadable)
    early_plotly._snippet.cache_clear()
    try:
        pages = [page_of(serve("/cartpole", INDEX, b"text/html")[1]) for _ in range(2)]
    finally:
        early_plotly._snippet.cache_clear()
    assert pages == [INDEX, INDEX] and caplog.text.count("not started from the page's HTML") == 1  # logged once
