"""Saved runs: a folder with ``config.json``, ``summary.json`` and array files.

The CLI writes runs (Section 6 experiments at paper scale); the pages open them.
Layout of a run folder:
- ``config.json``: {"experiment": name, "seed": int, "config": {...}}
- ``summary.json``: the experiment's headline numbers and timings in seconds
- ``*.npz`` / ``*.pt``: arrays and trained networks, experiment-specific
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pvnviz.configs import to_dict


class RunError(ValueError):
    """A folder that is not a readable run; the message says what is missing."""


@dataclass(frozen=True)
class RunInfo:
    """What config.json and summary.json of a run hold."""

    path: Path
    experiment: str
    seed: int
    config: dict[str, Any]
    summary: dict[str, Any]


def prepare_out(out_dir: str | Path) -> Path:
    """Create the run folder (or check it is writable); RunError says what to change."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise RunError(f"cannot write run folder {out}: {err.strerror}; choose another --out.") from None
    return out


def write_run(out_dir: str | Path, experiment: str, seed: int, config: Any, summary: dict) -> Path:
    """Create the folder and write config.json and summary.json."""
    meta = {"experiment": experiment, "seed": seed, "config": to_dict(config)}
    try:  # strict JSON: NaN and Infinity are not JSON, and other parsers refuse them
        summary_text = json.dumps(summary, indent=2, allow_nan=False)
        config_text = json.dumps(meta, indent=2, allow_nan=False)
    except ValueError:
        raise RunError(
            "the run failed: its results hold NaN or infinity (a diverging PVN or ascent); lower a learning rate."
        ) from None
    out = prepare_out(out_dir)
    (out / "summary.json").write_text(summary_text + "\n")
    (out / "config.json").write_text(config_text + "\n")  # last: its presence marks a run
    return out


def read_run(path: str | Path, experiment: str | None = None) -> RunInfo:
    """Read a run folder; RunError if it is not one (or not of the expected experiment)."""
    folder = Path(path)
    if not folder.is_dir():
        raise RunError(f"{folder} is not a folder; give the --out folder of a saved run.")
    try:
        meta = json.loads((folder / "config.json").read_text())
        summary = json.loads((folder / "summary.json").read_text())
    except FileNotFoundError as err:
        raise RunError(
            f"{folder} is not a run: {Path(err.filename).name} is missing "
            "(a run folder is made by `python -m pvnviz run ... --out DIR`)."
        ) from None
    except json.JSONDecodeError as err:
        raise RunError(f"{folder} holds a damaged JSON file: {err.msg}.") from None
    if not isinstance(meta, dict) or "experiment" not in meta or "config" not in meta:
        raise RunError(f"{folder}/config.json lacks 'experiment' and 'config'; not a run.")
    if experiment is not None and meta["experiment"] != experiment:
        raise RunError(f"{folder} is a {meta['experiment']} run, not a {experiment} run.")
    return RunInfo(folder, meta["experiment"], int(meta.get("seed", 0)), meta["config"], summary)


def staging_dir(out_dir: str | Path) -> Path:
    """Where a run is written before it is complete: a hidden folder beside its target."""
    out = Path(out_dir)
    return out.parent / f".{out.name}.partial"
