"""Tests for the classic-control family (pvnviz.envs.classic: Acrobot, MountainCar, MountainCarContinuous, Pendulum):
each batched step function against gymnasium's own environment, one instance per episode, step by step and bit for
bit (observations, rewards, terminated, truncated), through the one rollout loop (pvnviz.envs.rollout).

``python tests/test_classic_envs.py`` prints the steps per second of each batched step function next to
``gymnasium.make_vec(..., vectorization_mode="sync")`` (K x B = 1000 episodes, 200 steps of random actions).
"""

from __future__ import annotations

import time

import gymnasium
import numpy as np
import pytest

from pvnviz.core.policies import PolicyArch
from pvnviz.envs import acrobot, classic, mountain_car, pendulum, rollout
from pvnviz.envs.scalar_square import square_f32, square_f64

K, B = 3, 4
CONTINUOUS = {"MountainCarContinuous-v0", "Pendulum-v1"}


def gym_env(gym_id: str, horizon: int, **kwargs) -> gymnasium.Env:
    return gymnasium.make(gym_id, max_episode_steps=horizon, **kwargs)


def gym_state(gym_id: str, state: np.ndarray) -> np.ndarray:
    """An initial state as gymnasium's reset leaves it (Acrobot: float32; the others float64)."""
    return np.array(state, dtype=np.float32 if gym_id == "Acrobot-v1" else np.float64)


def gym_observation(env: gymnasium.Env, gym_id: str) -> np.ndarray:
    inner = env.unwrapped
    if gym_id == "Acrobot-v1":
        return inner._get_ob()
    if gym_id == "Pendulum-v1":
        return inner._get_obs()
    return np.array(inner.state, dtype=np.float32)


class Scripted:
    """A policy_fn for both sides: ``act(obs, t, episode)`` per episode; follows its episodes through compaction."""

    def __init__(self, act, shape: tuple[int, int]):
        self.act, self.t = act, 0
        self.episodes = np.arange(shape[0] * shape[1]).reshape(shape)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        actions = np.stack(
            [np.stack([self.act(obs[k, w], self.t, self.episodes[k, w]) for w in range(obs.shape[1])])
             for k in range(obs.shape[0])]
        )
        self.t += 1
        return actions

    def compact(self, order: np.ndarray) -> None:
        self.episodes = np.take_along_axis(self.episodes, order, axis=1)


def random_actions(gym_id: str, horizon: int, seed: int, scale: float = 1.0):
    """act(obs, t, episode) from a table of uniformly random actions (continuous: ``scale`` times the Box)."""
    rng = np.random.default_rng(seed)
    if gym_id in CONTINUOUS:
        high = pendulum.MAX_TORQUE if gym_id == "Pendulum-v1" else 1.0
        table = rng.uniform(-high * scale, high * scale, size=(K * B, horizon, 1)).astype(np.float32)
    else:
        table = rng.integers(0, 3, size=(K * B, horizon))
    return lambda obs, t, episode: table[episode, t]


def gym_episodes(gym_id, kwargs, initial, act, horizon, seeds=None):
    """Every episode (K*B) in its own gymnasium env: observations, rewards, terminated, truncated per step."""
    out = []
    for e, start in enumerate(initial.reshape(-1, initial.shape[-1])):
        env = gym_env(gym_id, horizon, **kwargs)
        obs, _ = env.reset(seed=0 if seeds is None else int(seeds[e]))
        if seeds is None:
            env.unwrapped.state = gym_state(gym_id, start)
            obs = gym_observation(env, gym_id)
        else:
            np.testing.assert_array_equal(np.asarray(env.unwrapped.state, np.float64), start)
        record = {"obs": [obs], "reward": [], "terminated": [], "truncated": [], "state": []}
        for t in range(horizon):
            action = act(obs, t, e)
            obs, reward, terminated, truncated, _ = env.step(action if gym_id in CONTINUOUS else int(action))
            state = np.array(env.unwrapped.state, np.float64)  # MountainCar's is a tuple, may hold the int 0
            for key, value in zip(record, (obs, reward, terminated, truncated, state), strict=True):
                record[key].append(value)
            if terminated or truncated:
                break
        env.close()
        out.append(record)
    return out


