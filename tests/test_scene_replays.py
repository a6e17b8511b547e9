"""The replays of classic control and of any MuJoCo model (``pvnviz.envs.scene_classic``, ``scene_mujoco``).

References: gymnasium's own environments stepped with random actions give the states, their observations and
their ends (Pendulum's observation holds cos and sin of the angle, Acrobot ends when its tip rises above the line,
MountainCar when the car reaches the flag); MuJoCo's own ``mj_forward`` on gymnasium's stepped Hopper places the geoms;
the Swimmer's own replay (``pvnviz.envs.replay.swimmer_bodies``) draws the same capsules.
"""

import gymnasium
import mujoco
import numpy as np
import pytest

from pvnviz.core.policies import PolicyArch
from pvnviz.envs import cartpole, swimmer
from pvnviz.envs.rollout import State
from pvnviz.envs.scene_classic import (
    CAR_CLEARANCE,
    acrobot_parts,
    classic_replay,
    hill_height,
    mountain_car_parts,
    pendulum_parts,
    replay_for,
)
from pvnviz.envs.scene_mujoco import geom_frames, mujoco_replay, view_axes
from pvnviz.figures.replay import replay_figure


def _states(env_id: str, steps: int, seed: int) -> tuple[np.ndarray, list, list]:
    """gymnasium's own states (its ``unwrapped.state``), observations and terminations under random actions."""
    env = gymnasium.make(env_id)
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    states, observations, ends = [np.array(env.unwrapped.state, dtype=np.float64)], [obs], [False]
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        states.append(np.array(env.unwrapped.state, dtype=np.float64))
        observations.append(obs)
        ends.append(terminated)
        if terminated or truncated:
            break
    return np.array(states), observations, ends


def test_the_pendulum_s_tip_is_where_its_observation_says():
    states, observations, _ = _states("Pendulum-v1", 120, 0)
    track, rod = pendulum_parts(states)
    assert track.role == "track" and rod.role == "pole" and rod.points.shape == (len(states), 2, 2)
    cos, sin = np.array(observations)[:, 0], np.array(observations)[:, 1]  # gymnasium's obs: cos, sin, theta dot
    np.testing.assert_allclose(rod.points[:, 0], 0.0)
    np.testing.assert_allclose(rod.points[:, 1], np.stack([-sin, cos], -1), atol=1e-6)  # upright: (0, 1)
    np.testing.assert_allclose(np.hypot(*track.points[0].T), 1.0)  # the circle the tip sweeps


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_acrobot_s_tip_crosses_the_line_exactly_when_gymnasium_ends_it(seed):
    env = gymnasium.make("Acrobot-v1", max_episode_steps=3000)
    env.reset(seed=seed)
    states, ends, t = [], [], 0
    while t < 3000:  # a policy that swings: push against the first link's motion
        s = np.array(env.unwrapped.state, dtype=np.float64)
        states.append(s)
        _, _, terminated, _, _ = env.step(0 if s[2] > 0 else 2)
        ends.append(terminated)
        t += 1
        if terminated:
            break
    states.append(np.array(env.unwrapped.state, dtype=np.float64))
    assert ends[-1], "the swinging policy never reached the line"
    line, links = acrobot_parts(np.array(states))
    tip_height = links.points[:, 2, 1]
    assert np.all(tip_height[:-1] <= 1.0) and tip_height[-1] > 1.0  # gymnasium's end: -cos(t1) - cos(t1 + t2) > 1
    np.testing.assert_allclose(line.points[0, :, 1], 1.0)
    np.testing.assert_allclose(np.linalg.norm(np.diff(links.points, axis=1), axis=-1), 1.0)  # two links of length 1


def test_the_car_rides_the_hill_and_ends_at_the_flag():
    env = gymnasium.make("MountainCar-v0")
    env.reset(seed=3)
    states = [np.array(env.unwrapped.state, dtype=np.float64)]
    for _ in range(200):  # push with the car's velocity: reaches the flag
        _, _, terminated, _, _ = env.step(2 if env.unwrapped.state[1] >= 0 else 0)
        states.append(np.array(env.unwrapped.state, dtype=np.float64))
        if terminated:
            break
    assert terminated
    hill, flag, car = mountain_car_parts(np.array(states), goal=env.unwrapped.goal_position)
    x = np.array(states)[:, 0]
    bottom_middle = car.points[:, :2].mean(axis=1)  # the car's two bottom corners
    np.testing.assert_allclose(bottom_middle[:, 1] - CAR_CLEARANCE * np.cos(np.arctan(1.35 * np.cos(3 * x))),
                               hill_height(x), atol=1e-12)  # fmt: skip
    slope = np.diff(car.points[:, :2], axis=1)[:, 0]  # bottom edge's direction against the hill's finite difference
    h = 1e-6
    np.testing.assert_allclose(slope[:, 1] / slope[:, 0], (hill_height(x + h) - hill_height(x - h)) / (2 * h),
                               rtol=1e-5)  # fmt: skip
    assert flag.points[0, 0, 0] == env.unwrapped.goal_position and x[-1] >= flag.points[0, 0, 0] > x[:-1].max()
    assert hill.points.shape == (1, 100, 2)


