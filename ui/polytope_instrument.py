"""The polytope instrument in the browser (Section 6.1, Figs. 2-3, Appendix A): UI only, no math.

``components/polytope.js`` (with ``polytope_views.js``, ``canvas_layer.js`` and ``mdp.js``) holds the view
controls (the MDP, the ascent's start, step size and steps, the ascent step shown) and computes every exact view in
JavaScript on each input event: the 5,000-policy cloud, the polytope's outline, corners and optimum, the exact
gradient field and the exact ascent. It also evaluates the PVN that the server trained (its weights are sent
once), for the learned field and the learned ascent. The thousands of points and arrows are painted on a canvas
under plotly, which keeps the axes, legends and titles; the modebar's camera downloads the whole figure.

The server's part: the figures' look (``pvnviz.figures`` builds them; the browser replaces their data, finding
each trace by its ``meta``), the PVN's training (a worker, ``ui.server.queue``) and the URL. When a control is released
the browser sends the view back (state ``view``); the controls go into the session and the URL, and a changed MDP
retrains the PVN. Control values are kept under the same session keys and query parameters as the widgets they
replace, so old links still open, and ``ui.urlcheck`` names a link value that cannot be used.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly
import streamlit as st
from streamlit.components.v2 import component

from pvnviz.core.config_fields import help_text
from pvnviz.figures import polytope as figs
from pvnviz.figures import polytope_ascent as ascent_figs
from pvnviz.figures import theme
from pvnviz.polytope import mdp as mdp_lib
from pvnviz.polytope.experiment import ExactView, LearnedView, PolytopeConfig, TrainedPolytopePVN
from ui import chart_config, urlcheck
from ui.browser_player import CSS as PLAYER_CSS
from ui.components import js_module, plotly_js_url

LOG = logging.getLogger(__name__)
KEY = "polytope_instrument"
REVISION = "_polytope_revision"  # bumped when the server sets the controls (Paper settings, Random MDP)
FRAME = "ascent"  # the query parameter of the ascent step shown (absent: the last)
PAPER = PolytopeConfig()


@dataclass(frozen=True)
class Control:
    """One view control: its session key and query parameter, label, panel and range."""

    key: str
    label: str
    group: str
    lo: float
    hi: float
    step: float
    paper: float
    kind: str = "range"  # or "number"
    integer: bool = False
    help: str = ""


def _controls() -> tuple[Control, ...]:
    mdp_group, rewards, moves = "MDP (Appendix A)", "Rewards r(s, a)", "Transitions P(s1 | s, a)"
    out = [
        Control(
            "gamma", "Discount γ", mdp_group, 0.0, 0.99, 0.01, PAPER.gamma, help=help_text(PolytopeConfig, "gamma")
        ),
        Control(
            "d0", "d0(s1)", mdp_group, 0.0, 1.0, 0.05, PAPER.d0[0], help="Start probability of s1; d0(s2) = 1 − d0(s1)."
        ),
    ]
    for s in range(2):
        for a in range(2):
            out.append(
                Control(
                    f"r{s}{a}", f"r(s{s + 1}, a{a + 1})", rewards, -2.0, 2.0, 0.05, PAPER.rewards[2 * s + a], "number"
                )
            )
    for s in range(2):
        for a in range(2):
            out.append(
                Control(
                    f"p{s}{a}",
                    f"P(s1 | s{s + 1}, a{a + 1})",
                    moves,
                    0.0,
                    1.0,
                    0.01,
                    PAPER.transitions[2 * s + a][0],
                    "number",
                    help="P(s2 | s, a) = 1 − P(s1 | s, a).",
                )
            )
    start_help = help_text(PolytopeConfig, "ascent_start") + " You can also click the exact field."
    out += [
        Control("start1", "Start P(a1 | s1)", "ascent", 0.0, 1.0, 0.005, PAPER.ascent_start[0], help=start_help),
        Control("start2", "Start P(a1 | s2)", "ascent", 0.0, 1.0, 0.005, PAPER.ascent_start[1], help=start_help),
        Control(
            "ascent_lr",
            "Ascent step size (SGD)",
            "ascent",
            0.001,
            5.0,
            0.01,
            PAPER.ascent_learning_rate,
            "number",
            help=help_text(PolytopeConfig, "ascent_learning_rate"),
        ),
        Control(
            "ascent_steps",
            "Ascent steps",
            "ascent",
            1,
            500,
            1,
            PAPER.ascent_steps,
            integer=True,
            help=help_text(PolytopeConfig, "ascent_steps"),
        ),
    ]
    return tuple(out)


CONTROLS = _controls()
BY_KEY = {c.key: c for c in CONTROLS}
MDP_KEYS = [c.key for c in CONTROLS if c.group != "ascent"]


def valid(control: Control, value: Any) -> float | int | None:
    """``value`` as the control's number when it is one it can take, else None (bool, text, nan, out of range)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = urlcheck.number(value)  # a link's text: ASCII digits only, as every link value
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not control.lo <= value <= control.hi:
        return None
    if control.integer:
        return int(value) if float(value).is_integer() else None
    return float(value)


