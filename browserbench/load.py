"""Load benchmark: ``python -m pvnviz.bench load --sessions N``: whether one server can be shared by a class.

Starts ``streamlit run app.py`` (the repository's settings, as ``make run``) and N real Chromium sessions
(one browser context each, so N Streamlit sessions). Each opens the CartPole page with the Quick preset and
its own seed (``--same-seed``: one seed for all), switches a view, waits until the server's run workers are
ready (as a class finds them, minutes after the server started; how long they took is printed), and presses
**Run with these settings** within a second of the others. It prints:

- each session's seconds from its click to its result drawn ("Showing the live run of these settings"), as
  noted by the page itself; and to the websocket message that brings it (Chromium's timestamp): the server's part,
  apart from the time the tab takes to draw it on this machine's cores, which a class's own laptops do not share;
- the CPU seconds the sessions' own tabs (their Chromium renderers, from ``/proc``) used from the clicks until the
  results are drawn: on this machine they share the two cores with the server and its workers;
- the server process's CPU seconds over that time and its peak memory (``VmHWM``): the workers are other
  processes, so this is what routing and drawing cost;
- while the queue is full: a new visitor's seconds from navigation to the CartPole page idle with the figures
  of its first screen drawn (``FIRST_SCREEN_DRAWN``), and a view switch (the replay's start, switched in the
  page): seconds to its redraw, and to the page idle again after the one server rerun that puts it into the
  URL (against the same switch on the idle server before the runs);
- Stop's latency: an extra session presses Run, then Stop, with every worker busy; seconds from the click
  to "Run stopped" on its page (since the Stop needs no script run under ``make run``: when the server has taken
  it), and to its Run button enabled again (the panel's rerun that follows).

With one session and more measured in the same invocation, it prints the last session's result against one
session's (on one seed: "8 sessions with the same seed finish in about one run's time"); ``--repeat K`` measures
the whole list K times and prints each ratio's median, since a run's own time varies by seconds between runs here.

``--baseline DIR`` runs the same on another checkout afterwards (e.g. ``git worktree add /tmp/before
<commit>``), so both numbers are measured the same way on this machine. ``--timeout`` caps each measurement:
a session without a result by then is printed as ``> T``.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

from browserbench.browser import FIRST_SCREEN_DRAWN, IDLE, launch, start_server, stop_server
from browserbench.loadstats import (
    SETTLE_S,
    LoadResult,
    cpu_since,
    median_lines,
    peak_mb,
    proc_cpu,
    ratio_lines,
    renderers_cpu,
    report,
)
from browserbench.ui import OBSERVER, wait_settled
from pvnviz.cli.argtypes import OneLineParser, positive_int
from pvnviz.workers.pool import default_workers

ROOT = Path(__file__).resolve().parents[1]
RESULT = "live run of these settings"
# Whether a page shows its result: a native query over the captions. Not playwright's get_by_text, whose walk over
# every text node (thousands in the figures' SVG), 4 times a second in each of 8 tabs, takes a large share of the
# cores this benchmark shares with the server and its workers: the app's numbers would then measure the benchmark.
SHOWS_RESULT = (
    "() => [...document.querySelectorAll(\"[data-testid='stCaptionContainer']\")]"
    f".some((e) => e.textContent.includes({RESULT!r}))"
)
# Each page notes the wall-clock time (ms since the epoch) it first shows its result, checked 4 times a second in
# the page itself: the benchmark's own thread is busy with the new visitor and the Stop session meanwhile, and a
# result read only after those would be timed at their end, not at its own.
WATCH_RESULT = f"""() => {{
  window.__pvnResultAt = null;
  const shows = {SHOWS_RESULT};
  const timer = setInterval(() => {{
    if (shows()) {{ window.__pvnResultAt = Date.now(); clearInterval(timer); }}
  }}, 250);
}}"""
# the Run button, a Streamlit button (`streamlit run`) or the job panel's component's (`make run`: in its shadow root)
RUN_ENABLED = (
    "() => [document, ...[...document.querySelectorAll(\"[data-testid='stBidiComponentIsolated']\")]"
    ".map((e) => e.shadowRoot).filter(Boolean)]"
    ".flatMap((root) => [...root.querySelectorAll('button')])"
    ".some((b) => b.textContent.includes('Run with these settings') && !b.disabled)"
)
READY = re.compile(r"run worker \d+ ready (?P<after>[\d.]+) s after its start")  # pvnviz.workers.pool's log line
FIRST_SEED = 101  # not 0: seed 0's Quick run ships with the app and opens without training
REPLAY = ("time step", "Start")  # the replay player's caption and its start drop-down: a view control


def _open(context, url: str, timeout_s: float) -> tuple[object, float]:
    """A tab on ``url``; seconds until the page is open: idle, with every figure of its first screen drawn (as
    ``bench ui`` counts it; the figures below the fold are drawn when the reader scrolls near them)."""
    page = context.new_page()
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
    page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
    page.wait_for_function(FIRST_SCREEN_DRAWN, timeout=timeout_s * 1000)
    return page, time.perf_counter() - t0


def view_switch(page) -> tuple[float, float]:
    """Switch the replay's start: (seconds to the redraw in the page, seconds until the page is idle again after
    the server's rerun for the URL)."""
    from browserbench.playback import player
    from browserbench.views import switches

    player(page, REPLAY[0]).scroll_into_view_if_needed()  # a reader scrolls to the replay: drawn when near
    page.wait_for_selector(".pvn-player[data-drawn]", timeout=120_000)
    page.evaluate(OBSERVER)
    since = page.evaluate("performance.now()")
    times, _ = switches(page, *REPLAY, count=1)
    return times[0] / 1000, wait_settled(page, since)


