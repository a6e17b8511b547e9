"""Tests of ui/serve.py, `make run`'s launcher: the heavy imports happen before Streamlit serves the app.

Every browser test's server starts through it too (``browserbench.browser.start_server``), so the app it
serves is checked there page by page.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import sys
from ui.server import streamlit_internals
seen = {}
def fake_run_cli(argv):
    seen["argv"] = ["streamlit", *argv]
    seen["warm"] = [name for name in serve.WARM if name in sys.modules]
streamlit_internals.run_cli = fake_run_cli
from ui import serve
assert "torch" not in sys.modules, "imported before main() ran"
serve.main(["--server.port", "8999"])
print(seen)
"""


@pytest.mark.slow  # a fresh interpreter importing torch: about 4 s
def test_serve_imports_the_heavy_modules_then_runs_the_app():  # app.py as asgi.py's st.App
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    from ui import serve

    assert seen["argv"] == ["streamlit", "run", str(ROOT / "asgi.py"), "--server.port", "8999"]
    assert seen["warm"] == list(serve.WARM) and "torch" in seen["warm"]


def test_make_run_starts_the_app_through_serve():
    makefile = (ROOT / "Makefile").read_text()
    run = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "-m ui.serve" in run


def _workers_of(pid: int) -> list[str]:
    """The command lines of ``pid``'s child processes that are job-queue workers."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    lines = []
    for child in children:
        try:
            lines.append(Path(f"/proc/{child}/cmdline").read_text().replace("\0", " "))
        except OSError:
            continue  # ended meanwhile
    return [line for line in lines if "pvnviz.workers.pool" in line]


@pytest.mark.slow  # a server and two workers importing torch: about 10 s
def test_the_served_app_starts_its_run_workers_before_any_page_opens():
    import time

    from browserbench.browser import start_server, stop_server

    proc, _ = start_server(ROOT, watch_files=False, env={"PVN_WORKERS": "2"})
    try:
        deadline = time.monotonic() + 60
        while len(_workers_of(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)  # no more than asked for
        assert sum(" run" in line for line in _workers_of(proc.pid)) == 2, _workers_of(proc.pid)
    finally:
        stop_server(proc)