def init_state() -> None:
    """Each control's value in the session: the link's when it is one the control can take, else the paper's
    (``ui.urlcheck`` then names the link's value it could not use)."""
    for c in CONTROLS:
        if c.key not in st.session_state:
            taken = valid(c, st.query_params.get(c.key))
            st.session_state[c.key] = c.paper if taken is None else taken
    st.session_state.setdefault(REVISION, 0)


def set_controls(values: dict[str, float]) -> None:
    """The server sets controls (Paper settings, Random MDP): the browser takes them at its next update."""
    for key, value in values.items():
        st.session_state[key] = value
    st.session_state[REVISION] = st.session_state.get(REVISION, 0) + 1


def current() -> dict[str, float]:
    return {c.key: st.session_state[c.key] for c in CONTROLS}


def write_url() -> None:
    """The controls into the URL (those at the paper's value are left out, as ``bind="query-params"`` does)."""
    for c in CONTROLS:
        value = st.session_state[c.key]
        text = str(value)
        if value == c.paper:
            st.query_params.pop(c.key, None)
        elif st.query_params.get(c.key) != text:
            st.query_params[c.key] = text


def config_of(base: PolytopeConfig, values: dict[str, float]) -> PolytopeConfig:
    """``base`` with the controls' MDP and ascent (raises ``ConfigError`` / ``ValueError`` for a bad one)."""
    return dataclasses.replace(
        base,
        gamma=float(values["gamma"]),
        rewards=tuple(float(values[f"r{s}{a}"]) for s in range(2) for a in range(2)),
        transitions=tuple(
            (float(values[f"p{s}{a}"]), 1.0 - float(values[f"p{s}{a}"])) for s in range(2) for a in range(2)
        ),
        d0=(float(values["d0"]), 1.0 - float(values["d0"])),
        ascent_start=(float(values["start1"]), float(values["start2"])),
        ascent_learning_rate=float(values["ascent_lr"]),
        ascent_steps=int(values["ascent_steps"]),
    )


def accept_view(view: Any) -> tuple[dict[str, float], int | None] | None:
    """The controls and the ascent step (None: the last) of a view the browser sent, or None when it is not every
    control's number in its range. What a browser sends is checked like any input."""
    controls = view.get("controls") if isinstance(view, dict) else None
    if not isinstance(controls, dict):
        return None
    taken = {c.key: valid(c, controls.get(c.key)) for c in CONTROLS}
    if any(v is None for v in taken.values()):
        return None
    frame = view.get("frame")
    ok = isinstance(frame, int) and not isinstance(frame, bool) and 0 <= frame < taken["ascent_steps"]
    return taken, frame if ok else None


def _view_changed() -> None:
    """The browser released a control, paused or stepped: its view into the session and the URL. A view the
    controls cannot hold is dropped, and the browser is sent the server's controls again."""
    accepted = accept_view((st.session_state.get(KEY) or {}).get("view"))
    if accepted is None:
        LOG.warning("polytope instrument: a view the controls cannot hold was dropped")
        st.session_state[REVISION] = st.session_state.get(REVISION, 0) + 1
        return
    controls, frame = accepted
    for key, value in controls.items():
        st.session_state[key] = value
    if frame is None:
        st.query_params.pop(FRAME, None)  # the last step, where the page opens
    else:
        st.query_params[FRAME] = str(frame)