def assert_same_episodes(gym_id, kwargs, initial, act, horizon, seeds=None):
    """Our recorded rollout of K x B episodes equals gymnasium's, bit for bit; returns how many terminated."""
    step = classic.dynamics(gym_id, kwargs)
    ours = rollout.record(step, Scripted(act, (K, B)), initial, horizon)
    reference = gym_episodes(gym_id, kwargs, initial, act, horizon, seeds)
    terminated = 0
    for e, ref in enumerate(reference):
        k, b = divmod(e, B)
        length = len(ref["reward"])
        obs = np.stack(ref["obs"])
        assert obs.dtype == np.float32
        assert np.array_equal(ours.observations[k, b, : length + 1], obs), f"{gym_id} episode {e}: observations"
        assert np.array_equal(ours.frames[k, b, 1 : length + 1], np.stack(ref["state"])), f"{gym_id} {e}: states"
        assert np.array_equal(ours.rewards[k, b, :length], np.array(ref["reward"], np.float64)), f"episode {e}"
        assert ours.active[k, b, :length].all() and not ours.active[k, b, length:].any()
        assert list(ours.done[k, b, :length]) == ref["terminated"]
        assert ref["truncated"][-1] == (length == horizon and not ref["terminated"][-1])
        assert ours.rewards[k, b, length:].sum() == 0.0
        assert ours.returns[k, b] == sum(ref["reward"])  # float sums in the same order
        terminated += ref["terminated"][-1]
    return terminated


def seeded_starts(gym_id: str, base: int) -> tuple[np.ndarray, np.ndarray]:
    """(K, B, state) initial states, episode e drawn as gymnasium's ``reset(seed=base + e)`` draws it."""
    spec = classic.batched_env(gym_id)
    seeds = base + np.arange(K * B)
    starts = np.stack([spec.reset_states(np.random.default_rng(int(s)), (1,))[0] for s in seeds])
    return starts.reshape(K, B, -1), seeds


HORIZONS = {"Acrobot-v1": 500, "MountainCar-v0": 200, "MountainCarContinuous-v0": 300, "Pendulum-v1": 200}


@pytest.mark.parametrize("gym_id", classic.IDS)
def test_random_actions_match_gymnasium_bit_for_bit(gym_id):
    initial, seeds = seeded_starts(gym_id, 100)
    assert_same_episodes(gym_id, {}, initial, random_actions(gym_id, HORIZONS[gym_id], 1), HORIZONS[gym_id], seeds)


@pytest.mark.parametrize("gym_id", ["MountainCarContinuous-v0", "Pendulum-v1"])
def test_actions_outside_the_box_are_clipped_as_gymnasium_clips_them(gym_id):
    initial, seeds = seeded_starts(gym_id, 200)
    act = random_actions(gym_id, 200, 2, scale=3.0)  # two thirds of the actions beyond the bounds

    def edges(obs, t, episode):
        if episode % 4 == 0:  # exactly on the bounds
            high = np.float32(pendulum.MAX_TORQUE if gym_id == "Pendulum-v1" else 1.0)
            return np.array([high if t % 2 else -high], np.float32)
        return act(obs, t, episode)

    assert_same_episodes(gym_id, {}, initial, edges, 200, seeds)


def pump(gym_id: str):
    """A bang-bang policy that pumps energy in (to the goal, the speed limits and the walls)."""
    if gym_id == "Pendulum-v1":
        return lambda obs, t, e: np.array([(2.0 if obs[2] >= 0 else -2.0) * (1 + e % 3)], np.float32)
    if gym_id == "Acrobot-v1":
        return lambda obs, t, e: 2 if obs[4] * (1 if e % 2 else -1) >= 0 or t < 3 else 0
    if gym_id == "MountainCar-v0":
        return lambda obs, t, e: 2 if obs[1] >= 0 else 0
    return lambda obs, t, e: np.array([(1.0 if obs[1] >= 0 else -1.0) * (1 + (e % 3) / 2)], np.float32)


