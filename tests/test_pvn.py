"""The PVN (``pvnviz.core.pvn``): its KL loss against scipy, the gradient of its expected return (what
Algorithm 3 ascends) against finite differences (its training, Algorithm 2: tests/test_ensemble.py)."""

import numpy as np
import pytest
import torch
from scipy.stats import entropy

from pvnviz.core.fingerprint import initial_probes
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import PolicyArch, glorot_params
from pvnviz.core.pvn import PVN, kl_loss

ARCH = PolicyArch(4, 2, (30,), True)


def test_kl_loss_matches_scipy():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(7), size=5)
    p[0, 2] = 0.0
    p[0] /= p[0].sum()
    q = rng.dirichlet(np.ones(7), size=5)
    ours = kl_loss(torch.tensor(p), torch.tensor(np.log(q))).item()
    assert ours == pytest.approx(np.mean([entropy(p[i], q[i]) for i in range(5)]), rel=1e-10)


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
