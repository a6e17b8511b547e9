"""Algorithm 2, PVN training, written once, for an ensemble of bootstrapped PVNs (Sections 3-5).

The paper's PVN is the ensemble of one: ``train_ensemble`` trains it on the training policies themselves
(no resample), calling it as the PVN it is, so it computes step for step as a lone PVN would.

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
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from pvnviz.core.progress import NO_HOOKS, Hooks, Report, Stage
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

    def _alone(self, x: torch.Tensor) -> torch.Tensor:
        """One member, called as the PVN it is (no vmap): log psi (K, m), exactly as ``PVN.log_probs``."""
        params = {k: v[0] for k, v in self.params.items()}
        return self._call(params, {k: v[0] for k, v in self.buffers.items()}, x)

    def log_probs(self, x: torch.Tensor) -> torch.Tensor:
        """Policies (K, P) shared by every member -> log psi (M, K, m)."""
        if self.size == 1:
            return self._alone(x)[None]
        return vmap(self._call, in_dims=(0, 0, None))(self.params, self.buffers, x)

    def log_probs_per_member(self, x: torch.Tensor) -> torch.Tensor:
        """Each member its own policies (M, K, P) -> log psi (M, K, m)."""
        if self.size == 1:
            return self._alone(x[0])[None]
        return vmap(self._call, in_dims=(0, 0, 0))(self.params, self.buffers, x)

    def member_returns(self, x: torch.Tensor) -> torch.Tensor:
        """J_hat of every member (M, K)."""
        if self.size == 1:
            return (self._alone(x).exp() @ self.midpoints)[None]
        return self.log_probs(x).exp() @ self.midpoints

    def spread(self, x: torch.Tensor) -> torch.Tensor:
        """Disagreement: the standard deviation of J_hat across members (K,) (0 for one member)."""
        return self.member_returns(x).std(dim=0, unbiased=False)

    def expected_return(self, x: torch.Tensor) -> torch.Tensor:
        """The pessimistic objective mean - kappa * std of J_hat across members (K,); one member: its J_hat."""
        j = self.member_returns(x)
        if self.size == 1:  # the std of one value is 0, and its gradient NaN
            return j[0]
        return j.mean(dim=0) - self.kappa * j.std(dim=0, unbiased=False)

    def member(self, index: int) -> PVN:
        """Member ``index`` as a plain PVN (a copy of the template with that member's weights)."""
        model = copy.deepcopy(self.template)
        state = {k.removeprefix("pvn."): v[index].detach().clone() for k, v in {**self.params, **self.buffers}.items()}
        model.load_state_dict(state)
        return model

    def probes(self, index: int = 0) -> np.ndarray | None:
        """Member ``index``'s probing states (n, obs_dim), None for a PVN on flattened weights."""
        tensor = {**self.params, **self.buffers}.get("pvn.fingerprint.probes")
        return None if tensor is None else tensor[index].detach().numpy().copy()

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().clone() for k, v in {**self.params, **self.buffers}.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for name, tensor in {**self.params, **self.buffers}.items():
                tensor.copy_(state[name])


@dataclass
class TrainedEnsemble:
    """A trained ensemble, its curves as a ``TrainedPVN`` (member 0's model) and held-out spread."""

    ensemble: PVNEnsemble
    summary: TrainedPVN
    val_spread: float  # mean disagreement (std of J_hat across members) on held-out policies; 0 for one


@dataclass
class _Record:
    """Algorithm 2's record: the losses every ``log_every`` steps, the probes' path, the best weights."""

    ensemble: PVNEnsemble
    vx: torch.Tensor
    vy: torch.Tensor
    keep_best: bool
    hooks: Hooks
    steps: list[int] = field(default_factory=list)
    train: list[float] = field(default_factory=list)
    val: list[float] = field(default_factory=list)
    snapshot_steps: list[int] = field(default_factory=list)
    snapshots: list[np.ndarray] = field(default_factory=list)
    best: dict[str, torch.Tensor] = field(default_factory=dict)

    def mean_kl(self, x: torch.Tensor, y: torch.Tensor) -> float:
        """The members' mean KL on (x, y), every member on all of it."""
        if not len(x):
            return float("nan")
        with torch.no_grad():
            return float(np.mean([kl_loss(y, lp).item() for lp in self.ensemble.log_probs(x)]))

    def losses(self, step: int, train_value: float) -> None:
        self.steps.append(step)
        self.train.append(train_value)
        self.val.append(self.mean_kl(self.vx, self.vy))
        if self.keep_best and self.val[-1] <= min(self.val):
            self.best = self.ensemble.state_dict()
        if self.hooks.on_metrics is not None:
            self.hooks.on_metrics(self.ensemble.input_mode, step, train_value, self.val[-1])

    def probes(self, step: int) -> None:
        if (probes := self.ensemble.probes(0)) is not None:
            self.snapshot_steps.append(step)
            self.snapshots.append(probes)

    def progress(self, step: int, total: int) -> None:
        m, input_mode = self.ensemble.size, self.ensemble.input_mode
        what = f"{input_mode}, val KL" if m == 1 else f"{m} {input_mode} PVNs at once, mean val KL"
        self.hooks.on_progress(step, total, Report(Stage.TRAIN_PVN, f"{what} {self.val[-1]:.3f}"))


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
    snapshot_every: int | None = None,
    keep_best: bool = False,
    hooks: Hooks = NO_HOOKS,
) -> TrainedEnsemble:
    """Algorithm 2: minibatch KL minimisation over the PVNs' weights and (if trainable) probes.

    Each of M > 1 members trains on its own bootstrap resample of the training policies; one Adam over the
    stacked weights equals M independent Adams (Adam is elementwise). One member trains on the policies
    themselves. Losses are recorded every ``log_every`` steps (and reported to ``hooks``), member 0's probes
    every ``snapshot_every`` (default ``log_every``). With ``keep_best`` the ensemble ends with the weights of
    the recorded step with the lowest validation KL (early stopping), not those of the last step.
    """
    if len(params) < 1:
        raise ValueError("no training policies: loosen the return limit or collect more policies.")
    m, n = ensemble.size, len(params)
    x, y, vx, vy = (torch.as_tensor(a, dtype=torch.float32) for a in (params, targets, val_params, val_targets))
    batches = bootstrap_batches(rng, m, n, train_steps, batch_size)
    optimizer = torch.optim.Adam([p for p in ensemble.parameters() if p.requires_grad], lr=learning_rate)
    record = _Record(ensemble, vx, vy, keep_best, hooks)
    snapshot_every = snapshot_every or log_every
    start, running, count = time.perf_counter(), 0.0, 0
    record.losses(0, record.mean_kl(x, y))
    record.probes(0)
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
            record.losses(step, running / count)
            running, count = 0.0, 0
            record.progress(step, train_steps)
        if step % snapshot_every == 0 or step == train_steps:
            record.probes(step)
    if keep_best and record.best and len(vx):
        ensemble.load_state_dict(record.best)
    return _trained(ensemble, record, vx, time.perf_counter() - start)


