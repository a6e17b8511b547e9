"""Policy Evaluation Networks with distributional outputs (Sections 3-4, Algorithm 2).

A PVN maps a policy to a distribution over m return bins: the policy enters either as
its fingerprint (``pvnviz.core.fingerprint``) or as its flattened weights (the baseline),
passes an MLP (paper: hidden [80], ReLU) and leaves as softmax(logits / temperature)
(paper temperature 3). The loss is KL(target pmf || prediction); probes and PVN weights
are trained jointly with Adam (Appendix B: lr 0.003, batch 32, 3000 or 5000 steps).

Layout: policies as flat parameters (K, P) float32; targets (K, m); probes (n, obs_dim).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from pvnviz.core.fingerprint import Fingerprint
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import PolicyArch
from pvnviz.core.progress import ProgressFn, no_progress

INPUT_MODES = ("fingerprint", "flattened")
MetricsFn = Callable[[str, int, float, float], None]  # (input_mode, step, train_loss, val_loss)


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
    ):
        super().__init__()
        if input_mode not in INPUT_MODES:
            raise ValueError(f"input_mode must be one of {INPUT_MODES}; got {input_mode!r}.")
        self.arch, self.bins, self.input_mode, self.temperature = arch, bins, input_mode, temperature
        if input_mode == "fingerprint":
            self.fingerprint = Fingerprint(arch, probes, trainable=train_probes)
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
            layers += [linear] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
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
# 2-core machine (1.08 s against 1.06 s) and 7-8x faster when the other core is busy with rollouts or
# another session (1.09 s against 7.9-8.8 s; issue 8's note). So one setting, made once per process here.
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


def train_pvn(
    model: PVN,
    *,
    params: np.ndarray,
    targets: np.ndarray,
    val_params: np.ndarray,
    val_targets: np.ndarray,
    train_steps: int,
    batch_size: int,
    learning_rate: float,
    rng: np.random.Generator,
    log_every: int = 50,
    snapshot_every: int = 50,
    on_progress: ProgressFn = no_progress,
    on_metrics: MetricsFn | None = None,
    keep_best: bool = False,
) -> TrainedPVN:
    """Algorithm 2: minibatch KL minimisation over PVN weights and (if trainable) probes.

    With ``keep_best`` the returned PVN has the weights (and probes) of the recorded step
    with the lowest validation KL (early stopping), not those of the last step.
    """
    if len(params) < 1:
        raise ValueError("no training policies: loosen the return limit or collect more policies.")
    x = torch.as_tensor(params, dtype=torch.float32)
    y = torch.as_tensor(targets, dtype=torch.float32)
    vx = torch.as_tensor(val_params, dtype=torch.float32)
    vy = torch.as_tensor(val_targets, dtype=torch.float32)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=learning_rate)
    batches = rng.integers(0, len(x), size=(train_steps, batch_size))
    steps, train_curve, val_curve, snap_steps, snaps = [], [], [], [], []
    best_state: dict[str, torch.Tensor] = {}
    running, count = 0.0, 0
    start = time.perf_counter()

    def record(step: int, train_value: float) -> None:
        with torch.no_grad():
            val = kl_loss(vy, model.log_probs(vx)).item() if len(vx) else float("nan")
        steps.append(step)
        train_curve.append(train_value)
        val_curve.append(val)
        if keep_best and val <= min(val_curve):
            best_state.clear()
            best_state.update({k: v.detach().clone() for k, v in model.state_dict().items()})
        if on_metrics is not None:
            on_metrics(model.input_mode, step, train_value, val)

    def snapshot(step: int) -> None:
        if model.fingerprint is not None:
            snap_steps.append(step)
            snaps.append(model.probes)

    with torch.no_grad():
        record(0, kl_loss(y, model.log_probs(x)).item())
    snapshot(0)
    for step in range(1, train_steps + 1):
        idx = torch.from_numpy(batches[step - 1])
        loss = kl_loss(y[idx], model.log_probs(x[idx]))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running += loss.item()
        count += 1
        if step % log_every == 0 or step == train_steps:
            record(step, running / count)
            running, count = 0.0, 0
            on_progress(step, train_steps, f"train {model.input_mode} PVN: val KL {val_curve[-1]:.3f}")
        if step % snapshot_every == 0 or step == train_steps:
            snapshot(step)
    if keep_best and best_state and len(vx):
        model.load_state_dict(best_state)
    return TrainedPVN(
        model=model,
        input_mode=model.input_mode,
        steps=np.array(steps),
        train_loss=np.array(train_curve),
        val_loss=np.array(val_curve),
        snapshot_steps=np.array(snap_steps),
        probe_snapshots=np.array(snaps) if snaps else None,
        seconds=time.perf_counter() - start,
    )
