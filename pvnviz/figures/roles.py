"""Traces found by what they show, never by their legend text.

A figure builder gives every trace that code looks up later (to highlight it, or to change it frame by frame)
a role: a string in plotly's ``meta``, compared whole. A trace's ``name`` is legend and hover text, free to
change. The browser reads the same roles: ``components/polytope_views.js`` (``byMeta``) the polytope's,
``components/player.js`` the probing states'.
"""

from __future__ import annotations

from typing import Any


def roles(fig: Any) -> dict[str, int]:
    """``{role: trace index}`` over the traces that have one, of a go.Figure or a plotly JSON dict."""
    data = fig["data"] if isinstance(fig, dict) else fig.data
    found: dict[str, int] = {}
    for index, trace in enumerate(data):
        role = trace.get("meta") if isinstance(trace, dict) else trace.meta
        if isinstance(role, str):
            if role in found:
                raise ValueError(f"two traces (#{found[role]} and #{index}) have the role {role!r}")
            found[role] = index
    return found


def trace_index(fig: Any, role: str) -> int:
    """The index of the trace with ``role``; a KeyError naming the roles there are if none has it."""
    found = roles(fig)
    if role not in found:
        raise KeyError(f"no trace has the role {role!r}; the figure's roles: {', '.join(found) or 'none'}")
    return found[role]
