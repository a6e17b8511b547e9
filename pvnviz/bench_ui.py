"""UI benchmark: ``python -m pvnviz.bench ui`` (issue 7, item 8).

Starts ``streamlit run app.py`` on a free port with the repository's own settings (as ``make run`` does),
drives Debian's Chromium with Playwright and prints the median time from a user's action to an idle page
(``[data-testid='stApp'][data-test-script-state='notRunning']`` and the page's charts drawn) for:
moving the polytope's ascent-start slider one step, moving its discount slider one step (the MDP changes,
the PVN retrains), and opening each page first on a fresh server. Each number sits next to its goal.

The idle moment is read from a MutationObserver in the page (the last change of the script state before the
page stays idle for a second), so the number does not include the benchmark's own polling.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
# page -> (URL path, plotly charts drawn at least, goal in seconds)
PAGES = {
    "home": ("", 0, 6.0),
    "polytope": ("polytope", 5, 6.0),
    "cartpole": ("cartpole", 5, 6.0),
    "swimmer": ("swimmer", 5, 6.0),
}
SLIDERS = {  # measurement -> (slider label text, goal in seconds)
    "polytope: ascent-start slider move": ("Start P(a1 | s1)", 0.5),
    "polytope: discount slider move": ("Discount", 1.5),
}

OBSERVER = """() => {
  window.__pvnStates = [];
  const app = document.querySelector("[data-testid='stApp']");
  new MutationObserver(() => window.__pvnStates.push(
      [performance.now(), app.getAttribute('data-test-script-state')]))
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(root: Path) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` in ``root`` with the repository's config; waits for its health check."""
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("streamlit did not start")


def wait_settled(page, since_ms: float, charts: int = 0, quiet_ms: int = 1000, timeout_s: float = 180) -> float:
    """Seconds from ``since_ms`` (page clock) to the last switch to idle, once idle for ``quiet_ms``."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
        if charts:
            page.wait_for_function(
                f"document.querySelectorAll(\"[data-testid='stPlotlyChart'] .main-svg\").length >= {charts}",
                timeout=timeout_s * 1000,
            )
        states = page.evaluate("window.__pvnStates || []")
        now = page.evaluate("performance.now()")
        idle = page.evaluate(f'document.querySelector("{IDLE}") !== null')
        last_change = max((t for t, _ in states), default=since_ms)
        if idle and now - last_change >= quiet_ms:
            idle_times = [t for t, s in states if s == "notRunning" and t >= since_ms]
            return ((idle_times[-1] if idle_times else last_change) - since_ms) / 1000
        page.wait_for_timeout(200)
    raise TimeoutError("the page did not become idle")


def first_open(browser, root: Path, path: str, charts: int) -> float:
    """A fresh server, a fresh tab: seconds from navigation start to the idle page with its charts."""
    proc, url = start_server(root)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.add_init_script(
            "document.addEventListener('DOMContentLoaded', () => {"
            " const wait = () => { const app = document.querySelector(\"[data-testid='stApp']\");"
            " if (!app) { requestAnimationFrame(wait); return; } window.__pvnStates = [];"
            " new MutationObserver(() => window.__pvnStates.push([performance.now(),"
            " app.getAttribute('data-test-script-state')])).observe(app, {attributes: true,"
            " attributeFilter: ['data-test-script-state']}); }; wait(); });"
        )
        page.goto(f"{url}/{path}", wait_until="commit")
        seconds = wait_settled(page, 0.0, charts)
        page.close()
        return seconds
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def slider_moves(browser, url: str, label: str, repeats: int) -> list[float]:
    """Press the Right arrow on a slider ``repeats`` times; seconds to idle after each press."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{url}/polytope")
    page.wait_for_selector(IDLE, timeout=180_000)
    page.wait_for_function(
        "document.querySelectorAll(\"[data-testid='stPlotlyChart'] .main-svg\").length >= 5", timeout=180_000
    )
    page.wait_for_timeout(1500)
    thumb = page.locator("[data-testid='stSlider']").filter(has_text=label).first.locator("input[type='range']")
    times = []
    for _ in range(repeats):
        page.evaluate(OBSERVER)
        thumb.focus()
        since = page.evaluate("performance.now()")
        thumb.press("ArrowRight")
        times.append(wait_settled(page, since))
    page.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pvnviz.bench ui", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of each measurement (median shown)")
    parser.add_argument("--root", default=str(ROOT), help="checkout to serve (e.g. an older one, for a baseline)")
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated pages to time the first open of")
    args = parser.parse_args(argv)
    root = Path(args.root)
    from playwright.sync_api import sync_playwright

    print(f"UI benchmark (issue 7): {root}, median of {args.repeats}, Chromium 1280x720")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        proc, url = start_server(root)
        try:
            for name, (label, goal) in SLIDERS.items():
                times = slider_moves(browser, url, label, args.repeats)
                _print(name, times, goal)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        for name in args.pages.split(","):
            path, charts, goal = PAGES[name]
            times = [first_open(browser, root, path, charts) for _ in range(args.repeats)]
            _print(f"first open on a fresh server: {name}", times, goal)
        browser.close()
    return 0


def _print(name: str, times: list[float], goal: float) -> None:
    median = statistics.median(times)
    verdict = "meets" if median < goal else "misses"
    runs = ", ".join(f"{t:.2f}" for t in times)
    print(f"  {name:<48} {median:6.2f} s  (goal < {goal:g} s: {verdict}; runs {runs})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