@pytest.mark.parametrize("gym_id", classic.IDS)
def test_edges_match_gymnasium(gym_id):
    """Pumping policies reach the goals, the speed limits and MountainCar's left wall; gymnasium agrees."""
    initial, seeds = seeded_starts(gym_id, 300)
    terminated = assert_same_episodes(gym_id, {}, initial, pump(gym_id), HORIZONS[gym_id], seeds)
    if gym_id != "Pendulum-v1":
        assert terminated >= K * B // 2  # the test covers reaching the goal


def placed_starts(gym_id: str) -> np.ndarray:
    """(K, B, state) starts placed at the edges: near the goal, the left wall, the speed limits."""
    if gym_id == "Acrobot-v1":
        rows = [[1.9, 0.0, 2.0, 0.0], [2.5, 0.5, 0.0, 0.0], [-1.9, 0.0, -2.0, 0.0], [3.1, 0.0, 12.5, 28.2],
                [-3.1, -3.1, -12.5, -28.2], [0.0, 3.14, 0.0, 0.0]]
    elif gym_id == "Pendulum-v1":
        rows = [[0.0, 7.99], [np.pi, -8.0], [-3.1, 8.0], [0.01, 0.0], [3.14159, 0.0], [-np.pi, 1.0]]
    else:
        rows = [[-1.19, -0.07], [-1.2, -0.01], [-1.2, 0.0], [0.44, 0.05], [0.49, 0.07], [0.59, 0.0]]
    rows = np.array(rows * (K * B // len(rows) + 1))[: K * B]
    if gym_id == "Acrobot-v1":
        rows = rows.astype(np.float32).astype(np.float64)
    return rows.reshape(K, B, -1)


@pytest.mark.parametrize("gym_id", classic.IDS)
def test_placed_edge_states_match_gymnasium(gym_id):
    initial = placed_starts(gym_id)
    left = (lambda o, t, e: np.array([-3.0 if e % 2 else -1.0], np.float32)) if gym_id in CONTINUOUS else (
        lambda o, t, e: 0)
    terminated = assert_same_episodes(gym_id, {}, initial, left, 60)
    terminated += assert_same_episodes(gym_id, {}, initial, pump(gym_id), 60)
    if gym_id != "Pendulum-v1":
        assert terminated >= 4


def test_pendulum_gravity_keyword_matches_gymnasium():
    initial, seeds = seeded_starts("Pendulum-v1", 400)
    act = random_actions("Pendulum-v1", 100, 4)
    assert_same_episodes("Pendulum-v1", {"g": 2.0}, initial, act, 100, seeds)
    assert_same_episodes("Pendulum-v1", {"g": 2}, initial, act, 100, seeds)
    light = rollout.record(classic.dynamics("Pendulum-v1", {"g": 2.0}), Scripted(act, (K, B)), initial, 100)
    default = rollout.record(classic.dynamics("Pendulum-v1"), Scripted(act, (K, B)), initial, 100)
    assert np.abs(light.observations - default.observations).max() > 0.1  # the keyword changes the dynamics


@pytest.mark.parametrize("gym_id", ["MountainCar-v0", "MountainCarContinuous-v0"])
def test_goal_velocity_keyword_matches_gymnasium(gym_id):
    initial, seeds = seeded_starts(gym_id, 500)
    terminated = assert_same_episodes(gym_id, {"goal_velocity": 0.02}, initial, pump(gym_id), 200, seeds)
    assert terminated >= 1


def test_unknown_keywords_are_refused_naming_the_keywords():
    with pytest.raises(ValueError, match="its keywords are: g "):
        classic.batched_env("Pendulum-v1", {"gravity": 9.8})
    with pytest.raises(ValueError, match="its keywords are: none"):
        classic.batched_env("Acrobot-v1", {"g": 1.0})
    with pytest.raises(ValueError, match="goal_velocity"):
        classic.batched_env("MountainCar-v0", {"goal_position": 0.4})
    with pytest.raises(ValueError, match="finite number"):
        classic.batched_env("Pendulum-v1", {"g": "strong"})
    with pytest.raises(ValueError, match="not a classic-control environment"):
        classic.batched_env("LunarLander-v3")
    assert classic.batched_env("Acrobot-v1", {"render_mode": "rgb_array"}).name == "Acrobot-v1"


@pytest.mark.parametrize("gym_id", classic.IDS)
def test_reset_states_are_gymnasiums_resets_from_the_same_generator(gym_id):
    env = gymnasium.make(gym_id)
    gym_obs = [env.reset(seed=77)[0]]
    gym_states = [np.array(env.unwrapped.state, np.float64)]
    for _ in range(K * B - 1):
        gym_obs.append(env.reset()[0])
        gym_states.append(np.array(env.unwrapped.state, np.float64))
    spec = classic.batched_env(gym_id)
    ours = spec.reset_states(np.random.default_rng(77), (K, B))
    assert ours.shape == (K, B, spec.dynamics.state_size) and ours.dtype == np.float64
    np.testing.assert_array_equal(ours.reshape(K * B, -1), gym_states)
    state = spec.dynamics.reset(ours)
    np.testing.assert_array_equal(state.obs.reshape(K * B, -1), gym_obs)
    assert state.obs.dtype == np.float32 and not state.done.any()
    assert all(spec.observation_space.contains(o) for o in state.obs.reshape(K * B, -1))


@pytest.mark.parametrize("gym_id", classic.IDS)
def test_batched_env_fields_agree_with_gymnasium(gym_id):
    spec = classic.batched_env(gym_id)
    env = gymnasium.make(gym_id)
    assert spec.observation_space == env.observation_space
    assert spec.action_space == env.action_space
    assert spec.family == "classic control"
    assert spec.fixed_length == (gym_id == "Pendulum-v1")
    assert spec.step_count == ("horizon" if gym_id == "Pendulum-v1" else "measured")
    assert len(spec.state_labels) == len(spec.state_bounds) == spec.obs_dim
    visited = spec.visited_states(np.random.default_rng(0), 20)
    assert visited.shape == (20, spec.obs_dim) and visited.dtype == np.float32
    assert all(env.observation_space.contains(v) for v in visited)
    assert len({tuple(v) for v in visited}) > 10


@pytest.mark.parametrize("gym_id", classic.IDS)
def test_replay_draws_one_episode_per_policy_from_the_dynamics(gym_id):
    spec = classic.batched_env(gym_id)
    arch = PolicyArch(spec.obs_dim, spec.act_dim, (4,), discrete=spec.discrete)
    params = np.random.default_rng(1).normal(size=(2, arch.num_params)).astype(np.float32)
    replay = spec.replay(arch, params, 40, 3)
    assert len(replay.panels) == 2 and all(1 < p.frames <= 41 for p in replay.panels)
    if gym_id == "Pendulum-v1":  # fixed length: both policies run the whole horizon, from one start
        assert [p.frames for p in replay.panels] == [41, 41]


def test_cartpole_through_the_same_entry():
    spec = classic.batched_env("CartPole-v1")
    assert spec.name == "cartpole" and spec.obs_dim == 4 and spec.act_dim == 2
    with pytest.raises(ValueError, match="its keywords are: none"):
        classic.batched_env("CartPole-v1", {"sutton_barto_reward": True})


@pytest.mark.parametrize("gym_id", classic.IDS)
def test_batched_returns_equal_gymnasiums_summed_rewards(gym_id):
    """``BatchedEnv.rollout_returns_from_states`` (compacting finished episodes away) equals the sum of gymnasium's
    rewards until terminated or truncated at the horizon."""
    spec = classic.batched_env(gym_id)
    initial, seeds = seeded_starts(gym_id, 600)
    horizon = 150
    act = random_actions(gym_id, horizon, 6) if gym_id == "Pendulum-v1" else pump(gym_id)
    returns = spec.rollout_returns_from_states(Scripted(act, (K, B)), initial, horizon=horizon)
    reference = gym_episodes(gym_id, {}, initial, act, horizon, seeds)
    np.testing.assert_array_equal(returns.ravel(), [sum(r["reward"]) for r in reference])
    counted = spec.rollout_counted_from_states(Scripted(act, (K, B)), initial, horizon=horizon)
    np.testing.assert_array_equal(counted.returns, returns)
    assert counted.env_steps == sum(len(r["reward"]) for r in reference)  # the steps gymnasium took
    if gym_id != "Pendulum-v1":
        assert sum(r["terminated"][-1] for r in reference) >= 1  # compaction took place


@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0, 1e5])
def test_scalar_squares_are_numpy_scalar_powers(scale):
    x = np.random.default_rng(int(scale * 7) + 1).normal(size=100_000) * scale
    np.testing.assert_array_equal(square_f64(x), np.array([v**2 for v in x]))
    assert not np.array_equal(x * x, np.array([v**2 for v in x]))  # the array square would not do
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(square_f32(x32), np.array([v**2 for v in x32], np.float32))
    assert square_f32(x32).dtype == np.float32
    if scale <= 30:
        assert not np.array_equal(x32 * x32, np.array([v**2 for v in x32], np.float32))


