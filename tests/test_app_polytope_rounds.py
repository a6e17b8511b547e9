"""The polytope page's active rounds through AppTest: off by default, on from the URL, computed in a quick worker
(never in the server process), played by the browser player with one frame per tenth of a round, and the
"what to look at" stating docs/results.md's rates."""

import pytest

import pvnviz.polytope.rounds
from conftest import open_link, open_page, players
from pvnviz.figures.polytope_rounds import FRAMES_PER_ROUND
from pvnviz.polytope.rounds import PolytopeRoundsConfig
from ui import polytope_rounds as rounds_view
from ui import result_store


def test_the_mode_is_off_by_default():
    at = open_page("pages/polytope.py")
    assert not at.exception, [e.value for e in at.exception]
    assert at.toggle(key="beyond").value is False
    assert "rounds" not in players(at)
    assert "beyond" not in at.query_params


def test_the_mode_turns_on_from_the_url_and_computes_in_a_worker(monkeypatch):
    def not_here(*args, **kwargs):
        raise AssertionError("the active rounds ran in the server process")

    monkeypatch.setattr(pvnviz.polytope.rounds, "active_rounds", not_here)
    at = open_link({"beyond": "true", "beyond_checks": "100 episodes"}, "pages/polytope.py")
    assert at.toggle(key="beyond").value is True
    assert at.selectbox(key="beyond_checks").value == "100 episodes"
    store, lock = result_store()
    with lock:
        keys = [k for k in store if isinstance(k, tuple) and k and k[0] == "polytope_rounds"]
    assert any(k[1].check_episodes == 100 for k in keys)  # the worker's result, cached under the page's key
    player = players(at)["rounds"]
    rounds = PolytopeRoundsConfig().num_rounds()
    assert len(player["animation"]["frames"]) == rounds * FRAMES_PER_ROUND == 70
    assert player["frame"] == 69  # opens on the last round's whole ascent
    assert "checks: 19 of 20" in player["animation"]["labels"][-1]
    text = " ".join(m.value for m in at.markdown)
    assert "Algorithm 3" in text and "Section 5" in text


def results_rows() -> dict[tuple[int, int], int]:
    """docs/results.md's beyond table: (check episodes, first seed) -> seeds near-optimal (tests re-derive it)."""
    from test_polytope_rounds import claimed_rows

    return {(episodes, seeds.start): counts[1] for episodes, seeds, counts in claimed_rows()}


def test_the_zero_shot_rates_the_page_states_are_docs_results():
    from test_polytope_rounds import claimed_rows

    zero_shot = {seeds.start: counts[0] for _, seeds, counts in claimed_rows()}
    assert rounds_view.ZERO_SHOT == (zero_shot[0], zero_shot[100])


@pytest.mark.parametrize("kind", list(rounds_view.CHECKS))
def test_the_rates_the_page_states_are_docs_results(kind):
    rows = results_rows()
    episodes = rounds_view.CHECKS[kind]
    assert rounds_view.RATES[kind] == (rows[(episodes, 0)], rows[(episodes, 100)])


@pytest.fixture(scope="module")
def beyond_runs(tmp_path_factory):
    """Polytope runs written by the CLI: a beyond run the page holds (seed 3, 100-episode checks), one it cannot
    (a budget of 7 checks), and a zero-shot run."""
    from pvnviz.cli.main import main

    root = tmp_path_factory.mktemp("polytope-beyond") / "runs"
    runs = {
        "beyond": ["--preset", "beyond", "--episodes", "100"],
        "budget": ["--preset", "beyond", "--checks", "7"],
        "zero-shot": [],
    }
    for name, extra in runs.items():
        assert main(["run", "polytope", "--seed", "3", "--out", str(root / name), "--quiet", *extra]) == 0
    return root


def test_a_saved_beyond_run_opens_with_its_rounds(beyond_runs, monkeypatch):
    import json

    from pvnviz.polytope.rounds import ROUNDS_FILE, rounds_from_dict

    monkeypatch.setenv("PVN_RUNS_ROOTS", str(beyond_runs))
    at = open_page("pages/polytope.py")
    at.selectbox(key="polytope_run").set_value("runs/beyond").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.toggle(key="beyond").value is True and at.selectbox(key="beyond_checks").value == "100 episodes"
    assert at.number_input(key="seed").value == 3
    saved = rounds_from_dict(json.loads((beyond_runs / "beyond" / ROUNDS_FILE).read_text()))
    labels = players(at)["rounds"]["animation"]["labels"]
    assert len(labels) == len(saved.rounds) * FRAMES_PER_ROUND
    text = " ".join(m.value for m in at.markdown)
    assert f"its exact J is {saved.best_exact_J:.3f}" in text
    store, lock = result_store()
    with lock:  # the page played the run's rounds.json: no worker computed them again (its seconds would differ)
        held = [v for k, v in store.items() if k[:1] == ("polytope_rounds",) and k[2] == 3 and k[1].check_episodes]
    assert [r.seconds for r in held] == [saved.seconds]
    assert "active rounds (100 episodes checks) play below" in " ".join(i.value for i in at.info)

    at.selectbox(key="polytope_run").set_value("runs/budget").run()
    assert "its max_checks is 7" in " ".join(e.value for e in at.error)

    at.selectbox(key="polytope_run").set_value("runs/zero-shot").run()
    assert at.toggle(key="beyond").value is False and "rounds" not in players(at)
