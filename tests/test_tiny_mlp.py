"""The NumPy PVN of the polytope experiment against torch autograd and torch.optim.RMSprop."""

import numpy as np
import pytest
import torch

from pvnviz.polytope.tiny_mlp import RMSProp, TinyMLP, train_rmsprop


def torch_copy(net: TinyMLP):
    return [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in net.params()]


def torch_forward(params, x):
    W1, b1, W2, b2 = params
    return torch.relu(x @ W1 + b1) @ W2 + b2


def test_gradients_match_autograd():
    rng = np.random.default_rng(0)
    net = TinyMLP.init(rng, 2, 50, 2)
    x, y = rng.uniform(size=(32, 2)), rng.normal(size=(32, 2))
    loss, grads = net.mse_and_grads(x, y)
    params = torch_copy(net)
    t_loss = ((torch_forward(params, torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
    t_loss.backward()
    assert loss == pytest.approx(t_loss.item(), rel=1e-12)
    for g, p in zip(grads, params):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_input_gradient_matches_autograd():
    rng = np.random.default_rng(1)
    net = TinyMLP.init(rng, 2, 50, 2)
    x = rng.uniform(size=(10, 2))
    w = np.array([0.3, 0.7])
    xt = torch.tensor(x, requires_grad=True)
    (torch_forward(torch_copy(net), xt) @ torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(net.input_gradient(x, w), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_rmsprop_matches_torch():
    rng = np.random.default_rng(2)
    net = TinyMLP.init(rng, 2, 8, 2)
    params = torch_copy(net)
    opt_t = torch.optim.RMSprop(params, lr=0.01)
    opt = RMSProp(net.params(), lr=0.01)
    for _ in range(25):
        x, y = rng.uniform(size=(16, 2)), rng.normal(size=(16, 2))
        _, grads = net.mse_and_grads(x, y)
        opt.step(grads)
        opt_t.zero_grad()
        ((torch_forward(params, torch.tensor(x)) - torch.tensor(y)) ** 2).mean().backward()
        opt_t.step()
    for p, pt in zip(net.params(), params):
        np.testing.assert_allclose(p, pt.detach().numpy(), rtol=1e-8, atol=1e-10)


def test_fused_trainer_matches_torch_minibatch_rmsprop():
    """train_rmsprop (count-weighted full set, fused in place) against torch on the gathered minibatches."""
    rng = np.random.default_rng(3)
    net = TinyMLP.init(rng, 2, 50, 2)
    params = torch_copy(net)
    opt_t = torch.optim.RMSprop(params, lr=0.01)
    x, y = rng.uniform(size=(20, 2)), rng.normal(size=(20, 2))
    batches = rng.integers(0, 20, size=(300, 32))
    seen = []
    train_rmsprop(net, x, y, batches, 0.01, on_step=seen.append, every=100)
    assert seen == [100, 200, 300]
    xt, yt = torch.tensor(x), torch.tensor(y)
    for idx in batches:
        opt_t.zero_grad()
        ((torch_forward(params, xt[idx]) - yt[idx]) ** 2).mean().backward()
        opt_t.step()
    for p, pt in zip(net.params(), params):
        np.testing.assert_allclose(p, pt.detach().numpy(), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(net.forward(x), torch_forward(params, xt).detach().numpy(), rtol=1e-7, atol=1e-9)
