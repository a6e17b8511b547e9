"""The environment pages' sections beyond the paper: honest Algorithm 3 (its chosen iterates re-measured on fresh
episodes), the ensemble's disagreement along the ascent, and the same-budget comparison with random search."""

from __future__ import annotations

import streamlit as st

from pvnviz.figures import experiment as figs
from pvnviz.runs.pipeline import ExperimentResult
from ui import what_to_look_at
from ui.components import chart, result_figure


def render_beyond(result: ExperimentResult) -> None:
    """Honest Algorithm 3 (fresh re-measurement) and, for an ensemble, its disagreement along the ascent: per PVN
    its fresh figure beside its disagreement figure; without an ensemble, the PVNs' fresh figures side by side (one
    alone fills the row)."""
    shown = [(m, t) for m, t in result.traces.items() if t.fresh_returns is not None or t.disagreement is not None]
    if any(trace.disagreement is not None for _, trace in shown):
        for mode, trace in shown:
            left, right = st.columns(2)
            if trace.fresh_returns is not None:
                _fresh(result, mode, trace, left)
            if trace.disagreement is not None:
                _disagreement(result, mode, trace, right)
        return
    for row in range(0, len(shown), 2):
        pair = shown[row : row + 2]
        for column, (mode, trace) in zip(st.columns(len(pair)), pair):
            _fresh(result, mode, trace, column)


def _fresh(result: ExperimentResult, mode: str, trace, column) -> None:
    """The ``mode`` PVN's chosen iterates, selection estimate against fresh episodes, in ``column``."""
    from pvnviz.figures import beyond

    env = result.config.env_name
    label = figs.MODE_LABEL[mode]
    fresh = result_figure(result, ("fresh", mode), lambda: beyond.fresh_figure(trace, label))
    chart(fresh, f"{env}-fresh-{mode}", column, key=f"{env}_fresh_{mode}")
    with column:
        what_to_look_at(
            f"{label}. Hatched: where each start began (its first Monte Carlo check"
            f"{'; the starts are the dataset’s best policies' if trace.start_counts else ''}). Algorithm 3 keeps "
            "each start's iterate with the best check; that check is the maximum of noisy estimates, so it "
            "overstates the policy (grey). Blue re-measures the same policy on fresh episodes that played no part "
            "in choosing it: the honest number."
        )


def _disagreement(result: ExperimentResult, mode: str, trace, column) -> None:
    """The ensemble's disagreement along the ``mode`` PVN's ascent, in ``column``."""
    from pvnviz.figures import beyond

    ens = result.ensembles.get(mode)
    spread = ens.val_spread if ens else None
    chart(
        result_figure(result, ("disagreement", mode), lambda: beyond.disagreement_figure(trace, spread)),
        f"{result.config.env_name}-disagreement-{mode}",
        column,
        key=f"{result.config.env_name}_disagree_{mode}",
    )
    with column:
        what_to_look_at(
            "Section 5: the ascent may leave the region the PVN's data covers. Bootstrapped PVNs agree "
            "where data is dense; their spread rising above the held-out level (dashed) marks the ascent "
            "walking out of the data; diamonds are the iterates Algorithm 3 chose."
        )


def render_budget(name: str, text: str, env_title: str, y_range: tuple | None) -> None:
    """The shipped same-budget comparison ``data/<name>`` (``pvnviz.baselines.compare``), with its explanation."""
    from pvnviz.baselines.compare import load_rows
    from pvnviz.figures.beyond import budget_figure
    from pvnviz.runs.store import REPO_ROOT

    st.subheader("The same budget for random search (beyond the paper)")
    try:
        rows = load_rows(REPO_ROOT / "data" / name)
    except (OSError, ValueError) as err:
        st.warning(f"The shipped comparison cannot be read: {err}")
        return
    chart(budget_figure(rows, env_title, y_range), name.removesuffix(".jsonl"))
    what_to_look_at(text)