def bootstrap_batches(rng: np.random.Generator, m: int, n: int, steps: int, batch_size: int) -> np.ndarray:
    """Every training step's minibatch of each member, as indices into the n training policies (T, M, B): member
    i draws from its own bootstrap resample of the n (one member: from the n themselves)."""
    boot = rng.integers(0, n, size=(m, n)) if m > 1 else np.arange(n)[None]
    picks = rng.integers(0, n, size=(steps, m, batch_size))
    return np.take_along_axis(boot[None], picks, axis=2)


def _trained(ensemble: PVNEnsemble, record: _Record, vx: torch.Tensor, seconds: float) -> TrainedEnsemble:
    """The trained ensemble, member 0's record (losses, probe snapshots) and the members' mean spread on the
    validation policies (nan without any)."""
    with torch.no_grad():
        val_spread = float(ensemble.spread(vx).mean()) if len(vx) else float("nan")
    first = ensemble.member(0)
    summary = TrainedPVN(
        model=first,
        input_mode=first.input_mode,
        steps=np.array(record.steps),
        train_loss=np.array(record.train),
        val_loss=np.array(record.val),
        snapshot_steps=np.array(record.snapshot_steps),
        probe_snapshots=np.array(record.snapshots) if record.snapshots else None,
        seconds=seconds,
    )
    return TrainedEnsemble(ensemble, summary, val_spread)
