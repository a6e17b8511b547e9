"""Network fingerprinting (``pvnviz.core.fingerprint``): a policy's fingerprint is its output at the probing
states, against the NumPy forward pass."""

import dataclasses

import numpy as np
import pytest
import torch

from pvnviz.core.fingerprint import Fingerprint, initial_probes
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import PolicyArch, forward_numpy, glorot_params

ARCH = PolicyArch(4, 2, (30,), True)


def test_fingerprint_is_the_policy_output_at_the_probes():
    rng = np.random.default_rng(1)
    probes = initial_probes(20, 4, "noise", rng)
    params = glorot_params(ARCH, 6, rng)
    fp = Fingerprint(ARCH, probes)(torch.from_numpy(params)).detach().numpy()
    assert fp.shape == (6, 40)
    expected = forward_numpy(ARCH, params, np.broadcast_to(probes, (6, 20, 4))).reshape(6, 40)
    np.testing.assert_allclose(fp, expected, rtol=1e-5, atol=1e-6)


def test_bounds_probes_are_uniform_in_finite_bounds_and_normal_elsewhere():
    """Pendulum-like bounds on two coordinates, CartPole-like "none" (float32's largest value, or inf) on the
    others: each bounded coordinate fills its interval evenly (a quarter of the draws in each quarter), the
    others look like N(0, 1)."""
    big = np.finfo(np.float32).max
    low = np.array([-1.0, -8.0, -big, -np.inf])
    high = np.array([1.0, 8.0, big, np.inf])
    probes = initial_probes(20_000, 4, "bounds", np.random.default_rng(0), bounds=(low, high))
    assert probes.shape == (20_000, 4) and probes.dtype == np.float32
    for d in (0, 1):
        assert low[d] <= probes[:, d].min() and probes[:, d].max() <= high[d]
        quarters = np.histogram(probes[:, d], bins=4, range=(low[d], high[d]))[0] / 20_000
        np.testing.assert_allclose(quarters, 0.25, atol=0.015)
    for d in (2, 3):
        assert abs(probes[:, d].mean()) < 0.03 and abs(probes[:, d].std() - 1) < 0.03
        assert np.abs(probes[:, d]).max() < 6


def test_bounds_probes_need_bounds():
    with pytest.raises(ValueError, match="needs the observation space's bounds"):
        initial_probes(3, 2, "bounds", np.random.default_rng(0))


def test_a_run_with_bounds_probes_starts_them_in_its_environments_bounds():
    """`--set probe_init=bounds` on Pendulum-v1 (observation bounds [1, 1, 8]): the PVN's probes start inside."""
    from pvnviz.runs.pipeline import ExperimentConfig, build_pvn
    from pvnviz.runs.presets import presets_for

    config = dataclasses.replace(presets_for("gym:Pendulum-v1")["quick"](), probe_init="bounds")
    bins = ReturnBins.from_returns(np.linspace(-1500.0, 0.0, 50), config.num_bins)
    probes = build_pvn(config, bins, "fingerprint", seed=0).fingerprint.probes.detach().numpy()
    assert isinstance(config, ExperimentConfig) and probes.shape == (config.num_probes, 3)
    assert np.all(np.abs(probes) <= [1, 1, 8]) and probes[:, 2].std() > 2  # spread over [-8, 8], not N(0, 1)
