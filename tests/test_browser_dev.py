"""``make dev``: the app's server with ``--server.runOnSave true`` reruns a page when its source is saved (a
script of its own here, served the same way as app.py through ``$PVN_APP_SCRIPT``)."""

import os
import subprocess
import sys
import time
import urllib.request

import pytest

from browserbench.browser import free_port, launch
from conftest import ROOT, require_chromium

pytestmark = pytest.mark.browser


def test_make_dev_s_server_reruns_a_page_when_its_source_is_saved(tmp_path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    script = tmp_path / "probe.py"
    script.write_text('import streamlit as st\nst.write("version one")\n')
    port = free_port()
    command = [sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.address", "127.0.0.1"]
    command += ["--server.headless", "true", "--server.fileWatcherType", "poll", "--server.runOnSave", "true"]
    env = {**os.environ, "PVN_APP_SCRIPT": str(script)}
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_text("version one").wait_for(timeout=60_000)
            script.write_text('import streamlit as st\nst.write("version two")\n')
            page.get_by_text("version two").wait_for(timeout=30_000)  # no reload: the server reran it
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
