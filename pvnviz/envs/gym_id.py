"""Any gymnasium environment as a PVN environment: the name ``gym:ID?key=value&...`` and what qualifies.

The paper's experiments (Section 6) need only three things of an environment: a flat observation vector for
the policies and the probing states of the fingerprint (Section 4), an action space a policy network can
output (softmax over ``Discrete`` actions, tanh outputs for a ``Box``), and episodic returns. So any registered
gymnasium environment whose observation space is a flat ``Box`` and whose action space is ``Discrete`` or a
``Box`` qualifies; this module names one (``parse_env_name``, ``GymId``), says whether it qualifies
(``check_qualifies``, refusing in one line with ``EnvRefused``), lists those that do (``qualifying_ids``),
and maps a policy's tanh outputs into a ``Box`` action space (``box_actions``, the only place that does).

Name grammar: ``gym:ID`` then, optionally, ``?key=value&key=value``; a value is a JSON literal (``9.81``,
``true``, ``[1, 2]``, ``"text"``) or else a plain string. ``GymId.name`` is the canonical form (keys sorted,
values in their shortest JSON or plain form), so two spellings of one environment share one name, one cache
entry and one run-folder ``env_name``. Free of torch, streamlit and plotly: workers and the CLI import it early.
"""

from __future__ import annotations

import functools
import json
import math
import re
import warnings
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

import numpy as np

PREFIX = "gym:"
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:-]*")
KEY_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_NAME_CHARS = 400  # a longer name is refused before it is parsed
FAMILIES = ("classic control", "Box2D", "MuJoCo", "other")  # qualifying_ids' keys, in this order
# entry-point packages of gymnasium's own families, as listed (toy_text's observations are Discrete: none qualify)
FAMILY_MODULES = {
    "gymnasium.envs.classic_control": "classic control",
    "gymnasium.envs.box2d": "Box2D",
    "gymnasium.envs.mujoco": "MuJoCo",
}
_UNSAFE = "&=?#% "  # characters a value's text is percent-encoded for in a canonical name


class EnvRefused(ValueError):
    """An environment the PVN pipeline cannot run; the message is one line saying what to change."""


@dataclass(frozen=True)
class GymId:
    """A registered gymnasium environment ID and the keyword arguments its constructor is given."""

    id: str
    kwargs: tuple[tuple[str, Any], ...] = ()  # sorted by key; values are JSON-compatible

    @property
    def name(self) -> str:
        """The canonical name ``gym:ID?k=v&...`` (keys sorted): ``parse_env_name(g.name) == g``."""
        if not self.kwargs:
            return PREFIX + self.id
        return PREFIX + self.id + "?" + "&".join(f"{k}={_value_text(v)}" for k, v in self.kwargs)

    @property
    def kwargs_dict(self) -> dict[str, Any]:
        """The keyword arguments as ``gymnasium.make`` takes them (lists, not tuples)."""
        return {k: _thaw(v) for k, v in self.kwargs}

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class QualifiedSpaces:
    """What ``check_qualifies`` learned from one ``gymnasium.make``: the spaces and the episode limit."""

    observation_space: Any  # gymnasium.spaces.Box, shape (obs_dim,)
    action_space: Any  # gymnasium.spaces.Discrete or gymnasium.spaces.Box, shape (act_dim,)
    max_episode_steps: int | None  # the registered TimeLimit, None where there is none
    family: str  # one of FAMILIES

    @property
    def obs_dim(self) -> int:
        return int(self.observation_space.shape[0])

    @property
    def discrete(self) -> bool:
        return not hasattr(self.action_space, "low")

    @property
    def act_dim(self) -> int:
        return int(self.action_space.n) if self.discrete else int(self.action_space.shape[0])


def is_gym_name(text: object) -> bool:
    """Whether ``text`` names a gymnasium environment (starts with ``gym:``)."""
    return isinstance(text, str) and text.startswith(PREFIX)


