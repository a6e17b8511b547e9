"""The experiment settings in the sidebar (CartPole, Swimmer): preset, every field, bound to the URL.

A link carries the preset's id (``?cartpole_preset=quick``) and only the fields that differ from it:
every field's widget default is the preset's value, and the preset is read from the URL before any
widget exists, so a fresh tab rebuilds the same settings. The preset box shows labels
(``pvnviz.runs.presets.PRESET_LABELS``); Streamlit would put a bound box's label in the URL, so this
module writes the id there itself. "Reset to the paper" restores the page's paper preset and seed.

A number field's range is checked when its value is entered: a value in range is applied, one out of it is
refused whole (the field, the URL and the run shown keep the last valid value) with a message stating the range.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import streamlit as st

from pvnviz.core.config_fields import ConfigError, help_text
from pvnviz.runs.config import PROBE_INITS, START_FROM
from pvnviz.runs.pipeline import ExperimentConfig
from pvnviz.runs.presets import preset_from_link, preset_label, presets_for
from ui import urlcheck
from ui.navigation import set_by_code, widget_default

# (config field, label, kind, extra widget kwargs); kind: int, float, bool, select, layers
FIELDS = [
    (
        "Dataset (Appendix C)",
        [
            ("num_policies", "Policies K", "int", dict(min_value=2, max_value=20000, step=50)),
            ("num_episodes", "Rollouts per policy B", "int", dict(min_value=1, max_value=1000, step=5)),
            ("horizon", "Horizon", "int", dict(min_value=0, max_value=5000, step=50)),
            ("return_limit", "Training-set limit (blank: none)", "optfloat", {}),
            ("policy_hidden", "Policy hidden layers (e.g. 30 or 64,64; blank: linear)", "layers", {}),
        ],
    ),
    (
        "PVN (Sections 3-4, Appendix B)",
        [
            ("num_bins", "Return bins m", "int", dict(min_value=0, max_value=201, step=1)),
            ("num_probes", "Probing states n", "int", dict(min_value=0, max_value=200, step=1)),
            ("train_probes", "Train the probing states", "bool", {}),
            ("probe_init", "Probe initialisation", "select", dict(options=list(PROBE_INITS))),
            ("pvn_hidden", "PVN hidden layers", "layers", {}),
            ("temperature", "Softmax temperature", "float", dict(min_value=0.01, max_value=100.0, step=0.5)),
            (
                "learning_rate",
                "PVN learning rate (Adam)",
                "float",
                dict(min_value=1e-5, max_value=1.0, step=0.001, format="%.4f"),
            ),
            ("train_steps", "Training steps", "int", dict(min_value=1, max_value=50000, step=100)),
            ("batch_size", "Batch size", "int", dict(min_value=1, max_value=1024, step=1)),
            ("val_fraction", "Validation share", "float", dict(min_value=0.05, max_value=0.9, step=0.05)),
        ],
    ),
    (
        "Gradient ascent (Section 5)",
        [
            ("num_starts", "Starting policies A", "int", dict(min_value=1, max_value=100, step=1)),
            ("start_from", "Ascent starts", "select", dict(options=list(START_FROM))),
            ("ascent_steps", "Ascent steps T", "int", dict(min_value=0, max_value=10000, step=50)),
            (
                "ascent_learning_rate",
                "Ascent learning rate (Adam)",
                "float",
                dict(min_value=1e-5, max_value=1.0, step=0.0005, format="%.4f"),
            ),
            ("eval_every", "Score every k steps", "int", dict(min_value=1, max_value=1000, step=5)),
            ("eval_episodes", "Rollouts per score", "int", dict(min_value=1, max_value=1000, step=5)),
        ],
    ),
]


def _to_widget(kind: str, value):
    if kind == "layers":
        return ",".join(str(v) for v in value)
    if kind == "optfloat":
        return "" if value is None else f"{value:g}"
    return value


def _from_widget(kind: str, value, name: str):
    if kind == "layers":
        try:
            return tuple(int(v) for v in str(value).replace(" ", "").split(",") if v)
        except ValueError:
            message = f"{name}: write layer sizes as whole numbers separated by commas, e.g. 30 or 64,64."
            raise ConfigError(message) from None
    if kind == "optfloat":
        text = str(value).strip()
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{name}: write a number, or leave it blank for no limit.") from None
    return value


PRESET_CONFIGS: dict[str, dict[str, ExperimentConfig]] = {}  # env -> preset id -> config, to name a result


def field_range(kind: str, kwargs: dict) -> tuple[float, float] | None:
    """A number field's (lowest, highest) value, or None for a field that is no number."""
    return (kwargs["min_value"], kwargs["max_value"]) if kind in ("int", "float") else None


