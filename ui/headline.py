"""A run's headline on the environment pages: the dataset's best kept policy against each PVN's ascent (Fig. 4's
comparison), the ascent as the mean over the starts and, beside it, Algorithm 3's answer: the one policy
``return argmax_theta(Theta)`` returns (``pvnviz.core.ascent.returned_start``), on fresh episodes."""

from __future__ import annotations

import streamlit as st

from pvnviz.core.ascent import returned_start
from pvnviz.figures import ascent as ascent_figs
from pvnviz.figures import experiment as figs


def render_headline(summary: dict) -> None:
    """The headline numbers: the dataset's best kept policy against each PVN's ascent."""
    cols = st.columns(4)
    cols[0].metric("Policies kept / collected", f"{summary['num_kept']} / {summary['num_policies']}")
    best, label = ascent_figs.kept_best_line(summary)
    dataset = summary["kept_best_mean_return"]
    cols[1].metric(
        label.capitalize(),
        f"{best:.1f}",
        help=f"Its return in the dataset: {dataset:.1f}"
        + ("" if best == dataset else " (the luckiest of its measurements; re-measured on fresh episodes here)"),
    )
    for col, (mode, values) in zip(cols[2:], summary["inputs"].items()):
        # Headline: the chosen iterates re-measured on fresh episodes (honest Algorithm 3), when the run has them.
        headline = values.get("fresh_mean_return", values["best_mean_return"])
        col.metric(  # a long label wraps (ui.look)
            f"Ascent best, {figs.MODE_LABEL[mode]}" + (", fresh episodes" if "fresh_mean_return" in values else ""),
            f"{headline:.1f}",
            delta=f"{headline - best:+.1f} vs best kept",
            help=f"Selection estimate (the checks that chose each start's iterate): {values['best_mean_return']:.1f}. "
            + returned_note(values)
            + f"Env steps beyond the dataset (Algorithm 3's checks {values['check_env_steps']:,}, the rounds' "
            f"perturbations {values['explore_env_steps']:,}): "
            f"{values['beyond_dataset_fraction']:.1%} of the dataset's.",
        )
    line = answers_line(summary)
    if line:
        st.caption(line)


def answers_line(summary: dict) -> str:
    """Under the headline: Algorithm 3's answer of each PVN (its one returned policy, on fresh episodes) beside
    the metrics' mean over the starts, or "" where no input has one (no fresh re-measurement, or one start)."""
    answers = []
    for mode, values in summary["inputs"].items():
        fresh, chosen = values.get("fresh_return_per_start") or [], values.get("best_return_per_start") or []
        if len(fresh) == len(chosen) >= 2:
            k = returned_start(chosen)
            answers.append(f"{figs.MODE_LABEL[mode]} {fresh[k]:.1f} (start {k + 1})")
    if not answers:
        return ""
    starts = len(next(iter(summary["inputs"].values())).get("fresh_return_per_start") or [])
    return (
        f"The ascent metrics are the mean over the {starts} starts. Algorithm 3 returns one policy, the start whose "
        f"chosen iterate scored highest: {', '.join(answers)}, on fresh episodes."
    )


def returned_note(values: dict) -> str:
    """One sentence on Algorithm 3's answer (``returned_start``) from a summary's per-input numbers, or "" where
    the run has no fresh re-measurement or a single start."""
    fresh, chosen = values.get("fresh_return_per_start") or [], values.get("best_return_per_start") or []
    if len(fresh) != len(chosen) or len(chosen) < 2:
        return ""
    k = returned_start(chosen)
    return (
        f"Algorithm 3 returns one policy, the start whose chosen iterate scored highest (start {k + 1}): "
        f"{fresh[k]:.1f} on fresh episodes. "
    )
