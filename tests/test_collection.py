"""Algorithm 1 (pvnviz.core.collect) in chunks (pvnviz.runs.collection): same data for any split, gymnasium's
returns with the same random streams, checked chunks, resume (through the CLI: tests/test_cli_collect.py)."""

from pathlib import Path

import numpy as np
import pytest

from pvnviz.core.collect import LCG_INCREMENT, LCG_MULTIPLIER, EpisodeSampler, policy_streams
from pvnviz.core.policies import PolicyArch, forward_numpy, glorot_params
from pvnviz.runs.collection import Chunk, ChunkStore, CollectError, LocalExecutor, Plan, collect_plan

ROOT = Path(__file__).resolve().parents[1]
CARTPOLE = PolicyArch(4, 2, (30,), True)
SWIMMER = PolicyArch(8, 2, (30,), False)
PLANS = {
    "cartpole": Plan("cartpole", CARTPOLE, 12, 6, 80, entropy=2024),
    "swimmer": Plan("swimmer", SWIMMER, 8, 2, 40, entropy=2024),
}


def _with_chunks(plan: Plan, size: int) -> Plan:
    return Plan(plan.env_name, plan.arch, plan.num_policies, plan.num_episodes, plan.horizon, plan.entropy, size)


class CountingExecutor(LocalExecutor):
    """A local executor that remembers which chunks it ran."""

    def __init__(self):
        super().__init__()
        self.ran: list[int] = []

    def run(self, todo, on_done, on_progress=None):
        self.ran += [index for index, _ in todo]
        super().run(todo, on_done, on_progress)


@pytest.mark.parametrize("env_name", ["cartpole", "swimmer"])
def test_dataset_is_bit_identical_for_any_number_of_chunks(env_name):
    whole = collect_plan(PLANS[env_name])
    assert whole.returns.shape == (PLANS[env_name].num_policies, PLANS[env_name].num_episodes)
    assert np.unique(whole.returns).size > 5  # real, varied returns, not a constant
    for size in (1, 3, 5):  # 12 (or 8) policies in 12/4/3 (8/3/2) chunks, uneven last chunk included
        split = collect_plan(_with_chunks(PLANS[env_name], size))
        np.testing.assert_array_equal(split.params, whole.params)
        np.testing.assert_array_equal(split.returns, whole.returns)


def test_cartpole_returns_match_gymnasium_with_the_same_streams():
    """Independent reference: gymnasium's CartPole-v1 stepped one episode at a time, actions from each episode's LCG."""
    import gymnasium

    from pvnviz.envs import cartpole
    plan = PLANS["cartpole"]
    dataset = collect_plan(plan)
    env = gymnasium.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    for k, rng in enumerate(policy_streams(plan.entropy, 0, 4)):
        params = glorot_params(plan.arch, 1, rng)
        np.testing.assert_array_equal(params[0], dataset.params[k])
        starts = cartpole.reset_states(rng, (1, plan.num_episodes))[0]
        seeds = rng.bit_generator.random_raw(plan.num_episodes)
        for b in range(plan.num_episodes):
            env.reset()
            env.state = starts[b].copy()
            lcg, total = int(seeds[b]), 0
            for _ in range(plan.horizon):
                obs = np.asarray(env.state, dtype=np.float32)
                probs = forward_numpy(plan.arch, params, np.repeat(obs[None, None], 2, axis=1))[0, 0]
                lcg = (lcg * int(LCG_MULTIPLIER) + int(LCG_INCREMENT)) % 2**64
                action = int((lcg >> 11) * (1.0 / 2**53) >= probs[0])
                _, reward, terminated, _, _ = env.step(action)
                total += reward
                if terminated:
                    break
            assert dataset.returns[k, b] == total, (k, b)


def test_episode_sampler_draws_actions_with_the_policy_probabilities():
    """Action frequencies of the LCG sampler against the softmax probabilities (5 standard errors)."""
    rng = np.random.default_rng(1)
    params = glorot_params(CARTPOLE, 3, rng)
    obs = rng.normal(size=(3, 4000, 4)).astype(np.float32)
    p_right = 1.0 - forward_numpy(CARTPOLE, params, obs)[..., 0]
    sampler = EpisodeSampler(CARTPOLE, params, rng.bit_generator.random_raw((3, 4000)))
    counts = sum(sampler(obs) for _ in range(50)) / 50.0
    for k in range(3):
        expected, spread = p_right[k].mean(), np.sqrt((p_right[k] * (1 - p_right[k])).sum() / 50.0) / 4000
        assert abs(counts[k].mean() - expected) < 5 * spread + 1e-9


def test_a_new_plan_clears_stale_chunks_and_resume_redoes_only_missing_or_damaged(tmp_path):
    plan = _with_chunks(PLANS["cartpole"], 3)  # 4 chunks
    whole = collect_plan(PLANS["cartpole"])
    store = ChunkStore(tmp_path / "chunks")
    first = CountingExecutor()
    collect_plan(plan, first, store)
    assert first.ran == [0, 1, 2, 3]
    assert sorted(p.name for p in store.folder.glob("chunk-*.npz")) == [f"chunk-0000{i}.npz" for i in range(4)]
    assert not list(store.folder.glob(".*tmp"))  # no temporary files left
    store.path(1).unlink()  # a lost chunk
    store.path(2).write_bytes(store.path(2).read_bytes()[:100])  # a truncated chunk
    with np.load(store.path(3)) as data:  # a chunk whose numbers were changed
        arrays = dict(data)
    arrays["returns"] = arrays["returns"] + 1
    np.savez(store.path(3), **arrays)
    again = CountingExecutor()
    resumed = collect_plan(plan, again, store, resume=True)
    assert again.ran == [1, 2, 3]
    np.testing.assert_array_equal(resumed.returns, whole.returns)
    np.testing.assert_array_equal(resumed.params, whole.params)
    fresh = CountingExecutor()
    collect_plan(plan, fresh, store, resume=False)  # without --resume everything is redone
    assert fresh.ran == [0, 1, 2, 3]


def test_resume_refuses_chunks_of_other_settings(tmp_path):
    store = ChunkStore(tmp_path / "chunks")
    collect_plan(_with_chunks(PLANS["cartpole"], 4), store=store)
    other_seed = Plan("cartpole", CARTPOLE, 12, 6, 80, entropy=7, chunk_policies=4)
    with pytest.raises(CollectError, match="other settings or another seed"):
        collect_plan(other_seed, store=store, resume=True)
    with pytest.raises(CollectError, match="--chunk-policies 4"):
        collect_plan(_with_chunks(PLANS["cartpole"], 5), store=store, resume=True)


def test_chunk_checksum_detects_a_changed_number():
    params, returns = np.zeros((2, 3), np.float32), np.ones((2, 4), np.float32)
    before = Chunk.hash(params, returns)
    returns[1, 2] = np.nextafter(np.float32(1), np.float32(2))
    assert Chunk.hash(params, returns) != before