def _array(a: np.ndarray) -> dict[str, str]:
    return {"dtype": "f8", "bdata": base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode()}


def learned_data(config: PolytopeConfig, trained: TrainedPolytopePVN) -> dict[str, Any]:
    """What the browser needs to evaluate the trained PVN: its weights, train and test policies, and the MDP it
    was trained on (a view of another MDP draws it faded, as stale)."""
    net = trained.net
    return {
        "controls": {k: v for k, v in _values_of(config).items() if k in MDP_KEYS},
        "hidden": int(net.W1.shape[1]),
        "W1": _array(net.W1),
        "b1": _array(net.b1),
        "W2": _array(net.W2),
        "b2": _array(net.b2),
        "train": _array(trained.train_policies),
        "test": _array(trained.test_policies),
    }


def _values_of(config: PolytopeConfig) -> dict[str, float]:
    values = {"gamma": config.gamma, "d0": config.d0[0]}
    for s in range(2):
        for a in range(2):
            values[f"r{s}{a}"] = config.rewards[2 * s + a]
            values[f"p{s}{a}"] = config.transitions[2 * s + a][0]
    return values


def templates(exact: ExactView, trained: TrainedPolytopePVN, learned: LearnedView, projector: bool) -> dict:
    """The four figures as plotly JSON: their look, legends and the trace roles (``meta``) the browser fills."""
    built = {
        "polytope": figs.polytope_figure(exact, trained),
        "fields": figs.fields_figure(exact, learned, picker=False, paths=False),  # a click is read in the page
        "square": ascent_figs.ascent_frame(exact, learned, len(exact.ascent.policies) - 1),
        "returns": figs.ascent_returns_figure(exact, learned, highlight=len(exact.ascent.policies) - 1),
    }
    out = {}
    for name, fig in built.items():
        for trace in fig.data:  # the browser computes every trace with a role
            if trace.meta is not None:
                trace.update(x=[], y=[], customdata=None, text=None)
                if trace.meta == "cloud":
                    trace.update(marker_color=[])
        if projector:
            fig = theme.projector(fig)
        out[name] = json.loads(plotly.io.json.to_json_plotly(fig.to_plotly_json()))
    return out


# The instrument's JavaScript, in the order js_module concatenates it into one module (a Blob-URL module imports
# nothing): plotly's internals through one adapter, the shared player parts, the exact math, the views and figures,
# the canvas under plotly, then the instrument's state, controls, ascent player and drawing loop; polytope.js last
# (its default export is the component).
MODULES = (
    "plotly_adapter.js",
    "controls_lib.js",
    "mdp.js",
    "polytope_views.js",
    "canvas_layer.js",
    "polytope_state.js",
    "polytope_controls.js",
    "polytope_player.js",
    "polytope_draw.js",
    "polytope.js",
)