def range_text(kind: str, lo: float, hi: float) -> str:
    """'a whole number from 2 to 20,000', 'a number from 0.05 to 0.9'."""
    return f"a whole number from {lo:,} to {hi:,}" if kind == "int" else f"a number from {lo:g} to {hi:g}"


def in_range(kind: str, value, lo: float, hi: float) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    return lo <= value <= hi and (kind != "int" or float(value).is_integer())


def _shown(kind: str, value) -> str:
    return f"{value:,}" if kind == "int" and isinstance(value, int) else f"{value:g}"


def _valid_key(key: str) -> str:
    return f"_{key}_valid"  # the field's last value in range: what a refused value goes back to


def _refused_key(env_name: str) -> str:
    return f"_{env_name}_refused"  # the message naming the value last refused (shown once)


def _reseated_key(env_name: str) -> str:
    return f"_{env_name}_refused_reseated"  # the run after a refusal, whose fields have their defaults again


def _check_field(env_name: str, field: str, label: str, kind: str, lo: float, hi: float) -> None:
    """A number field's on_change (Enter, or leaving the field): a value in range is applied; one out of it is
    refused whole: the field, the URL and the run shown keep the last valid value, and the page says the range."""
    key = state_key(env_name, field)
    value = st.session_state.get(key)
    if in_range(kind, value, lo, hi):
        st.session_state.pop(_refused_key(env_name), None)
        return
    kept = st.session_state.get(_valid_key(key))
    st.session_state[_refused_key(env_name)] = (
        f"{label}: {_shown(kind, value)} was not applied; enter {range_text(kind, lo, hi)}."
        + ("" if kept is None else f" The settings keep {_shown(kind, kept)}.")
    )
    if kept is not None:
        set_by_code(key, kept)  # the field then takes no default of its own in the next run


def _drop_links_out_of_range(env_name: str) -> None:
    """Link values out of a number field's range leave the URL before any field reads them, then the page reruns
    (Streamlit seeds the fields from the run's query string): each field takes the preset's value, and
    ``ui.urlcheck`` names the link's value with the one used instead."""
    dropped = False
    for _, fields in FIELDS:
        for field, _, kind, kwargs in fields:
            key, limits = state_key(env_name, field), field_range(kind, kwargs)
            text = st.query_params.get(key)
            if limits is None or text is None or key in st.session_state:
                continue
            try:
                value = float(text)
            except ValueError:
                continue  # not a number: the field refuses it itself, and ui.urlcheck names it
            if not in_range(kind, int(value) if kind == "int" and value.is_integer() else value, *limits):
                del st.query_params[key]
                dropped = True
    if dropped:
        st.rerun()


def state_key(env_name: str, field: str) -> str:
    """An environment page's name for ``field`` in ``st.session_state`` (and, for a bound widget, the URL)."""
    return f"{env_name}_{field}"


def _apply_preset(env_name: str) -> None:
    """Every field to the preset in the preset box. Each widget's default is that preset's value, so Streamlit
    takes the value out of the URL: a link holds only the fields that differ from its preset."""
    config = presets_for(env_name)[st.session_state[state_key(env_name, "preset")]]()
    for _, fields in FIELDS:
        for field, _, kind, _ in fields:
            st.session_state[state_key(env_name, field)] = _to_widget(kind, getattr(config, field))


def _linked_preset(env_name: str) -> str | None:
    """The id of the preset the URL names, by its id or by a label that links carried before ids; else None
    (``ui.urlcheck`` names a value that is no preset)."""
    key = state_key(env_name, "preset")
    text = st.query_params.get(key)
    preset = None if text is None else preset_from_link(env_name, text)
    if preset is not None and preset != text:
        urlcheck.taken_as(key, text, preset)  # an old link: its label is taken, not reported
    return preset


def current_preset(env_name: str, default: str) -> str:
    """The id of the preset in force, read before any widget exists.

    The URL always names the preset on screen (``sidebar_config`` writes it there). A URL that names
    another preset than this session last wrote there is a link opened in a fresh tab or a step back or
    forward in the browser's history: it wins. Otherwise the preset box's value stands (it is kept across
    page switches), else the URL's, else ``default``.
    """
    linked = _linked_preset(env_name)
    if linked is not None and linked != st.session_state.get(state_key(env_name, "preset_in_url")):
        return linked
    return st.session_state.get(state_key(env_name, "preset")) or linked or default


def _name_preset_in_url(env_name: str) -> None:
    """Write the id of the preset on screen into the URL (not its label), if the URL does not hold it yet."""
    key = state_key(env_name, "preset")
    preset = st.session_state[key]
    if st.query_params.get_all(key) != [preset]:
        st.query_params[key] = preset
    st.session_state[state_key(env_name, "preset_in_url")] = preset


