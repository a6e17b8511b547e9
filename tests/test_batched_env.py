"""The ``BatchedEnv`` interface's checks (``pvnviz.envs.batched``): an environment whose spaces disagree with
its sizes is refused when it is built, saying both."""

import dataclasses

import pytest
import toy_env


@pytest.mark.parametrize(
    "change, words",
    [
        (dict(obs_dim=3), r"observation_space has shape \(2,\); obs_dim says \(3,\)"),
        (dict(act_dim=3), r"discrete=True and act_dim=3 say Discrete\(3\)"),
        (dict(discrete=False), r"discrete=False and act_dim=2 say a Box of shape \(2,\)"),
    ],
)
def test_an_env_whose_spaces_disagree_with_its_sizes_is_refused_when_built(change, words):
    env = toy_env.batched_env()
    with pytest.raises(ValueError, match=words):
        dataclasses.replace(env, **change)