_instrument = component(
    "pvn_polytope",
    js=js_module(*MODULES),
    css=PLAYER_CSS
    + """
.pvn-poly { outline: none; font-family: var(--st-font); color: var(--st-text-color); }
.pvn-poly-badge { position: sticky; top: 0; z-index: 5; display: inline-block; padding: 0.2rem 0.6rem;
  border-radius: 0.5rem; background: #ff7f0e; color: white; font-size: 0.875rem; }
.pvn-poly-top { display: flex; gap: 1rem; align-items: flex-start; flex-wrap: wrap; }
.pvn-poly-controls { flex: 0 0 17rem; display: grid; grid-template-columns: 1fr 1fr; gap: 0.35rem 0.75rem; }
.pvn-poly-group { grid-column: 1 / -1; font-weight: 600; font-size: 0.9rem; margin-top: 0.4rem; }
.pvn-poly-control { display: flex; flex-direction: column; font-size: 0.8rem; gap: 0.1rem; }
.pvn-poly-controls .pvn-poly-range { grid-column: 1 / -1; }
.pvn-poly-label { display: flex; justify-content: space-between; gap: 0.5rem; }
.pvn-poly-value { font-variant-numeric: tabular-nums; font-weight: 600; }
.pvn-poly-input[type=range] { width: 100%; height: 28px; accent-color: var(--st-primary-color); }
.pvn-poly-input[type=number] { width: 100%; height: 2rem; box-sizing: border-box; padding: 0 0.4rem;
  border: 1px solid var(--st-border-color, #d5dae5); border-radius: 0.4rem; background: var(--st-background-color);
  color: var(--st-text-color); font: inherit; }
.pvn-poly-input[aria-invalid=true] { border-color: var(--st-red-color, #ff2b2b); outline-color: var(--st-red-color); }
.pvn-poly-problem { color: var(--st-red-color, #ff2b2b); font-size: 0.75rem; }
.pvn-poly-problem:empty { display: none; }
.pvn-poly-figbox { flex: 1 1 24rem; min-width: 0; }
.pvn-poly-optimum { font-size: 0.95rem; margin: 0.25rem 0; }
.pvn-poly-text { font-size: 0.9rem; line-height: 1.45; margin: 0.25rem 0 1rem; }
.pvn-poly-ascent-controls { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 0.75rem; }
.pvn-poly-fields .nsewdrag[data-subplot=xy] { cursor: crosshair !important; }
.pvn-poly-row { display: flex; gap: 1rem; }
.pvn-poly-square { flex: 3; min-width: 0; }
.pvn-poly-returns { flex: 2; min-width: 0; }
""",
    isolate_styles=False,  # plotly.js puts its modebar and hover styles in document.head
)


def draw(
    key_config: PolytopeConfig,
    seed: int,
    exact: ExactView,
    trained: TrainedPolytopePVN,
    learned: LearnedView,
    texts: dict[str, str],
) -> None:
    """Draw the instrument for the PVN trained on ``key_config`` (``exact``/``learned``: its server views, for
    the figures' look). The controls shown are the session's."""
    projector = bool(st.session_state.get("projector"))
    steps = int(st.session_state["ascent_steps"])
    frame = urlcheck.link_int(FRAME, 0, steps, instead="the last step")  # the ascent step shown (None: the last)
    data = {
        "version": f"{hash((key_config, seed, projector)) & 0xFFFFFFFF:x}",  # a new PVN or look: redraw
        "plotly": plotly_js_url(),
        "config": {n: chart_config(f"polytope-{n}") for n in ("polytope", "fields", "square", "returns")},
        "figures": _templates(projector, exact, trained, learned),
        "spec": [
            {
                "key": c.key,
                "label": c.label,
                "group": c.group,
                "min": c.lo,
                "max": c.hi,
                "step": c.step,
                "kind": c.kind,
                "integer": c.integer,
                "help": c.help,
            }
            for c in CONTROLS
        ],
        "controls": current(),
        "frame": frame,
        "revision": st.session_state[REVISION],
        "cloud": _cloud(seed, key_config.num_polytope_points),
        "gridSize": key_config.grid_size,
        "learned": learned_data(key_config, trained),
        "texts": texts,
    }
    _instrument(
        key=KEY, data=data, default={"view": None}, on_view_change=_view_changed, width="stretch", height="content"
    )


@st.cache_resource(max_entries=2, show_spinner=False)
def _templates(projector: bool, _exact, _trained, _learned) -> dict:
    """The figures' templates depend on the look only: every number in them is the browser's to compute (their
    data arrays are emptied), so one set serves every MDP, seed and PVN (building them takes 0.2 s)."""
    return templates(_exact, _trained, _learned, projector)


@st.cache_data(max_entries=8, show_spinner=False)
def _cloud(seed: int, num_points: int) -> dict[str, str]:
    """The policies of the polytope's cloud (``exact_view``'s: the same seed draws the same 5,000)."""
    return _array(mdp_lib.sample_policies(np.random.default_rng(seed), num_points))
