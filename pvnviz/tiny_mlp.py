"""A one-hidden-layer ReLU MLP in NumPy with hand-written backprop and RMSProp.

This is the PVN of the polytope experiment (Section 6.1, Appendix B: hidden [50],
ReLU, RMSProp lr 0.01, batch 32). At this size framework overhead dominates, so a
NumPy implementation trains 20,000 steps in about a second; tests check every
gradient here against torch autograd on the same weights.

Layout: inputs ``x`` (N, in), hidden ``h`` (N, hidden), outputs (N, out).
Initialisation and RMSProp follow torch's defaults (``nn.Linear``: U(-1/sqrt(fan_in),
1/sqrt(fan_in)); ``RMSprop``: alpha 0.99, eps 1e-8, no momentum).
"""

from __future__ import annotations

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
