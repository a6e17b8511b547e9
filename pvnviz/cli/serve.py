"""``pvnviz app``: the app's server, the same as ``make run`` (``ui/serve.py``), from any folder.

The app's folder (``pvnviz.runs.paths.app_root``: the checkout, or the installed ``pvnviz_app``) becomes the
working folder, as under ``make run``: Streamlit reads ``.streamlit/config.toml`` from there, and ``ui`` is
imported from there. The process then becomes ``python -m ui.serve --server.port PORT`` (``os.execve``: the
server gets the signals). An installed package's runs are the current folder's ``runs/`` and the shipped
``data/``, passed on in ``PVN_RUNS_ROOTS`` (unless it is set) since the server runs in the app's folder. This
module imports no part of the app: ``pvnviz`` never imports the UI's libraries.
"""

from __future__ import annotations

import os
import sys

from pvnviz.core.config_fields import ConfigError
from pvnviz.runs import paths
from pvnviz.runs.store import RUNS_ROOTS_ENV

DEFAULT_PORT = 8501  # Streamlit's, and the Makefile's ``PORT ?= 8501``
PORT_ENV = "PORT"  # ``make run PORT=8700`` and ``PORT=8700 pvnviz app`` both serve on 8700


def port(environ: dict[str, str] | None = None) -> int:
    """The app's port: ``$PORT`` if set, else 8501. ConfigError (exit 2) for a value that is not a port."""
    text = (os.environ if environ is None else environ).get(PORT_ENV, "").strip()
    return check_port(text) if text else DEFAULT_PORT


def check_port(text: str) -> int:
    """A TCP port from 1 to 65535; ConfigError naming the value otherwise."""
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and 1 <= int(text) <= 65535):
        shown = text if len(text) <= 20 else f"{text[:20]}... ({len(text)} characters)"
        raise ConfigError(f"the port must be a whole number from 1 to 65535, got {shown!r} (--port or $PORT).")
    return int(text)


def start_command() -> str:
    """How this installation starts the app, for hints: ``make run`` in a checkout, else ``pvnviz app``."""
    return "make run" if paths.is_checkout() and (paths.app_root() / "Makefile").is_file() else "pvnviz app"


def url(path: str = "") -> str:
    """The app's address on this machine at the port it is started with (``port``), with ``path`` appended."""
    return f"http://localhost:{port()}/{path}"


def command(server_port: int) -> tuple[list[str], str, dict[str, str]]:
    """What ``pvnviz app`` executes: (argv, working folder, environment), the Makefile's ``run`` target's command."""
    root = paths.app_root()
    env = dict(os.environ)
    if not paths.is_checkout() and not env.get(RUNS_ROOTS_ENV):
        env[RUNS_ROOTS_ENV] = os.pathsep.join(str(p) for p in (paths.shipped_runs(), paths.user_runs()))
    return [sys.executable, "-m", "ui.serve", "--server.port", str(server_port)], str(root), env


def serve(server_port: int) -> None:
    """Become the app's server (see the module docstring); never returns. ConfigError if the app is missing."""
    missing = paths.app_missing()
    if missing:
        raise ConfigError(missing)
    argv, folder, env = command(server_port)
    print(f"starting the app on http://localhost:{server_port}/ (from {folder}); Ctrl-C stops it.", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(folder)
    os.execve(argv[0], argv, env)
