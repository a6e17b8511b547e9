"""Batched policy networks held as flat parameter vectors (Sections 4, 6.2, 6.3; Appendix C).

K policies of one architecture are a matrix ``params`` of shape (K, P): each row is a
policy's flattened weights, layer by layer ``[W1 (in*out), b1 (out), W2, b2, ...]``,
which is exactly the "flattened weights" input of the paper's baseline PVN. A forward
pass on a batch of states evaluates all K policies in one batched matmul:

    obs (K, N, obs_dim) -> hidden ReLU layers -> (K, N, act_dim)

Discrete actions (CartPole) take a softmax over the outputs; continuous actions
(Swimmer) are deterministic tanh outputs. Initialisation is Glorot (Xavier) uniform
with zero biases (Appendix C). The same forward pass is written for NumPy (fast data
collection) and torch (autograd for fingerprints and gradient ascent); tests check
that the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch is imported where it is used: rollouts and replays (numpy) do not pay its 2 s import
    import torch


@dataclass(frozen=True)
class PolicyArch:
    """Shape of a policy network: obs_dim -> hidden... -> act_dim."""

    obs_dim: int
    act_dim: int
    hidden: tuple[int, ...] = (30,)
    discrete: bool = True

    def __post_init__(self) -> None:
        if self.obs_dim < 1 or self.act_dim < 1 or any(h < 1 for h in self.hidden):
            raise ValueError(f"policy layer sizes must be positive; got {self}.")

    @property
    def layer_sizes(self) -> list[tuple[int, int]]:
        sizes = [self.obs_dim, *self.hidden, self.act_dim]
        return list(zip(sizes[:-1], sizes[1:]))

    @property
    def num_params(self) -> int:
        return sum(i * o + o for i, o in self.layer_sizes)

    def slices(self) -> list[tuple[slice, slice, int, int]]:
        """Per layer: slice of W, slice of b in the flat vector, fan_in, fan_out."""
        out, start = [], 0
        for fan_in, fan_out in self.layer_sizes:
            w = slice(start, start + fan_in * fan_out)
            b = slice(w.stop, w.stop + fan_out)
            out.append((w, b, fan_in, fan_out))
            start = b.stop
        return out


def glorot_params(arch: PolicyArch, num_policies: int, rng: np.random.Generator) -> np.ndarray:
    """K policies with Glorot-uniform weights and zero biases, as (K, P) float32."""
    params = np.zeros((num_policies, arch.num_params), dtype=np.float32)
    for w, _, fan_in, fan_out in arch.slices():
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params[:, w] = rng.uniform(-limit, limit, size=(num_policies, fan_in * fan_out))
    return params


def forward_numpy(arch: PolicyArch, params: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Outputs (K, N, act_dim): action probabilities (discrete) or tanh actions."""
    num_policies = params.shape[0]
    h = obs.astype(params.dtype, copy=False)
    layers = arch.slices()
    for i, (w, b, fan_in, fan_out) in enumerate(layers):
        h = np.matmul(h, params[:, w].reshape(num_policies, fan_in, fan_out)) + params[:, None, b]
        if i < len(layers) - 1:
            np.maximum(h, 0.0, out=h)
    if arch.discrete:
        h = h - h.max(axis=-1, keepdims=True)
        np.exp(h, out=h)
        return h / h.sum(axis=-1, keepdims=True)
    return np.tanh(h)


def forward_torch(arch: PolicyArch, params: torch.Tensor, obs: torch.Tensor, log: bool = False) -> torch.Tensor:
    """The same as ``forward_numpy`` in torch, differentiable in params and obs.

    ``obs`` is (K, N, obs_dim) or (N, obs_dim) shared by all K policies (the probes). With ``log`` a discrete
    policy gives its action log-probabilities (log-softmax of its logits, exact where a probability underflows).
    """
    import torch

    num_policies = params.shape[0]
    h = obs if obs.dim() == 3 else obs.unsqueeze(0).expand(num_policies, -1, -1)
    layers = arch.slices()
    for i, (w, b, fan_in, fan_out) in enumerate(layers):
        h = torch.baddbmm(params[:, None, b], h, params[:, w].reshape(num_policies, fan_in, fan_out))
        if i < len(layers) - 1:
            h = torch.relu(h)
    if not arch.discrete:
        return torch.tanh(h)
    return torch.log_softmax(h, dim=-1) if log else torch.softmax(h, dim=-1)


def sampling_policy(arch: PolicyArch, params: np.ndarray, rng: np.random.Generator):
    """A ``policy_fn(obs (K, N, obs_dim)) -> actions`` for the batched environments.

    Discrete: samples an action index per (k, n) from the softmax probabilities.
    Continuous: the deterministic tanh action (K, N, act_dim).
    """
    params = np.asarray(params, dtype=np.float32)

    def policy_fn(obs: np.ndarray) -> np.ndarray:
        out = forward_numpy(arch, params, obs)
        if not arch.discrete:
            return out.astype(np.float64)
        if arch.act_dim == 2:
            return (rng.random(out.shape[:-1]) >= out[..., 0]).astype(np.int64)
        cumulative = np.cumsum(out, axis=-1)
        return (rng.random(out.shape[:-1])[..., None] > cumulative[..., :-1]).sum(-1)

    return policy_fn
