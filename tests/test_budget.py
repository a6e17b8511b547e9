"""The environment steps a run spends beyond its dataset (``pvnviz.runs.budget``), by hand: a CartPole return is
its episode's length, a Swimmer episode always runs the horizon; the cap and one round at its most."""

import numpy as np

from pvnviz.runs.budget import env_steps


def test_env_steps_counts_cartpole_lengths_and_swimmer_horizons():
    assert env_steps("cartpole", np.array([[10.0, 20.0], [30.0, 5.5]]), 4, 100) == 4 * 65.5
    assert env_steps("swimmer", np.zeros((3, 5)), 2, 1000) == 30_000
