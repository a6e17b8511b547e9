"""Policy Evaluation Networks with distributional outputs (Sections 3-4, Algorithm 2).

A PVN maps a policy to a distribution over m return bins: the policy enters either as
its fingerprint (``pvnviz.core.fingerprint``) or as its flattened weights (the baseline),
passes an MLP (paper: hidden [80], ReLU; or leaky ReLU, ``ACTIVATIONS``) and leaves as softmax(logits / temperature)
(paper temperature 3). The loss is KL(target pmf || prediction) (``kl_loss``); probes and PVN
weights are trained jointly with Adam (Appendix B: lr 0.003, batch 32, 3000 or 5000 steps).

Algorithm 2 itself, the training loop, is written once: ``pvnviz.core.ensemble.train_ensemble``. The
paper's PVN is the ensemble of one, and trains there step for step as a lone PVN would.

Layout: policies as flat parameters (K, P) float32; targets (K, m); probes (n, obs_dim).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from pvnviz.core.fingerprint import Fingerprint
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import PolicyArch

INPUT_MODES = ("fingerprint", "flattened")
# The PVN's hidden activation. ReLU is the paper's. Where every hidden unit is below zero, a ReLU PVN predicts one
# constant with no gradient, and an ascent that walks there stops; a leaky ReLU (slope 0.01 below zero, torch's
# default) keeps a slope everywhere.
ACTIVATIONS = {"relu": nn.ReLU, "leaky_relu": nn.LeakyReLU}


class PVN(nn.Module):
    """Policy -> distribution over return bins."""

    def __init__(
        self,
        arch: PolicyArch,
        bins: ReturnBins,
        *,
        input_mode: str,
        hidden: tuple[int, ...],
        temperature: float,
        probes: np.ndarray | None = None,
        train_probes: bool = True,
        generator: torch.Generator | None = None,
        fingerprint_outputs: str = "probabilities",
        activation: str = "relu",
    ):
        super().__init__()
        if input_mode not in INPUT_MODES:
            raise ValueError(f"input_mode must be one of {INPUT_MODES}; got {input_mode!r}.")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {tuple(ACTIVATIONS)}; got {activation!r}.")
        self.arch, self.bins, self.input_mode, self.temperature = arch, bins, input_mode, temperature
        if input_mode == "fingerprint":
            self.fingerprint = Fingerprint(arch, probes, trainable=train_probes, outputs=fingerprint_outputs)
            in_dim = self.fingerprint.size
        else:
            self.fingerprint = None
            in_dim = arch.num_params
        sizes = [in_dim, *hidden, bins.num_bins]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            linear = nn.Linear(a, b)
            bound = 1.0 / np.sqrt(a)  # torch's default init, drawn from our own generator
            nn.init.uniform_(linear.weight, -bound, bound, generator=generator)
            nn.init.uniform_(linear.bias, -bound, bound, generator=generator)
            layers += [linear] + ([ACTIVATIONS[activation]()] if i < len(sizes) - 2 else [])
        self.mlp = nn.Sequential(*layers)
        self.register_buffer("midpoints", torch.as_tensor(bins.midpoints, dtype=torch.float32))

    def embed(self, params: torch.Tensor) -> torch.Tensor:
        return self.fingerprint(params) if self.fingerprint is not None else params

    def log_probs(self, params: torch.Tensor) -> torch.Tensor:
        """log psi(theta): (K, m)."""
        return torch.log_softmax(self.mlp(self.embed(params)) / self.temperature, dim=-1)

    def expected_return(self, params: torch.Tensor) -> torch.Tensor:
        """J_hat(theta) = sum_i psi_i * midpoint_i: (K,)."""
        return self.log_probs(params).exp() @ self.midpoints

    @property
    def probes(self) -> np.ndarray | None:
        return None if self.fingerprint is None else self.fingerprint.probes.detach().numpy().copy()


# PVNs and policies here are tiny. One torch thread trains a CartPole PVN as fast as two on an idle
# 2-core machine, and several times faster when the other core is busy with rollouts or another session.
# So one setting, made once per process here.
torch.set_num_threads(1)


def kl_loss(target: torch.Tensor, log_pred: torch.Tensor) -> torch.Tensor:
    """Mean over policies of KL(target || pred) = sum target (log target - log pred)."""
    log_target = torch.where(target > 0, target.clamp_min(1e-12).log(), torch.zeros_like(target))
    return (target * (log_target - log_pred)).sum(-1).mean()


@dataclass
class TrainedPVN:
    """A trained PVN with its loss curves and the probes' path through training."""

    model: PVN
    input_mode: str
    steps: np.ndarray  # (E,) steps at which losses were recorded
    train_loss: np.ndarray  # (E,) KL on the training batch stream, averaged since the last record
    val_loss: np.ndarray  # (E,) KL on the validation split
    snapshot_steps: np.ndarray  # (S,)
    probe_snapshots: np.ndarray | None  # (S, n, obs_dim), fingerprint PVNs only
    seconds: float

    def predict(self, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities (K, m), J_hat (K,)) for flat policies (K, P)."""
        with torch.no_grad():
            logp = self.model.log_probs(torch.as_tensor(params, dtype=torch.float32))
        probs = logp.exp().numpy()
        return probs, probs @ self.model.bins.midpoints
