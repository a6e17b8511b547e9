"""Upload memory benchmark: ``python -m browserbench upload``: what an upload over the app's cap costs the server.

Starts the app as ``make run`` serves it (``browserbench.browser.start_server``), opens the CartPole page in
Chromium, and sends one zip of ``--mb`` MB (random bytes, stored) over the cap, in one of three ways:

- ``browser``: the page's run-zip uploader (``set_input_files`` on its file input), as a visitor drops the file;
- ``put``: the same HTTP request as the uploader's (``PUT /_stcore/upload_file/<session>/<file>``, multipart, with
  the session's XSRF cookie and header, taken from a small upload of the page's first), with a Content-Length;
- ``chunked``: that request without a Content-Length (chunked transfer encoding), as a client that does not
  say how much it sends.

For each it prints the server process's resident memory (``VmRSS``, sampled every 20 ms) just before the upload,
its peak while the upload is sent and answered (against before), and 15 s after the answer (``--after`` s;
against before), and what the page or the server answered. Each way gets a fresh server, so one way's leftovers
do not count against the next. ``--baseline DIR`` measures another checkout the same way, alternating which goes
first (``git worktree add /tmp/before <commit>``); ``--repeat K`` runs everything K times.
"""

from __future__ import annotations

import http.client
import os
import tempfile
import threading
import time
import urllib.parse
import zipfile
from pathlib import Path

from browserbench.browser import IDLE, launch, start_server, stop_server
from pvnviz.cli.argtypes import OneLineParser, positive_int

ROOT = Path(__file__).resolve().parents[1]
WAYS = ("browser", "put", "chunked")
UPLOADER = "[data-testid='stSidebar'] [data-testid='stFileUploader'] input[type=file]"
# what a page shows once its upload is answered: the uploader's own refusal (a file over the widget's cap is never
# sent), the page's refusal of a zip it cannot open, or Streamlit's of a request the server refused
ANSWERED = ("or smaller", "Cannot open that zip", "status code")
ANSWER_JS = "(texts) => texts.some((t) => document.body.innerText.includes(t))"
SAMPLE_S = 0.02
CHUNK = 1 << 20


def rss_mb(pid: int) -> float:
    """The resident memory of one process (not its children), in MB (2**20 bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Peak:
    """The largest ``rss_mb(pid)`` seen, sampled every ``SAMPLE_S`` s on a thread from start to ``stop()``."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._done = pid, rss_mb(pid), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(SAMPLE_S):
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except OSError:  # the server is gone
                return

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        return max(self.peak, rss_mb(self.pid))


def make_zip(folder: Path, mb: int) -> Path:
    """A valid zip of one stored member of ``mb`` MB of random bytes (nothing compresses it below the cap)."""
    path = folder / f"upload-{mb}mb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf, zf.open("noise.bin", "w", force_zip64=True) as out:
        for _ in range(mb):
            out.write(os.urandom(CHUNK))
    return path


def _multipart(path: Path, boundary: str) -> tuple[bytes, bytes]:
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
        "Content-Type: application/zip\r\n\r\n"
    ).encode()
    return head, f"\r\n--{boundary}--\r\n".encode()