def test_scalar_squares_of_special_values():
    x = np.array([0.0, -0.0, 1e-200, 1e-320, 1e200, np.inf, -np.inf, np.nan, 2.0, -0.5, 3.0])
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        assert np.array_equal(square_f64(x), np.array([v**2 for v in x]), equal_nan=True)
        x32 = x.astype(np.float32)
        assert np.array_equal(square_f32(x32), np.array([v**2 for v in x32], np.float32), equal_nan=True)


def test_acrobot_and_mountain_car_constants_match_gymnasium():
    a = gymnasium.make("Acrobot-v1").unwrapped
    assert (a.dt, a.MAX_VEL_1, a.MAX_VEL_2, list(a.AVAIL_TORQUE), a.book_or_nips) == (
        acrobot.DT, acrobot.MAX_VEL_1, acrobot.MAX_VEL_2, list(acrobot.AVAIL_TORQUE), "book")
    m = gymnasium.make("MountainCar-v0").unwrapped
    assert (m.min_position, m.max_position, m.max_speed, m.goal_position, m.force, m.gravity) == (
        mountain_car.MIN_POSITION, mountain_car.MAX_POSITION, mountain_car.MAX_SPEED, mountain_car.GOAL_POSITION,
        mountain_car.FORCE, mountain_car.GRAVITY)
    c = gymnasium.make("MountainCarContinuous-v0").unwrapped
    assert (c.power, c.goal_position) == (mountain_car.POWER, mountain_car.CONTINUOUS_GOAL_POSITION)
    p = gymnasium.make("Pendulum-v1").unwrapped
    assert (p.max_speed, p.max_torque, p.dt, p.g, p.m, p.l) == (
        pendulum.MAX_SPEED, pendulum.MAX_TORQUE, pendulum.DT, pendulum.DEFAULT_GRAVITY, pendulum.MASS, pendulum.LENGTH)


