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


def test_the_page_opens_on_the_papers_setting_with_no_warning_and_beyond_one_click_away():
    """A bare visit shows the shipped run of Appendix B's 2000 policies at the paper's 10 M steps, with nothing
    the visitor did not cause in a warning (Run is off for this preset: a caption says why); one click shows the
    Beyond run."""
    at = open_page("pages/swimmer.py")
    assert not at.exception and not at.warning and not at.error, [w.value for w in at.warning]
    assert at.selectbox(key="swimmer_preset").value == "budget-2000x5"
    assert at.query_params["swimmer_preset"] == "budget-2000x5"
    assert "data/swimmer-budget-2000x5" in _texts(at)
    assert any("within a policy" in m.label for m in at.metric)  # 5 rollouts a policy
    assert any("Too big to run live" in c.value for c in at.caption)  # why Run is off, said quietly
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any(t.startswith("Fig. 5 at a glance") for t in titles), titles  # Fig. 5's point, the shipped runs
    beyond = next(b for b in at.button if b.label.startswith("Show Beyond zero-shot"))
    beyond.click().run()
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    assert at.selectbox(key="swimmer_preset").value == "beyond"
    assert "data/swimmer-beyond" in _texts(at)
    assert not any("within a policy" in m.label for m in at.metric)  # the beyond run has 1 rollout a policy
    assert "1 rollouts" not in _texts(at)
    assert not any(b.label.startswith("Show Beyond zero-shot") for b in at.button)  # shown: no button for it


def test_swimmer_replay_opens_on_the_best_start():
    at = open_page("pages/swimmer.py")
    best = load_result("data/swimmer-budget-2000x5", "swimmer").traces["fingerprint"].best_returns
    assert players(at)["swimmer_replay"]["choice"] == {"mode": 0, "start": int(np.argmax(best))}
    assert at.query_params["swimmer_replay_start"] == str(int(np.argmax(best)) + 1)


def test_the_shipped_swimmer_comparison_is_drawn_on_the_swimmer_page():
    """Seeds 40-41 of `python -m pvnviz.cli.compare --env swimmer`: ARS gets the larger PVN budget, no more."""
    from pvnviz.baselines.compare import load_rows

    rows = load_rows(Path(__file__).resolve().parents[1] / "data" / "swimmer-compare.jsonl")
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
