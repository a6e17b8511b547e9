"""The polytope page's saved runs (Section 6.1, Appendix A-B): a run written by ``pvnviz run polytope --out DIR``.

Such a run is its config.json and summary.json: the page recomputes everything it draws from the settings and
the seed. Opening one therefore sets the page's own settings to the run's (every view control, the PVN's training
settings and the sidebar's seed), so that the figures, the sidebar and the URL all say that run. A run whose
settings the page cannot hold (a hidden size, a batch size, a grid other than the page's) is refused with the
setting named. A ``--preset beyond`` run (``pvnviz.polytope.rounds``) also turns the page's Active rounds mode on
with its checks, and its rounds.json is what the page plays (put where the page looks its rounds up); one whose
rounds settings the page cannot hold (a budget, a perturbation other than the preset's) is refused the same way.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import streamlit as st

from pvnviz.core.config_fields import ConfigError
from pvnviz.polytope.experiment import PolytopeConfig
from pvnviz.polytope.rounds import ROUNDS_FILE, PolytopeRoundsConfig, config_from_dict, rounds_from_dict
from pvnviz.runs.store import RUNS_ROOTS_ENV, RunError, list_runs, read_run, resolve_run, run_roots
from ui import polytope_instrument as instrument
from ui import polytope_rounds as rounds_view
from ui import remember, result_store
from ui.navigation import set_by_code

RUN_KEY = "polytope_run"  # the sidebar's saved-run box (not in the URL: the run's settings are)
_NOTE = "_polytope_run_note"  # (kind, message) the box's callback leaves for the page to show
NO_RUN = ""
# The PVN training widgets of the page (key -> (lowest, highest, step)), as pages/polytope.py draws them.
TRAINING = {"num_policies": (4, 400, 2), "pvn_lr": (0.0001, 1.0, None), "train_steps": (100, 50000, 100)}


def page_config(base: PolytopeConfig, values: dict[str, Any]) -> PolytopeConfig:
    """The config the page computes from its training widgets and view controls (``values``, by key)."""
    trained = dataclasses.replace(
        base,
        num_policies=int(values["num_policies"]),
        num_train=int(values["num_policies"]) // 2,
        learning_rate=float(values["pvn_lr"]),
        train_steps=int(values["train_steps"]),
    )
    return instrument.config_of(trained, values)


def page_values(config: PolytopeConfig) -> dict[str, Any] | str:
    """The page's values (view controls and training widgets, by key) that make ``config``, or why the page
    cannot hold it (the setting named)."""
    values: dict[str, Any] = {
        "gamma": config.gamma,
        "d0": config.d0[0],
        "start1": config.ascent_start[0],
        "start2": config.ascent_start[1],
        "ascent_lr": config.ascent_learning_rate,
        "ascent_steps": config.ascent_steps,
        "num_policies": config.num_policies,
        "pvn_lr": config.learning_rate,
        "train_steps": config.train_steps,
    }
    for s in range(2):
        for a in range(2):
            values[f"r{s}{a}"] = config.rewards[2 * s + a]
            values[f"p{s}{a}"] = config.transitions[2 * s + a][0]
    for control in instrument.CONTROLS:
        if instrument.valid(control, values[control.key]) is None:
            return f"its {control.label} is {values[control.key]}, outside the page's {control.lo} to {control.hi}"
    for key, (lo, hi, step) in TRAINING.items():
        value = values[key]
        if not lo <= value <= hi or (step is not None and (value - lo) % step):
            return f"its {key} is {value}; the page takes {lo} to {hi}" + (f" in steps of {step}" if step else "")
    try:
        made = page_config(dataclasses.replace(config, **_fixed()), values)
    except (ConfigError, ValueError) as err:
        return str(err)
    for field in dataclasses.fields(PolytopeConfig):
        if not _close(getattr(made, field.name), getattr(config, field.name)):
            page = getattr(made, field.name)
            return f"its {field.name} is {getattr(config, field.name)!r}; this page runs {page!r} only"
    return values


def rounds_kind(config: PolytopeConfig) -> tuple[str | None, str | None]:
    """(the Checks box's option, None) of a beyond run the page can hold (every rounds setting the preset's but
    its checks, exact or of 100 or 10 episodes); (None, None) of a zero-shot run; (None, why not) otherwise."""
    if not isinstance(config, PolytopeRoundsConfig):
        return None, None
    preset = PolytopeRoundsConfig()
    for name in PolytopeRoundsConfig.NAMES:
        if name != "check_episodes" and getattr(config, name) != getattr(preset, name):
            return None, f"its {name} is {getattr(config, name)!r}; this page runs {getattr(preset, name)!r} only"
    kinds = {episodes: kind for kind, episodes in rounds_view.CHECKS.items()}
    if config.check_episodes not in kinds:
        shown = ", ".join(f"{e}" for e in kinds)
        return None, f"its check_episodes is {config.check_episodes}; this page runs {shown} only"
    return kinds[config.check_episodes], None


def _close(a: Any, b: Any) -> bool:
    """Equal, numbers to 1e-9 (a transition's second probability is 1 - the first, computed)."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, abs_tol=1e-9)
    return a == b


def _fixed() -> dict[str, Any]:
    """The settings the page holds at the paper's value (no control changes them)."""
    held = {"num_policies", "num_train", "learning_rate", "train_steps", "gamma", "rewards", "transitions", "d0"}
    held |= {"ascent_start", "ascent_learning_rate", "ascent_steps"}
    paper = PolytopeConfig()
    return {f.name: getattr(paper, f.name) for f in dataclasses.fields(PolytopeConfig) if f.name not in held}


def _open() -> None:
    """Callback of the saved-run box: the run's settings and seed become the page's; the box goes back to none."""
    name = st.session_state.get(RUN_KEY, NO_RUN)
    if not name:
        return
    st.session_state[RUN_KEY] = NO_RUN  # the page now shows the run through its own settings, in the URL
    try:
        folder = resolve_run(name)
        info = read_run(folder, "polytope")
        config = config_from_dict(info.config)
        kind, why = rounds_kind(config)
        rounds = rounds_from_dict(json.loads((folder / ROUNDS_FILE).read_text())) if kind else None
    except (RunError, ConfigError, OSError, KeyError, TypeError, ValueError) as err:
        st.session_state[_NOTE] = ("error", f"Cannot open that run: {err}")
        return
    values = page_values(config) if why is None else why
    if isinstance(values, str):
        st.session_state[_NOTE] = ("error", f"Cannot open `{name}` here: {values}.")
        return
    if kind is not None and rounds is not None:  # the run's rounds, under the key the page looks them up by
        shown = page_config(dataclasses.replace(PolytopeConfig(), **_fixed()), values)
        remember(result_store(), ("polytope_rounds", rounds_view.rounds_config(shown, kind), info.seed), rounds)
    set_by_code(rounds_view.MODE, kind is not None)
    if kind is not None:
        set_by_code(rounds_view.CHECKS_KEY, kind)
    instrument.set_controls({c.key: values[c.key] for c in instrument.CONTROLS})
    for key in TRAINING:
        set_by_code(key, values[key])
    set_by_code("seed", info.seed)
    st.query_params.pop(instrument.FRAME, None)  # the ascent's last step, where a run opens
    st.session_state[_NOTE] = (
        "info",
        f"Opened the saved run `{name}` (seed {info.seed}): every setting on this page and the sidebar's seed are "
        "now the run's, so the figures, the sidebar and this page's link all show it"
        + (f"; its active rounds ({kind} checks) play below." if kind else "."),
    )


def picker() -> None:
    """The sidebar's saved-run box (call inside ``st.sidebar``), and what the last opening said."""
    names = [NO_RUN, *list_runs("polytope")]
    st.selectbox(
        "Open a saved run",
        names,
        format_func=lambda name: "— none —" if name == NO_RUN else name,
        key=RUN_KEY,
        on_change=_open,
        help=(
            f"Polytope runs under {', '.join(r.name + '/' for r in run_roots())} (set {RUNS_ROOTS_ENV} to change), "
            "written by `python -m pvnviz run polytope --out runs/NAME`. Opening one sets this page's settings "
            "and seed to the run's."
        ),
    )
    note = st.session_state.pop(_NOTE, None)
    if note is not None:
        kind, message = note
        (st.error if kind == "error" else st.info)(message)