def steps_per_second(gym_id: str, num_envs: int = 1000, steps: int = 200, seed: int = 0) -> tuple[float, float]:
    """(ours, gymnasium's ``make_vec(sync)``) environment steps per second, ``num_envs`` episodes of random actions
    for ``steps`` steps each (ours: one (1, num_envs) block, never compacted, ended episodes frozen)."""
    spec = classic.batched_env(gym_id)
    rng = np.random.default_rng(seed)
    if spec.discrete:
        actions = rng.integers(0, spec.act_dim, size=(steps, 1, num_envs))
    else:
        box = spec.action_space
        actions = rng.uniform(box.low, box.high, size=(steps, 1, num_envs, spec.act_dim)).astype(np.float32)
    state = spec.dynamics.reset(spec.reset_states(rng, (1, num_envs)))
    start = time.perf_counter()
    for t in range(steps):
        state = spec.dynamics.step(state, actions[t])
    ours = num_envs * steps / (time.perf_counter() - start)
    envs = gymnasium.make_vec(gym_id, num_envs=num_envs, vectorization_mode="sync")
    envs.reset(seed=seed)
    start = time.perf_counter()
    for t in range(steps):
        envs.step(actions[t, 0])
    theirs = num_envs * steps / (time.perf_counter() - start)
    envs.close()
    return ours, theirs


if __name__ == "__main__":
    for name in classic.IDS:
        ours, theirs = steps_per_second(name)
        print(f"{name}: ours {ours:,.0f} steps/s, gymnasium make_vec sync {theirs:,.0f} steps/s, {ours / theirs:.0f}x")


