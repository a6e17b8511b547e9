"""The environment pages' sections beyond the paper: honest Algorithm 3 (its chosen iterates re-measured on fresh
episodes), the ensemble's disagreement along the ascent, and the same-budget comparison with random search."""

from __future__ import annotations

import streamlit as st

from pvnviz.figures import experiment as figs
from pvnviz.runs.pipeline import ExperimentResult
from ui import what_to_look_at
from ui.components import chart, result_figure


def render_beyond(result: ExperimentResult) -> None:
    """Honest Algorithm 3 (fresh re-measurement) and, for an ensemble, its disagreement along the ascent."""
    from pvnviz.figures import beyond

    for mode, trace in result.traces.items():
        if trace.fresh_returns is None and trace.disagreement is None:
            continue
        left, right = st.columns(2)
        env = result.config.env
        fresh = result_figure(result, ("fresh", mode), lambda trace=trace: beyond.fresh_figure(trace))
        chart(fresh, f"{env}-fresh-{mode}", left, key=f"{env}_fresh_{mode}")
        with left:
            what_to_look_at(
                f"{figs.MODE_LABEL[mode]}. Hatched: where each start began (its first Monte Carlo check"
                f"{'; the starts are the dataset’s best policies' if trace.start_counts else ''}). Algorithm 3 keeps "
                "each start's iterate with the best check; that check is the maximum of noisy estimates, so it "
                "overstates the policy (grey). Blue re-measures the same policy on fresh episodes that played no part "
                "in choosing it: the honest number."
            )
        if trace.disagreement is not None:
            ens = result.ensembles.get(mode)
            spread = ens.val_spread if ens else None

            def disagreement(trace=trace, spread=spread):
                return beyond.disagreement_figure(trace, spread)

            chart(
                result_figure(result, ("disagreement", mode), disagreement),
                f"{result.config.env}-disagreement-{mode}",
                right,
                key=f"{result.config.env}_disagree_{mode}",
            )
            with right:
                what_to_look_at(
                    "Section 5: the ascent may leave the region the PVN's data covers. Bootstrapped PVNs agree "
                    "where data is dense; their spread rising above the held-out level (dashed) marks the ascent "
                    "walking out of the data; diamonds are the iterates Algorithm 3 chose."
                )


def render_budget(name: str, text: str, env_title: str, y_range: tuple | None) -> None:
    """The shipped same-budget comparison ``data/<name>`` (``python -m pvnviz.cli.compare``), with its explanation."""
    from pvnviz.cli.compare import load_rows
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