def reset_to_paper(env_name: str, paper: str, seed: int) -> None:
    """Callback of the reset button: the paper's preset, every field from it, the paper's seed, no saved run."""
    st.session_state[state_key(env_name, "preset")] = paper
    _apply_preset(env_name)
    st.session_state["seed"] = seed  # the page's own seed, app.py's default for it: out of the URL
    st.session_state[state_key(env_name, "run")] = ""


def choose_preset(env_name: str, preset: str) -> None:
    """Callback of a page's one-click preset button: that preset, every field from it, no saved run (the seed
    stays)."""
    st.session_state[state_key(env_name, "preset")] = preset
    _apply_preset(env_name)
    st.session_state[state_key(env_name, "run")] = ""


def _field_widget(env_name: str, base: ExperimentConfig, field: str, label: str, kind: str, kwargs: dict) -> Any:
    """One setting's widget, bound to the URL, defaulting to the preset's value (then not repeated in the URL): its
    value, and for a number the last value within its range (the settings hold only values in range)."""
    key, tip = state_key(env_name, field), help_text(ExperimentConfig, field)
    default = _to_widget(kind, getattr(base, field))
    limits = field_range(kind, kwargs)
    if limits is not None:
        # The range is checked here, not by the widget: Streamlit's box keeps a value out of its range on screen,
        # red, and never sends it, so the page would run settings it does not show.
        box = {k: v for k, v in kwargs.items() if k not in ("min_value", "max_value")}
        value = st.number_input(
            label,
            value=widget_default(key, default, "min"),
            key=key,
            help=f"{tip} Enter {range_text(kind, *limits)}.",
            bind="query-params",
            on_change=_check_field,
            args=(env_name, field, label, kind, *limits),
            **box,
        )
        if in_range(kind, value, *limits):
            st.session_state[_valid_key(key)] = value
            return value
        return st.session_state.get(_valid_key(key), default)  # not through its on_change
    if kind == "bool":
        return st.checkbox(label, value=default, key=key, help=tip, bind="query-params")
    if kind == "select":
        options = kwargs["options"]
        return st.selectbox(label, options, index=options.index(default), key=key, help=tip, bind="query-params")
    return st.text_input(label, value=default, key=key, help=tip, bind="query-params")


def sidebar_config(env_name: str, default_preset: str, paper_seed: int = 0) -> ExperimentConfig | None:
    """Preset picker (``pvnviz.runs.presets``) and every hyperparameter, bound to the URL; the config, or None
    after an st.error. ``default_preset``: the id of the preset the page opens on."""
    presets = presets_for(env_name)
    first = default_preset if default_preset in presets else next(iter(presets))
    preset_key = state_key(env_name, "preset")
    preset = current_preset(env_name, first)
    if preset_key in st.session_state and st.session_state[preset_key] != preset:
        st.session_state[preset_key] = preset  # the browser's history named another preset
    base = presets[preset]()
    PRESET_CONFIGS[env_name] = {name: make() for name, make in presets.items()}
    _drop_links_out_of_range(env_name)
    with st.sidebar:
        st.header("Experiment settings")
        st.button(
            "Reset to the paper",
            on_click=reset_to_paper,
            args=(env_name, first, paper_seed),
            help=f"Preset {preset_label(env_name, first)}, every field from it, seed {paper_seed}: the run this "
            "page opens on.",
            key=state_key(env_name, "reset"),
        )
        st.selectbox(
            "Preset",
            list(presets),
            index=list(presets).index(preset),
            format_func=lambda name: preset_label(env_name, name),
            key=preset_key,
            on_change=_apply_preset,
            args=(env_name,),
            help="Quick: results in seconds. Paper: Appendix B.",
            persist_state="session",  # as the bound fields, kept across page switches
        )
        _name_preset_in_url(env_name)
        refused = st.session_state.get(_refused_key(env_name))
        if refused and st.session_state.pop(_reseated_key(env_name), False):
            st.error(refused)
            del st.session_state[_refused_key(env_name)]
            refused = None
        changes = {}
        for title, fields in FIELDS:
            with st.expander(title, expanded=False):
                for field, label, kind, kwargs in fields:
                    changes[field] = (kind, _field_widget(env_name, base, field, label, kind, kwargs), label)
    if refused:
        # Once more, each field with the preset's value as its default again (the refused field had none in this
        # run): the URL then holds only the values that differ from the preset, as before the refusal.
        st.session_state[_reseated_key(env_name)] = True
        st.rerun()
    try:
        values = {f: _from_widget(kind, v, label) for f, (kind, v, label) in changes.items()}
        return dataclasses.replace(base, env_name=env_name, **values)
    except (ConfigError, ValueError) as err:
        st.error(f"Please change a setting: {err}")
        return None