def _url(base: str, seed: int, steps: int | None = None) -> str:
    extra = f"&cartpole_train_steps={steps}" if steps else ""
    return f"{base}/cartpole?seed={seed}&cartpole_preset=quick{extra}"


def measure(root: Path, sessions: int, same_seed: bool, timeout_s: float) -> LoadResult:
    from playwright.sync_api import sync_playwright

    out = LoadResult(sessions, same_seed)
    log = Path(tempfile.mkstemp(prefix="pvn-load-", suffix=".log")[1])
    proc, base = start_server(root, log_path=log)
    try:
        with sync_playwright() as p:
            browser = launch(p)
            pages, arrivals = [], []
            for i in range(sessions):
                seed = FIRST_SEED if same_seed else FIRST_SEED + i
                context = browser.new_context(viewport={"width": 1280, "height": 720})
                page, took = _open(context, _url(base, seed), 120)
                pages.append(page)
                arrivals.append(_watch_delivery(context, page))
                out.idle_open = took if out.idle_open is None else out.idle_open
            out.idle_switch = view_switch(pages[0])
            _wait_workers(log, default_workers())
            cpu0 = proc_cpu(proc.pid)
            tabs0 = renderers_cpu()  # the sessions' tabs only: the visitor and the Stop session come later
            clicked, clicked_at = [], []  # wall-clock seconds, as the pages' Date.now(); the monotonic clock
            for page in pages:
                page.evaluate(WATCH_RESULT)
                page.get_by_role("button", name="Run with these settings").click()
                clicked.append(time.time())
                clicked_at.append(time.monotonic())
            _while_full(browser, base, pages, out, timeout_s)
            out.times = _wait_results(pages, clicked, timeout_s)
            out.delivered = [_delivered(a, t0) for a, t0 in zip(arrivals, clicked_at, strict=True)]
            out.server_cpu = proc_cpu(proc.pid) - cpu0
            out.server_peak_mb = peak_mb(proc.pid)
            time.sleep(SETTLE_S)  # the figures a result brings are drawn after its caption shows
            out.tabs_cpu = cpu_since(tabs0)
            browser.close()
    finally:
        stop_server(proc)
        text = log.read_text(errors="replace")
        out.jobs = job_times(text)
        out.workers_ready = [float(m["after"]) for m in READY.finditer(text)]
        log.unlink()
    return out


