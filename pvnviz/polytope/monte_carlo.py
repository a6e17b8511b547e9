"""Monte Carlo state values of the 2-state MDP of Section 6.1: what Algorithm 3's sampled check measures.

Every policy ``x[k] = [P(a1|s1), P(a1|s2)]`` (K, 2) runs B episodes from each state, all K x S x B episodes
advancing together; an episode's return is its discounted reward sum, truncated after ``monte_carlo_horizon``
steps, where the rewards left weigh at most ``TRUNCATION_TOLERANCE``. The mean over B estimates V(s), whose
exact value is ``mdp.values`` (Eq. 2's closed form).
"""

from __future__ import annotations

import math

import numpy as np

from pvnviz.polytope import mdp as mdp_lib

TRUNCATION_TOLERANCE = 1e-6
"""A sampled check's episodes run until the discounted rewards left are below this (``monte_carlo_horizon``)."""


def monte_carlo_horizon(mdp: mdp_lib.TabularMDP, tolerance: float = TRUNCATION_TOLERANCE) -> int:
    """Steps H after which the discounted rewards left, at most gamma^H max|r| / (1 - gamma), are <= tolerance."""
    largest = float(np.max(np.abs(mdp.rewards)))
    if largest == 0.0 or mdp.gamma == 0.0:
        return 1
    left = tolerance * (1.0 - mdp.gamma) / largest
    return max(1, math.ceil(math.log(left) / math.log(mdp.gamma))) if left < 1.0 else 1


BLOCK_EPISODES = 2**20
"""Episodes advanced together at most: larger batches of policies run block by block, in order."""


def sampled_values(
    mdp: mdp_lib.TabularMDP, policies: np.ndarray, num_episodes: int, rng: np.random.Generator
) -> np.ndarray:
    """Monte Carlo state values (K, S): the mean discounted return of ``num_episodes`` episodes from each state.

    K policies x S start states x B episodes advance together (in blocks of policies of at most
    ``BLOCK_EPISODES`` episodes, one after the other from the same ``rng``), ``monte_carlo_horizon`` steps;
    actions a1 with probability ``x[k, s]``, next states drawn from ``P[s, a]``.
    """
    x = np.asarray(policies, dtype=float)  # (K, S)
    per_policy = x.shape[1] * num_episodes
    block = max(1, BLOCK_EPISODES // per_policy)
    parts = [_block_values(mdp, x[i : i + block], num_episodes, rng) for i in range(0, len(x), block)]
    return np.concatenate(parts) if parts else np.empty(x.shape)


def _block_values(mdp: mdp_lib.TabularMDP, x: np.ndarray, num_episodes: int, rng: np.random.Generator) -> np.ndarray:
    num_policies, num_states = x.shape
    state = np.broadcast_to(np.repeat(np.arange(num_states), num_episodes), (num_policies, num_states * num_episodes))
    state = state.copy()  # (K, S * B)
    rows = np.arange(num_policies)[:, None]
    cumulative = np.cumsum(mdp.transitions, axis=2)  # (S, A, S)
    returns = np.zeros(state.shape)
    discount = 1.0
    for _ in range(monte_carlo_horizon(mdp)):
        action = (rng.random(state.shape) >= x[rows, state]).astype(int)  # 0 is a1
        returns += discount * mdp.rewards[state, action]
        u = rng.random(state.shape)[..., None]
        state = np.minimum((u >= cumulative[state, action]).sum(-1), num_states - 1)
        discount *= mdp.gamma
    return returns.reshape(num_policies, num_states, num_episodes).mean(axis=2)
