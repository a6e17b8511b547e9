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


def test_log_probability_fingerprints_are_the_log_of_the_probabilities():
    rng = np.random.default_rng(2)
    probes = initial_probes(20, 4, "noise", rng)
    params = torch.from_numpy(glorot_params(ARCH, 6, rng))
    probs = Fingerprint(ARCH, probes)(params).detach().numpy()
    logs = Fingerprint(ARCH, probes, outputs="log_probabilities")(params).detach().numpy()
    np.testing.assert_allclose(logs, np.log(probs), rtol=1e-5, atol=1e-6)


def test_log_probabilities_tell_apart_policies_whose_probabilities_are_saturated():
    """Two policies that take the same action at every probe with probability 1 to float32's precision: their
    probability fingerprints are equal and have no gradient in the parameters; their log-probability
    fingerprints differ, and do."""
    rng = np.random.default_rng(3)
    probes = initial_probes(20, 4, "noise", rng)
    linear = PolicyArch(4, 2, (), True)  # logits = obs @ W + b: the action margin is set by the bias alone
    sure = np.zeros((2, linear.num_params), dtype=np.float32)
    sure[:, -2:] = [[60.0, -60.0], [80.0, -80.0]]  # margins 120 and 160: softmax is exactly (1, 0) in float32
    for outputs, differ in (("probabilities", False), ("log_probabilities", True)):
        fingerprint = Fingerprint(linear, probes, outputs=outputs)
        params = torch.from_numpy(sure).requires_grad_(True)
        fp = fingerprint(params)
        assert np.isfinite(fp.detach().numpy()).all()
        assert (not torch.equal(fp[0], fp[1])) is differ
        fp.sum().backward()
        assert (params.grad.abs().sum().item() > 0) is differ


def test_log_probabilities_leave_a_continuous_policys_actions_as_they_are():
    arch = PolicyArch(8, 2, (30,), False)
    rng = np.random.default_rng(4)
    probes = initial_probes(10, 8, "noise", rng)
    params = torch.from_numpy(glorot_params(arch, 3, rng))
    actions = Fingerprint(arch, probes)(params)
    assert torch.equal(Fingerprint(arch, probes, outputs="log_probabilities")(params), actions)


def test_an_unknown_fingerprint_output_is_refused():
    with pytest.raises(ValueError, match="outputs must be one of"):
        Fingerprint(ARCH, np.zeros((2, 4), dtype=np.float32), outputs="logits")
