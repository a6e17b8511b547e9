"""Surveys over seeds (``pvnviz.polytope.survey``) give the same ends in worker processes as in this one."""

from __future__ import annotations

import pytest

from pvnviz.core.seed_map import seed_map
from pvnviz.polytope.experiment import PolytopeConfig
from pvnviz.polytope.rounds import PolytopeRoundsConfig
from pvnviz.polytope.survey import beyond_survey, survey


@pytest.mark.slow
def test_a_survey_over_processes_is_the_survey_here():
    """Seeds 0-7 both ways: every end equal, field by field, in seed order (spawned processes import pvnviz
    first, so they compute with the same pinned kernels)."""
    assert survey(PolytopeConfig(), range(8), processes=2) == survey(PolytopeConfig(), range(8), processes=1)
    config = PolytopeRoundsConfig(check_episodes=10)
    assert beyond_survey(config, range(4), processes=2) == beyond_survey(config, range(4), processes=1)


def test_few_seeds_stay_in_this_process():
    seen = []
    assert seed_map(lambda config, seed: seen.append(seed) or seed * 2, None, range(3), processes=2) == [0, 2, 4]
    assert seen == [0, 1, 2]  # a lambda cannot cross to another process: run here
