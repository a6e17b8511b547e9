"""``pvnviz settings NAME [--preset P]``: an experiment's presets (``pvnviz.runs.presets``; the polytope's one is
Appendix A's), then every setting of one preset with its help text, as ``--set KEY=VALUE`` takes it;
``pvnviz settings gym:`` lists the gymnasium IDs that qualify. What ``run`` and ``settings`` say of a gym: name."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from pvnviz.core.config_fields import ConfigError

EXPERIMENT_HELP = (
    "polytope, cartpole, swimmer, or gym:ID: any gymnasium environment with a flat Box observation and a "
    "Discrete or Box action, keywords after ? (gym:Pendulum-v1?g=9.81; `settings gym:` lists them)"
)


def is_gym(name: str) -> bool:
    """Whether the experiment's name is a gymnasium environment's (``gym:ID``)."""
    from pvnviz.envs.gym_id import is_gym_name

    return is_gym_name(name)


def qualified(name: str) -> str:
    """A gym: name in its canonical spelling, once it qualifies; EnvRefused (one line, exit 2) if it does not."""
    from pvnviz.envs.gym_id import check_qualifies, parse_env_name

    gym_id = parse_env_name(name)
    check_qualifies(gym_id)
    return gym_id.name


def check_preset(name: str, presets: dict[str, Callable[[], Any]], preset: str) -> None:
    """ConfigError (exit 2) naming the presets if ``preset`` is not one of ``name``'s."""
    if preset not in presets:
        shown = preset if len(preset) <= 40 else f"{preset[:40]}... ({len(preset)} characters)"
        raise ConfigError(f"unknown preset {shown!r} for {name}; choose one of: {', '.join(presets)}.")


def settings(name: str, presets: dict[str, Callable[[], Any]], preset: str) -> int:
    """Print the presets (``#`` lines, the pages' label beside each id), then ``KEY = VALUE  # help`` lines."""
    from pvnviz.runs.presets import GYM_PRESET_LABELS, PRESET_LABELS

    check_preset(name, presets, preset)
    labels = GYM_PRESET_LABELS if name.startswith("gym:") else PRESET_LABELS.get(name, {})
    print(f"# {name}: {len(presets)} preset{'s' * (len(presets) > 1)} (--preset NAME)")
    for key in presets:
        mark = "  <- listed below" if key == preset else ""
        print(f"#   {key}{': ' + labels[key] if key in labels else ''}{mark}")
    print(f"# the settings of {preset} (change one with --set KEY=VALUE):")
    config = presets[preset]()
    for f in dataclasses.fields(config):
        print(f"{f.name} = {json.dumps(getattr(config, f.name))}  # {f.metadata.get('help', '')}")
    return 0


def gym_ids() -> int:
    """``settings gym:``: the registered gymnasium IDs that qualify here, family by family (``qualifying_ids``)."""
    from pvnviz.envs.gym_id import qualifying_ids

    print("# gymnasium environments that qualify (a flat Box observation, a Discrete or Box action): run gym:ID")
    for family, ids in qualifying_ids().items():
        if ids:
            print(f"# {family}: {len(ids)}")
            for env_id in ids:
                print(f"gym:{env_id}")
    print("# any other registered ID that qualifies runs too; keywords after ?, e.g. gym:Pendulum-v1?g=9.81")
    return 0
