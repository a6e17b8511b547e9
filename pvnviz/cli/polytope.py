"""``pvnviz run polytope``: Section 6.1 as the paper runs it (``--preset paper``), or with the active rounds after
the zero-shot ascent (``--preset beyond``, ``pvnviz.polytope.rounds``), whose budget ``--checks N`` and sampled
checks ``--episodes M`` set (``max_checks`` and ``check_episodes``, as ``--set`` would)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pvnviz.cli.argtypes import non_negative_int, positive_int
from pvnviz.core.config_fields import ConfigError, apply_overrides
from pvnviz.core.progress import ProgressFn


def presets() -> dict[str, Any]:
    """The polytope's presets: the paper's settings, and the same with active rounds."""
    from pvnviz.polytope.experiment import PolytopeConfig
    from pvnviz.polytope.rounds import PolytopeRoundsConfig

    return {"paper": PolytopeConfig, "beyond": PolytopeRoundsConfig}


def add_arguments(run: argparse.ArgumentParser) -> None:
    """``--checks`` and ``--episodes`` on ``pvnviz run``."""
    run.add_argument(
        "--checks", type=positive_int, default=None, help="polytope --preset beyond: checks the active rounds may spend"
    )
    run.add_argument(
        "--episodes",
        type=non_negative_int,
        default=None,
        help="polytope --preset beyond: Monte Carlo episodes per state of each check (0: exact checks)",
    )


def apply_flags(args: argparse.Namespace, config: Any) -> Any:
    """The config with ``--checks`` and ``--episodes`` applied; ConfigError (exit 2) if it has no active rounds."""
    flags = (("max_checks", getattr(args, "checks", None)), ("check_episodes", getattr(args, "episodes", None)))
    changes = [f"{name}={value}" for name, value in flags if value is not None]
    if not changes:
        return config
    if not hasattr(config, "max_checks"):
        raise ConfigError(
            "--checks and --episodes set the active rounds: use them with `run polytope --preset beyond`."
        )
    return apply_overrides(config, changes)


def run(config: Any, seed: int, on_progress: ProgressFn) -> Any:
    """Section 6.1, and the active rounds after it for a ``PolytopeRoundsConfig``."""
    from pvnviz.polytope.experiment import run_polytope
    from pvnviz.polytope.rounds import PolytopeRoundsConfig, run_polytope_beyond

    runner = run_polytope_beyond if isinstance(config, PolytopeRoundsConfig) else run_polytope
    return runner(config, seed, on_progress)


def save(result: Any, out_dir: str) -> None:
    """A beyond run's rounds as ``rounds.json`` (``pvnviz.polytope.rounds.rounds_to_dict``); nothing else."""
    from pvnviz.polytope.rounds import ROUNDS_FILE, PolytopeBeyondResult, rounds_to_dict

    if isinstance(result, PolytopeBeyondResult):
        text = json.dumps(rounds_to_dict(result.rounds), allow_nan=False)
        Path(out_dir, ROUNDS_FILE).write_text(text + "\n")
