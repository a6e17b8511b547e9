"""A one-hidden-layer ReLU MLP in NumPy with hand-written backprop and RMSProp.

This is the PVN of the polytope experiment (Section 6.1, Appendix B: hidden [50],
ReLU, RMSProp lr 0.01, batch 32). At this size framework overhead dominates, so a
NumPy implementation wins; ``train_rmsprop`` fuses a whole training step into a dozen
in-place array operations on preallocated buffers and trains 20,000 steps in a few
tenths of a second. Tests check every gradient here against torch autograd on the
same weights, and ``train_rmsprop`` against torch's RMSprop step by step.

Layout: inputs ``x`` (N, in), hidden ``h`` (N, hidden), outputs (N, out).
Initialisation and RMSProp follow torch's defaults (``nn.Linear``: U(-1/sqrt(fan_in),
1/sqrt(fan_in)); ``RMSprop``: alpha 0.99, eps 1e-8, no momentum).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class TinyMLP:
    """Weights of x -> relu(x W1 + b1) W2 + b2."""

    W1: np.ndarray  # (in, hidden)
    b1: np.ndarray  # (hidden,)
    W2: np.ndarray  # (hidden, out)
    b2: np.ndarray  # (out,)

    @classmethod
    def init(cls, rng: np.random.Generator, num_inputs: int, num_hidden: int, num_outputs: int) -> TinyMLP:
        bound1 = 1.0 / np.sqrt(num_inputs)
        bound2 = 1.0 / np.sqrt(num_hidden)
        return cls(
            W1=rng.uniform(-bound1, bound1, (num_inputs, num_hidden)),
            b1=rng.uniform(-bound1, bound1, num_hidden),
            W2=rng.uniform(-bound2, bound2, (num_hidden, num_outputs)),
            b2=rng.uniform(-bound2, bound2, num_outputs),
        )

    def params(self) -> list[np.ndarray]:
        return [self.W1, self.b1, self.W2, self.b2]

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x @ self.W1 + self.b1, 0.0) @ self.W2 + self.b2

    def mse_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """Mean squared error over all entries, and its gradient for each parameter."""
        pre = x @ self.W1 + self.b1  # (N, hidden)
        h = np.maximum(pre, 0.0)
        err = h @ self.W2 + self.b2 - y  # (N, out)
        d_out = 2.0 * err / err.size
        d_pre = (d_out @ self.W2.T) * (pre > 0)
        grads = [x.T @ d_pre, d_pre.sum(0), h.T @ d_out, d_out.sum(0)]
        return float(np.mean(err**2)), grads

    def input_gradient(self, x: np.ndarray, output_weights: np.ndarray) -> np.ndarray:
        """d(output . output_weights)/dx for each row of x: (N, in)."""
        pre = x @ self.W1 + self.b1
        return ((pre > 0) * (self.W2 @ output_weights)) @ self.W1.T


class RMSProp:
    """torch.optim.RMSprop's update (alpha 0.99, eps 1e-8, centered=False, momentum 0)."""

    def __init__(self, params: list[np.ndarray], lr: float, alpha: float = 0.99, eps: float = 1e-8):
        self.params, self.lr, self.alpha, self.eps = params, lr, alpha, eps
        self.square_avg = [np.zeros_like(p) for p in params]

    def step(self, grads: list[np.ndarray]) -> None:
        for p, g, v in zip(self.params, grads, self.square_avg, strict=True):
            v *= self.alpha
            v += (1.0 - self.alpha) * g * g
            p -= self.lr * g / (np.sqrt(v) + self.eps)


