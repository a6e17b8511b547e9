"""Histograms, fingerprints and the PVN: KL against scipy, autograd against finite differences, learning."""

import numpy as np
import pytest
import torch
from scipy.stats import entropy

from pvnviz.core.ensemble import PVNEnsemble, train_ensemble
from pvnviz.core.fingerprint import Fingerprint, initial_probes
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import PolicyArch, forward_numpy, glorot_params
from pvnviz.core.pvn import PVN, kl_loss

ARCH = PolicyArch(4, 2, (30,), True)


def train_one(model: PVN, **kwargs):
    """Algorithm 2 for one PVN, the paper's: the ensemble of one."""
    return train_ensemble(PVNEnsemble([model]), **kwargs).summary


def test_bins_pmf_and_expectation():
    bins = ReturnBins(0.0, 100.0, 41)
    assert bins.width == pytest.approx(100 / 41)
    assert bins.midpoints[0] == pytest.approx(bins.width / 2) and bins.midpoints[-1] == pytest.approx(
        100 - bins.width / 2
    )
    returns = np.array([[0.0, 100.0, 50.0, 50.0], [10.0, 10.0, 10.0, 10.0]])
    pmf = bins.pmf(returns)
    np.testing.assert_allclose(pmf.sum(1), 1.0)
    assert pmf[0, 0] == 0.25 and pmf[0, -1] == 0.25 and pmf[0, 20] == 0.5  # G_max is in the last bin
    assert bins.expected(pmf[1]) == pytest.approx(bins.midpoints[bins.index(10.0)])
    with pytest.raises(ValueError, match="num_bins"):
        ReturnBins(0, 1, 0)


def test_kl_loss_matches_scipy():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(7), size=5)
    p[0, 2] = 0.0
    p[0] /= p[0].sum()
    q = rng.dirichlet(np.ones(7), size=5)
    ours = kl_loss(torch.tensor(p), torch.tensor(np.log(q))).item()
    assert ours == pytest.approx(np.mean([entropy(p[i], q[i]) for i in range(5)]), rel=1e-10)


def test_fingerprint_is_the_policy_output_at_the_probes():
    rng = np.random.default_rng(1)
    probes = initial_probes(20, 4, "noise", rng)
    params = glorot_params(ARCH, 6, rng)
    fp = Fingerprint(ARCH, probes)(torch.from_numpy(params)).detach().numpy()
    assert fp.shape == (6, 40)
    expected = forward_numpy(ARCH, params, np.broadcast_to(probes, (6, 20, 4))).reshape(6, 40)
    np.testing.assert_allclose(fp, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["fingerprint", "flattened"])
def test_ascent_gradient_matches_finite_differences(mode):
    rng = np.random.default_rng(2)
    bins = ReturnBins(0.0, 100.0, 41)
    model = PVN(
        ARCH,
        bins,
        input_mode=mode,
        hidden=(80,),
        temperature=3.0,
        probes=initial_probes(20, 4, "noise", rng),
        train_probes=True,
        generator=torch.Generator().manual_seed(0),
    ).double()
    theta = torch.tensor(glorot_params(ARCH, 2, rng), dtype=torch.float64, requires_grad=True)
    model.expected_return(theta).sum().backward()
    grad = theta.grad.numpy()
    eps = 1e-6
    for j in rng.choice(ARCH.num_params, size=12, replace=False):
        plus, minus = theta.detach().clone(), theta.detach().clone()
        plus[:, j] += eps
        minus[:, j] -= eps
        with torch.no_grad():
            numeric = (model.expected_return(plus) - model.expected_return(minus)).numpy() / (2 * eps)
        np.testing.assert_allclose(grad[:, j], numeric, rtol=1e-5, atol=1e-8)


def _toy_data(rng, num):
    """A learnable target: the return histogram centres on 100 * P(right | fixed state)."""
    params = glorot_params(ARCH, num, rng)
    probs = forward_numpy(ARCH, params, np.broadcast_to(np.array([0.0, 0.0, 0.1, 0.5], np.float32), (num, 1, 4)))
    centre = 100 * probs[:, 0, 1]
    returns = np.clip(centre[:, None] + rng.normal(scale=3, size=(num, 30)), 0, 100)
    bins = ReturnBins(0.0, 100.0, 21)
    return params, bins.pmf(returns), bins


def fingerprint_pvn(bins, rng, train_probes: bool, seed: int) -> PVN:
    """The paper's CartPole PVN: [80] hidden, temperature 3, 20 noise probes."""
    probes = initial_probes(20, 4, "noise", rng)
    return PVN(
        ARCH,
        bins,
        input_mode="fingerprint",
        hidden=(80,),
        temperature=3.0,
        probes=probes,
        train_probes=train_probes,
        generator=torch.Generator().manual_seed(seed),
    )


@pytest.mark.parametrize("train_probes", [True, False])
def test_training_lowers_validation_loss_and_probes_move_only_when_trained(train_probes):
    rng = np.random.default_rng(3)
    params, targets, bins = _toy_data(rng, 400)
    model = fingerprint_pvn(bins, rng, train_probes, seed=1)
    t = train_one(
        model,
        params=params[:300],
        targets=targets[:300],
        val_params=params[300:],
        val_targets=targets[300:],
        train_steps=600,
        batch_size=32,
        learning_rate=0.003,
        rng=rng,
        log_every=50,
        snapshot_every=100,
    )
    assert t.val_loss[-1] < 0.6 * t.val_loss[0]
    moved = np.abs(t.probe_snapshots[-1] - t.probe_snapshots[0]).max()
    assert (moved > 1e-3) if train_probes else (moved == 0)
    assert t.probe_snapshots.shape == (7, 20, 4)


def test_zero_training_policies_is_a_clear_error():
    rng = np.random.default_rng(0)
    model = PVN(ARCH, ReturnBins(0, 1, 3), input_mode="flattened", hidden=(8,), temperature=3.0)
    with pytest.raises(ValueError, match="no training policies"):
        train_one(
            model,
            params=np.zeros((0, ARCH.num_params)),
            targets=np.zeros((0, 3)),
            val_params=np.zeros((0, ARCH.num_params)),
            val_targets=np.zeros((0, 3)),
            train_steps=10,
            batch_size=4,
            learning_rate=0.01,
            rng=rng,
        )


def test_keep_best_returns_the_weights_with_the_lowest_validation_loss():
    rng = np.random.default_rng(4)
    params, targets, bins = _toy_data(rng, 200)
    model = fingerprint_pvn(bins, rng, True, seed=2)
    t = train_one(
        model,
        params=params[:100],
        targets=targets[:100],
        val_params=params[100:],
        val_targets=targets[100:],
        train_steps=400,
        batch_size=32,
        learning_rate=0.01,
        rng=rng,
        log_every=20,
        keep_best=True,
    )
    with torch.no_grad():
        final_val = kl_loss(
            torch.tensor(targets[100:], dtype=torch.float32), t.model.log_probs(torch.tensor(params[100:]))
        ).item()
    assert final_val == pytest.approx(t.val_loss.min(), rel=1e-5)
