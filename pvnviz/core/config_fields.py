"""Shared machinery for the experiment configs (Appendix B's hyperparameter tables).

Every experiment has one frozen dataclass config whose fields carry a one-line help
text (``param(default, "help")``); the same text is the CLI's ``--help`` and the
page's tooltip. Configs validate in ``__post_init__`` and raise ``ConfigError``
with a message that says what to change.
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from typing import Any, TypeVar

C = TypeVar("C")


class ConfigError(ValueError):
    """A config value a user must change; the message says which and how."""


def param(default: Any, help: str) -> Any:
    """A dataclass field with a default and a one-line help text."""
    return dataclasses.field(default=default, metadata={"help": help})


def help_text(config_cls: type, name: str) -> str:
    """The help text of one field of a config dataclass."""
    for f in dataclasses.fields(config_cls):
        if f.name == name:
            return f.metadata.get("help", "")
    raise KeyError(name)


def to_dict(config: Any) -> dict[str, Any]:
    """A JSON-ready dict (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


SCALARS = (bool, int, float, str)


def _kind(value: Any) -> str:
    return "a list" if isinstance(value, (list, tuple)) else "a table" if isinstance(value, dict) else repr(value)[:60]


MAX_DIGITS = 300  # a number written with more digits is named too big (a float overflows past 308, int() at 4300)
SHOWN_CHARS = 40  # how much of a refused value an error message repeats


def _digits(text: str) -> int:
    """How many digits a plain decimal number holds (``-123``, ``1.5e3``: the mantissa's), 0 for other text."""
    mantissa = text.strip().lstrip("+-").lower().split("e")[0].replace("_", "")
    return len(mantissa.replace(".", "", 1)) if mantissa.replace(".", "", 1).isdecimal() else 0


def _shown(value: Any) -> str:
    """``value`` as an error message repeats it: its repr, cut to ``SHOWN_CHARS`` with its full length named."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}... ({len(text)} characters)"


def _coerce(value: Any, annotation: Any, name: str) -> Any:
    origin = typing.get_origin(annotation)
    scalar = annotation in SCALARS or (isinstance(annotation, type) and issubclass(annotation, str))
    if scalar and isinstance(value, (list, tuple, dict)):  # JSON's [100, 100] where one value goes
        raise ConfigError(f"{name} must be one {getattr(annotation, '__name__', 'value')}; got {_kind(value)}.")
    if annotation is bool:
        if isinstance(value, str):
            if value.lower() in ("true", "1", "yes", "on"):
                return True
            if value.lower() in ("false", "0", "no", "off"):
                return False
            raise ConfigError(f"{name} must be true or false; got {value!r}.")
        if value not in (0, 1):  # True, False, 0 or 1
            raise ConfigError(f"{name} must be true or false; got {_kind(value)}.")
        return bool(value)
    if annotation in (int, float, str):
        if annotation is not str and isinstance(value, bool):
            raise ConfigError(f"{name} must be {annotation.__name__}; got {value!r}.")
        if annotation is not str and isinstance(value, str) and _digits(value) > MAX_DIGITS:
            whole = value.strip().lstrip("+-").split(".")[0].lstrip("0")  # the digits before the point
            what = "is too big" if len(whole) > MAX_DIGITS else "has too many digits"
            raise ConfigError(f"{name} {what}: a number of {_digits(value)} digits ({_shown(value)}).")
        try:
            if annotation is int and isinstance(value, float) and not value.is_integer():
                raise ValueError
            return annotation(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{name} must be {annotation.__name__}; got {_shown(value)}.") from None
    if origin is tuple:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                value = [v for v in value.replace("[", "").replace("]", "").split(",") if v.strip()]
        if isinstance(value, dict):
            raise ConfigError(f"{name} must be a list of values; got a table.")
        if not isinstance(value, (list, tuple)):
            value = [value]
        args = typing.get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0], name) for v in value)
        if len(args) != len(value):
            raise ConfigError(f"{name} needs {len(args)} values; got {len(value)}.")
        return tuple(_coerce(v, a, name) for v, a in zip(value, args, strict=True))
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null", "")):
            return None
        return _coerce(value, args[0], name)
    if isinstance(annotation, type) and issubclass(annotation, str):
        return annotation(value)
    return value


def from_dict(config_cls: type[C], values: dict[str, Any]) -> C:
    """Build a config from plain values (e.g. JSON), coercing types; unknown keys refused."""
    hints = typing.get_type_hints(config_cls)
    names = {f.name for f in dataclasses.fields(config_cls)}
    renamed = getattr(config_cls, "RENAMED", {})  # old setting name -> new, so older runs still open
    values = {renamed.get(k, k): v for k, v in values.items()}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]!r}; known settings: {', '.join(sorted(names))}.")
    return config_cls(**{k: _coerce(v, hints[k], k) for k, v in values.items()})


def apply_overrides(config: C, overrides: list[str]) -> C:
    """Apply ``key=value`` strings (the CLI's ``--set``) to a config."""
    changes: dict[str, Any] = {}
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set takes key=value; got {item!r}.")
        key, value = item.split("=", 1)
        changes[key.strip()] = value.strip()
    values = {**dataclasses.asdict(config), **changes}
    return from_dict(type(config), values)


def check_finite(config: Any) -> None:
    """ConfigError naming the first setting that holds inf or nan (a float, or a float in nested tuples)."""

    def floats(value: Any) -> list[float]:
        if isinstance(value, tuple):
            return [x for item in value for x in floats(item)]
        return [value] if isinstance(value, float) else []

    for f in dataclasses.fields(config):
        for item in floats(getattr(config, f.name)):
            if not math.isfinite(item):
                raise ConfigError(f"{f.name} must be a finite number; got {item!r}.")


def check(condition: bool, message: str) -> None:
    """Raise ConfigError(message) unless condition holds."""
    if not condition:
        raise ConfigError(message)


MAX_LAYERS = 4  # hidden layers of a policy or PVN network (``policy_hidden``, ``pvn_hidden``)
MAX_LAYER_SIZE = 1024  # units of one hidden layer


def _layers_ok(name: str, layers: tuple[int, ...]) -> None:
    if len(layers) > MAX_LAYERS:
        raise ConfigError(f"{name} has {len(layers)} layers; use at most {MAX_LAYERS}.")
    for size in layers:
        if not 1 <= size <= MAX_LAYER_SIZE:
            raise ConfigError(f"{name} holds a layer of {size} units; use 1 to {MAX_LAYER_SIZE} per layer.")


def _count_shown(value: int) -> str:
    """An out-of-range count as a message repeats it: whole up to 20 digits, else its first digits and length."""
    text = f"{value:,}"
    return text if len(str(abs(value))) <= 20 else f"{str(value)[:12]}... (a number of {len(str(abs(value)))} digits)"


def check_limits(config: Any, limits: dict[str, tuple[int, int]]) -> None:
    """ConfigError naming the first count outside its ``limits`` ({field: (lowest, highest)}), or the first
    layer of ``policy_hidden`` / ``pvn_hidden`` (where the config has them) beyond ``MAX_LAYERS`` x
    ``MAX_LAYER_SIZE``. Each experiment's limits stand beside its config."""
    for name, (low, high) in limits.items():
        value = getattr(config, name, None)
        if value is not None and value > high:
            raise ConfigError(f"{name} is too big: at most {high:,}; got {_count_shown(value)}.")
        if value is not None and value < low:
            raise ConfigError(f"{name} must be between {low:,} and {high:,}; got {_count_shown(value)}.")
    for name in ("policy_hidden", "pvn_hidden"):
        if hasattr(config, name):
            _layers_ok(name, tuple(getattr(config, name)))
