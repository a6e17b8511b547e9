"""One teaching player for every animation of the app (issue 7, item 4): UI only, no math.

``player(key, num_frames, draw)`` shows ⏮ ◀ ▶/❚❚ ▶ ⏭ buttons, a speed choice and a frame slider, and calls
``draw(t)`` to draw frame ``t`` (one or several figures, so a selected frame can be highlighted in every figure
that shows it). It runs as an ``st.fragment``: stepping reruns only the player, never the page. Playing loops
on the server, redrawing ``draw(t)`` in place; any click (Pause, a step, the slider) interrupts the loop where
it is. The keyboard works through Streamlit's button shortcuts: ← and → step one frame, Space plays or
pauses. When a page has several players, the keys drive the one used last (the first one until then).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitAPIException

SPEEDS = {"¼×": 0.25, "½×": 0.5, "1×": 1.0, "2×": 2.0, "4×": 4.0}
ACTIVE = "_player_active"


def chart_key(name: str) -> str:
    """A key for a chart drawn by ``draw(t)``: stable between reruns (the browser then updates the chart in
    place instead of rebuilding it) and unique within a run (a playing loop draws the chart many times)."""
    return f"{name}-{st.session_state.get('_player_pass', 0)}"


def _state(key: str) -> dict:
    return st.session_state.setdefault(f"_player_{key}", {"frame": None, "playing": False})


def _activate(key: str) -> None:
    if st.session_state.get(ACTIVE) != key:
        st.session_state[ACTIVE] = key
        st.session_state[f"_player_{key}_rerun_app"] = True  # move the keyboard shortcuts to this player


def _step(key: str, delta: int, last: int) -> None:
    s = _state(key)
    s["playing"] = False
    s["frame"] = min(max(s["frame"] + delta, 0), last)
    _activate(key)


def _jump(key: str, frame: int) -> None:
    s = _state(key)
    s["playing"], s["frame"] = False, frame
    _activate(key)


def _toggle(key: str, last: int) -> None:
    s = _state(key)
    s["playing"] = not s["playing"]
    if s["playing"] and s["frame"] >= last:
        s["frame"] = 0  # play again from the start
    _activate(key)


def _slid(key: str) -> None:
    s = _state(key)
    s["playing"], s["frame"] = False, int(st.session_state[f"{key}_frame"])
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
    st.session_state.setdefault(ACTIVE, key)
    s = _state(key)
    if s.get("reset_on", reset_on) != reset_on:
        s["frame"], s["playing"] = None, False
    s["reset_on"] = reset_on
    if s["frame"] is None or s["frame"] >= num_frames:
        s["frame"] = min(max(start, 0), num_frames - 1)
    _player_fragment(key, num_frames, draw, label, list(frame_labels) if frame_labels else None, fps)


@st.fragment
def _player_fragment(
    key: str, num_frames: int, draw: Callable[[int], None], label: str, names: list[str] | None, fps: float
) -> None:
    ss = st.session_state
    if ss.pop(f"_player_{key}_rerun_app", False):
        st.rerun(scope="app")
    s = _state(key)
    last = num_frames - 1
    keys = ss.get(ACTIVE) == key
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
    speed = buttons[5].selectbox(
        "Speed", list(SPEEDS), index=2, key=f"{key}_speed", label_visibility="collapsed", help="Playing speed"
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
    slot = st.empty()
    ss["_player_pass"] = 0
    with slot.container():
        st.caption(f"{label} {name(s['frame'])} ({s['frame'] + 1} of {num_frames})")
        draw(s["frame"])
    if not s["playing"]:
        return
    delay = 1.0 / (fps * SPEEDS[speed])
    while s["frame"] < last:
        started = time.perf_counter()
        s["frame"] += 1
        ss["_player_pass"] += 1
        with slot.container():
            st.caption(f"{label} {name(s['frame'])} ({s['frame'] + 1} of {num_frames}) — playing")
            draw(s["frame"])
        time.sleep(max(delay - (time.perf_counter() - started), 0.0))
    s["playing"] = False
    try:
        st.rerun(scope="fragment")  # redraw the controls: ▶ Play again, the slider at the last frame
    except StreamlitAPIException:  # a full run (e.g. AppTest) is not a fragment rerun
        st.rerun()


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
        st.plotly_chart(build(steps[i]), key=chart_key(key))

    player(key, len(steps), draw, start=start, label=label, frame_labels=[str(s) for s in steps], reset_on=len(steps))
