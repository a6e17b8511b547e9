"""The registry of the environments of Section 6: their ``BatchedEnv`` (``pvnviz.envs.batched``) by name.

The pipeline (datasets, PVNs, ascent) asks ``get_env(name)`` once and then works through the ``BatchedEnv``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pvnviz.core.progress import ProgressFn
from pvnviz.envs.batched import BatchedEnv


def _cartpole() -> BatchedEnv:
    from pvnviz.envs import cartpole
    return cartpole.batched_env()


def _swimmer() -> BatchedEnv:
    from pvnviz.envs import swimmer  # imports MuJoCo: only when asked for

    return swimmer.batched_env()


ENVIRONMENTS: dict[str, Callable[[], BatchedEnv]] = {"cartpole": _cartpole, "swimmer": _swimmer}
BUILT_IN = tuple(ENVIRONMENTS)  # every process has these; a worker is given the factory of any other
_BUILT: dict[str, BatchedEnv] = {}


def register(name: str, factory: Callable[[], BatchedEnv]) -> None:
    """Add an environment: a module with a ``BatchedEnv`` factory, plus presets, is all a new one needs."""
    ENVIRONMENTS[name] = factory
    _BUILT.pop(name, None)


def unregister(name: str) -> None:
    """Remove an environment added with ``register`` (and its built ``BatchedEnv``)."""
    ENVIRONMENTS.pop(name, None)
    _BUILT.pop(name, None)


def get_env(name: str) -> BatchedEnv:
    """The BatchedEnv of an environment by name (built once per process)."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; choose one of: {', '.join(ENVIRONMENTS)}.")
    if name not in _BUILT:
        _BUILT[name] = ENVIRONMENTS[name]()
    return _BUILT[name]


def replay_pairs(
    env_name: str,
    arch: Any,
    pairs: dict[str, np.ndarray],
    horizon: int,
    seed: int,
    factory: Callable[[], BatchedEnv] | None = None,
    on_progress: ProgressFn | None = None,
) -> dict:
    """``BatchedEnv.replay`` of every start's (before, after) policy pair, ``pairs[input_mode]`` (starts, 2, P), in
    environment ``env_name``: ``pvnviz.envs.replay.replay_all``, run in a worker (the ``replays`` task). ``factory``
    registers an environment that the server registered and this process has not."""
    from pvnviz.envs.replay import replay_all

    if factory is not None and env_name not in ENVIRONMENTS:
        register(env_name, factory)
    return replay_all(get_env(env_name).replay, arch, pairs, horizon, seed, on_progress)