def parse_env_name(text: str) -> GymId:
    """The ``GymId`` of ``gym:ID[?k=v&...]``; EnvRefused (one line) for a malformed name.

    Only the syntax is checked here; ``check_qualifies`` asks gymnasium whether the ID exists and qualifies.
    """
    if not isinstance(text, str) or not text.startswith(PREFIX):
        raise EnvRefused(f"a gymnasium environment is named gym:ID (e.g. gym:Pendulum-v1), got {_shown(text)}.")
    if len(text) > MAX_NAME_CHARS:
        raise EnvRefused(f"environment name of {len(text)} characters; keep it under {MAX_NAME_CHARS}.")
    body = text[len(PREFIX) :]
    env_id, _, query = body.partition("?")
    if not env_id or not ID_PATTERN.fullmatch(env_id):
        raise EnvRefused(
            f"{_shown(text)} names no gymnasium ID; write gym:ID with a registered ID such as gym:Pendulum-v1."
        )
    kwargs: dict[str, Any] = {}
    for part in query.split("&") if query else ():
        key, eq, raw = part.partition("=")
        if not eq or not KEY_PATTERN.fullmatch(key):
            raise EnvRefused(
                f"{_shown(part)} in {_shown(text)} is not key=value; write e.g. gym:Pendulum-v1?g=9.81."
            )
        if key in kwargs:
            raise EnvRefused(f"keyword {key!r} is given twice in {_shown(text)}; give it once.")
        kwargs[key] = _freeze(_parse_value(unquote(raw)))
    return GymId(env_id, tuple(sorted(kwargs.items())))


def canonical_name(text: str) -> str:
    """``text`` as its canonical name when it is a ``gym:`` name (EnvRefused if malformed); else unchanged."""
    return parse_env_name(text).name if is_gym_name(text) else text


def _parse_value(raw: str) -> Any:
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(value, float) and not math.isfinite(value):
        return raw
    return value


def _value_text(value: Any) -> str:
    """A value as the canonical name writes it: plain text where that parses back to the same string."""
    if isinstance(value, str) and _parse_value(value) == value:
        text = value
    else:
        text = json.dumps(_thaw(value), separators=(",", ":"), sort_keys=True)
    return quote(text, safe="".join(chr(c) for c in range(33, 127) if chr(c) not in _UNSAFE))


def _freeze(value: Any) -> Any:
    """A hashable copy of a JSON value (lists as tuples, objects as sorted pairs)."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return ("__dict__", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        if len(value) == 2 and value[0] == "__dict__" and isinstance(value[1], tuple):
            return {k: _thaw(v) for k, v in value[1]}
        return [_thaw(v) for v in value]
    return value


def _shown(text: object) -> str:
    quoted = repr(text)
    return quoted if len(quoted) <= 60 else f"{quoted[:60]}... ({len(str(text))} characters)"


def family_of(entry_point: object) -> str:
    """The family (``FAMILIES``) of a registered entry point: gymnasium's own package, else "other"."""
    text = entry_point if isinstance(entry_point, str) else getattr(entry_point, "__module__", "") or ""
    for module, family in FAMILY_MODULES.items():
        if text.startswith(module):
            return family
    return "other"


def make(gym_id: GymId, **extra: Any) -> Any:
    """``gymnasium.make`` of this ID with its keyword arguments, warnings of the environment's own checker muted;
    EnvRefused (one line) for an unknown ID, a missing dependency or a keyword the constructor refuses."""
    import gymnasium

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return gymnasium.make(gym_id.id, **gym_id.kwargs_dict, **extra)
    except gymnasium.error.DependencyNotInstalled as err:
        raise EnvRefused(f"{gym_id.name} needs a package that is not installed: {_first_line(err)}") from None
    except gymnasium.error.Error as err:  # NameNotFound, VersionNotFound, NamespaceNotFound, ...
        raise EnvRefused(
            f"{gym_id.name}: {_first_line(err)}; `python -m pvnviz settings gym:` lists the IDs that qualify."
        ) from None
    except TypeError as err:
        raise EnvRefused(
            f"{gym_id.name}: the constructor refuses the keywords ({_first_line(err)}); remove or rename them."
        ) from None
    except Exception as err:  # noqa: BLE001 - whatever a constructor raises for a bad value
        raise EnvRefused(
            f"{gym_id.name} does not build ({type(err).__name__}: {_first_line(err)}); check its keywords."
        ) from None


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    text = lines[0] if lines else type(err).__name__
    return text if len(text) <= 200 else text[:200] + "..."


