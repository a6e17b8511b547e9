"""The generic path (pvnviz.envs.gym_vector through pvnviz.envs.families): returns, episode lengths and env-step
counts against gymnasium's own one-environment loop with the same seeds and actions; the Box mapping applied
before each step; keywords reaching the environment; measured steps stored with a dataset."""

import gymnasium
import numpy as np
import pytest

from pvnviz.core.policies import PolicyArch
from pvnviz.envs import families, gym_vector
from pvnviz.envs.gym_id import box_actions, parse_env_name
from pvnviz.envs.registry import get_env
from pvnviz.runs.collection import collect_dataset


def linear_policy(weights: np.ndarray, discrete: bool):
    """A deterministic policy of one observation row at a time (so batch and single runs agree to the bit):
    argmax of a linear map (Discrete) or its tanh (Box)."""

    def act(obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float64)
        out = np.empty((*obs.shape[:-1], weights.shape[0]))
        for j in range(weights.shape[0]):  # elementwise products summed in a fixed order, row by row
            out[..., j] = sum(obs[..., i] * weights[j, i] for i in range(weights.shape[1]))
        return out.argmax(-1) if discrete else np.tanh(out)

    return act


def reference(name: str, weights: np.ndarray, seeds: np.ndarray, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """Returns and lengths (K, B) from gymnasium's own loop: make, reset(seed=s), step until terminated, truncated
    or the horizon; Box actions mapped into the bounds as the pipeline maps them."""
    gym_id = parse_env_name(name)
    env = gymnasium.make(gym_id.id, **gym_id.kwargs_dict)
    discrete = isinstance(env.action_space, gymnasium.spaces.Discrete)
    returns, lengths = np.zeros(seeds.shape), np.zeros(seeds.shape, dtype=int)
    for k, b in np.ndindex(*seeds.shape):
        policy = linear_policy(weights[k], discrete)
        obs, _ = env.reset(seed=int(seeds[k, b]))
        for _ in range(horizon):
            action = policy(obs[None])[0]
            if not discrete:
                action = box_actions(action, env.action_space.low, env.action_space.high).astype(np.float32)
            obs, reward, terminated, truncated, _ = env.step(action)
            returns[k, b] += float(reward)
            lengths[k, b] += 1
            if terminated or truncated:
                break
    return returns, lengths


CASES = [
    ("gym:Acrobot-v1", 120),  # Discrete (3), reward -1 a step
    ("gym:MountainCar-v0", 150),  # Discrete, fixed length here
    ("gym:CartPole-v1?sutton_barto_reward=false", 200),  # keywords: the generic path; episodes end early
    ("gym:Pendulum-v1?g=2.5", 220),  # Box [-2, 2], mapped; its own 200-step limit ends every episode
    ("gym:MountainCarContinuous-v0", 100),  # Box [-1, 1]: as given
]


@pytest.mark.parametrize("name, horizon", CASES)
def test_generic_returns_and_steps_equal_gymnasiums_own_loop(name, horizon):
    env = families.generic_env(parse_env_name(name))  # whatever family get_env would pick: the generic path
    assert env.family == "gymnasium vector" and env.step_count == "measured"
    rng = np.random.default_rng(5)
    weights = rng.normal(0.0, 1.5, size=(3, env.act_dim, env.obs_dim))
    states = env.reset_states(rng, (3, 4))
    seeds = states[..., 0].astype(np.int64)
    policies = [linear_policy(weights[k], env.discrete) for k in range(3)]

    def batched(obs: np.ndarray) -> np.ndarray:
        # rows by policy; the block may be narrower than B once finished episodes are dropped
        return np.stack([policies[k](obs[k]) for k in range(obs.shape[0])])

    counted = env.rollout_counted_from_states(batched, states, horizon=horizon)
    want_returns, want_lengths = reference(name, weights, seeds, horizon)
    assert np.array_equal(counted.returns, want_returns)  # exact: the environment's own code, step for step
    assert counted.env_steps == int(want_lengths.sum())
    if name.startswith("gym:CartPole"):
        assert want_lengths.min() < horizon  # some episodes ended early: the block was compacted
    if name.startswith("gym:Pendulum"):
        assert (want_lengths == 200).all()  # truncated by its own time limit, before the horizon


def test_keywords_reach_the_environment():
    rng = np.random.default_rng(0)
    env_a = families.generic_env(parse_env_name("gym:Pendulum-v1?g=2.5"))
    env_b = families.generic_env(parse_env_name("gym:Pendulum-v1?g=15.0"))
    assert env_a.name == "gym:Pendulum-v1?g=2.5"
    states = env_a.reset_states(rng, (1, 3))
    still = lambda obs: np.zeros((*obs.shape[:-1], 1))  # noqa: E731 - no torque: gravity alone moves the rod
    a = env_a.rollout_returns_from_states(still, states, horizon=50)
    b = env_b.rollout_returns_from_states(still, states, horizon=50)
    assert not np.allclose(a, b)
    want, _ = reference("gym:Pendulum-v1?g=15.0", np.zeros((1, 1, 3)), states[..., 0].astype(int), 50)
    assert np.array_equal(b, want)


def test_box_actions_are_mapped_before_the_step():
    env = families.generic_env(parse_env_name("gym:Pendulum-v1"))
    assert isinstance(env.dynamics, families.BoxActions)
    seen = []
    inner = env.dynamics.inner
    original = inner.step

    def spy(state, actions):
        seen.append(np.array(actions))
        return original(state, actions)

    inner.step = spy
    try:
        half = lambda obs: np.full((*obs.shape[:-1], 1), 0.5)  # noqa: E731
        env.rollout_returns_from_states(half, env.reset_states(np.random.default_rng(1), (1, 2)), horizon=3)
    finally:
        del inner.step
    assert np.array_equal(seen[0], np.full((1, 2, 1), 1.0))  # tanh 0.5 -> torque 1.0 in [-2, 2]


def test_the_papers_environments_by_gym_id_are_the_built_in_ones():
    for name, built_in in (("gym:CartPole-v1", "cartpole"), ("gym:Swimmer-v5", "swimmer")):
        env = get_env(name)
        assert env.family == "built-in" and type(env.dynamics) is type(get_env(built_in).dynamics)
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    random_left = lambda obs: np.zeros(obs.shape[:-1], dtype=np.int64)  # noqa: E731
    a = get_env("gym:CartPole-v1").rollout_returns(random_left, num_policies=2, num_episodes=3, horizon=50, rng=rng_a)
    b = get_env("cartpole").rollout_returns(random_left, num_policies=2, num_episodes=3, horizon=50, rng=rng_b)
    assert np.array_equal(a, b)


def test_visited_states_are_observations_of_the_environment():
    env = families.generic_env(parse_env_name("gym:Acrobot-v1"))
    states = env.visited_states(np.random.default_rng(0), 16)
    assert states.shape == (16, 6) and states.dtype == np.float32
    space = gymnasium.make("Acrobot-v1").observation_space
    assert all(space.contains(s) for s in states)
    assert np.abs(states[:, :4]).max() <= 1.0  # cosines and sines
    assert env.state_bounds[0] == (-1.0, 1.0)


def test_dataset_keeps_the_steps_its_rollouts_took():
    name = "gym:CartPole-v1?sutton_barto_reward=false"  # reward 1 a step: a return is its episode's length
    env = get_env(name)
    arch = PolicyArch(env.obs_dim, env.act_dim, (8,), env.discrete)
    dataset = collect_dataset(env, arch, 6, 4, 100, np.random.default_rng(2), chunk_policies=4)
    assert dataset.env_steps == int(round(float(dataset.returns.astype(np.float64).sum())))
    assert dataset.num_env_steps == dataset.env_steps < 6 * 4 * 100
    acrobot = get_env("gym:Acrobot-v1")
    arch = PolicyArch(acrobot.obs_dim, acrobot.act_dim, (8,), acrobot.discrete)
    short = collect_dataset(acrobot, arch, 3, 2, 40, np.random.default_rng(2))
    assert short.num_env_steps == 3 * 2 * 40  # no random Acrobot policy swings up within 40 steps
    assert acrobot.episode_steps(short.returns, 40) == 3 * 2 * 40  # returns alone: the most it could be


def test_vector_mode_is_sync_unless_a_few_slow_episodes():
    assert gym_vector.vector_mode(1000, 100.0, cores=2) == "sync"
    assert gym_vector.vector_mode(8, 100.0, cores=2) == "async"
    assert gym_vector.vector_mode(8, 50_000.0, cores=2) == "sync"
    assert gym_vector.vector_mode(8, 100.0, cores=1) == "sync"


def test_async_vector_env_gives_the_same_returns_and_leaves_no_process():
    import multiprocessing

    env = families.generic_env(parse_env_name("gym:Acrobot-v1"))
    slow = gym_vector.GymVector(env.dynamics.gym_id, env.dynamics.spaces, steps_per_second=100.0)
    states = env.reset_states(np.random.default_rng(4), (2, 2))
    policy = lambda obs: np.ones(obs.shape[:-1], dtype=np.int64)  # noqa: E731
    from pvnviz.envs.rollout import rollout_counted

    fast = rollout_counted(env.dynamics, policy, states, 30, compact=True)
    forked = rollout_counted(slow, policy, states, 30, compact=True)
    assert np.array_equal(fast.returns, forked.returns) and fast.env_steps == forked.env_steps
    assert not multiprocessing.active_children()


def test_a_runs_checks_count_the_steps_they_took(tmp_path):
    """Algorithm 3's checks on an environment whose episodes end early: their env steps as counted, equal to
    what CartPole's reward (1 a step) says they were, below the horizon's bound; kept when the run is saved."""
    from pvnviz.runs.files import load_result, save_result
    from pvnviz.runs.pipeline import ExperimentConfig, run_experiment
    from pvnviz.runs.store import write_run

    config = ExperimentConfig(
        env_name="gym:CartPole-v1?sutton_barto_reward=false",
        num_policies=20,
        num_episodes=3,
        horizon=100,
        return_limit=None,
        train_steps=20,
        ascent_steps=20,
        eval_every=10,
        eval_episodes=4,
        fresh_episodes=2,
        inputs=("fingerprint",),
    )
    result = run_experiment(config, seed=1)
    trace = result.traces["fingerprint"]
    summary = result.summary()
    from_returns = int(round(float(trace.true_returns.sum()) * config.eval_episodes))
    assert trace.check_env_steps == from_returns == summary["inputs"]["fingerprint"]["check_env_steps"]
    assert from_returns < trace.true_returns.size * config.eval_episodes * config.horizon
    assert summary["dataset_env_steps"] == int(round(float(result.dataset.returns.astype(float).sum())))
    save_result(result, str(tmp_path))
    write_run(tmp_path, config.env_name, 1, config, summary)
    loaded = load_result(tmp_path, config.env_name)
    assert loaded.traces["fingerprint"].check_env_steps == trace.check_env_steps
    assert loaded.dataset.env_steps == result.dataset.env_steps
    again = loaded.summary()
    assert again["inputs"]["fingerprint"]["check_env_steps"] == summary["inputs"]["fingerprint"]["check_env_steps"]