def put(url: str, headers: dict[str, str], path: Path, chunked: bool) -> str:
    """PUT ``path`` to ``url`` as the uploader does (one multipart file); the server's status, or what ended it."""
    boundary = "----pvnbench" + os.urandom(8).hex()
    head, tail = _multipart(path, boundary)
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    keep = {k: v for k, v in headers.items() if k.lower() in ("cookie", "x-xsrftoken", "origin", "referer")}
    conn.putrequest("PUT", parts.path + (f"?{parts.query}" if parts.query else ""))
    for name, value in keep.items():
        conn.putheader(name, value)
    conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    if chunked:
        conn.putheader("Transfer-Encoding", "chunked")
    else:
        conn.putheader("Content-Length", str(len(head) + path.stat().st_size + len(tail)))
    conn.endheaders()
    sent = 0
    try:
        with open(path, "rb") as f:
            for block in (head, *iter(lambda: f.read(CHUNK), b""), tail):
                conn.send(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
                sent += len(block)
            if chunked:
                conn.send(b"0\r\n\r\n")
        status = f"{conn.getresponse().status}"
    except OSError as err:  # the server answered and closed before the body was all sent
        try:
            status = f"{conn.getresponse().status} after {sent / 2**20:.0f} MB sent"
        except (OSError, http.client.HTTPException):
            status = f"connection closed after {sent / 2**20:.0f} MB sent ({type(err).__name__})"
    finally:
        conn.close()
    return status


def measure(root: Path, way: str, big: Path, small: Path, after_s: float) -> dict[str, float | str]:
    """One way's numbers on a fresh server of ``root``: before, peak and after (MB), and the answer."""
    from playwright.sync_api import sync_playwright

    proc, url = start_server(root, watch_files=False)
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page()
            page.goto(f"{url}/cartpole", timeout=120_000)
            page.wait_for_selector(IDLE, timeout=120_000)
            request = None
            if way != "browser":  # the uploader's request, as the page sent it for a small file
                with page.expect_request(lambda r: "/_stcore/upload_file/" in r.url and r.method == "PUT") as info:
                    page.set_input_files(UPLOADER, str(small))
                request = info.value
                page.wait_for_function(ANSWER_JS, arg=list(ANSWERED), timeout=120_000)
                page.wait_for_selector(IDLE, timeout=120_000)
            time.sleep(3)  # the page's own script runs settled
            before = rss_mb(proc.pid)
            peak = Peak(proc.pid)
            if way == "browser":
                page.set_input_files(UPLOADER, str(big))
                page.wait_for_function(ANSWER_JS, arg=list(ANSWERED), timeout=300_000)
                page.wait_for_selector(IDLE, timeout=120_000)
                texts = page.evaluate("document.body.innerText")
                answer = next((line for line in texts.splitlines() if any(a in line for a in ANSWERED)), "?")
            else:
                answer = "HTTP " + put(request.url, request.all_headers(), big, chunked=way == "chunked")
            time.sleep(after_s)
            top = peak.stop()
            after = rss_mb(proc.pid)
            browser.close()
    finally:
        stop_server(proc)
    return {"before": before, "peak": top, "after": after, "answer": answer.strip()[:90]}


def line(label: str, way: str, r: dict[str, float | str]) -> str:
    return (
        f"{label} {way:<8} before {r['before']:6.0f} MB  peak +{r['peak'] - r['before']:5.0f} MB  "  # type: ignore[operator]
        f"after +{r['after'] - r['before']:5.0f} MB  answer: {r['answer']}"  # type: ignore[operator]
    )


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, measure, print one line per (checkout, way, repeat); 0."""
    parser = OneLineParser(prog="python -m browserbench upload", description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=positive_int, default=150, help="the upload's size in MB (2**20 bytes)")
    parser.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS))
    parser.add_argument("--after", type=float, default=15.0, help="seconds after the answer to read memory again")
    parser.add_argument("--repeat", type=positive_int, default=1)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--baseline", type=Path, help="another checkout to measure the same way")
    args = parser.parse_args(argv)
    checkouts = [(str(r.resolve()), r.resolve()) for r in (args.root, args.baseline) if r]
    with tempfile.TemporaryDirectory() as tmp:
        big = make_zip(Path(tmp), args.mb)
        small = Path(tmp) / "small.zip"
        small.write_bytes(b"not a zip")  # the page refuses it, having received it: its request is the uploader's
        print(f"{args.mb} MB zip; server RSS in MB (2**20 bytes); after = {args.after:.0f} s after the answer")
        for repeat in range(args.repeat):
            for way in args.ways:
                for label, root in checkouts if repeat % 2 == 0 else checkouts[::-1]:
                    print(line(label, way, measure(root, way, big, small, args.after)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