def _packed(net: TinyMLP) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Move the weights into one flat buffer: A1 = [W1; b1] (in+1, hidden), A2 = [W2; b2] (hidden+1, out).

    The net's W1, b1, W2, b2 become views of the buffer, so one in-place optimiser update moves all of them.
    """
    n_in, n_hidden = net.W1.shape
    n_out = net.W2.shape[1]
    flat = np.empty((n_in + 1) * n_hidden + (n_hidden + 1) * n_out)
    A1 = flat[: (n_in + 1) * n_hidden].reshape(n_in + 1, n_hidden)
    A2 = flat[(n_in + 1) * n_hidden :].reshape(n_hidden + 1, n_out)
    A1[:n_in], A1[n_in], A2[:n_hidden], A2[n_hidden] = net.W1, net.b1, net.W2, net.b2
    net.W1, net.b1, net.W2, net.b2 = A1[:n_in], A1[n_in], A2[:n_hidden], A2[n_hidden]
    return flat, A1, A2


def _row_weights(batches: np.ndarray, n: int, n_out: int) -> np.ndarray:
    """(steps, n, 1): how often step t's minibatch drew each of the n rows, times d(mean squared error)/d(out)."""
    steps, batch_size = batches.shape
    counts = np.bincount((batches + n * np.arange(steps)[:, None]).ravel(), minlength=steps * n)
    return (counts.reshape(steps, n, 1) * (2.0 / (batch_size * n_out))).astype(float)


def _pass_buffers(x: np.ndarray, n_hidden: int, n_out: int) -> tuple[np.ndarray, ...]:
    """Preallocated arrays of the forward and backward pass: inputs and hidden units each with a column of ones
    (the biases' inputs), pre-activations, outputs, hidden gradients and the ReLU mask."""
    n = len(x)
    xa = np.hstack([x, np.ones((n, 1))])
    ha = np.ones((n, n_hidden + 1))
    pre, out, d_h = np.empty((n, n_hidden)), np.empty((n, n_out)), np.empty((n, n_hidden))
    return xa, ha, pre, out, d_h, np.empty((n, n_hidden), dtype=bool)


def train_rmsprop(
    net: TinyMLP,
    x: np.ndarray,
    y: np.ndarray,
    batches: np.ndarray,
    lr: float,
    on_step: Callable[[int], None] | None = None,
    every: int = 100,
    alpha: float = 0.99,
    eps: float = 1e-8,
) -> None:
    """Minibatch MSE regression of y on x with RMSProp, in place; ``batches[t]`` indexes x for step t + 1.

    The same updates as ``mse_and_grads`` on ``x[batches[t]]`` followed by ``RMSProp.step``, computed
    faster for a small training set: a minibatch drawn with replacement from N rows has the gradient of
    the whole set weighted by how often each row was drawn, so every step works on the same N rows with
    precomputed weights (no gathering), biases ride in the weight matrices (a column of ones), and all
    buffers are preallocated and updated in place. ``on_step(t)`` runs after every ``every``-th step and
    the last one.
    """
    steps = len(batches)
    n_hidden = net.W1.shape[1]
    weights = _row_weights(batches, len(x), y.shape[1])
    flat, A1, A2 = _packed(net)
    grad = np.zeros_like(flat)
    G1 = grad[: A1.size].reshape(A1.shape)
    G2 = grad[A1.size :].reshape(A2.shape)
    square_avg, tmp = np.zeros_like(flat), np.empty_like(flat)
    xa, ha, pre, out, d_h, active = _pass_buffers(x, n_hidden, y.shape[1])
    xa_T = np.ascontiguousarray(xa.T)
    h = ha[:, :n_hidden]
    ha_T = ha.T
    W2_T = A2[:n_hidden].T
    for t in range(steps):
        np.matmul(xa, A1, out=pre)
        np.maximum(pre, 0.0, out=h)
        np.matmul(ha, A2, out=out)
        out -= y
        out *= weights[t]  # d(loss)/d(out)
        np.matmul(ha_T, out, out=G2)
        np.matmul(out, W2_T, out=d_h)
        np.greater(pre, 0.0, out=active)
        d_h *= active
        np.matmul(xa_T, d_h, out=G1)
        square_avg *= alpha
        np.multiply(grad, grad, out=tmp)
        tmp *= 1.0 - alpha
        square_avg += tmp
        np.sqrt(square_avg, out=tmp)
        tmp += eps
        np.divide(grad, tmp, out=tmp)
        tmp *= lr
        flat -= tmp
        if on_step is not None and ((t + 1) % every == 0 or t + 1 == steps):
            on_step(t + 1)
