"""Algorithm 1's loop (``pvnviz.core.collect.collect_returns``) as a pure function over any batched environment:
the toy environment of tests/toy_env.py, which ``pvnviz.core`` has never heard of."""

import numpy as np
import toy_env

from pvnviz.core.collect import collect_returns, policy_streams
from pvnviz.core.policies import PolicyArch, glorot_params

ARCH = PolicyArch(2, 2, (8,), True)


def test_policies_give_the_same_data_alone_or_together():
    env = toy_env.batched_env()
    params, returns = collect_returns(env, ARCH, 7, 0, 6, num_episodes=5, horizon=60)
    assert params.shape == (6, ARCH.num_params) and params.dtype == np.float32 and returns.shape == (6, 5)
    parts = [collect_returns(env, ARCH, 7, lo, hi, 5, 60) for lo, hi in ((0, 1), (1, 4), (4, 6))]
    np.testing.assert_array_equal(np.concatenate([p for p, _ in parts]), params)
    np.testing.assert_array_equal(np.concatenate([r for _, r in parts]), returns)
    again = collect_returns(env, ARCH, 7, 0, 6, 5, 60)
    np.testing.assert_array_equal(again[1], returns)  # the same entropy: the same episodes
    assert not np.array_equal(collect_returns(env, ARCH, 8, 0, 6, 5, 60)[1], returns)  # another: others


def test_each_policy_draws_its_weights_first_from_its_own_stream():
    params, _ = collect_returns(toy_env.batched_env(), ARCH, 7, 3, 5, 2, 10)
    expected = np.concatenate([glorot_params(ARCH, 1, rng) for rng in policy_streams(7, 3, 5)])
    np.testing.assert_array_equal(params, expected)


def test_returns_are_episode_lengths_within_the_horizon():
    _, returns = collect_returns(toy_env.batched_env(), ARCH, 1, 0, 4, 6, 30)
    assert np.all((returns >= 1) & (returns <= 30)) and np.all(returns == np.round(returns))
