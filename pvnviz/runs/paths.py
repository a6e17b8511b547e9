"""Where the app's own files and the runs are, from a checkout or from an installed package.

The app (``app.py``, ``asgi.py``, ``pages/`` with its components, ``ui/``, ``.streamlit/config.toml``) and the
shipped runs (``data/``) sit at the root of a checkout, beside ``pvnviz/``. ``pip install .`` puts the same files
in one folder beside ``pvnviz`` in site-packages, ``pvnviz_app`` (pyproject.toml maps the checkout's root there);
``pip install -e .`` uses the checkout itself. Users' own runs go to ``runs/``: the checkout's, or, for an
installed package, the current folder's.
"""

from __future__ import annotations

from pathlib import Path

APP_PACKAGE = "pvnviz_app"  # the app's folder in site-packages (see pyproject.toml)
PACKAGE_PARENT = Path(__file__).resolve().parents[2]  # the folder ``pvnviz`` is imported from


def app_root() -> Path:
    """The folder holding ``app.py``, ``pages/``, ``ui/``, ``.streamlit/`` and ``data/``: the checkout's root, or
    the installed ``pvnviz_app`` folder (whether it holds the app is ``app_missing``'s answer)."""
    return PACKAGE_PARENT if is_checkout() else PACKAGE_PARENT / APP_PACKAGE


def app_missing() -> str:
    """Why the app cannot start from ``app_root()`` (a file it needs is absent), or "" if it can."""
    root = app_root()
    for name in ("app.py", "asgi.py", "ui/serve.py", ".streamlit/config.toml"):
        if not (root / name).is_file():
            return f"the app's {name} is not in {root}; install the package whole with `pip install .`"
    return ""


def is_checkout() -> bool:
    """Whether ``pvnviz`` runs from a checkout (or an editable install of one), not from an installed copy."""
    return (PACKAGE_PARENT / "app.py").is_file()


def shipped_runs() -> Path:
    """``data/``: the runs and comparisons that ship with the app."""
    return app_root() / "data"


def user_runs() -> Path:
    """``runs/``, where users save runs for the app to open: the checkout's, else the current folder's."""
    return PACKAGE_PARENT / "runs" if is_checkout() else Path.cwd() / "runs"
