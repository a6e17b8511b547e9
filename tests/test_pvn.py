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


@pytest.mark.parametrize(
    "mode, outputs, activation",
    [
        ("fingerprint", "probabilities", "relu"),
        ("flattened", "probabilities", "relu"),
        ("fingerprint", "log_probabilities", "leaky_relu"),
    ],
)
def test_ascent_gradient_matches_finite_differences(mode, outputs, activation):
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
        fingerprint_outputs=outputs,
        activation=activation,
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


def test_a_leaky_pvn_keeps_a_slope_where_every_relu_is_off():
    """Inputs that put every hidden unit below zero: the ReLU PVN predicts one constant for all of them and gives
    the ascent no gradient; the leaky one, with the same weights, tells them apart and has a gradient."""
    bins = ReturnBins(0.0, 100.0, 41)
    flat = PolicyArch(3, 2, (), True)
    models = {
        a: PVN(flat, bins, input_mode="flattened", hidden=(16,), temperature=3.0, activation=a,
               generator=torch.Generator().manual_seed(0))  # fmt: skip
        for a in ("relu", "leaky_relu")
    }
    first = models["relu"].mlp[0]
    with torch.no_grad():
        first.bias.fill_(-10.0)
        first.weight.copy_(first.weight.abs())  # positive weights, negative inputs: every unit below zero
    models["leaky_relu"].load_state_dict(models["relu"].state_dict())
    theta = -torch.rand(2, flat.num_params, generator=torch.Generator().manual_seed(1)) - 0.5
    for activation, alive in (("relu", False), ("leaky_relu", True)):
        x = theta.clone().requires_grad_(True)
        j = models[activation].expected_return(x)
        j.sum().backward()
        assert (j[0] != j[1]).item() is alive
        assert (x.grad.abs().sum() > 0).item() is alive


def test_an_unknown_activation_is_refused():
    with pytest.raises(ValueError, match="activation must be one of"):
        PVN(ARCH, ReturnBins(0.0, 100.0, 41), input_mode="flattened", hidden=(8,), temperature=3.0, activation="tanh")
