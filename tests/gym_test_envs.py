"""Registered gymnasium environments whose spaces do not qualify for the PVN pipeline (tests/test_gym_id.py,
tests/test_cli_gym.py): importing this module registers them, so ``gym:gym_test_envs:DictObs-v0`` names one in
any process whose path holds tests/ (gymnasium imports the module named before the colon)."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces


class _Tiny(gymnasium.Env):
    """Ends after one step; only its spaces matter."""

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, True, False, {}


class DictObs(_Tiny):
    observation_space = spaces.Dict({"position": spaces.Box(-1.0, 1.0, (2,), np.float32)})
    action_space = spaces.Discrete(2)


class MultiDiscreteAct(_Tiny):
    observation_space = spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = spaces.MultiDiscrete([3, 3])


class ImageObs(_Tiny):
    observation_space = spaces.Box(0, 255, (4, 4, 3), np.uint8)
    action_space = spaces.Discrete(2)


for _name, _cls in (("DictObs-v0", DictObs), ("MultiDiscreteAct-v0", MultiDiscreteAct), ("ImageObs-v0", ImageObs)):
    if _name not in gymnasium.registry:
        gymnasium.register(_name, entry_point=_cls, max_episode_steps=10)
