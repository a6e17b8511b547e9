"""The live runs' progress as the pages read it, kept in memory (issue 17: a server a class can share).

``ui.job_progress.ProgressFiles`` puts each progress file's content here as it writes the file; under ``make run``
the middleware ``ui.asgi.ProgressReads`` answers the pages' reads from here, not through Streamlit's static files.
No Streamlit here: ``ui/asgi.py`` imports it before Streamlit's runtime exists.
"""

from __future__ import annotations

# "jobs/<folder>/<file>" (a path under static/) -> the file's content, for every ProgressFiles of this process;
# set and removed by their writer threads (one dict operation each), read by the server's event loop
_SERVED: dict[str, bytes] = {}


def keep(path: str, content: bytes) -> None:
    """``content`` is what the progress file at ``path`` holds now."""
    _SERVED[path] = content


def forget(path: str) -> None:
    """The progress file at ``path`` is gone."""
    _SERVED.pop(path, None)


def serving(path: str) -> bytes | None:
    """The content of the progress file at ``path`` under ``static/`` (``jobs/<folder>/<file>``) if this process
    writes it, else None."""
    return _SERVED.get(path)


def paths() -> list[str]:
    """Every path kept (a copy)."""
    return list(_SERVED)
