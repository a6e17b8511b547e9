"""The Swimmer page through Streamlit's AppTest: the spread within a policy, the replay's opening start, the
shipped budget comparison."""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from conftest import figures, open_page, players
from pvnviz.runs.files import load_result

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it


def _texts(at: AppTest) -> str:
    return " ".join(e.value for kind in ("caption", "info", "warning", "markdown") for e in at.get(kind))


def test_swimmer_spread_within_a_policy_only_with_several_rollouts():
    at = open_page("pages/swimmer.py")
    labels = [m.label for m in at.metric]
    assert not any("within a policy" in label for label in labels)  # the shipped beyond run has 1 rollout
    assert "1 rollouts" not in _texts(at)
    at.selectbox(key="swimmer_preset").set_value("budget-2000x5").run()
    assert any("within a policy" in m.label for m in at.metric)
    assert "data/swimmer-paper" in _texts(at)


def test_swimmer_replay_opens_on_the_best_start():
    at = open_page("pages/swimmer.py")
    best = load_result("data/swimmer-beyond", "swimmer").traces["fingerprint"].best_returns
    assert players(at)["swimmer_replay"]["choice"] == {"mode": 0, "start": int(np.argmax(best))}
    assert at.query_params["swimmer_replay_start"] == str(int(np.argmax(best)) + 1)


def test_the_shipped_swimmer_comparison_is_drawn_on_the_swimmer_page():
    """Seeds 40-41 of `python -m pvnviz.cli.compare --env swimmer`: ARS gets the larger PVN budget, no more."""
    from pvnviz.cli.compare import load_rows

    rows = load_rows(Path(__file__).resolve().parents[1] / "data" / "swimmer-budget.jsonl")
    methods = {r["method"] for r in rows}
    assert methods == {"PVN budget-10000x1", "PVN beyond", "best of random policies", "ARS V1-t", "ARS V2-t"}
    assert sorted({r["seed"] for r in rows}) == [40, 41] and len(rows) == 10
    for seed in (40, 41):
        mine = {r["method"]: r["env_steps"] for r in rows if r["seed"] == seed}
        pvn = max(mine["PVN budget-10000x1"], mine["PVN beyond"])
        assert pvn <= mine["ARS V1-t"] <= pvn + 16_000 and mine["best of random policies"] == 10_000_000
    at = open_page("pages/swimmer.py")
    budget = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Swimmer: the same"))
    assert {t["name"] for t in budget["data"]} == methods
