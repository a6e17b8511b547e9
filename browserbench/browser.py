"""A Streamlit server and Debian's Chromium, for the UI benchmark and the browser tests.

``start_server`` runs ``streamlit run app.py`` (or another script) of a checkout on a free port of 127.0.0.1 and waits
for its health check; ``launch`` starts headless Chromium through Playwright. The browser tests'
fixtures (``tests/conftest.py``) and ``python -m pvnviz.bench ui`` both use these, so the two
measure and check the same app the same way.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

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
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"  # the script finished and nothing runs
# What a visitor sees of a page with figures is drawn: every figure in the first screen (a plotly view, a player's
# stage, the polytope instrument), and at least one. Figures below the fold are drawn as the reader scrolls near
# them (``pvnPlotly.near`` in components/plotly_lib.js), so a count of drawn figures says nothing of an open.
FIRST_SCREEN_DRAWN = """() => {
  const seen = (el) => {  // some of it in the window, inside every clipping ancestor, and rendered (not in a
    // collapsed expander: a closed <details>, whose content Chromium lays out but does not render)
    if (!el.checkVisibility() || el.closest('details:not([open]) > :not(summary)')) return false;
    const r = el.getBoundingClientRect();
    let [top, bottom] = [Math.max(r.top, 0), Math.min(r.bottom, innerHeight)];
    for (let p = el.parentElement; p && r.width > 0; p = p.parentElement) {
      const css = getComputedStyle(p);
      if (css.display === 'none') return false;
      if (css.overflowY !== 'visible' || css.overflowX !== 'visible') {
        const q = p.getBoundingClientRect();
        [top, bottom] = [Math.max(top, q.top), Math.min(bottom, q.bottom)];
      }
    }
    return r.width > 0 && bottom > top;
  };
  const shown = [...document.querySelectorAll('.pvn-plotly-view, .pvn-player-stage, .pvn-poly')].filter(seen);
  return shown.length > 0 && shown.every((el) => el.querySelector('.main-svg') !== null);
}"""
# Scroll the page's scroll container through, a screen at a time, so every figure below the fold is drawn.
SCROLL_THROUGH = """async () => {
  const main = document.querySelector("[data-testid='stMain']") ?? document.scrollingElement;
  for (let y = 0; y <= main.scrollHeight; y += main.clientHeight / 2) {
    main.scrollTo(0, y);
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)));
  }
  main.scrollTo(0, 0);
}"""


def draw_every_figure(page, charts: int, timeout_ms: float = 120_000) -> None:
    """Scroll ``page`` through (drawing the figures below its fold) until at least ``charts`` plotly figures are
    drawn; back at the top after."""
    deadline = time.time() + timeout_ms / 1000
    while True:
        page.evaluate(SCROLL_THROUGH)
        if page.evaluate(f"document.querySelectorAll('.js-plotly-plot').length >= {charts}"):
            return
        if time.time() > deadline:
            raise TimeoutError(f"fewer than {charts} figures drawn after scrolling the page through")
        page.wait_for_timeout(250)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    root: Path,
    *,
    watch_files: bool = True,
    timeout: float = 60,
    env: dict[str, str] | None = None,
    script: str = "app.py",
    log_path: Path | None = None,
) -> tuple[subprocess.Popen, str]:
    """The app's server for ``root`` (its ``asgi.py`` through ``ui/serve.py``, as ``make run`` starts it); returns
    (process, URL) once healthy.

    ``watch_files=False`` switches Streamlit's file watcher off (tests: no reruns while files change); ``env``
    adds environment variables (e.g. ``PVN_WORKERS``); ``script`` serves another script than ``app.py`` the same
    way (a path relative to ``root``: ``$PVN_APP_SCRIPT``, read by ``asgi.py``); ``log_path`` keeps the server's
    output in that file (by default a temporary file, gone with the server).
    Raises RuntimeError with the end of the server's output if it is not healthy within ``timeout`` s.
    """
    port = free_port()
    command = [sys.executable, "-m", "ui.serve"]
    env = {**(env or {}), "PVN_APP_SCRIPT": script}
    command += ["--server.port", str(port)]
    command += ["--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    if not watch_files:
        command += ["--server.fileWatcherType", "none"]
    # not a pipe: a server that is never read from must not block on a full one
    log = tempfile.TemporaryFile() if log_path is None else open(log_path, "w+b")
    proc = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    proc.wait(timeout=30)
    log.seek(0)
    raise RuntimeError("streamlit did not start: " + log.read().decode(errors="replace")[-2000:])


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def launch(playwright):
    """Headless Debian Chromium through a started ``sync_playwright()``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
