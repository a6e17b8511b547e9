"""Batched policies: NumPy against torch, layout, Glorot initialisation, sampling."""

import numpy as np
import pytest
import torch

from pvnviz.core.policies import PolicyArch, forward_numpy, forward_torch, glorot_params, sampling_policy

ARCHS = [PolicyArch(4, 2, (30,), True), PolicyArch(4, 2, (), True), PolicyArch(8, 2, (30, 16), False)]


@pytest.mark.parametrize("arch", ARCHS)
def test_numpy_and_torch_forward_agree(arch):
    rng = np.random.default_rng(0)
    params = glorot_params(arch, 7, rng)
    params[:, :] += rng.normal(scale=0.1, size=params.shape).astype(np.float32)  # non-zero biases too
    obs = rng.normal(size=(7, 11, arch.obs_dim)).astype(np.float32)
    out_np = forward_numpy(arch, params, obs)
    out_t = forward_torch(arch, torch.from_numpy(params), torch.from_numpy(obs)).numpy()
    np.testing.assert_allclose(out_np, out_t, rtol=1e-5, atol=1e-6)
    # shared probes (N, obs_dim) broadcast over the K policies
    shared = forward_torch(arch, torch.from_numpy(params), torch.from_numpy(obs[0])).numpy()
    np.testing.assert_allclose(shared[3], forward_numpy(arch, params[3:4], obs[:1])[0], rtol=1e-5, atol=1e-6)


def test_flat_layout_is_layer_by_layer_weights_then_bias():
    arch = PolicyArch(3, 2, (4,), True)
    assert arch.num_params == 3 * 4 + 4 + 4 * 2 + 2
    rng = np.random.default_rng(1)
    params = rng.normal(size=(1, arch.num_params)).astype(np.float32)
    W1, b1 = params[0, :12].reshape(3, 4), params[0, 12:16]
    W2, b2 = params[0, 16:24].reshape(4, 2), params[0, 24:]
    x = rng.normal(size=(5, 3)).astype(np.float32)
    logits = np.maximum(x @ W1 + b1, 0) @ W2 + b2
    expected = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(forward_numpy(arch, params, x[None])[0], expected, rtol=1e-5)


def test_glorot_bounds_zero_biases_and_determinism():
    arch = PolicyArch(4, 2, (30,), True)
    a = glorot_params(arch, 500, np.random.default_rng(3))
    b = glorot_params(arch, 500, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    (w1, b1, i1, o1), (w2, b2, i2, o2) = arch.slices()
    limit = np.sqrt(6 / (i1 + o1))
    assert np.abs(a[:, w1]).max() <= limit and np.abs(a[:, w1]).max() > 0.95 * limit
    assert np.var(a[:, w1]) == pytest.approx(limit**2 / 3, rel=0.05)  # uniform(-l, l) variance
    assert np.all(a[:, b1] == 0) and np.all(a[:, b2] == 0)


def test_sampling_policy_follows_the_softmax():
    arch = PolicyArch(4, 2, (), True)
    params = np.zeros((1, arch.num_params), np.float32)
    params[0, 8:] = [0.0, 1.0]  # biases: p(right) = e / (1 + e)
    policy = sampling_policy(arch, params, np.random.default_rng(0))
    actions = policy(np.zeros((1, 20000, 4), np.float32))
    assert actions.mean() == pytest.approx(np.e / (1 + np.e), abs=0.01)


def test_continuous_policy_is_deterministic_tanh():
    arch = PolicyArch(8, 2, (30,), False)
    params = glorot_params(arch, 3, np.random.default_rng(0))
    policy = sampling_policy(arch, params, np.random.default_rng(0))
    obs = np.random.default_rng(1).normal(size=(3, 5, 8))
    a, b = policy(obs), policy(obs)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 5, 2) and np.abs(a).max() < 1
