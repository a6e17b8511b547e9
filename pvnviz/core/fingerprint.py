"""Network fingerprinting (Section 4): a policy seen through its outputs at probing states.

n probing states phi (n, obs_dim) are fed to every policy; the fingerprint is the
concatenation of the policy's outputs there: action probabilities for discrete
actions (n * |A| numbers) or actions for continuous control (n * act_dim numbers). For discrete actions
the fingerprint may read log-probabilities instead (``FINGERPRINT_OUTPUTS``, this project's option): a
probability near 0 or 1 barely moves when the policy's logits do, so policies that agree on every probe's
likeliest action look alike to the PVN and give its ascent no slope; their log-probabilities still differ.
The probes are parameters of the PVN, initialised from noise (the paper's choice), from
states visited in the environment, or uniformly within the observation space's finite
bounds, and trained jointly with it or frozen.
Their inputs are policies as flat parameter vectors (K, P) (see ``pvnviz.core.policies``).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from pvnviz.core.policies import PolicyArch, forward_torch

PROBE_INITS = ("noise", "visited", "bounds")
FINGERPRINT_OUTPUTS = ("probabilities", "log_probabilities")  # what a discrete policy's fingerprint reads
# gymnasium marks an unbounded coordinate with an infinite bound or with float32's largest value
UNBOUNDED = float(np.finfo(np.float32).max)


def initial_probes(
    num_probes: int,
    obs_dim: int,
    how: str,
    rng: np.random.Generator,
    visited_states=None,
    bounds: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """(n, obs_dim) float32 probes by ``how``:

    - "noise": standard normal;
    - "visited": n states sampled from ``visited_states(rng, n)``;
    - "bounds": each coordinate uniform in the observation space's ``bounds`` (low, high) where both are
      finite (below ``UNBOUNDED``), standard normal where either is not.
    """
    if num_probes < 1:
        raise ValueError(f"num_probes must be at least 1; got {num_probes}.")
    if how == "noise":
        return rng.standard_normal((num_probes, obs_dim)).astype(np.float32)
    if how == "visited":
        if visited_states is None:
            raise ValueError("probe_init 'visited' needs an environment that can sample visited states.")
        return np.asarray(visited_states(rng, num_probes), dtype=np.float32)
    if how == "bounds":
        if bounds is None:
            raise ValueError("probe_init 'bounds' needs the observation space's bounds.")
        low, high = (np.broadcast_to(np.asarray(b, dtype=np.float64), (obs_dim,)) for b in bounds)
        finite = (np.abs(low) < UNBOUNDED) & (np.abs(high) < UNBOUNDED)
        uniform = rng.uniform(np.where(finite, low, 0.0), np.where(finite, high, 1.0), (num_probes, obs_dim))
        normal = rng.standard_normal((num_probes, obs_dim))
        return np.where(finite, uniform, normal).astype(np.float32)
    raise ValueError(f"probe_init must be one of {PROBE_INITS}; got {how!r}.")


class Fingerprint(nn.Module):
    """params (K, P) -> fingerprint (K, n * act_dim), differentiable in params and probes."""

    def __init__(
        self, arch: PolicyArch, probes: np.ndarray, trainable: bool = True, outputs: str = "probabilities"
    ):
        super().__init__()
        if outputs not in FINGERPRINT_OUTPUTS:
            raise ValueError(f"outputs must be one of {FINGERPRINT_OUTPUTS}; got {outputs!r}.")
        self.arch = arch
        self.log = outputs == "log_probabilities" and arch.discrete  # a continuous policy's outputs are actions
        self.probes = nn.Parameter(torch.as_tensor(probes, dtype=torch.float32), requires_grad=trainable)

    @property
    def size(self) -> int:
        return self.probes.shape[0] * self.arch.act_dim

    def forward(self, params: torch.Tensor) -> torch.Tensor:
        return forward_torch(self.arch, params, self.probes, log=self.log).reshape(params.shape[0], self.size)
