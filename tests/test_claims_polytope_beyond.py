"""The README's polytope `beyond` row states docs/results.md's table of the active rounds (which
tests/test_polytope_rounds.py re-derives seed by seed), and the slow test re-derives the row's first count itself."""

import re
from pathlib import Path

import pytest
from test_polytope_rounds import claimed_rows

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def row() -> str:
    (found,) = [line for line in README.splitlines() if line.startswith("| Active rounds on the polytope")]
    return found


def test_the_readme_row_states_the_exact_rows_of_docs_results():
    rows = {(episodes, seeds.start): counts for episodes, seeds, counts in claimed_rows()}
    low, high = rows[(0, 0)], rows[(0, 100)]
    text = row()
    assert f"on {low[1]} of seeds 0-23 and {high[1]} of seeds 100-199" in text
    assert f"(zero-shot: {low[0]} and {high[0]})" in text
    assert f"{low[3]} checks each" in text and high[3] == low[3]
    assert re.search(r"within 0\.05 of the optimum's J", text)


@pytest.mark.slow
def test_the_rounds_on_seeds_0_23_end_near_the_optimum_as_the_row_says():
    from pvnviz.polytope.rounds import PolytopeRoundsConfig
    from pvnviz.polytope.survey import beyond_survey

    result = beyond_survey(PolytopeRoundsConfig(), range(24))
    assert f"on {len(result.near_optimal)} of seeds 0-23" in row()
    assert {end.checks_spent for end in result.ends} == {19}
