"""The registry of the environments of Section 6: their ``BatchedEnv`` (``pvnviz.envs.batched``) by name.

The pipeline (datasets, PVNs, ascent) asks ``get_env(name)`` once and then works through the ``BatchedEnv``.
A name is a built-in environment (``cartpole``, ``swimmer``), one added with ``register``, or any qualifying
gymnasium environment, ``gym:ID?key=value`` (``pvnviz.envs.gym_id``; built by ``pvnviz.envs.families``): every
process, a worker or a Ray actor too, builds that one from its name alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pvnviz.core.progress import ProgressFn
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.gym_id import canonical_name, is_gym_name


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
    """The BatchedEnv of an environment by name (built once per process). A ``gym:`` name is built by
    ``pvnviz.envs.families.batched_env``; ``pvnviz.envs.gym_id.EnvRefused`` (a ValueError, one line) if it
    does not qualify."""
    if is_gym_name(name):
        key = canonical_name(name)
        if key not in _BUILT:
            from pvnviz.envs import families
            from pvnviz.envs.gym_id import parse_env_name

            _BUILT[key] = families.batched_env(parse_env_name(key))
        return _BUILT[key]
    if name not in ENVIRONMENTS:
        raise ValueError(
            f"unknown environment {name!r}; choose one of: {', '.join(ENVIRONMENTS)}, or gym:ID for a gymnasium one."
        )
    if name not in _BUILT:
        _BUILT[name] = ENVIRONMENTS[name]()
    return _BUILT[name]


def is_environment(name: str) -> bool:
    """Whether ``name`` names an environment ``get_env`` builds (a ``gym:`` name only if it qualifies)."""
    if is_gym_name(name):
        from pvnviz.envs.gym_id import EnvRefused, check_qualifies, parse_env_name

        try:
            check_qualifies(parse_env_name(name))
        except EnvRefused:
            return False
        return True
    return name in ENVIRONMENTS


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

    if factory is not None and env_name not in ENVIRONMENTS and not is_gym_name(env_name):
        register(env_name, factory)
    return replay_all(get_env(env_name).replay, arch, pairs, horizon, seed, on_progress)
