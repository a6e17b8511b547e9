"""The one module that reaches into Streamlit's non-public modules; each use, and why no public API does it
(Streamlit 1.67). ``tests/test_streamlit_internals.py`` checks every name used here, so a Streamlit upgrade that
moves one fails there first.

- ``session_id``: the job queue counts a session as waiting on a job while its browser is connected, and
  needs a name for it that Streamlit's runtime also knows (``st.context`` has headers, cookies and the URL, but no
  session id): ``get_script_run_ctx().session_id``.
- ``session_connected``: a closed tab stops waiting on its jobs, so a job nobody watches is cancelled:
  ``Runtime.instance().is_active_session`` (no public API tells whether a session is still connected).
- ``fragment_rerun``: the job panel is a fragment; when its own rerun sees the job end, the whole page must
  rerun to draw the results: ``get_script_run_ctx().fragment_ids_this_run`` (empty in a full run).
- ``run_cli``: ``make run`` imports torch and the figure builders, then serves the app in the same process,
  as ``streamlit run`` would: ``streamlit.web.cli.main`` (the ``streamlit`` command's own entry point).
"""

from __future__ import annotations


def session_id() -> str | None:
    """Streamlit's id of the session whose script runs on this thread; None outside a script run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def session_connected(session: str) -> bool:
    """Whether the browser session ``session`` (a ``session_id``) is still connected to this server."""
    from streamlit.runtime import Runtime

    return Runtime.exists() and Runtime.instance().is_active_session(session)


def fragment_rerun() -> bool:
    """Whether this script run is a fragment's own rerun (not the whole page's)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx is not None and bool(ctx.fragment_ids_this_run)


def run_cli(argv: list[str]) -> None:
    """Run the ``streamlit`` command with ``argv`` (e.g. ``["run", "asgi.py", "--server.port", "8501"]``) in this
    process."""
    import sys

    from streamlit.web import cli

    sys.argv = ["streamlit", *argv]
    cli.main()
