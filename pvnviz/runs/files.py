"""The files of a Section 6 run: written in one order, checked before they are opened, loaded.

Which files and arrays a run holds, their dtypes, shapes (in named sizes: K policies, B episodes, A starts, ...)
and limits are declared once, in ``pvnviz.runs.schema``; saving, checking and loading here all read it.
``save_result`` writes the arrays and networks of an ``ExperimentResult``; ``pvnviz.runs.store`` wraps the
folder (config.json, summary.json, then manifest.json last, and the rename into place). ``load_result``
opens a run folder: ``read_run`` checks the manifest, ``check_run`` every file's content, and only
then are the dataset, the PVNs and the ascent traces built. Opening never runs an environment.

Saved runs are checked before they are opened: every file against its config.json.

A run folder (``pvnviz.runs.store``) whose manifest checks out is whole, but not necessarily sane: a file
edited by hand and given a new manifest, or a run of another version, must not reach the page as an
``IndexError`` or a 30 GB allocation. ``check_run`` reads every array's header before the array (within a
byte cap), checks every array's shape, dtype and range as the schema declares them against ``config.json``
(Algorithm 1's K x B dataset, the PVN's bins and inputs, Algorithm 3's A starts) and each PVN's tensors
against the network its config builds, and raises ``RunError`` naming the file and what is wrong, never a
server path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pvnviz.core.ascent import AscentTrace
from pvnviz.core.config_fields import ConfigError, from_dict
from pvnviz.core.ensemble import TrainedEnsemble
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.pvn import TrainedPVN
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.pipeline import ExperimentConfig, ExperimentResult, Split, build_ensemble, build_pvn
from pvnviz.runs.safe_files import ByteCap, check_directory, check_npz, open_regular, read_json
from pvnviz.runs.schema import (
    CURVES,
    DATASET,
    ENSEMBLE_FILE,
    PVN_FILE,
    SPLIT,
    check_arrays,
    expected_values,
    from_arrays,
    refuse,
    sizes_of,
    to_arrays,
)
from pvnviz.runs.store import RUN_FORMAT_VERSION, RunError, RunInfo, read_run

MAX_RUN_BYTES = 2**30  # a run opened from a folder: its arrays as declared plus its network files


def _arrays(folder: Path, name: str, cap: ByteCap) -> dict[str, np.ndarray]:
    """Every array of an .npz, each member's header checked against ``cap`` (``safe_files.check_npz``)
    before ``np.load`` reads it; what they hold is ``schema.check_arrays``'s to check."""
    with open_regular(folder / name, name) as handle:
        check_npz(handle, name, cap)
        try:
            with np.load(handle, allow_pickle=False) as data:
                return {key: data[key] for key in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
            raise refuse(name, f"not a readable array file ({type(err).__name__})") from None


def check_config(info: RunInfo, experiment: str | None) -> ExperimentConfig:
    """The run's ExperimentConfig from config.json, or RunError (unknown version, bad or out-of-limit setting)."""
    version = info.config_version
    if version != RUN_FORMAT_VERSION:
        raise RunError(f"config.json has version {version!r}; this app reads version {RUN_FORMAT_VERSION}.")
    if not isinstance(info.config, dict) or not isinstance(info.summary, dict):
        raise refuse("config.json" if not isinstance(info.config, dict) else "summary.json", "not a JSON object")
    try:
        config = from_dict(ExperimentConfig, info.config)
    except (ConfigError, TypeError, ValueError) as err:
        raise refuse("config.json", str(err).rstrip(".")) from None
    if experiment is not None and config.env_name != experiment:
        raise RunError(f"this is a {config.env_name} run, not a {experiment} run.")
    return config


def _number(value: object) -> bool:
    """A JSON number: an int or a float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _seconds(value: Any) -> bool:
    """A duration in seconds: a number, 0 or more."""
    return _number(value) and value >= 0


def check_summary(summary: dict, input_modes: tuple[str, ...]) -> tuple[dict[str, float], dict[str, float]]:
    """What a run's summary.json gives the page: its timings (seconds) and each ensemble's validation spread.

    RunError for a list or text where a number goes (``read_json`` has already refused NaN and huge numbers).
    """
    name = "summary.json"
    timings = summary.get("timings_seconds", {})
    if not isinstance(timings, dict) or not all(_seconds(v) for v in timings.values()):
        raise refuse(name, "timings_seconds is not a table of durations in seconds")
    inputs = summary.get("inputs", {})
    if not isinstance(inputs, dict) or not all(isinstance(v, dict) for v in inputs.values()):
        raise refuse(name, "inputs is not a table per PVN input")
    spreads = {}
    for input_mode in input_modes:
        spread = inputs.get(input_mode, {}).get("ensemble_val_spread", math.nan)
        if not (_seconds(spread) or (isinstance(spread, float) and math.isnan(spread))):
            raise refuse(name, f"{input_mode}'s ensemble_val_spread is not a number of 0 or more")
        spreads[input_mode] = float(spread)
    return {str(k): float(v) for k, v in timings.items()}, spreads


def check_dataset(folder: Path, config: Any, cap: ByteCap) -> dict[str, np.ndarray]:
    """dataset.npz against the config (``schema.DATASET``: K x P parameters, K x B returns, env, horizon,
    architecture); its arrays."""
    name = DATASET.name()
    data = _arrays(folder, name, cap)
    check_arrays(name, DATASET, data, sizes_of(config), expected_values(config))
    return data


def check_split(folder: Path, config: Any, kept: np.ndarray) -> dict:
    """split.json: disjoint train and validation indices of kept policies, and config.json's bins; its content."""
    name = SPLIT.name()
    meta = read_json(folder / name, name)
    if not isinstance(meta, dict) or not set(SPLIT.keys) <= set(meta):
        raise refuse(name, f"it lacks {', '.join(SPLIT.keys[:-1])} or {SPLIT.keys[-1]}")
    indices = {}
    for key in ("train_idx", "val_idx"):
        values = meta[key]
        if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise refuse(name, f"{key} is not a list of whole numbers")
        if values and not (0 <= min(values) and max(values) < len(kept)):
            raise refuse(name, f"{key} points outside the {len(kept)} policies of {DATASET.name()}")
        if not kept[values].all():
            raise refuse(name, f"{key} holds a policy that config.json's return_limit leaves out")
        indices[key] = set(values)
    if not indices["train_idx"]:
        raise refuse(name, "train_idx is empty")
    if indices["train_idx"] & indices["val_idx"]:
        raise refuse(name, "a policy is in both train_idx and val_idx")
    bins = meta["bins"]
    if not (isinstance(bins, list) and len(bins) == 3 and all(isinstance(v, (int, float)) for v in bins)):
        raise refuse(name, "bins is not [lowest return, highest return, number of bins]")
    g_min, g_max, num_bins = bins
    if not (np.isfinite(g_min) and np.isfinite(g_max) and g_min < g_max):
        raise refuse(name, f"the bins' range [{g_min}, {g_max}] is not an interval")
    if num_bins != config.num_bins:
        raise refuse(name, f"{num_bins} bins, config.json says num_bins {config.num_bins}")
    return meta


def check_curves(folder: Path, config: Any, input_mode: str, cap: ByteCap) -> dict[str, np.ndarray]:
    """curves_<input>.npz against the config (``schema.CURVES``: training curves of one length, Algorithm 3's
    arrays over num_starts starts); its arrays."""
    name = CURVES.name(input_mode)
    curves = _arrays(folder, name, cap)
    check_arrays(name, CURVES, curves, sizes_of(config), expected_values(config))
    return curves


def check_network(name: str, state: Any, expected: dict) -> None:
    """A loaded state dict against the network its config builds: the same tensors, of the same shapes."""
    if not isinstance(state, dict):
        raise refuse(name, "not a network's weights")
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    if missing or extra:
        which = f"{missing[0]!r} is missing" if missing else f"{extra[0]!r} is not a tensor of this PVN"
        raise refuse(name, f"it is not the PVN config.json describes ({which})")
    for key, tensor in expected.items():
        got = getattr(state[key], "shape", None)
        if got is None or tuple(got) != tuple(tensor.shape):
            shown = tuple(got) if got is not None else "?"
            raise refuse(name, f"{key} has shape {shown}, expected {tuple(tensor.shape)}")
        if state[key].is_floating_point() and not bool(state[key].isfinite().all()):
            raise refuse(name, f"{key} holds NaN or infinity")


def load_network(folder: Path, name: str, expected: dict, cap: ByteCap) -> dict:
    """``torch.load(weights_only=True)`` of one network file, checked against ``expected``; RunError otherwise.

    A plain file whose size fits ``cap`` (torch holds at most the file's bytes) and whose zip directory is small.
    """
    if not (folder / name).exists():
        raise refuse(name, "the file is missing")
    with open_regular(folder / name, name) as handle:
        cap.take(os.fstat(handle.fileno()).st_size, name)
        check_directory(handle, name)
        try:
            state = torch.load(handle, weights_only=True, map_location="cpu")
        except (OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile) as err:
            raise refuse(name, f"not a network file this app can read safely ({type(err).__name__})") from None
    check_network(name, state, expected)
    return state


@dataclass(frozen=True)
class CheckedRun:
    """A run's files, read once and checked against its config.json: what ``load_result`` builds from."""

    config: ExperimentConfig
    dataset: PolicyDataset
    split: dict
    curves: dict[str, dict[str, np.ndarray]]


def check_run(folder: Path, info: RunInfo, experiment: str | None = None, cap: ByteCap | None = None) -> CheckedRun:
    """Every file of a run against its config.json before anything is built from them (each file read once).

    ``cap`` bounds the bytes the run's arrays declare (default ``MAX_RUN_BYTES``), each checked before it is read.
    """
    cap = ByteCap(MAX_RUN_BYTES) if cap is None else cap
    config = check_config(info, experiment)
    dataset = PolicyDataset(**from_arrays(DATASET, check_dataset(folder, config, cap), "dataset"))
    split = check_split(folder, config, dataset.kept(config.return_limit))
    curves = {input_mode: check_curves(folder, config, input_mode, cap) for input_mode in config.inputs}
    return CheckedRun(config, dataset, split, curves)


def save_result(result: ExperimentResult, out_dir: str | Path) -> None:
    """Write a run's arrays and networks into ``out_dir``: ``dataset.npz``, ``split.json``, and per PVN input
    ``pvn_<input>.pt``, ``ensemble_<input>.pt`` (ensembles) and ``curves_<input>.npz``.

    ``pvnviz.runs.store.write_run`` then adds ``summary.json``, ``config.json`` and, last, ``manifest.json``.
    """
    out = Path(out_dir)
    result.dataset.save(out / DATASET.name())
    for input_mode, trained in result.trained.items():
        torch.save(trained.model.state_dict(), out / PVN_FILE.name(input_mode))
        if input_mode in result.ensembles:
            torch.save(result.ensembles[input_mode].ensemble.state_dict(), out / ENSEMBLE_FILE.name(input_mode))
        owners = {"trained": trained, "trace": result.traces[input_mode]}
        np.savez_compressed(out / CURVES.name(input_mode), **to_arrays(CURVES, owners))
    bins = result.split.bins
    split = (result.split.train_idx.tolist(), result.split.val_idx.tolist(), [bins.g_min, bins.g_max, bins.num_bins])
    (out / SPLIT.name()).write_text(json.dumps(dict(zip(SPLIT.keys, split, strict=True))))


def load_result(path: str | Path, experiment: str | None = None, *, max_bytes: int = MAX_RUN_BYTES) -> ExperimentResult:
    """Open a run folder written by the CLI; RunError with a clear message if it is not one.

    The run's arrays (as their headers declare them) and network files may take at most ``max_bytes``.
    """
    info = read_run(path, experiment)
    folder = Path(path)
    cap = ByteCap(max_bytes)
    checked = check_run(folder, info, experiment, cap)  # every file against config.json, before anything is built
    config, dataset, meta = checked.config, checked.dataset, checked.split
    timings, spreads = check_summary(info.summary, config.inputs)
    try:
        bins = ReturnBins(*meta["bins"])
        parts = Split(
            dataset.kept(config.return_limit),
            bins,
            np.array(meta["train_idx"], dtype=int),
            np.array(meta["val_idx"], dtype=int),
        )
        trained, traces, ensembles = {}, {}, {}
        for input_mode in config.inputs:
            shell = dataclasses.replace(config, probe_init="noise")  # saved probes replace these: no rollouts
            model = build_pvn(shell, bins, input_mode, info.seed)
            model.load_state_dict(load_network(folder, PVN_FILE.name(input_mode), model.state_dict(), cap))
            curves = checked.curves[input_mode]
            trained[input_mode] = TrainedPVN(
                model=model, input_mode=input_mode, **from_arrays(CURVES, curves, "trained")
            )
            traces[input_mode] = AscentTrace(
                input_mode=input_mode,
                **from_arrays(CURVES, curves, "trace"),  # optional arrays absent from older runs: their defaults
                start_counts=config.start_from == "dataset",
                pool_checks=config.pool_checks,
            )
            if ENSEMBLE_FILE.needed(config):
                ensemble = build_ensemble(shell, bins, input_mode, info.seed)
                state = load_network(folder, ENSEMBLE_FILE.name(input_mode), ensemble.state_dict(), cap)
                ensemble.load_state_dict(state)
                ensembles[input_mode] = TrainedEnsemble(ensemble, trained[input_mode], spreads[input_mode])
    except RunError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError) as err:
        raise RunError(f"not a complete {info.experiment} run ({type(err).__name__}); run it again.") from None
    fresh_best = info.summary.get("kept_best_fresh_return")
    if fresh_best is not None and not (_number(fresh_best) and math.isfinite(fresh_best)):
        raise refuse("summary.json", "kept_best_fresh_return is not a number")
    kept_best_fresh = None if fresh_best is None else float(fresh_best)
    return ExperimentResult(config, info.seed, dataset, parts, trained, traces, timings, ensembles, kept_best_fresh)
