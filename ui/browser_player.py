"""One player for every animation, playing in the browser: UI only, no math.

``play(key, build, num_frames)`` sends an animation once (``pvnviz.figures.frames.animation``: the first frame's
figures whole, then what each frame changes) to ``components/player.js``, which plays it at 30 frames a
second or more with ``requestAnimationFrame``, steps (⏮ ◀ ▶ ⏭ as inline SVG, 44 px targets), seeks with its
slider, changes speed and reads the keyboard (← → Space; the player used last owns the keys) without a server
rerun. Only when playback pauses, or the user steps or seeks, does the frame come back to Python: it goes into
the URL under the player's key (unless it is the opening frame), so a shared link opens on the same frame.
``animate`` wraps it for one figure per frame. A player gets its animation's URL, not the animation (the server's
store keeps it, ``ui.server.store``; its route serves it, ``ui.server.routes``), and reads it when the reader scrolls
near it: a page's script run does not carry its players' animations, most of what the CartPole page would send.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import plotly.graph_objects as go
import streamlit as st
from streamlit.components.v2 import component

from pvnviz.figures import theme
from pvnviz.figures.frames import animation
from ui import Made, chart_config, urlcheck
from ui.components import js_module, plotly_js_url
from ui.server import routes, store

CSS = """
.pvn-player { outline: none; font-family: var(--st-font); }
.pvn-player-stage { display: flex; gap: 1rem; width: 100%; }
.pvn-player-figure { min-width: 0; }
.pvn-player-bar { display: flex; align-items: center; gap: 0.25rem; flex-wrap: wrap; margin-top: 0.25rem; }
.pvn-player-button { width: 44px; height: 44px; display: inline-flex; align-items: center; justify-content: center;
  border: 1px solid var(--st-border-color, #d5dae5); border-radius: 0.5rem; background: var(--st-background-color);
  color: var(--st-text-color); cursor: pointer; padding: 0; }
.pvn-player-button svg { fill: currentColor; }
.pvn-player-button.pvn-play { background: var(--st-primary-color); color: white; border-color: transparent; }
.pvn-player-speed { height: 44px; border-radius: 0.5rem; border: 1px solid var(--st-border-color, #d5dae5);
  background: var(--st-background-color); color: var(--st-text-color); padding: 0 0.5rem; }
.pvn-player-slider { flex: 1; min-width: 8rem; height: 44px; accent-color: var(--st-primary-color); }
.pvn-player-caption { font-size: 0.875rem; color: var(--st-text-color); opacity: 0.7; }
.pvn-player-choices { display: flex; gap: 1rem; flex-wrap: wrap; margin-bottom: 0.5rem; }
.pvn-player-choices label { display: flex; flex-direction: column; gap: 0.25rem; font-size: 0.875rem;
  color: var(--st-text-color); min-width: 12rem; }
"""

log = logging.getLogger(__name__)


class Choice(NamedTuple):
    """A view the page switches itself: ``key`` in the player's choice, a drop-down ``label``, option labels."""

    key: str
    label: str
    options: Sequence[str]


_player = component(
    "pvn_player",
    js=js_module(
        "plotly_adapter.js",
        "controls_lib.js",
        "canvas_layer.js",
        "player_frames.js",
        "player_paint.js",
        "player_draw.js",
        "player_controls.js",
        "player.js",
    ),
    css=CSS,
    isolate_styles=False,
)
_BUILT = itertools.count(1)  # animation ids: a new id makes the browser take the new frames
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")  # characters the animation route refuses in a name (ui.server.routes.NAME)
# (key, signature, projector, frames) -> (id, animation, its JSON, the name it is served at), once made: each page run
# sends the URL
_SHARED: OrderedDict[tuple, Made] = OrderedDict()
_SHARED_LOCK = threading.Lock()
DEFAULT_HEIGHT = 450  # px: plotly.js's height of a figure whose layout sets none
MAX_SHARED = 32  # animations kept for every session: a class opening the same result builds its frames once


def _frames(
    key: str, signature: object, build: Callable[[int], dict[str, Any]], num_frames: int, labels, prebuilt=None
) -> tuple[dict, dict]:
    """The animation for ``signature``, built once however many sessions show it (building draws every frame,
    a second or two of the server's CPU for a page's animation): (what the browser gets, the animation).
    Sessions asking at once wait for the first one's build: when a shared run ends, every tab that waited on it
    reruns within a second, and each built the same three animations again (4-6 times each with 8 tabs)."""
    projector = bool(st.session_state.get("projector"))
    slot = (key, signature, projector, None if prebuilt is not None else num_frames)
    with _SHARED_LOCK:
        made = _SHARED.get(slot)
        if made is None:
            made = _SHARED[slot] = Made()
            while len(_SHARED) > MAX_SHARED:
                _SHARED.popitem(last=False)
        else:
            _SHARED.move_to_end(slot)

    def make() -> tuple[str, dict, str, str]:
        def styled(t: int) -> dict[str, Any]:
            figures = build(t)
            return {n: theme.projector(go.Figure(f)) for n, f in figures.items()} if projector else figures

        anim = prebuilt(projector) if prebuilt is not None else animation(styled, num_frames, labels=labels)
        built = f"{_UNSAFE.sub('-', key)}-{next(_BUILT)}"  # the route's names: a gym: key's ':?=&' are not in them
        name = f"{built}-{secrets.token_urlsafe(12)}.json"  # a random token: not readable by a guessed id
        return built, anim, json.dumps(anim, separators=(",", ":")), name

    built, anim, text, name = made.get(make)
    store.current().put_animation(name, text.encode)  # again if it was pushed out meanwhile
    return {"id": built, "url": routes.url(f"anim/{name}")}, anim


def _frame_changed(key: str, start: int) -> None:
    """The browser paused, stepped or seeked: its frame goes into the URL (the opening frame leaves it)."""
    frame = st.session_state[f"{key}_player"].get("frame")
    opening = not isinstance(frame, int) or isinstance(frame, bool) or frame < 0 or frame == start
    urlcheck.put(key, None if opening else str(frame))


def valid_choice(sent: object, choices: Sequence[Choice]) -> dict[str, int] | None:
    """A choice the browser sent if it is one of the views (every key, each an option's index), else None."""
    sizes = {c.key: len(c.options) for c in choices}
    if not isinstance(sent, dict) or set(sent) != set(sizes):
        return None
    if not all(type(v) is int and 0 <= v < sizes[k] for k, v in sent.items()):
        return None
    return dict(sent)


def _choice_changed(key: str, choices: Sequence[Choice], on_choice: Callable[[dict[str, int]], None]) -> None:
    """The browser switched a view (an axis, a start): a valid choice goes to ``on_choice``; anything else a visitor
    could send (other keys, out-of-range or non-integer indices) is dropped and logged."""
    sent = st.session_state[f"{key}_player"].get("choice")
    choice = valid_choice(sent, choices)
    if choice is None:
        log.warning("player %s: dropped a choice that is not one of its views: %.200r", key, sent)
    else:
        on_choice(choice)


def play(
    key: str,
    build: Callable[[int], dict[str, Any]] | None,
    num_frames: int,
    *,
    start: int = 0,
    label: str = "frame",
    frame_labels: Sequence[str] | None = None,
    fps: float = 30.0,
    reset_on: object = None,
    widths: dict[str, float] | None = None,
    names: dict[str, str] | None = None,
    prebuilt: Callable[[bool], dict] | None = None,
    choices: Sequence[Choice] = (),
    choice: dict[str, int] | None = None,
    on_choice: Callable[[dict[str, int]], None] | None = None,
) -> None:
    """Play frames ``build(0) .. build(num_frames - 1)`` (each ``{figure name: figure}``, drawn side by side,
    ``widths`` their flex weights) in the browser; ``start`` is the frame shown first, ``frame_labels[t]`` names
    frame ``t`` (e.g. the training step it shows), ``fps`` the 1× speed, ``names`` each figure's download name.
    The animation is rebuilt only when ``reset_on`` (e.g. the config it is drawn from) changes. ``prebuilt``
    (given the projector mode) returns the whole animation at once instead (``figures.frames.changes_animation``).

    ``choices`` are views the browser switches without the server (drop-downs above the figures): the prebuilt
    data holds every view, as ``variants`` (``{"i|j": animation}``, one per combination of option indices) or as
    ``probes`` (the probing-state snapshots, which the page projects on the chosen axes itself). ``choice`` is
    the one shown first; a switch in the page goes to ``on_choice`` (e.g. to put it in the URL)."""
    if num_frames < 1:
        return
    if choices and on_choice is not None:
        choice = _caught_up(key, choices, choice, on_choice)
    start = min(max(start, 0), num_frames - 1)
    asked = urlcheck.link_int(key, 0, num_frames - 1, instead=f"frame {start} (where it opens)")
    frame = start if asked is None else asked
    data, anim = _frames(key, reset_on, build, num_frames, frame_labels, prebuilt)
    first = next(iter(anim["variants"].values())) if "variants" in anim else anim
    data.update(
        plotly=plotly_js_url(),
        config={n: chart_config((names or {}).get(n, f"{key}-{n}")) for n in first["figures"]},
        frame=frame,
        stageHeight=max(f.get("layout", {}).get("height") or DEFAULT_HEIGHT for f in first["figures"].values()),
        fps=fps,
        label=label,
        widths=widths or {},
        choices=[{"key": c.key, "label": c.label, "options": list(c.options)} for c in choices],
        choice=dict(choice or {}),
    )
    # "missing": the page found its animation's URL gone (the store pushed it out); the rerun it asks for
    # serves it again (``_frames``), and the page reads it once more
    callbacks = {"on_frame_change": lambda: _frame_changed(key, start), "on_missing_change": lambda: None}
    default: dict[str, Any] = {"frame": frame}
    if choices and on_choice is not None:
        callbacks["on_choice_change"] = lambda: _choice_changed(key, choices, on_choice)
        default["choice"] = dict(choice or {})
    _player(key=f"{key}_player", data=data, default=default, width="stretch", height="content", **callbacks)


def _caught_up(
    key: str, choices: Sequence[Choice], held: dict[str, int] | None, on_choice: Callable[[dict[str, int]], None]
) -> dict[str, int]:
    """The view the page shows (else ``held``, the server's), handed to ``on_choice`` on every rerun: two switches
    within one rerun can leave the second without its change callback, and a rerun begun from an older URL starts
    from that URL, so ``on_choice`` must be idempotent and write only what differs (``ui.urlcheck.put``)."""
    state = st.session_state.get(f"{key}_player")
    shown = valid_choice(state.get("choice") if hasattr(state, "get") else None, choices)
    if shown is None:
        shown = dict(held or {})
    on_choice(shown)
    return shown


def animate(
    key: str,
    steps: Sequence[int],
    build: Callable[[int], go.Figure],
    *,
    label: str = "time step",
    start: int = 0,
    reset_on: object = None,
) -> None:
    """``play`` over one figure: ``build(steps[i])`` is frame i (e.g. a replay at time step ``steps[i]``)."""
    steps = list(steps)
    play(
        key,
        lambda i: {key: build(steps[i])},
        len(steps),
        start=start,
        label=label,
        frame_labels=[str(s) for s in steps],
        reset_on=(reset_on, tuple(steps)),
        names={key: key},
    )
