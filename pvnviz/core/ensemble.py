"""An ensemble of bootstrapped PVNs as one batched network (Section 5's epistemic uncertainty).

Section 5 says the ascent may walk into regions of policy space with few samples, where
the PVN is wrong, and that statistical active learning "would require PVNs with epistemic
uncertainty". Here M PVNs (``pvnviz.core.pvn.PVN``: same architecture, different initial weights
and probes) each train on their own bootstrap resample of the training policies. Their
weights are stacked along a leading member axis and run as ONE network with
``torch.func.vmap`` over ``functional_call``, so a training step or an ascent step costs one
batched forward and backward, not a loop over members.

The members' disagreement, the standard deviation of their J_hat across members, measures
how far a policy lies from what the data supports. The ascent may climb the pessimistic
objective mean - kappa * std (``PVNEnsemble.expected_return``), and records the spread
along each path (``PVNEnsemble.spread``).

Layout: stacked parameters (M, ...) per tensor of the PVN; J_hat per member (M, K).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from pvnviz.core.progress import ProgressFn, no_progress
from pvnviz.core.pvn import PVN, TrainedPVN, kl_loss


class _LogProbs(nn.Module):
    """A PVN seen through ``log_probs`` (functional_call calls ``forward``)."""

    def __init__(self, pvn: PVN):
        super().__init__()
        self.pvn = pvn

    def forward(self, params: torch.Tensor) -> torch.Tensor:
        return self.pvn.log_probs(params)


class PVNEnsemble:
    """M PVNs of one architecture, weights stacked (M, ...), evaluated as one batched network."""

    def __init__(self, members: list[PVN], kappa: float = 0.0):
        if len(members) < 1:
            raise ValueError("an ensemble needs at least one member.")
        if kappa < 0:
            raise ValueError(f"kappa must be 0 or more (pessimism); got {kappa}.")
        wrapped = [_LogProbs(m) for m in members]
        self.params, self.buffers = stack_module_state(wrapped)  # leaf tensors (M, ...)
        for name, tensor in self.params.items():
            tensor.requires_grad_(dict(wrapped[0].named_parameters())[name].requires_grad)
        self._base = copy.deepcopy(wrapped[0]).to("meta")
        self.template = members[0]
        self.kappa = float(kappa)
        self.size = len(members)

    @property
    def arch(self):
        return self.template.arch

    @property
    def input_mode(self) -> str:
        return self.template.input_mode

    @property
    def midpoints(self) -> torch.Tensor:
        return self.template.midpoints

    def parameters(self) -> list[torch.Tensor]:
        return list(self.params.values())

    def _call(self, params: dict, buffers: dict, x: torch.Tensor) -> torch.Tensor:
        return functional_call(self._base, (params, buffers), (x,))

    def log_probs(self, x: torch.Tensor) -> torch.Tensor:
        """Policies (K, P) shared by every member -> log psi (M, K, m)."""
        return vmap(self._call, in_dims=(0, 0, None))(self.params, self.buffers, x)

    def log_probs_per_member(self, x: torch.Tensor) -> torch.Tensor:
        """Each member its own policies (M, K, P) -> log psi (M, K, m)."""
        return vmap(self._call, in_dims=(0, 0, 0))(self.params, self.buffers, x)

    def member_returns(self, x: torch.Tensor) -> torch.Tensor:
        """J_hat of every member (M, K)."""
        return self.log_probs(x).exp() @ self.midpoints

    def spread(self, x: torch.Tensor) -> torch.Tensor:
        """Disagreement: the standard deviation of J_hat across members (K,) (0 for one member)."""
        return self.member_returns(x).std(dim=0, unbiased=False)

    def expected_return(self, x: torch.Tensor) -> torch.Tensor:
        """The pessimistic objective mean - kappa * std of J_hat across members (K,)."""
        j = self.member_returns(x)
        return j.mean(dim=0) - self.kappa * j.std(dim=0, unbiased=False)

    def member(self, index: int) -> PVN:
        """Member ``index`` as a plain PVN (a copy of the template with that member's weights)."""
        model = copy.deepcopy(self.template)
        state = {k.removeprefix("pvn."): v[index].detach().clone() for k, v in {**self.params, **self.buffers}.items()}
        model.load_state_dict(state)
        return model

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().clone() for k, v in {**self.params, **self.buffers}.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for name, tensor in {**self.params, **self.buffers}.items():
                tensor.copy_(state[name])


@dataclass
class TrainedEnsemble:
    """A trained ensemble, its mean curves as a ``TrainedPVN`` (member 0's model) and held-out spread."""

    ensemble: PVNEnsemble
    summary: TrainedPVN
    val_spread: float  # mean disagreement (std of J_hat across members) on held-out policies


def train_ensemble(
    ensemble: PVNEnsemble,
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
    on_progress: ProgressFn = no_progress,
) -> TrainedEnsemble:
    """Algorithm 2 for all M members at once, each on its own bootstrap resample of the training policies.

    Adam is elementwise, so one Adam over the stacked weights equals M independent Adams.
    """
    if len(params) < 1:
        raise ValueError("no training policies: loosen the return limit or collect more policies.")
    m, n = ensemble.size, len(params)
    x = torch.as_tensor(params, dtype=torch.float32)
    y = torch.as_tensor(targets, dtype=torch.float32)
    vx = torch.as_tensor(val_params, dtype=torch.float32)
    vy = torch.as_tensor(val_targets, dtype=torch.float32)
    boot = rng.integers(0, n, size=(m, n)) if m > 1 else np.arange(n)[None]  # one member: the data itself
    picks = rng.integers(0, n, size=(train_steps, m, batch_size))
    batches = np.take_along_axis(boot[None], picks.reshape(train_steps, m, batch_size), axis=2)
    optimizer = torch.optim.Adam([p for p in ensemble.parameters() if p.requires_grad], lr=learning_rate)
    steps, train_curve, val_curve = [], [], []
    running, count = 0.0, 0
    start = time.perf_counter()

    def val_kl() -> float:
        if not len(vx):
            return float("nan")
        with torch.no_grad():
            return float(np.mean([kl_loss(vy, lp).item() for lp in ensemble.log_probs(vx)]))

    steps.append(0)
    train_curve.append(float("nan"))
    val_curve.append(val_kl())
    for step in range(1, train_steps + 1):
        idx = torch.from_numpy(batches[step - 1])  # (M, B)
        log_pred = ensemble.log_probs_per_member(x[idx])  # (M, B, m)
        # Sum over members of each member's mean KL: the members' gradients stay separate.
        loss = kl_loss(y[idx].reshape(-1, y.shape[1]), log_pred.reshape(-1, y.shape[1])) * m
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running += loss.item() / m
        count += 1
        if step % log_every == 0 or step == train_steps:
            steps.append(step)
            train_curve.append(running / count)
            val_curve.append(val_kl())
            running, count = 0.0, 0
            on_progress(step, train_steps, f"train {m} PVNs at once: mean val KL {val_curve[-1]:.3f}")
    with torch.no_grad():
        val_spread = float(ensemble.spread(vx).mean()) if len(vx) else float("nan")
    first = ensemble.member(0)
    summary = TrainedPVN(
        model=first,
        input_mode=first.input_mode,
        steps=np.array(steps),
        train_loss=np.array(train_curve),
        val_loss=np.array(val_curve),
        snapshot_steps=np.array([train_steps]),
        probe_snapshots=first.probes[None] if first.probes is not None else None,
        seconds=time.perf_counter() - start,
    )
    return TrainedEnsemble(ensemble, summary, val_spread)
