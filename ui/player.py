"""One teaching player for every animation of the app (issue 7, item 4): UI only, no math.

``player(key, num_frames, draw)`` shows ⏮ ◀ ▶/❚❚ ▶ ⏭ buttons, a speed choice and a frame slider, and calls
``draw(t)`` to draw frame ``t`` (one or several figures, so a selected frame can be highlighted in every figure
that shows it). It runs as an ``st.fragment``: stepping reruns only the player, never the page. Playing gives
the fragment a clock (``run_every``): each tick reruns only the player and shows the next frame; any click
(Pause, a step, the slider) stops the clock where it is. The keyboard works through Streamlit's button
shortcuts: ← and → step one frame, Space plays or pauses. When a page has several players, the keys drive
the one used last (the first one until then). The frame shown (under the player's key) and the speed are in
the URL, so a shared link opens on the same frame. ``animate`` wraps it for one figure per frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import plotly.graph_objects as go
import streamlit as st

from ui import chart
from ui.errors import guarded
from ui.navigation import CURRENT_PAGE

SPEEDS = {"¼×": 0.25, "½×": 0.5, "1×": 1.0, "2×": 2.0, "4×": 4.0}


def _active_slot() -> str:
    """Session-state key naming the player that owns the keyboard on the current page."""
    return f"_player_active_{st.session_state.get(CURRENT_PAGE, '')}"


def chart_key(name: str) -> str:
    """A key for a chart drawn by ``draw(t)``: stable between reruns, so the browser updates the chart in
    place instead of rebuilding it."""
    return name


def _state(key: str) -> dict:
    return st.session_state.setdefault(f"_player_{key}", {"frame": None, "playing": False})


def _activate(key: str) -> None:
    ss = st.session_state
    if ss.get(_active_slot()) != key:
        ss[_active_slot()] = key
        ss[f"_player_{key}_rerun_app"] = True  # move the keyboard shortcuts to this player
    _state(key)["clicked"] = True  # this run comes from a click, not from the playing clock


def _stop(key: str) -> None:
    s = _state(key)
    if s["playing"]:
        s["playing"] = False
        st.session_state[f"_player_{key}_rerun_app"] = True  # re-register the fragment without its clock


def _step(key: str, delta: int, last: int) -> None:
    _stop(key)
    s = _state(key)
    s["frame"] = min(max(s["frame"] + delta, 0), last)
    _activate(key)


def _jump(key: str, frame: int) -> None:
    _stop(key)
    _state(key)["frame"] = frame
    _activate(key)


def _toggle(key: str, last: int) -> None:
    s = _state(key)
    if s["playing"]:
        _stop(key)
    else:
        s["playing"] = True
        st.session_state[f"_player_{key}_rerun_app"] = True  # re-register the fragment with its clock
        if s["frame"] >= last:
            s["frame"] = 0  # play again from the start
    _activate(key)


def _slid(key: str) -> None:
    _stop(key)
    _state(key)["frame"] = int(st.session_state[f"{key}_frame"])
    _activate(key)


def player(
    key: str,
    num_frames: int,
    draw: Callable[[int], None],
    *,
    start: int = 0,
    label: str = "frame",
    frame_labels: Sequence[str] | None = None,
    fps: float = 10.0,
    reset_on: object = None,
) -> None:
    """Draw frame ``t`` of an animation with teaching controls; see the module docstring.

    ``start`` is the frame shown first (e.g. the last ascent step); ``frame_labels[t]`` names frame ``t`` on the
    slider (e.g. the training step it shows); ``fps`` is the 1× playing speed. When ``reset_on`` (any
    comparable value, e.g. the config the frames come from) changes, the player goes back to ``start``.
    """
    if num_frames < 1:
        return
    ss = st.session_state
    ss.setdefault(_active_slot(), key)
    s = _state(key)
    if s.get("reset_on", reset_on) != reset_on:
        s["frame"], s["playing"] = None, False
    s["reset_on"] = reset_on
    if s["frame"] is None and st.query_params.get(key, "").isdigit():
        s["frame"] = int(st.query_params[key])  # a shared link's frame
    if s["frame"] is None or s["frame"] >= num_frames:
        s["frame"] = min(max(start, 0), num_frames - 1)
    s["start"] = min(max(start, 0), num_frames - 1)
    speed = SPEEDS.get(ss.get(f"{key}_speed", "1×"), 1.0)
    # Playing = a fragment with a clock: each tick reruns only the player and advances one frame.
    clock = 1.0 / (fps * speed) if s["playing"] else None
    st.fragment(guarded(_player_body), run_every=clock)(
        key, num_frames, draw, label, list(frame_labels) if frame_labels else None
    )


def _player_body(key: str, num_frames: int, draw: Callable[[int], None], label: str, names: list[str] | None) -> None:
    ss = st.session_state
    if ss.pop(f"_player_{key}_rerun_app", False):
        st.rerun(scope="app")
    s = _state(key)
    last = num_frames - 1
    if s["playing"] and not s.pop("clicked", False):  # a tick of the clock
        if s["frame"] >= last:
            s["playing"] = False
            st.rerun(scope="app")  # stop the clock
        s["frame"] += 1
    s.pop("clicked", None)
    keys = ss.get(_active_slot()) == key
    name = (lambda t: names[t]) if names else str
    buttons = st.columns([1, 1, 1.4, 1, 1, 2.4, 6], vertical_alignment="center")
    buttons[0].button("⏮", key=f"{key}_first", on_click=_jump, args=(key, 0), help="First frame")
    buttons[1].button(
        "◀",
        key=f"{key}_back",
        on_click=_step,
        args=(key, -1, last),
        help="One frame back (←)",
        shortcut="Left" if keys else None,
    )
    buttons[2].button(
        "❚❚ Pause" if s["playing"] else "▶ Play",
        key=f"{key}_play",
        on_click=_toggle,
        args=(key, last),
        help="Play or pause (Space)",
        shortcut="Space" if keys else None,
        type="primary",
    )
    buttons[3].button(
        "▶",
        key=f"{key}_forward",
        on_click=_step,
        args=(key, 1, last),
        help="One frame forward (→)",
        shortcut="Right" if keys else None,
    )
    buttons[4].button("⏭", key=f"{key}_last", on_click=_jump, args=(key, last), help="Last frame")
    buttons[5].selectbox(
        "Speed",
        list(SPEEDS),
        index=2,
        key=f"{key}_speed",
        label_visibility="collapsed",
        help="Playing speed",
        bind="query-params",
        on_change=_speed_changed,
        args=(key,),
    )
    if num_frames > 1:
        ss[f"{key}_frame"] = s["frame"]
        buttons[6].select_slider(
            label,
            options=list(range(num_frames)),
            key=f"{key}_frame",
            format_func=name,
            on_change=_slid,
            args=(key,),
            label_visibility="collapsed",
        )
    if not s["playing"]:  # the frame shown is part of the view: in the URL unless it is the opening one
        if s["frame"] == s["start"]:
            st.query_params.pop(key, None)
        elif st.query_params.get(key) != str(s["frame"]):
            st.query_params[key] = str(s["frame"])
    playing = " — playing" if s["playing"] else ""
    st.caption(f"{label} {name(s['frame'])} ({s['frame'] + 1} of {num_frames}){playing}")
    draw(s["frame"])


def _speed_changed(key: str) -> None:
    s = _state(key)
    if s["playing"]:
        st.session_state[f"_player_{key}_rerun_app"] = True  # a new clock
    s["clicked"] = True


def animate(
    key: str,
    steps: Sequence[int],
    build: Callable[[int], go.Figure],
    *,
    label: str = "time step",
    start: int = 0,
) -> None:
    """``player`` over one figure: ``build(steps[i])`` is frame i (e.g. a replay at time step ``steps[i]``)."""
    steps = list(steps)

    def draw(i: int) -> None:
        chart(build(steps[i]), key, key=chart_key(key))

    player(key, len(steps), draw, start=start, label=label, frame_labels=[str(s) for s in steps], reset_on=len(steps))
