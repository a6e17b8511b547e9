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
