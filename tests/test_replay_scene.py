"""Replays (Section 5, before and after ascent) are the environment's.

``BatchedEnv.replay`` returns a ``pvnviz.envs.scene.Replay``.

References: gymnasium's own CartPole-v1 and Swimmer-v5, stepped with the replay's actions from its start state,
give the states; the pole tip and the capsule end points are computed here from those states (CartPole's
x + sin(theta), MuJoCo's ``geom_xpos``/``geom_xmat``), not by the code under test.
"""

from pathlib import Path

import gymnasium
import imageio.v3 as iio
import mujoco
import numpy as np
import pytest
import toy_env

from pvnviz.core.policies import PolicyArch
from pvnviz.envs import cartpole, swimmer
from pvnviz.envs import registry as envs
from pvnviz.envs.registry import get_env
from pvnviz.envs.replay import replay_all, shared_start_episodes
from pvnviz.envs.scene import Panel, Part, Replay
from pvnviz.figures import gif, theme
from pvnviz.figures.replay import replay_figure, replay_steps

ROOT = Path(__file__).resolve().parents[1]
LABELS = ["before", "after"]


def _params(arch: PolicyArch, seed: int, scale: float) -> np.ndarray:
    return (scale * np.random.default_rng(seed).normal(size=(2, arch.num_params))).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cartpole_replay_matches_gymnasium_stepped_with_its_actions(seed):
    arch = PolicyArch(4, 2, (8,), discrete=True)
    params, horizon = _params(arch, seed, 1.0), 200
    replay = get_env("cartpole").replay(arch, params, horizon, seed)
    traj = shared_start_episodes(cartpole.DYNAMICS, cartpole.reset_states, arch, params, horizon, seed)
    start = traj.frames[0, 0, 0]
    np.testing.assert_array_equal(traj.frames[1, 0, 0], start)  # both panels start from the same state
    for k, panel in enumerate(replay.panels):
        env = gymnasium.make("CartPole-v1").unwrapped
        env.reset(seed=0)
        env.state = start.copy()
        states, terminated = [start], False
        for action in traj.actions[k, 0]:
            if terminated or action < 0:
                break
            _, _, terminated, _, _ = env.step(int(action))
            states.append(np.array(env.state))
        states = np.array(states)  # (frames, 4) as gymnasium has them
        assert panel.frames == len(states) and panel.summary == f"{len(states) - 1} steps"
        track, cart, pole = panel.parts
        x, theta = states[:, 0], states[:, 2]
        np.testing.assert_allclose(pole.points[:, 0], np.stack([x, np.full_like(x, 0.15)], -1), atol=1e-12)
        tip = np.stack([x + np.sin(theta), 0.15 + np.cos(theta)], -1)  # a pole 1 long on the cart's top
        np.testing.assert_allclose(pole.points[:, 1], tip, atol=1e-12)
        low, high = np.stack([x - 0.25, 0 * x], -1), np.stack([x + 0.25, 0 * x + 0.15], -1)  # the cart's box
        np.testing.assert_allclose(cart.points.min(1), low, atol=1e-12)
        np.testing.assert_allclose(cart.points.max(1), high, atol=1e-12)
        np.testing.assert_array_equal(track.points, [[[-2.4, 0.0], [2.4, 0.0]]])  # the termination bound
    assert replay.x_range == (-2.6, 2.6)  # the track plus a margin, from cartpole.X_THRESHOLD
    assert replay.num_frames == max(p.frames for p in replay.panels)