@pytest.mark.parametrize("gym_id", ["Acrobot-v1", "Pendulum-v1"])
def test_one_step_from_many_states_matches_gymnasium(gym_id):
    """20,000 single steps from states all over the state space: the scalar squares' rare 1-ULP differences (one
    square in about 1,300) would show in the float64 states."""
    n = 20_000
    rng = np.random.default_rng(8)
    if gym_id == "Acrobot-v1":
        high = np.array([np.pi, np.pi, acrobot.MAX_VEL_1, acrobot.MAX_VEL_2])
        actions = rng.integers(0, 3, size=n)
    else:
        high = np.array([3 * np.pi, pendulum.MAX_SPEED])
        actions = rng.uniform(-2.5, 2.5, size=(n, 1)).astype(np.float32)
    states = rng.uniform(-high, high, size=(n, len(high)))
    step = classic.dynamics(gym_id)
    state = step.reset(states[None])
    state.physics[...] = states.T[:, None]  # mid-episode float64 states (Acrobot's reset rounds to float32)
    state = step.step(state, actions[None])
    env = gymnasium.make(gym_id).unwrapped
    env.reset(seed=0)
    for i in range(n):
        env.state = states[i].copy()
        obs, reward, terminated, _, _ = env.step(actions[i] if gym_id == "Pendulum-v1" else int(actions[i]))
        assert np.array_equal(step.frame(state)[0, i], env.state), f"state {i}"
        assert np.array_equal(state.obs[0, i], obs) and state.reward[0, i] == reward, f"state {i}"
        assert state.done[0, i] == terminated


def continuous_car_after(state32: np.ndarray, action: float, goal_velocity: float = 0):
    """gymnasium's MountainCarContinuous step from a float32 state (as it stores it after every step)."""
    env = gymnasium.make("MountainCarContinuous-v0", goal_velocity=goal_velocity).unwrapped
    env.reset(seed=0)
    env.state = np.array(state32, np.float32)
    obs, reward, terminated, _, _ = env.step(np.array([action], np.float32))
    return obs, reward, terminated


def test_mountain_car_continuous_float32_edges_match_gymnasium():
    """From float32 states (every step after the first): landing exactly on float32(0.45), stopping exactly on
    float32(-1.2) without a clip, a velocity exactly float32(goal_velocity), and a velocity clipped to the Python
    float 0.07 compared with a goal_velocity between 0.07 and float32(0.07)."""
    f32 = np.float32
    cases = []

    def term(position, action=0.0):  # gymnasium's float32 velocity increment from a float32 position
        c = 0.0025 * np.cos(np.float64(f32(3 * f32(position))))
        return f32(f32(action) * mountain_car.POWER) - f32(c)

    goal = f32(mountain_car.CONTINUOUS_GOAL_POSITION)
    cases.append(([goal, -term(goal)], 0.0, 0))  # stays exactly on float32(0.45): terminated in float32
    wall = f32(mountain_car.MIN_POSITION)
    cases.append(([wall, np.nextafter(-term(wall), f32(-1))], 0.0, 0))  # creeps left, not clipped, stopped
    for v in np.nextafter(f32(0.01) - term(f32(0.5)), f32(1)) + np.arange(-3, 4) * np.spacing(f32(0.01)):
        cases.append(([f32(0.5), f32(v)], 0.0, 0.01))  # some land exactly on float32(0.01)
    cases.append(([f32(0.5), f32(0.0699)], 1.0, 0.0700000001))  # clipped to the Python 0.07: not fast enough
    cases.append(([f32(0.5), f32(0.0699)], 1.0, 0.07))
    for start, action, goal_velocity in cases:
        step = mountain_car.MountainCarContinuous(goal_velocity)
        state = step.reset(np.array([[start]], np.float64))
        state.physics = state.physics.astype(np.float32)
        state = step.step(state, np.array([[[action]]]))
        obs, reward, terminated = continuous_car_after(start, action, goal_velocity)
        assert np.array_equal(state.obs[0, 0], obs), (start, action, goal_velocity)
        assert state.reward[0, 0] == reward and state.done[0, 0] == terminated, (start, action, goal_velocity)
    outcomes = [continuous_car_after(s, a, g)[2] for s, a, g in cases]
    assert outcomes[0] and not outcomes[-2] and outcomes[-1] and any(outcomes[2:-2]) and not all(outcomes[2:-2])
