"""The pages' error boundary: an unexpected error shows one ``st.error`` with a short id, never a traceback.

``app.py`` runs every page inside ``boundary()``. A fragment's body is wrapped with ``guarded``: Streamlit
reruns a fragment by calling its function directly, outside app.py, and handles its errors itself (showing
a traceback) before app.py could see them. The full traceback goes to the server's log (logger ``pvnlab``)
with the same id, so a user can quote the id and the instructor can find the error.

Streamlit's own control flow passes through: ``st.stop``, ``st.rerun`` and ``st.switch_page`` raise
``StopException`` / ``RerunException``, which are ``BaseException``s, and ``FragmentHandledException`` is a
fragment's error that Streamlit has already shown.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import streamlit as st
from streamlit.errors import FragmentHandledException

LOG = logging.getLogger("pvnlab")
if not LOG.handlers:  # Streamlit configures only its own loggers: without this, the log gets the bare message
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    LOG.addHandler(_handler)
    LOG.setLevel(logging.INFO)

F = TypeVar("F", bound=Callable[..., Any])


def report(error: BaseException) -> str:
    """Log ``error`` with its traceback under a new 8-hex-digit id; show one ``st.error`` naming the id."""
    error_id = secrets.token_hex(4)
    LOG.error("error %s: %s", error_id, type(error).__name__, exc_info=error)
    st.error(
        f"Something went wrong here (error id `{error_id}`). Reload the page or change a setting; if it happens "
        "again, give the instructor this error id.",
        icon=":material/error:",
    )
    return error_id


@contextlib.contextmanager
def boundary() -> Iterator[None]:
    """Run the block; any error it raises becomes ``report(error)`` (Streamlit's control flow passes)."""
    try:
        yield
    except FragmentHandledException:
        raise  # already shown by Streamlit
    except Exception as error:  # noqa: BLE001 - the boundary: every error a page can raise
        report(error)


def guarded(fn: F) -> F:
    """``fn`` run inside ``boundary()``: for ``st.fragment`` bodies, whose reruns do not pass through app.py."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with boundary():
            return fn(*args, **kwargs)
        return None

    return run  # type: ignore[return-value]
