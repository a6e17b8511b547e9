"""Exact MDP math against independent references: value iteration, Monte Carlo, finite differences."""

import numpy as np
import pytest

from pvnviz.polytope import mdp as mdp_lib


def policy_evaluation_by_iteration(m: mdp_lib.TabularMDP, pi: np.ndarray, iters: int = 2000) -> np.ndarray:
    """V <- r_pi + gamma P_pi V, one policy at a time, plain loops (independent of mdp.values)."""
    num_states, num_actions = m.rewards.shape
    V = np.zeros(num_states)
    for _ in range(iters):
        V_new = np.zeros(num_states)
        for s in range(num_states):
            for a in range(num_actions):
                V_new[s] += pi[s, a] * (
                    m.rewards[s, a] + m.gamma * sum(m.transitions[s, a, t] * V[t] for t in range(num_states))
                )
        V = V_new
    return V


def monte_carlo_values(m, pi, rng, num_episodes=40000, horizon=80):
    """Discounted returns of sampled trajectories from each start state, vectorised over episodes."""
    num_states = m.num_states
    estimates, errors = [], []
    for s0 in range(num_states):
        state = np.full(num_episodes, s0)
        ret = np.zeros(num_episodes)
        for t in range(horizon):
            action = (rng.random(num_episodes) > pi[state, 0]).astype(int)  # a1 with prob pi[s, 0]
            ret += m.gamma**t * m.rewards[state, action]
            cum = np.cumsum(m.transitions[state, action], axis=1)
            state = (rng.random(num_episodes)[:, None] > cum).sum(1)
        estimates.append(ret.mean())
        errors.append(ret.std() / np.sqrt(num_episodes))
    return np.array(estimates), np.array(errors)


MDPS = [mdp_lib.paper_mdp(), mdp_lib.random_mdp(np.random.default_rng(3)), mdp_lib.random_mdp(np.random.default_rng(9))]


@pytest.mark.parametrize("m", MDPS)
def test_values_match_value_iteration(m):
    x = np.random.default_rng(0).uniform(size=(6, 2))
    pi = mdp_lib.policy_matrix(x)
    V = mdp_lib.values(m, pi)
    for k in range(len(x)):
        np.testing.assert_allclose(V[k], policy_evaluation_by_iteration(m, pi[k]), atol=1e-9)


def test_values_match_monte_carlo():
    m = mdp_lib.paper_mdp()
    rng = np.random.default_rng(1)
    for x in ([0.5, 0.0], [0.2, 0.9], [1.0, 1.0]):
        pi = mdp_lib.policy_matrix(np.array([x]))
        exact = mdp_lib.values(m, pi)[0]
        estimate, stderr = monte_carlo_values(m, pi[0], rng)
        assert np.all(np.abs(estimate - exact) < 4 * stderr + 1e-4), (x, estimate, exact, stderr)


@pytest.mark.parametrize("m", MDPS)
def test_gradient_matches_finite_differences(m):
    x = np.random.default_rng(2).uniform(0.05, 0.95, size=(8, 2))
    grad = mdp_lib.gradient(m, x)
    eps = 1e-6
    for s in range(2):
        dx = np.zeros(2)
        dx[s] = eps
        J_plus = mdp_lib.objective(m, mdp_lib.policy_matrix(x + dx))
        J_minus = mdp_lib.objective(m, mdp_lib.policy_matrix(x - dx))
        np.testing.assert_allclose(grad[:, s], (J_plus - J_minus) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_objective_is_d0_weighted_values():
    m = mdp_lib.paper_mdp(d0=(0.3, 0.7))
    pi = mdp_lib.policy_matrix(np.array([[0.3, 0.6]]))
    assert mdp_lib.objective(m, pi)[0] == pytest.approx(mdp_lib.values(m, pi)[0] @ [0.3, 0.7])


def test_corners_are_the_deterministic_policies():
    m = mdp_lib.paper_mdp()
    corners = mdp_lib.deterministic_policies(m)
    assert corners.shape == (4, 2, 2)
    assert set(map(tuple, corners[:, :, 0].tolist())) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert np.all((corners == 0) | (corners == 1)) and np.allclose(corners.sum(-1), 1)


def test_optimal_policy_matches_value_iteration_and_dominates_samples():
    m = mdp_lib.paper_mdp()
    best_pi, best_J = mdp_lib.optimal_policy(m)
    V = np.zeros(2)  # Bellman optimality iteration, independent of the corner enumeration
    for _ in range(2000):
        V = (m.rewards + m.gamma * m.transitions @ V).max(1)
    assert best_J == pytest.approx(m.d0 @ V, abs=1e-9)
    greedy = (m.rewards + m.gamma * m.transitions @ V).argmax(1)
    assert np.array_equal(best_pi.argmax(1), greedy)
    samples = mdp_lib.sample_policies(np.random.default_rng(0), 5000)
    assert mdp_lib.objective(m, mdp_lib.policy_matrix(samples)).max() <= best_J + 1e-12
    np.testing.assert_array_equal(best_pi[:, 0], [1.0, 1.0])  # the paper MDP's optimum is [1, 1]


def test_appendix_a_index_convention():
    m = mdp_lib.paper_mdp()
    assert m.rewards[0, 1] == -0.1 and m.rewards[1, 0] == 0.5  # r(s_i, a_j) = r_hat[2i + j]
    np.testing.assert_array_equal(m.transitions[0, 1], [0.99, 0.01])  # P(.|s1, a2) = P_hat[1]
    np.testing.assert_array_equal(m.transitions[1, 0], [0.2, 0.8])  # P(.|s2, a1) = P_hat[2]
    assert m.gamma == 0.8


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(transitions_flat=[[0.5, 0.4], [0.99, 0.01], [0.2, 0.8], [0.99, 0.01]]), "sum to 1"),
        (dict(transitions_flat=[[1.2, -0.2], [0.99, 0.01], [0.2, 0.8], [0.99, 0.01]]), "non-negative"),
        (dict(gamma=1.0), "gamma"),
        (dict(gamma=-0.1), "gamma"),
        (dict(d0=[0.7, 0.7]), "d0"),
        (dict(rewards_flat=[1.0, 2.0, 3.0]), "rewards"),
        (dict(transitions_flat=[[0.5, 0.5]] * 3), "transitions"),
    ],
)
def test_invalid_mdps_are_refused_with_a_clear_message(kwargs, message):
    args = dict(rewards_flat=mdp_lib.PAPER_REWARDS, transitions_flat=mdp_lib.PAPER_TRANSITIONS, gamma=0.8)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        mdp_lib.TabularMDP.from_flat(**args)


def test_random_mdp_is_seeded_and_valid():
    a = mdp_lib.random_mdp(np.random.default_rng(5))
    b = mdp_lib.random_mdp(np.random.default_rng(5))
    np.testing.assert_array_equal(a.transitions, b.transitions)
    np.testing.assert_allclose(a.transitions.sum(-1), 1.0)
