"""Algorithm 3's answer (``pvnviz.core.ascent.returned_start``): the paper's Algorithm 3 ends with
``return argmax_theta(Theta)``, the one policy of the A starts' chosen iterates whose check scored highest. A
run's numbers give it, its fresh re-measurement stays apart from the choice, and the CLI and the page name it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pvnviz.cli.headline import headline
from pvnviz.core.ascent import AscentTrace, returned_start
from ui.headline import answers_line, returned_note

ROOT = Path(__file__).resolve().parents[1]


def test_the_highest_check_wins_ties_go_to_the_first_start_and_fresh_plays_no_part():
    assert returned_start([80.0, 95.0, 90.0]) == 1
    assert returned_start([100.0, 99.0, 100.0, 100.0]) == 0
    assert returned_start(np.array([3.0])) == 0


def test_a_trace_returns_the_start_its_pooled_checks_rank_highest():
    """Start 0's iterate checked 100 then re-measured 60 (pooled 80), start 1's checked 90 twice (pooled 90):
    pooled, Algorithm 3 returns start 1; on single checks, start 0's lucky 100."""
    params = np.array([[[0.0], [5.0]], [[1.0], [6.0]], [[1.0], [6.0]]], dtype=np.float32)
    returns = np.array([[10.0, 10.0], [100.0, 90.0], [60.0, 90.0]])
    pooled = AscentTrace("fingerprint", np.arange(3), returns, np.zeros((3, 2)), params, 0.0, pool_checks=True)
    single = AscentTrace("fingerprint", np.arange(3), returns, np.zeros((3, 2)), params, 0.0)
    assert pooled.best_returns.tolist() == [80.0, 90.0] and pooled.returned_start == 1
    assert single.best_returns.tolist() == [100.0, 90.0] and single.returned_start == 0


def test_the_cli_and_the_page_name_the_returned_start_and_its_fresh_return():
    summary = json.loads((ROOT / "data" / "cartpole-beyond" / "summary.json").read_text())
    numbers = summary["inputs"]["fingerprint"]
    k = returned_start(numbers["best_return_per_start"])
    fresh = numbers["fresh_return_per_start"][k]
    said = f"Algorithm 3 returns start {k + 1}'s policy: {fresh:.1f} on fresh episodes"
    assert said in "\n".join(headline("cartpole", "beyond", 0, summary, "x"))
    assert f"(start {k + 1}): {fresh:.1f} on fresh episodes" in returned_note(numbers)
    assert returned_note({**numbers, "fresh_return_per_start": []}) == ""  # no fresh re-measurement: no sentence


def test_the_line_under_the_headline_names_each_pvns_answer():
    """The shipped beyond run's line under the headline metrics (the starts' mean): each PVN's returned start and
    its fresh return; a summary without per-start numbers gets no line. tests/test_app_cartpole.py finds it on the
    page."""
    summary = json.loads((ROOT / "data" / "cartpole-beyond" / "summary.json").read_text())
    said = []
    for label, mode in (("fingerprint PVN", "fingerprint"), ("flattened-weights PVN", "flattened")):
        numbers = summary["inputs"][mode]
        k = returned_start(numbers["best_return_per_start"])
        said.append(f"{label} {numbers['fresh_return_per_start'][k]:.1f} (start {k + 1})")
    line = answers_line(summary)
    assert f"chosen iterate scored highest: {', '.join(said)}, on fresh episodes." in line
    assert "the mean over the 5 starts" in line
    bare = {mode: {"best_mean_return": 1.0} for mode in summary["inputs"]}
    assert answers_line({**summary, "inputs": bare}) == ""
