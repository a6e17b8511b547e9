"""gym:ID names (pvnviz.envs.gym_id): parsing and the canonical name, what qualifies and each refusal's one line,
the qualifying IDs by family, and the one mapping of tanh outputs into a Box."""

import gym_test_envs  # noqa: F401 - registers the environments that do not qualify
import gymnasium
import numpy as np
import pytest

from pvnviz.envs.gym_id import (
    EnvRefused,
    GymId,
    box_actions,
    canonical_name,
    check_qualifies,
    parse_env_name,
    qualifying_ids,
)


@pytest.mark.parametrize(
    "text, env_id, kwargs, canonical",
    [
        ("gym:Pendulum-v1", "Pendulum-v1", {}, "gym:Pendulum-v1"),
        ("gym:Pendulum-v1?g=9.81", "Pendulum-v1", {"g": 9.81}, "gym:Pendulum-v1?g=9.81"),
        ("gym:X-v0?b=1&a=true", "X-v0", {"a": True, "b": 1}, "gym:X-v0?a=true&b=1"),
        ("gym:X-v0?mode=rgb_array", "X-v0", {"mode": "rgb_array"}, "gym:X-v0?mode=rgb_array"),
        ('gym:X-v0?s="true"', "X-v0", {"s": "true"}, 'gym:X-v0?s="true"'),
        ("gym:X-v0?v=[1, 2]&n=null", "X-v0", {"n": None, "v": [1, 2]}, "gym:X-v0?n=null&v=[1,2]"),
        ("gym:X-v0?d={\"k\": 1.5}", "X-v0", {"d": {"k": 1.5}}, 'gym:X-v0?d={"k":1.5}'),
        ("gym:X-v0?t=a%26b", "X-v0", {"t": "a&b"}, "gym:X-v0?t=a%26b"),
    ],
)
def test_parse_and_canonical_name_round_trip(text, env_id, kwargs, canonical):
    parsed = parse_env_name(text)
    assert parsed.id == env_id
    assert parsed.kwargs_dict == kwargs
    assert parsed.name == canonical
    assert parse_env_name(parsed.name) == parsed  # the canonical name parses back to the same GymId
    assert canonical_name(text) == canonical
    assert canonical_name("cartpole") == "cartpole"  # built-in names pass through


def test_spellings_of_one_environment_share_one_name():
    assert parse_env_name("gym:P-v1?b=2&a=1") == parse_env_name("gym:P-v1?a=1&b=2")
    assert parse_env_name("gym:P-v1?a=1.0").name != parse_env_name("gym:P-v1?a=1").name  # 1.0 and 1 differ in JSON


@pytest.mark.parametrize(
    "text, words",
    [
        ("gym:", "names no gymnasium ID"),
        ("gym:?g=1", "names no gymnasium ID"),
        ("gym:Pendulum-v1?g", "is not key=value"),
        ("gym:Pendulum-v1?1g=2", "is not key=value"),
        ("gym:Pendulum-v1?g=1&g=2", "given twice"),
        ("Pendulum-v1", "gym:ID"),
        ("gym:" + "x" * 500, "characters"),
    ],
)
def test_malformed_names_are_refused_in_one_line(text, words):
    with pytest.raises(EnvRefused, match=words) as err:
        parse_env_name(text)
    assert "\n" not in str(err.value)


def test_qualifying_spaces_are_gymnasiums_own():
    pendulum = check_qualifies(parse_env_name("gym:Pendulum-v1"))
    reference = gymnasium.make("Pendulum-v1")
    assert pendulum.observation_space == reference.observation_space
    assert pendulum.action_space == reference.action_space
    assert (pendulum.obs_dim, pendulum.act_dim, pendulum.discrete) == (3, 1, False)
    assert pendulum.max_episode_steps == 200
    assert pendulum.family == "classic control"
    acrobot = check_qualifies(GymId("Acrobot-v1"))
    assert (acrobot.obs_dim, acrobot.act_dim, acrobot.discrete, acrobot.max_episode_steps) == (6, 3, True, 500)


@pytest.mark.parametrize(
    "text, words",
    [
        ("gym:gym_test_envs:DictObs-v0", "observes Dict"),
        ("gym:gym_test_envs:ImageObs-v0", "observes Box(4, 4, 3)"),
        ("gym:gym_test_envs:MultiDiscreteAct-v0", "acts in MultiDiscrete"),
        ("gym:Blackjack-v1", "observes Tuple"),
        ("gym:NoSuchThing-v3", "doesn't exist"),
        ("gym:Pendulum-v1?gravity=9.81", "refuses the keywords"),
        ("gym:Pendulum-v1?g=[1, 2]", "fails its first step"),  # a value the constructor takes but cannot use
    ],
)
def test_what_does_not_qualify_is_refused_in_one_line(text, words):
    with pytest.raises(EnvRefused, match=words.replace("(", r"\(").replace(")", r"\)")) as err:
        check_qualifies(parse_env_name(text))
    assert "\n" not in str(err.value)
    assert isinstance(err.value, ValueError)


def test_qualifying_ids_by_family():
    ids = qualifying_ids()
    assert list(ids) == ["classic control", "Box2D", "MuJoCo", "other"]
    assert {"Acrobot-v1", "CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"} <= set(
        ids["classic control"]
    )
    assert "Blackjack-v1" not in sum(ids.values(), [])  # toy text: Discrete or Tuple observations
    assert {"Hopper-v5", "Swimmer-v5", "Reacher-v5"} <= set(ids["MuJoCo"])
    for family_ids in ids.values():
        for env_id in family_ids:  # every listed one really qualifies
            check_qualifies(GymId(env_id))


def test_box_actions_map_tanh_outputs_into_the_bounds():
    low, high = np.array([-2.0, 0.0, -1.0]), np.array([2.0, 10.0, 1.0])
    actions = np.array([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.3], [0.5, -0.5, -0.7]])
    mapped = box_actions(actions, low, high)
    expected = np.array([[-2.0, 0.0, -1.0], [2.0, 10.0, 1.0], [0.0, 5.0, 0.3], [1.0, 2.5, -0.7]])
    np.testing.assert_allclose(mapped, expected, rtol=0, atol=1e-12)
    assert np.array_equal(box_actions(actions[:, 2:], low[2:], high[2:]), actions[:, 2:])  # [-1, 1]: exactly as given


def test_box_actions_clip_where_a_bound_is_infinite():
    low, high = np.array([-np.inf, 0.5, -np.inf]), np.array([np.inf, np.inf, 0.2])
    actions = np.array([[0.7, 0.1, 0.9], [-0.4, 0.8, -0.9]])
    mapped = box_actions(actions, low, high)
    assert np.array_equal(mapped, np.array([[0.7, 0.5, 0.2], [-0.4, 0.8, -0.9]]))