@pytest.mark.parametrize("scene", ["pendulum", "acrobot", "mountain_car"])
def test_a_classic_replay_draws_one_panel_per_policy_from_one_start(scene):
    arch = PolicyArch(4, 2, (8,), discrete=True)
    params = np.random.default_rng(0).normal(size=(2, arch.num_params)).astype(np.float32)
    replay = classic_replay(scene, cartpole.DYNAMICS, cartpole.reset_states)(arch, params, 100, 0)
    assert len(replay.panels) == 2 and replay.fit_aspect
    for panel in replay.panels:
        moving = [p for p in panel.parts if p.role not in ("track", "trail")]
        assert all(len(p.points) == panel.frames for p in moving)
    replay_figure(replay, ["before", "after"], frame=3)  # draws
    with pytest.raises(ValueError, match="unknown classic-control scene"):
        classic_replay("lunar", cartpole.DYNAMICS, cartpole.reset_states)


def test_mujoco_geoms_are_where_mujoco_s_own_step_puts_them():
    env = gymnasium.make("Hopper-v5")
    env.reset(seed=0)
    env.action_space.seed(0)
    model, data = env.unwrapped.model, env.unwrapped.data
    qpos, centres = [], []
    for _ in range(40):
        env.step(env.action_space.sample())
        mujoco.mj_forward(model, data)  # MuJoCo's own placement at the step's end (the step's is from its start)
        qpos.append(data.qpos.copy())
        centres.append(data.geom_xpos.copy())
    frames = geom_frames(np.array(qpos), model)
    np.testing.assert_allclose(frames.ends.mean(axis=2), np.array(centres), atol=1e-9)
    lengths = np.linalg.norm(frames.ends[:, :, 0] - frames.ends[:, :, 1], axis=-1)
    np.testing.assert_allclose(lengths[:, 1:], np.broadcast_to(2 * model.geom_size[1:, 1], lengths[:, 1:].shape))
    assert view_axes(frames) == (0, 2)  # a hopper is seen from the side
    assert frames.static.tolist() == [True, False, False, False, False] and frames.plane[0]


def test_the_generic_mujoco_replay_of_the_swimmer_draws_the_swimmer_s_own_capsules():
    arch = PolicyArch(8, 2, (30,), discrete=False)
    params = (0.3 * np.random.default_rng(1).normal(size=(2, arch.num_params))).astype(np.float32)
    generic = mujoco_replay(swimmer.DYNAMICS, swimmer.reset_states, swimmer.load_model)(arch, params, 200, 4)
    own = swimmer.batched_env().replay(arch, params, 200, 4)
    assert generic.title.endswith("from above, before and after ascent") and generic.layout == own.layout
    for mine, theirs in zip(generic.panels, own.panels):
        links = [p.points for p in mine.parts if p.role == "links"]  # (F, 2 ends, 2) per capsule
        chain = theirs.parts[-1].points  # (F, 4, 2): front ends of the three links, then the last back end
        for k, capsule in enumerate(links):
            np.testing.assert_allclose(capsule[:, 0], chain[:, k], atol=1e-9)
        np.testing.assert_allclose(links[-1][:, 1], chain[:, -1], atol=1e-9)
        assert mine.frames == theirs.frames


class _Recorder:
    """A still pendulum whose steps record the actions they are given: state (K, B, 2) = (theta, 0)."""

    name, state_size, discrete, action_shape = "Recorder", 2, False, (1,)

    def __init__(self):
        self.actions = []

    def reset(self, initial_states, nthread=None):
        shape = initial_states.shape[:2]
        return State(initial_states.copy(), initial_states.astype(np.float32), np.zeros(shape), np.zeros(shape, bool))

    def step(self, state, actions):
        self.actions.append(np.array(actions, dtype=np.float64))
        state.reward = np.zeros(state.done.shape)
        return state

    def frame(self, state):
        return state.physics


def test_replay_for_picks_the_scene_by_id_and_maps_tanh_outputs_into_the_box():
    arch = PolicyArch(2, 1, (), discrete=False)
    params = np.array([[3.0, 1.0, 0.5], [-3.0, 2.0, -0.5]], dtype=np.float32)  # linear: w (2), b (1)
    recorder = _Recorder()

    def reset(rng, shape):
        return np.broadcast_to([0.4, 0.0], (*shape, 2)).copy()

    replay = replay_for("Pendulum-v1", recorder, reset, gymnasium.spaces.Box(-2.0, 2.0, (1,)))(arch, params, 3, 0)
    tanh = np.tanh(np.asarray(params[:, :2] @ [0.4, 0.0] + params[:, 2], dtype=np.float64))  # the policies' outputs
    np.testing.assert_allclose(recorder.actions[0][:, 0, 0], 2.0 * tanh, rtol=1e-6)  # mapped into [-2, 2]
    assert [p.role for p in replay.panels[0].parts] == ["track", "pole"]  # the pendulum's scene
    recorder.actions.clear()
    replay_for("Acrobot-v1", recorder, reset, gymnasium.spaces.Box(-1.0, 1.0, (1,)))(arch, params, 3, 0)
    np.testing.assert_allclose(recorder.actions[0][:, 0, 0], tanh, rtol=1e-6)  # [-1, 1]: as the policy gave them
    flag = replay_for("MountainCarContinuous-v0", recorder, reset, gymnasium.spaces.Box(-1.0, 1.0, (1,)))
    assert flag(arch, params, 3, 0).panels[0].parts[1].points[0, 0, 0] == 0.45  # its own goal's flag
    assert replay_for("CarRacing-v3", recorder, reset, None) is None
