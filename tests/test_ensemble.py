"""Algorithm 2 and the batched PVN ensemble (``pvnviz.core.ensemble``): spread against closed forms, vmap against
each member alone, the pessimistic objective's gradient against finite differences, one member trained exactly
as a lone PVN, a PVN's training (loss, probes, keep_best), bootstrapped training."""

import copy

import numpy as np
import pytest
import torch

from pvnviz.core.ensemble import PVNEnsemble, train_ensemble
from pvnviz.core.fingerprint import initial_probes
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import PolicyArch, forward_numpy, glorot_params
from pvnviz.core.pvn import PVN, kl_loss

ARCH = PolicyArch(4, 2, (8,), True)
CARTPOLE_ARCH = PolicyArch(4, 2, (30,), True)  # the paper's CartPole policy, [30]
BINS = ReturnBins(0.0, 100.0, 11)


def member(seed: int, mode: str = "fingerprint") -> PVN:
    rng = np.random.default_rng(seed)
    probes = initial_probes(5, 4, "noise", rng)
    return PVN(
        ARCH,
        BINS,
        input_mode=mode,
        hidden=(16,),
        temperature=3.0,
        probes=probes,
        train_probes=True,
        generator=torch.Generator().manual_seed(seed),
    )


def policies(k: int, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    return torch.tensor(glorot_params(ARCH, k, np.random.default_rng(seed)), dtype=dtype)


def test_identical_members_have_zero_spread():
    one = member(0)
    ensemble = PVNEnsemble([copy.deepcopy(one) for _ in range(4)])
    x = policies(6)
    with torch.no_grad():
        np.testing.assert_allclose(ensemble.spread(x).numpy(), 0.0, atol=1e-5)
        np.testing.assert_allclose(ensemble.expected_return(x).numpy(), one.expected_return(x).numpy(), rtol=1e-5)


def test_spread_is_the_exact_std_of_known_constant_members():
    """Members whose last layer ignores its input and outputs known logits b_m: J_m = softmax(b_m / T) . mid."""
    rng = np.random.default_rng(3)
    logits = rng.normal(0, 4, size=(5, BINS.num_bins))
    members = []
    for b in logits:
        m = member(1)
        with torch.no_grad():
            m.mlp[-1].weight.zero_()
            m.mlp[-1].bias.copy_(torch.tensor(b))
        members.append(m)
    p = np.exp(logits / 3.0)
    j = (p / p.sum(1, keepdims=True)) @ BINS.midpoints
    ensemble = PVNEnsemble(members, kappa=1.5)
    with torch.no_grad():
        x = policies(3)
        np.testing.assert_allclose(ensemble.member_returns(x).numpy(), np.repeat(j[:, None], 3, 1), rtol=1e-5)
        np.testing.assert_allclose(ensemble.spread(x).numpy(), np.full(3, j.std()), rtol=1e-4)
        np.testing.assert_allclose(ensemble.expected_return(x).numpy(), np.full(3, j.mean() - 1.5 * j.std()), rtol=1e-4)


@pytest.mark.parametrize("mode", ["fingerprint", "flattened"])
def test_batched_members_equal_each_member_alone(mode):
    members = [member(s, mode) for s in range(3)]
    ensemble = PVNEnsemble(members)
    x = policies(7, seed=1)
    with torch.no_grad():
        batched = ensemble.member_returns(x).numpy()
        alone = np.stack([m.expected_return(x).numpy() for m in members])
    np.testing.assert_allclose(batched, alone, rtol=1e-5, atol=1e-5)
    for i in range(len(members)):
        with torch.no_grad():
            np.testing.assert_allclose(ensemble.member(i).expected_return(x).numpy(), alone[i], rtol=1e-6)


def test_pessimistic_gradient_matches_finite_differences():
    ensemble = PVNEnsemble([member(s).double() for s in range(4)], kappa=0.7)
    theta = policies(2, seed=2, dtype=torch.float64).requires_grad_(True)
    ensemble.expected_return(theta).sum().backward()
    grad = theta.grad.numpy()
    base = theta.detach().clone()
    eps = 1e-6
    for k, i in [(0, 0), (0, 17), (1, 5), (1, base.shape[1] - 1)]:
        plus, minus = base.clone(), base.clone()
        plus[k, i] += eps
        minus[k, i] -= eps
        with torch.no_grad():
            fd = (ensemble.expected_return(plus).sum() - ensemble.expected_return(minus).sum()).item() / (2 * eps)
        assert grad[k, i] == pytest.approx(fd, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("keep_best", [False, True])
def test_one_member_trains_exactly_as_a_lone_pvn(keep_best):
    """The paper's PVN is the ensemble of one. Algorithm 2 written plainly here on a lone PVN (Adam on the KL of
    batches drawn as ``rng.integers``, the validation KL every 20 steps, the best weights kept on request) ends
    with bit-identical weights, probes and losses."""
    rng = np.random.default_rng(5)
    params = glorot_params(ARCH, 120, rng)
    targets = BINS.pmf(rng.uniform(0, 100, size=(120, 4)))
    splits = (params[:100], targets[:100], params[100:], targets[100:])
    x, y, vx, vy = (torch.tensor(a, dtype=torch.float32) for a in splits)
    lone = member(0)
    adam = torch.optim.Adam(lone.parameters(), lr=0.01)
    val, best = [], None
    for step, batch in enumerate(np.random.default_rng(9).integers(0, 100, size=(200, 16))):
        if step % 20 == 0:  # the validation KL before steps 0, 20, ..., and the best weights so far
            with torch.no_grad():
                val.append(kl_loss(vy, lone.log_probs(vx)).item())
            if val[-1] <= min(val):
                best = copy.deepcopy(lone.state_dict())
        loss = kl_loss(y[torch.from_numpy(batch)], lone.log_probs(x[torch.from_numpy(batch)]))
        adam.zero_grad()
        loss.backward()
        adam.step()
    with torch.no_grad():
        val.append(kl_loss(vy, lone.log_probs(vx)).item())
    if keep_best and val[-1] > min(val):
        lone.load_state_dict(best)
    one = train_ensemble(
        PVNEnsemble([member(0)]),
        params=params[:100],
        targets=targets[:100],
        val_params=params[100:],
        val_targets=targets[100:],
        train_steps=200,
        batch_size=16,
        learning_rate=0.01,
        rng=np.random.default_rng(9),
        log_every=20,
        keep_best=keep_best,
    )
    mine = one.summary.model.state_dict()
    assert all(torch.equal(mine[k], v) for k, v in lone.state_dict().items())
    assert one.summary.val_loss.tolist() == val
    assert min(val) < val[-1]  # so keep_best=True ends elsewhere than the last step: both cases say something
    if not keep_best:  # the probes' last snapshot is the last step's
        np.testing.assert_array_equal(one.summary.probe_snapshots[-1], lone.probes)
    with torch.no_grad():
        assert torch.equal(one.ensemble.expected_return(vx), lone.expected_return(vx))


@pytest.mark.slow
def test_bootstrapped_members_fit_and_disagree_more_far_from_the_data():
    """Members trained on policies of one kind predict held-out ones and disagree more on very different ones."""
    rng = np.random.default_rng(4)
    params = glorot_params(ARCH, 300, rng)
    true_j = np.clip(50 + 40 * np.tanh(params[:, 0] * 3), 0, 100)  # a smooth function of one weight
    targets = BINS.pmf(true_j[:, None] + rng.normal(0, 5, size=(300, 20)))
    ensemble = PVNEnsemble([member(s, "flattened") for s in range(5)])
    trained = train_ensemble(
        ensemble,
        params=params[:250],
        targets=targets[:250],
        val_params=params[250:],
        val_targets=targets[250:],
        train_steps=1500,
        batch_size=32,
        learning_rate=0.003,
        rng=rng,
    )
    x = torch.tensor(params[250:])
    with torch.no_grad():
        mean_j = ensemble.member_returns(x).mean(0).numpy()
        near = ensemble.spread(x).mean().item()
        far = ensemble.spread(x * 20).mean().item()
    assert np.corrcoef(mean_j, true_j[250:])[0, 1] > 0.8
    assert trained.val_spread == pytest.approx(near, rel=1e-5)
    assert far > 1.4 * near  # measured 1.7x


def train_one(model: PVN, **kwargs):
    """Algorithm 2 for one PVN, the paper's: the ensemble of one."""
    return train_ensemble(PVNEnsemble([model]), **kwargs).summary


def _toy_data(rng, num):
    """A learnable target: the return histogram centres on 100 * P(right | fixed state)."""
    params = glorot_params(CARTPOLE_ARCH, num, rng)
    state = np.broadcast_to(np.array([0.0, 0.0, 0.1, 0.5], np.float32), (num, 1, 4))
    probs = forward_numpy(CARTPOLE_ARCH, params, state)
    centre = 100 * probs[:, 0, 1]
    returns = np.clip(centre[:, None] + rng.normal(scale=3, size=(num, 30)), 0, 100)
    bins = ReturnBins(0.0, 100.0, 21)
    return params, bins.pmf(returns), bins


def fingerprint_pvn(bins, rng, train_probes: bool, seed: int) -> PVN:
    """The paper's CartPole PVN: [80] hidden, temperature 3, 20 noise probes."""
    probes = initial_probes(20, 4, "noise", rng)
    return PVN(
        CARTPOLE_ARCH,
        bins,
        input_mode="fingerprint",
        hidden=(80,),
        temperature=3.0,
        probes=probes,
        train_probes=train_probes,
        generator=torch.Generator().manual_seed(seed),
    )


@pytest.mark.parametrize("train_probes", [True, False])
def test_training_lowers_validation_loss_and_probes_move_only_when_trained(train_probes):
    rng = np.random.default_rng(3)
    params, targets, bins = _toy_data(rng, 400)
    model = fingerprint_pvn(bins, rng, train_probes, seed=1)
    t = train_one(
        model,
        params=params[:300],
        targets=targets[:300],
        val_params=params[300:],
        val_targets=targets[300:],
        train_steps=600,
        batch_size=32,
        learning_rate=0.003,
        rng=rng,
        log_every=50,
        snapshot_every=100,
    )
    assert t.val_loss[-1] < 0.6 * t.val_loss[0]
    moved = np.abs(t.probe_snapshots[-1] - t.probe_snapshots[0]).max()
    assert (moved > 1e-3) if train_probes else (moved == 0)
    assert t.probe_snapshots.shape == (7, 20, 4)


def test_zero_training_policies_is_a_clear_error():
    rng = np.random.default_rng(0)
    model = PVN(CARTPOLE_ARCH, ReturnBins(0, 1, 3), input_mode="flattened", hidden=(8,), temperature=3.0)
    with pytest.raises(ValueError, match="no training policies"):
        train_one(
            model,
            params=np.zeros((0, CARTPOLE_ARCH.num_params)),
            targets=np.zeros((0, 3)),
            val_params=np.zeros((0, CARTPOLE_ARCH.num_params)),
            val_targets=np.zeros((0, 3)),
            train_steps=10,
            batch_size=4,
            learning_rate=0.01,
            rng=rng,
        )


def test_keep_best_returns_the_weights_with_the_lowest_validation_loss():
    rng = np.random.default_rng(4)
    params, targets, bins = _toy_data(rng, 200)
    model = fingerprint_pvn(bins, rng, True, seed=2)
    t = train_one(
        model,
        params=params[:100],
        targets=targets[:100],
        val_params=params[100:],
        val_targets=targets[100:],
        train_steps=400,
        batch_size=32,
        learning_rate=0.01,
        rng=rng,
        log_every=20,
        keep_best=True,
    )
    with torch.no_grad():
        final_val = kl_loss(
            torch.tensor(targets[100:], dtype=torch.float32), t.model.log_probs(torch.tensor(params[100:]))
        ).item()
    assert final_val == pytest.approx(t.val_loss.min(), rel=1e-5)