@functools.lru_cache(maxsize=256)
def check_qualifies(gym_id: GymId) -> QualifiedSpaces:
    """The spaces of this environment if the PVN pipeline can run it; else EnvRefused, one line saying why.

    Qualifies: a flat ``Box`` observation space of finite size, a ``Discrete`` action space (starting at 0)
    or a flat ``Box`` action space. Builds the environment once (cached per name), resets it and takes one
    sampled step (a keyword value it cannot use is refused here), and closes it.
    """
    from gymnasium import spaces

    env = make(gym_id)
    try:
        obs, act = env.observation_space, env.action_space
        spec = getattr(env, "spec", None)
        max_steps = getattr(spec, "max_episode_steps", None)
        family = family_of(getattr(spec, "entry_point", ""))
        _check_steps(env, gym_id)
    finally:
        env.close()
    name = gym_id.name
    if not isinstance(obs, spaces.Box) or len(obs.shape) != 1 or obs.shape[0] < 1:
        raise EnvRefused(
            f"{name} observes {_space_text(obs)}; the PVN's policies and probing states need a flat Box "
            "observation (wrap it with gymnasium's FlattenObservation and register that ID)."
        )
    if isinstance(act, spaces.Discrete):
        if int(act.start) != 0 or int(act.n) < 2:
            raise EnvRefused(f"{name} acts in {_space_text(act)}; a Discrete action space must start at 0 with n >= 2.")
    elif isinstance(act, spaces.Box):
        if len(act.shape) != 1 or act.shape[0] < 1:
            raise EnvRefused(f"{name} acts in {_space_text(act)}; a Box action space must be flat (one axis).")
    else:
        raise EnvRefused(
            f"{name} acts in {_space_text(act)}; the policies output a Discrete choice or a flat Box vector, "
            "so choose an environment with one of those action spaces."
        )
    return QualifiedSpaces(obs, act, None if max_steps is None else int(max_steps), family)


def _check_steps(env: Any, gym_id: GymId) -> None:
    """One reset and one step with a sampled action: a keyword value the constructor took but the environment
    cannot use is named now, in one line, not deep inside a run."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env.reset(seed=0)
            env.action_space.seed(0)
            env.step(env.action_space.sample())
    except Exception as err:  # noqa: BLE001 - whatever the environment raises
        raise EnvRefused(
            f"{gym_id.name} fails its first step ({type(err).__name__}: {_first_line(err)}); check its keywords."
        ) from None


def _space_text(space: object) -> str:
    """A space in a few words: ``Box(3, 2)``, ``Discrete(4)``, ``Dict(...)``, ``MultiDiscrete([3 3])``."""
    kind = type(space).__name__
    if hasattr(space, "low") and hasattr(space, "shape"):
        return f"{kind}{tuple(space.shape)}"
    if hasattr(space, "n") and not hasattr(space, "nvec"):
        return f"{kind}({space.n})"
    text = str(space)
    return text if len(text) <= 60 else f"{kind}(...)"


_QUALIFYING: dict[str, list[str]] | None = None


def qualifying_ids() -> dict[str, list[str]]:
    """Registered IDs whose spaces qualify, by family (keys: ``FAMILIES``, each present, IDs sorted).

    Only gymnasium's own families that import here are listed (classic control; Box2D and MuJoCo when their
    packages are installed; toy_text is left out, its observations are Discrete); every listed ID was built
    once, so listing costs a second or two the first time and nothing after (cached per process).
    """
    global _QUALIFYING
    if _QUALIFYING is None:
        import gymnasium

        found: dict[str, list[str]] = {family: [] for family in FAMILIES}
        for env_id, spec in sorted(gymnasium.registry.items()):
            family = family_of(spec.entry_point)
            if family == "other":
                continue
            try:
                check_qualifies(GymId(env_id))
            except EnvRefused:
                continue
            found[family].append(env_id)
        _QUALIFYING = found
    return {family: list(ids) for family, ids in _QUALIFYING.items()}


def box_actions(actions: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """A policy's tanh outputs in [-1, 1] mapped into the Box ``[low, high]`` (the only place actions are scaled).

    Each action dimension with two finite bounds is mapped affinely, -1 -> low and 1 -> high; a dimension with
    an infinite bound is passed as the policy gave it, clipped into whatever bound is finite. ``actions``
    (..., act_dim) float; returns float64 of the same shape.
    """
    actions = np.asarray(actions, dtype=np.float64)
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    finite = np.isfinite(low) & np.isfinite(high)
    safe_low, safe_high = np.where(finite, low, -1.0), np.where(finite, high, 1.0)
    scaled = safe_low + (actions + 1.0) * 0.5 * (safe_high - safe_low)
    identity = (low == -1.0) & (high == 1.0)  # exactly the policy's outputs, no rounding
    return np.where(identity, actions, np.where(finite, scaled, np.clip(actions, low, high)))


def is_identity_box(low: np.ndarray, high: np.ndarray) -> bool:
    """Whether ``box_actions`` leaves actions as they are: every bound is exactly [-1, 1]."""
    return bool(np.all(np.asarray(low) == -1.0) and np.all(np.asarray(high) == 1.0))