JOB_LINE = re.compile(r"job \S+ \((?P<label>.*)\) (?P<state>\w+): waited (?P<waited>[\d.]+) s, ran (?P<ran>[\d.]+) s")


def job_times(server_log: str) -> list[tuple[str, float, float]]:
    """Each job the queue ran, from its line in the server's log (``pvnviz.workers.jobqueue``): (label and how it
    ended, seconds it waited for a worker, seconds it ran)."""
    return [
        (f"{m['label']} {m['state']}", float(m["waited"]), float(m["ran"])) for m in JOB_LINE.finditer(server_log)
    ]


def _wait_workers(log: Path, count: int, timeout_s: float = 60) -> None:
    """Wait until ``count`` run workers said they are ready in the server's log (at most ``timeout_s``; a checkout
    that does not log it is measured after that): every session count clicks on warm workers, as a class does
    minutes after the server started, not only the sessions whose pages took longer to open than the warm-up."""
    deadline = time.monotonic() + timeout_s
    while len(READY.findall(log.read_text(errors="replace"))) < count and time.monotonic() < deadline:
        time.sleep(0.25)


def _while_full(browser, base: str, pages: list, out: LoadResult, timeout_s: float) -> None:
    """With every session's run queued or running: a new visitor, a slider move, and a Stop."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        visitor, out.visitor_open = _open(context, _url(base, 7), timeout_s)
        out.loaded_switch = view_switch(visitor)
        visitor.close()
        stopper, _ = _open(context, _url(base, 99, steps=50000), timeout_s)
        stopper.get_by_role("button", name="Run with these settings").click()
        stop = stopper.get_by_role("button", name="Leave the queue").or_(stopper.get_by_role("button", name="Stop"))
        # ("Leave the queue": its label while queued, on a checkout given as --baseline)
        stop.first.wait_for(timeout=timeout_s * 1000)
        t0 = time.perf_counter()
        stop.first.click()
        stopper.get_by_text("Run stopped").first.wait_for(timeout=timeout_s * 1000)
        out.stop_latency = time.perf_counter() - t0
        stopper.wait_for_function(RUN_ENABLED, timeout=timeout_s * 1000)  # polled at each frame, in the page
        out.stop_rerun = time.perf_counter() - t0
    except Exception as err:  # noqa: BLE001 - an old server that cannot answer: printed as not measured
        print(f"  (while full: {type(err).__name__}: {str(err).splitlines()[0][:120]})")
        for page in context.pages:  # what the page said instead, and a picture of it
            shot = Path(tempfile.gettempdir()) / f"pvn-load-{len(pages)}-{time.time():.0f}.png"
            page.screenshot(path=str(shot), full_page=True)
            alerts = page.locator("[data-testid='stAlert'], [data-testid='stException']").all_inner_texts()
            print(f"  (page {page.url}: {' | '.join(a[:100] for a in alerts) or 'no alert'}; picture {shot})")
    finally:
        context.close()


def _watch_delivery(context, page) -> list[float]:
    """The times (Chromium's monotonic clock, which is the system's: ``time.monotonic()``) at which the tab's
    websocket received a message holding ``RESULT``, the caption of a drawn result: when the server had sent it,
    however long the tab then took to draw it. It separates the server's part of a result's time from the tabs',
    which share this machine's cores with the server and its workers (a class's tabs do not)."""
    import base64

    arrivals: list[float] = []
    needle = RESULT.encode()

    def received(event: dict) -> None:
        frame = event["response"]
        payload = frame["payloadData"]
        raw = base64.b64decode(payload) if frame.get("opcode") == 2 else payload.encode()
        if needle in raw:
            arrivals.append(event["timestamp"])

    cdp = context.new_cdp_session(page)
    cdp.on("Network.webSocketFrameReceived", received)
    cdp.send("Network.enable")
    return arrivals


def _delivered(arrivals: list[float], clicked_at: float) -> float | None:
    """Seconds from a click (``time.monotonic()``) to the first result message after it, if one came."""
    after = [t - clicked_at for t in arrivals if t > clicked_at]
    return min(after) if after else None


def _wait_results(pages: list, clicked: list[float], timeout_s: float) -> list[float | None]:
    """Seconds from each click (wall clock) to the time its page noted its result (``WATCH_RESULT``)."""
    times: list[float | None] = [None] * len(pages)
    deadline = clicked[0] + timeout_s
    while True:  # each page is read at least once: a result it noted while the benchmark was busy still counts
        for i, page in enumerate(pages):
            if times[i] is None and (at := page.evaluate("window.__pvnResultAt")) is not None:
                times[i] = at / 1000 - clicked[i]
        if time.time() >= deadline or all(t is not None for t in times):
            break
        time.sleep(0.25)
    return [t if t is not None and t <= timeout_s else None for t in times]


def backend_times(make) -> dict[str, float]:
    """Seconds from creating a backend to its first quick task's result, then for 2 Quick CartPole runs at once."""
    from pvnviz.polytope.experiment import PolytopeConfig
    from pvnviz.runs.presets import PRESETS
    from pvnviz.workers.jobqueue import JobQueue

    def wait(queue: JobQueue, ids: list[str]) -> None:
        while any(queue.view(i).active for i in ids):
            time.sleep(0.05)
        assert all(queue.view(i).state == "done" for i in ids), [queue.view(i).error for i in ids]

    queue = JobQueue(make, grace=3600)
    t0 = time.perf_counter()
    wait(queue, [queue.submit("s", "pvn", "polytope_pvn", {"config": PolytopeConfig(), "seed": 0}, lane="quick").id])
    first = time.perf_counter() - t0
    quick = PRESETS["cartpole"]["quick"]()
    t0 = time.perf_counter()
    wait(queue, [queue.submit(f"s{i}", i, "experiment", {"config": quick, "seed": 200 + i}).id for i in range(2)])
    runs = time.perf_counter() - t0
    queue.shutdown()
    return {"first quick task": first, "2 Quick runs at once": runs}