def _capsule_chain(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """(4, 2): the swimmer's free front end, its two joints and its free back end, from the capsules' poses."""
    mujoco.mj_kinematics(model, data)  # after mj_step, the poses are those of the last substep's start
    capsules = np.flatnonzero(model.geom_type == mujoco.mjtGeom.mjGEOM_CAPSULE)
    ends = []
    for g in capsules:
        half = model.geom_size[g, 1] * data.geom_xmat[g].reshape(3, 3)[:, 2]  # along the capsule's z axis
        ends.append([data.geom_xpos[g] + half, data.geom_xpos[g] - half])
    ends = np.array(ends)[..., :2]  # (3 capsules, 2 ends, xy), in body order: front to back

    def shared(a, b):  # the end of capsule a that touches capsule b
        gaps = np.linalg.norm(ends[a][:, None] - ends[b][None], axis=-1)
        return np.unravel_index(gaps.argmin(), gaps.shape)[0]

    joint_01, joint_12 = ends[0][shared(0, 1)], ends[1][shared(1, 2)]
    return np.array([ends[0][1 - shared(0, 1)], joint_01, joint_12, ends[2][1 - shared(2, 1)]])


def test_swimmer_replay_matches_mujoco_capsules_of_gymnasium_episodes():
    arch = PolicyArch(8, 2, (8,), discrete=False)
    params, horizon, seed = _params(arch, 5, 0.5), 40, 3
    replay = get_env("swimmer").replay(arch, params, horizon, seed)
    traj = shared_start_episodes(swimmer.DYNAMICS, swimmer.reset_states, arch, params, horizon, seed)
    start = traj.frames[0, 0, 0]
    drawn = swimmer.reset_states(np.random.default_rng(seed), (1, 1))[0, 0]  # the start, drawn as the replay draws it
    np.testing.assert_array_equal(drawn[swimmer.QPOS_SLICE], start)
    env = gymnasium.make("Swimmer-v5").unwrapped
    model, data = env.model, env.data
    firsts = []
    for k, panel in enumerate(replay.panels):
        env.reset(seed=0)
        env.set_state(start, drawn[swimmer.QVEL_SLICE])
        trail, chain = panel.parts
        assert (trail.role, chain.role) == ("trail", "links") and panel.frames == horizon + 1
        total = 0.0
        for t in range(horizon + 1):
            reference = _capsule_chain(model, data)
            np.testing.assert_allclose(chain.points[t], reference, atol=1e-9, err_msg=f"t={t}")
            np.testing.assert_allclose(trail.points[0, t], reference[:2].mean(0), atol=1e-9)  # front link's centre
            if t < horizon:
                total += env.step(traj.actions[k, 0, t])[1]
        firsts.append(chain.points[0])
        distance = data.qpos[0] - start[0]
        assert panel.summary == f"return {total:.0f}, travelled {distance:+.2f} m"
    np.testing.assert_array_equal(firsts[0], firsts[1])  # the same start state
    assert replay.fit_aspect and replay.layout == "rows"


def test_figures_draw_any_replay_by_role():
    rng = np.random.default_rng(0)
    trail = Part("trail", rng.normal(size=(1, 7, 2)), "path")
    short = Panel((trail, Part("links", rng.normal(size=(4, 3, 2)))), 4, "short")
    long = Panel((trail, Part("links", rng.normal(size=(7, 3, 2)))), 7, "long")
    replay = Replay("title", (short, long), "x", "y", None, None, "columns", 3, 30, "")
    assert replay_steps(replay) == [0, 3, 6]
    fig = replay_figure(replay, LABELS, frame=6)
    static, moving = fig.data[:2], fig.data[2:]
    assert [tr.line.color for tr in static] == [theme.EXACT] * 2 and [tr.name for tr in static] == ["path"] * 2
    np.testing.assert_allclose(moving[0].x, short.parts[1].points[3, :, 0])  # the short episode holds its last frame
    np.testing.assert_allclose(moving[1].x, long.parts[1].points[6, :, 0])
    assert "step 3" in moving[0].hovertemplate and "step 6" in moving[1].hovertemplate
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis2.scaleanchor == "x2"  # fitted: equal aspect
    animated = replay_figure(replay, LABELS)
    assert [f.name for f in animated.frames] == ["0", "3", "6"]
    assert len(iio.imread(gif.replay_gif(replay, LABELS), index=None)) == 3
    with pytest.raises(ValueError, match="non-finite"):
        Part("pole", np.full((2, 2, 2), np.nan))
    with pytest.raises(ValueError, match="frames"):
        Panel((Part("pole", np.zeros((3, 2, 2))),), 4, "")


@pytest.fixture
def line(monkeypatch):
    envs.register("line", toy_env.batched_env)
    yield get_env("line")
    envs.unregister("line")


def test_a_new_environment_brings_its_replay_through_the_generic_figures(line):
    arch = PolicyArch(2, 2, (4,), discrete=True)
    params = _params(arch, 0, 1.0)
    replay = line.replay(arch, params, 60, 1)
    assert replay.panels[0].parts[1].at(0).tolist() == replay.panels[1].parts[1].at(0).tolist()  # one start
    for panel in replay.panels:
        x = panel.parts[1].points[:, :4].mean(1)[:, 0]  # the square's centre: the point's position
        assert np.all(np.abs(x[:-1]) < 1.0)  # between the walls until the last frame
        assert panel.frames == 61 or abs(x[-1]) >= 1.0  # the episode ended at a wall or at the horizon
        pushes = np.diff(x, 2) / toy_env.DT**2  # each step changes the velocity by one push left or right
        np.testing.assert_allclose(np.abs(pushes), toy_env.PUSH / toy_env.DT, rtol=1e-6)
    fig = replay_figure(replay, LABELS, frame=0)
    assert [tr.fill for tr in fig.data[2:]] == ["toself", "toself"] and fig.layout.xaxis.range == (-1.2, 1.2)
    assert len(iio.imread(gif.replay_gif(replay, LABELS), index=None)) == len(replay_steps(replay))


def test_no_shared_replay_module_names_an_environment():
    """The figures, the GIF and the page's replay section draw any ``Replay``: none chooses by environment."""
    for shared in ("pvnviz/figures/replay.py", "pvnviz/figures/gif.py", "ui/results.py"):
        text = (ROOT / shared).read_text().lower()
        assert "cartpole" not in text and "swimmer" not in text, shared


def test_swimmer_replays_of_many_pairs_in_one_batch_equal_one_rollout_each():
    """``replay_all`` makes the Swimmer's replays in one batched rollout (its policies draw no random numbers):
    every panel equals the replay of its pair alone, to the last bit, for a linear and a two-layer policy."""
    env = get_env("swimmer")
    for hidden in ((), (16, 16)):
        arch = PolicyArch(8, 2, hidden, discrete=False)
        pairs = {"fingerprint": np.stack([_params(arch, s, 0.5 + s) for s in range(3)]), "flattened": None}
        pairs["flattened"] = pairs["fingerprint"][::-1] * 0.7
        calls = []
        made = replay_all(env.replay, arch, pairs, 120, 4, lambda *a, c=calls: c.append(a))
        assert [done for done, _, _ in calls] == [0, 6]  # one batch, not one rollout per pair
        for (mode, start), replay in made.items():
            alone = env.replay(arch, pairs[mode][start], 120, 4)
            assert replay.caption == alone.caption
            for panel, single in zip(replay.panels, alone.panels, strict=True):
                assert panel.summary == single.summary
                for part, same in zip(panel.parts, single.parts, strict=True):
                    np.testing.assert_array_equal(part.points, same.points)
