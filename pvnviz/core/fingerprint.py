"""Network fingerprinting (Section 4): a policy seen through its outputs at probing states.

n probing states phi (n, obs_dim) are fed to every policy; the fingerprint is the
concatenation of the policy's outputs there: action probabilities for discrete
actions (n * |A| numbers) or actions for continuous control (n * act_dim numbers).
The probes are parameters of the PVN, initialised from noise (the paper's choice) or
from states visited in the environment, and trained jointly with it or frozen.
Their inputs are policies as flat parameter vectors (K, P) (see ``pvnviz.core.policies``).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from pvnviz.core.policies import PolicyArch, forward_torch

PROBE_INITS = ("noise", "visited")


def initial_probes(
    num_probes: int, obs_dim: int, how: str, rng: np.random.Generator, visited_states=None
) -> np.ndarray:
    """(n, obs_dim) probes: standard normal noise, or n states sampled from ``visited_states(rng, n)``."""
    if num_probes < 1:
        raise ValueError(f"num_probes must be at least 1; got {num_probes}.")
    if how == "noise":
        return rng.standard_normal((num_probes, obs_dim)).astype(np.float32)
    if how == "visited":
        if visited_states is None:
            raise ValueError("probe_init 'visited' needs an environment that can sample visited states.")
        return np.asarray(visited_states(rng, num_probes), dtype=np.float32)
    raise ValueError(f"probe_init must be one of {PROBE_INITS}; got {how!r}.")


class Fingerprint(nn.Module):
    """params (K, P) -> fingerprint (K, n * act_dim), differentiable in params and probes."""

    def __init__(self, arch: PolicyArch, probes: np.ndarray, trainable: bool = True):
        super().__init__()
        self.arch = arch
        self.probes = nn.Parameter(torch.as_tensor(probes, dtype=torch.float32), requires_grad=trainable)

    @property
    def size(self) -> int:
        return self.probes.shape[0] * self.arch.act_dim

    def forward(self, params: torch.Tensor) -> torch.Tensor:
        return forward_torch(self.arch, params, self.probes).reshape(params.shape[0], self.size)