def compare_backends() -> None:
    from pvnviz.workers.pool import LocalPool
    from pvnviz.workers.ray_pool import RayPool

    for label, make in (("local process pool", LocalPool), ("local Ray", lambda: RayPool("local"))):
        times = backend_times(make)
        print(f"{label}: " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m pvnviz.bench load", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=positive_int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--same-seed", action="store_true", help="every session runs the same seed")
    parser.add_argument("--timeout", type=positive_int, default=300, help="seconds to wait for each result")
    parser.add_argument("--baseline", type=Path, help="another checkout to measure the same way afterwards")
    parser.add_argument(
        "--repeat",
        type=positive_int,
        default=1,
        help="measure the whole list this many times (a run's time varies by seconds between runs here)",
    )
    parser.add_argument("--backends", action="store_true", help="only compare the local pool with a local Ray")
    args = parser.parse_args(argv)
    if args.backends:
        compare_backends()
        return 0
    checkouts = [(label, root) for label, root in (("this checkout", ROOT), ("baseline", args.baseline)) if root]
    seen: dict[str, list[dict[int, float]]] = {label: [] for label, _ in checkouts}
    for repeat in range(args.repeat):
        runs: dict[str, dict[int, LoadResult]] = {label: {} for label, _ in checkouts}
        for n in dict.fromkeys(args.sessions):
            for label, root in checkouts if repeat % 2 == 0 else checkouts[::-1]:  # neither always goes first
                result = runs[label][n] = measure(root.resolve(), n, args.same_seed, args.timeout)
                print(report(f"{label} ({root})", result, args.timeout), flush=True)
        for label, _ in checkouts:
            lines, found = ratio_lines(f"{label}, run {repeat + 1}", runs[label])
            seen[label].append(found)
            print("\n".join(lines), flush=True)
    if args.repeat > 1:
        for label, _ in checkouts:
            print("\n".join(median_lines(label, seen[label])))
    return 0
