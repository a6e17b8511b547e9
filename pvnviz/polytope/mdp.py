"""Exact tabular MDPs: values, objective and policy gradient in closed form.

Implements Eq. (2) of the paper (Section 3), J(pi) = d0^T (I - gamma P_pi)^-1 r_pi,
and its gradient, for the 2-state MDP of Appendix A (value-polytope experiments,
Section 6.1) and for random MDPs of the same shape.

Array layout:
- ``transitions[s, a, s']``: P(s' | s, a), shape (S, A, S), rows sum to one.
- ``rewards[s, a]``: r(s, a), shape (S, A).
- ``d0[s]``: start distribution, shape (S,).
- ``pi[k, s, a]``: a batch of K stochastic policies, shape (K, S, A).
- For two actions, a policy is the vector ``x[k, s] = P(a1 | s)`` (the paper's
  ``[P(a1|s1), P(a1|s2)]``), shape (K, S); ``policy_matrix`` turns it into ``pi``.

Appendix A's flat convention (after Dadashi et al. 2019): r(s_i, a_j) = r_hat[i*|A| + j]
and P(s_k | s_i, a_j) = P_hat[i*|A| + j][k].
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

PAPER_GAMMA = 0.8
PAPER_REWARDS = (-0.45, -0.1, 0.5, 0.5)
PAPER_TRANSITIONS = ((0.6, 0.4), (0.99, 0.01), (0.2, 0.8), (0.99, 0.01))


@dataclass(frozen=True, eq=False)
class TabularMDP:
    """A finite MDP with known dynamics; validated on construction."""

    transitions: np.ndarray
    """P[s, a, s'], shape (S, A, S)."""
    rewards: np.ndarray
    """r[s, a], shape (S, A)."""
    gamma: float
    """Discount factor in [0, 1)."""
    d0: np.ndarray
    """Start distribution over states, shape (S,)."""

    def __post_init__(self) -> None:
        P = np.asarray(self.transitions, dtype=float)
        r = np.asarray(self.rewards, dtype=float)
        d0 = np.asarray(self.d0, dtype=float)
        if P.ndim != 3 or P.shape[0] != P.shape[2]:
            raise ValueError(f"transitions must have shape (S, A, S); got {P.shape}.")
        num_states, num_actions = P.shape[:2]
        if r.shape != (num_states, num_actions):
            raise ValueError(f"rewards must have shape (S, A) = {(num_states, num_actions)}; got {r.shape}.")
        if d0.shape != (num_states,):
            raise ValueError(f"d0 must have {num_states} entries; got shape {d0.shape}.")
        if not np.all(np.isfinite(P)) or not np.all(np.isfinite(r)):
            raise ValueError("transitions and rewards must be finite numbers.")
        if np.any(P < 0) or not np.allclose(P.sum(axis=2), 1.0, atol=1e-9):
            bad = np.argwhere(~np.isclose(P.sum(axis=2), 1.0, atol=1e-9) | np.any(P < 0, axis=2))
            s, a = bad[0]
            raise ValueError(
                f"transition row P(.|s{s + 1}, a{a + 1}) = {np.round(P[s, a], 4).tolist()} must be "
                "non-negative and sum to 1; change the probabilities so each row sums to 1."
            )
        if np.any(d0 < 0) or not np.isclose(d0.sum(), 1.0, atol=1e-9):
            raise ValueError(f"d0 = {d0.tolist()} must be non-negative and sum to 1.")
        if not (0.0 <= float(self.gamma) < 1.0):
            raise ValueError(f"gamma = {self.gamma} must be in [0, 1); pick e.g. 0.8.")
        object.__setattr__(self, "transitions", P)
        object.__setattr__(self, "rewards", r)
        object.__setattr__(self, "d0", d0)
        object.__setattr__(self, "gamma", float(self.gamma))

    @property
    def num_states(self) -> int:
        return self.transitions.shape[0]

    @property
    def num_actions(self) -> int:
        return self.transitions.shape[1]

    @classmethod
    def from_flat(
        cls,
        rewards_flat: tuple[float, ...] | list[float],
        transitions_flat: tuple[tuple[float, ...], ...] | list[list[float]],
        gamma: float,
        d0: tuple[float, ...] | list[float] | None = None,
        num_actions: int = 2,
    ) -> TabularMDP:
        """Build from Appendix A's flat convention r_hat[i*|A|+j], P_hat[i*|A|+j][k]."""
        r_hat = np.asarray(rewards_flat, dtype=float)
        P_hat = np.asarray(transitions_flat, dtype=float)
        if r_hat.ndim != 1 or r_hat.size % num_actions:
            raise ValueError(f"need |S|*|A| rewards with |A| = {num_actions}; got {r_hat.size}.")
        num_states = r_hat.size // num_actions
        if P_hat.shape != (num_states * num_actions, num_states):
            raise ValueError(f"transitions need shape ({num_states * num_actions}, {num_states}); got {P_hat.shape}.")
        if d0 is None:
            d0 = np.full(num_states, 1.0 / num_states)
        return cls(
            transitions=P_hat.reshape(num_states, num_actions, num_states),
            rewards=r_hat.reshape(num_states, num_actions),
            gamma=gamma,
            d0=np.asarray(d0, dtype=float),
        )


def paper_mdp(d0: tuple[float, float] = (0.5, 0.5)) -> TabularMDP:
    """The 2-state, 2-action MDP of Appendix A (gamma 0.8)."""
    return TabularMDP.from_flat(PAPER_REWARDS, PAPER_TRANSITIONS, PAPER_GAMMA, d0)


def random_mdp(rng: np.random.Generator, num_states: int = 2, num_actions: int = 2, gamma: float = 0.8) -> TabularMDP:
    """A random MDP: rewards uniform in [-1, 1], transition rows Dirichlet(1), uniform d0."""
    P = rng.dirichlet(np.ones(num_states), size=(num_states, num_actions))
    r = rng.uniform(-1.0, 1.0, size=(num_states, num_actions))
    return TabularMDP(P, np.round(r, 3), gamma, np.full(num_states, 1.0 / num_states))


def policy_matrix(x: np.ndarray) -> np.ndarray:
    """Two-action policies x[k, s] = P(a1|s) -> pi[k, s, a] (K, S, 2)."""
    x = np.asarray(x, dtype=float)
    return np.stack([x, 1.0 - x], axis=-1)


def _induced(mdp: TabularMDP, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    P_pi = np.einsum("ksa,sat->kst", pi, mdp.transitions)  # (K, S, S)
    r_pi = np.einsum("ksa,sa->ks", pi, mdp.rewards)  # (K, S)
    return P_pi, r_pi


def values(mdp: TabularMDP, pi: np.ndarray) -> np.ndarray:
    """Exact state values V[k, s] = ((I - gamma P_pi)^-1 r_pi)[s] for a batch (K, S, A)."""
    pi = np.asarray(pi, dtype=float)
    P_pi, r_pi = _induced(mdp, pi)
    eye = np.eye(mdp.num_states)
    return np.linalg.solve(eye - mdp.gamma * P_pi, r_pi[..., None])[..., 0]


def objective(mdp: TabularMDP, pi: np.ndarray) -> np.ndarray:
    """J[k] = d0 . V[k] for a batch of policies (K, S, A)."""
    return values(mdp, pi) @ mdp.d0


def q_values(mdp: TabularMDP, V: np.ndarray) -> np.ndarray:
    """Q[k, s, a] = r[s, a] + gamma * sum_s' P[s, a, s'] V[k, s']."""
    return mdp.rewards + mdp.gamma * np.einsum("sat,kt->ksa", mdp.transitions, V)


def occupancy(mdp: TabularMDP, pi: np.ndarray) -> np.ndarray:
    """Discounted state weighting d_pi[k, s] = d0^T (I - gamma P_pi)^-1 (Section 2)."""
    P_pi, _ = _induced(mdp, np.asarray(pi, dtype=float))
    A = np.eye(mdp.num_states) - mdp.gamma * P_pi
    # Solve A^T d = d0 for every policy.
    rhs = np.broadcast_to(mdp.d0, (A.shape[0], mdp.num_states))[..., None]
    return np.linalg.solve(np.swapaxes(A, 1, 2), rhs)[..., 0]


def gradient(mdp: TabularMDP, x: np.ndarray) -> np.ndarray:
    """Exact dJ/dx[k, s] for two-action policies x[k, s] = P(a1|s).

    By the policy gradient theorem (Eq. 1), dJ/dpi(a|s) = d_pi(s) Q(s, a); with
    pi(a2|s) = 1 - x_s this gives dJ/dx_s = d_pi(s) (Q(s, a1) - Q(s, a2)).
    """
    if mdp.num_actions != 2:
        raise ValueError("the [P(a1|s)] parameterisation needs exactly 2 actions.")
    pi = policy_matrix(x)
    V = values(mdp, pi)
    Q = q_values(mdp, V)
    return occupancy(mdp, pi) * (Q[..., 0] - Q[..., 1])


def deterministic_policies(mdp: TabularMDP) -> np.ndarray:
    """All |A|^|S| deterministic policies as pi (N, S, A): the polytope's corners."""
    choices = itertools.product(range(mdp.num_actions), repeat=mdp.num_states)
    eye = np.eye(mdp.num_actions)
    return np.array([[eye[a] for a in actions] for actions in choices])


def optimal_policy(mdp: TabularMDP) -> tuple[np.ndarray, float]:
    """The best deterministic policy (an optimal policy exists among them) and its J."""
    corners = deterministic_policies(mdp)
    J = objective(mdp, corners)
    best = int(np.argmax(J))
    return corners[best], float(J[best])


def sample_policies(rng: np.random.Generator, num_policies: int, num_states: int = 2) -> np.ndarray:
    """Policies x[k, s] = P(a1|s) drawn uniformly from the policy square (K, S)."""
    return rng.uniform(0.0, 1.0, size=(num_policies, num_states))
