"""The files of a Section 6 run: written in one order, checked before they are opened, loaded.

``save_result`` writes the arrays and networks of an ``ExperimentResult``; ``pvnviz.runs.store`` wraps the
folder (config.json, summary.json, then manifest.json last, and the rename into place). ``load_result``
opens a run folder: ``read_run`` checks the manifest, ``check_run`` every file's content, and only
then are the dataset, the PVNs and the ascent traces built. Opening never runs an environment.

Saved runs are checked before they are opened: every file against its config.json.

A run folder (``pvnviz.runs.store``) whose manifest checks out is whole, but not necessarily sane: a file
edited by hand and given a new manifest, or a run of another version, must not reach the page as an
``IndexError`` or a 30 GB allocation. ``check_run`` reads only the headers and small arrays it needs,
checks every array's shape, dtype and range against ``config.json`` (Algorithm 1's K x B dataset, the
PVN's bins and inputs, Algorithm 3's A starts) and each PVN's tensors against the network its config
builds, and raises ``RunError`` naming the file and what is wrong, never a server path.
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
from pvnviz.core.configs import ConfigError, from_dict
from pvnviz.core.ensemble import TrainedEnsemble
from pvnviz.core.histogram import ReturnBins
from pvnviz.core.pvn import TrainedPVN
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.pipeline import ExperimentConfig, ExperimentResult, Split, build_ensemble, build_pvn
from pvnviz.runs.safe_files import Budget, check_directory, check_npz, open_regular, read_json
from pvnviz.runs.store import RUN_FORMAT_VERSION, RunError, RunInfo, read_run

DAMAGED = "the run was changed after it was written, or written by another version; run it again"
MAX_RUN_BYTES = 2**30  # a run opened from a folder: its arrays as declared plus its network files


def _fail(name: str, problem: str) -> RunError:
    return RunError(f"{name}: {problem}; {DAMAGED}.")


def _arrays(folder: Path, name: str, required: dict[str, str], budget: Budget) -> dict[str, np.ndarray]:
    """The arrays of an .npz, each present and of its kind ('f' float, 'i' integer, 'U' text).

    Every member's header is checked against ``budget`` (``safe_files.check_npz``) before ``np.load`` reads it.
    """
    with open_regular(folder / name, name) as handle:
        check_npz(handle, name, budget)
        try:
            with np.load(handle, allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
            raise _fail(name, f"not a readable array file ({type(err).__name__})") from None
    for key, kinds in required.items():
        if key not in arrays:
            raise _fail(name, f"the array {key!r} is missing")
        if arrays[key].size and arrays[key].dtype.kind not in kinds:
            raise _fail(name, f"{key} holds {arrays[key].dtype}, expected {'integers' if kinds == 'iu' else 'numbers'}")
    return arrays


def _shape(name: str, key: str, array: np.ndarray, expected: tuple, why: str) -> None:
    if array.shape != expected:
        raise _fail(name, f"{key} has shape {array.shape}, expected {expected} ({why})")


def _scalars(name: str, arrays: dict[str, np.ndarray], keys: tuple[str, ...]) -> None:
    """Each of ``keys`` one value (shape ()), as ``save_result`` writes it: never a vector where a number goes."""
    for key in keys:
        if key in arrays:
            _shape(name, key, arrays[key], (), "one value")


def _finite(name: str, key: str, array: np.ndarray) -> None:
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise _fail(name, f"{key} holds NaN or infinity")


def check_config(info: RunInfo, experiment: str | None):
    """The run's ExperimentConfig from config.json, or RunError (unknown version, bad or out-of-limit setting)."""
    version = info.config_version
    if version != RUN_FORMAT_VERSION:
        raise RunError(f"config.json has version {version!r}; this app reads version {RUN_FORMAT_VERSION}.")
    if not isinstance(info.config, dict) or not isinstance(info.summary, dict):
        raise _fail("config.json" if not isinstance(info.config, dict) else "summary.json", "not a JSON object")
    try:
        config = from_dict(ExperimentConfig, info.config)
    except (ConfigError, TypeError, ValueError) as err:
        raise _fail("config.json", str(err).rstrip(".")) from None
    if experiment is not None and config.env != experiment:
        raise RunError(f"this is a {config.env} run, not a {experiment} run.")
    return config


def _seconds(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def check_summary(summary: dict, modes: tuple[str, ...]) -> tuple[dict[str, float], dict[str, float]]:
    """What a run's summary.json gives the page: its timings (seconds) and each ensemble's validation spread.

    RunError for a list or text where a number goes (``read_json`` has already refused NaN and huge numbers).
    """
    name = "summary.json"
    timings = summary.get("timings_seconds", {})
    if not isinstance(timings, dict) or not all(_seconds(v) for v in timings.values()):
        raise _fail(name, "timings_seconds is not a table of durations in seconds")
    inputs = summary.get("inputs", {})
    if not isinstance(inputs, dict) or not all(isinstance(v, dict) for v in inputs.values()):
        raise _fail(name, "inputs is not a table per PVN input")
    spreads = {}
    for mode in modes:
        spread = inputs.get(mode, {}).get("ensemble_val_spread", math.nan)
        if not (_seconds(spread) or (isinstance(spread, float) and math.isnan(spread))):
            raise _fail(name, f"{mode}'s ensemble_val_spread is not a number of 0 or more")
        spreads[mode] = float(spread)
    return {str(k): float(v) for k, v in timings.items()}, spreads


def check_dataset(folder: Path, config: Any, budget: Budget) -> dict[str, np.ndarray]:
    """dataset.npz against the config (K x P parameters, K x B returns, env, horizon, architecture); its arrays."""
    name = "dataset.npz"
    required = {"params": "f", "returns": "f", "env_name": "U", "horizon": "iu", "arch": "iu", "seconds": "f"}
    data = _arrays(folder, name, required, budget)
    _scalars(name, data, ("env_name", "horizon", "seconds"))
    arch = config.arch()
    k, b = config.num_policies, config.num_episodes
    _shape(name, "params", data["params"], (k, arch.num_params), "num_policies x the policy's parameters")
    _shape(name, "returns", data["returns"], (k, b), "num_policies x num_episodes")
    for key in ("params", "returns"):
        _finite(name, key, data[key])
    if str(data["env_name"]) != config.env:
        raise _fail(name, f"its environment is {str(data['env_name'])!r}, config.json says {config.env!r}")
    if int(data["horizon"]) != config.horizon:
        raise _fail(name, f"its horizon is {int(data['horizon'])}, config.json says {config.horizon}")
    expected_arch = [arch.obs_dim, arch.act_dim, int(arch.discrete), *arch.hidden]
    _shape(name, "arch", data["arch"], (len(expected_arch),), "the policy's sizes")
    if data["arch"].tolist() != expected_arch:
        raise _fail(name, f"its policy architecture {data['arch'].tolist()} is not config.json's {expected_arch}")
    return data


def check_split(folder: Path, config: Any, kept: np.ndarray) -> dict:
    """split.json: disjoint train and validation indices of kept policies, and config.json's bins; its content."""
    name = "split.json"
    meta = read_json(folder / name, name)
    if not isinstance(meta, dict) or not {"train_idx", "val_idx", "bins"} <= set(meta):
        raise _fail(name, "it lacks train_idx, val_idx or bins")
    indices = {}
    for key in ("train_idx", "val_idx"):
        values = meta[key]
        if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise _fail(name, f"{key} is not a list of whole numbers")
        if values and not (0 <= min(values) and max(values) < len(kept)):
            raise _fail(name, f"{key} points outside the {len(kept)} policies of dataset.npz")
        if not kept[values].all():
            raise _fail(name, f"{key} holds a policy that config.json's return_limit leaves out")
        indices[key] = set(values)
    if not indices["train_idx"]:
        raise _fail(name, "train_idx is empty")
    if indices["train_idx"] & indices["val_idx"]:
        raise _fail(name, "a policy is in both train_idx and val_idx")
    bins = meta["bins"]
    if not (isinstance(bins, list) and len(bins) == 3 and all(isinstance(v, (int, float)) for v in bins)):
        raise _fail(name, "bins is not [lowest return, highest return, number of bins]")
    g_min, g_max, num_bins = bins
    if not (np.isfinite(g_min) and np.isfinite(g_max) and g_min < g_max):
        raise _fail(name, f"the bins' range [{g_min}, {g_max}] is not an interval")
    if num_bins != config.num_bins:
        raise _fail(name, f"{num_bins} bins, config.json says num_bins {config.num_bins}")
    return meta


def check_curves(folder: Path, config: Any, mode: str, budget: Budget) -> dict[str, np.ndarray]:
    """curves_<input>.npz: training curves of one length, Algorithm 3's arrays over num_starts starts; its arrays."""
    name = f"curves_{mode}.npz"
    c = _arrays(
        folder,
        name,
        {
            "steps": "iu",
            "train_loss": "f",
            "val_loss": "f",
            "snapshot_steps": "iu",
            "probe_snapshots": "f",
            "eval_steps": "iu",
            "true_returns": "f",
            "predicted": "f",
            "params": "f",
            "seconds": "f",
            "ascent_seconds": "f",
        },
        budget,
    )
    _scalars(name, c, ("seconds", "ascent_seconds", "explore_env_steps"))
    logged = c["steps"].shape
    if len(logged) != 1:
        raise _fail(name, f"steps has shape {logged}, expected one dimension")
    for key in ("train_loss", "val_loss"):
        _shape(name, key, c[key], logged, "one value per logged training step")
    snaps = c["probe_snapshots"]
    if snaps.size:
        env_dim = config.arch().obs_dim
        expected = (len(c["snapshot_steps"]), config.num_probes, env_dim)
        _shape(name, "probe_snapshots", snaps, expected, "snapshots x num_probes x the observation")
    starts = config.num_starts
    scored = c["eval_steps"]
    if scored.ndim != 1 or scored.size == 0:
        raise _fail(name, "eval_steps is not a list of ascent steps")
    _shape(name, "true_returns", c["true_returns"], (len(scored), starts), "scored steps x num_starts")
    _shape(name, "params", c["params"], (len(scored), starts, config.arch().num_params), "scored steps x starts x P")
    predicted = c["predicted"]
    if predicted.ndim != 2 or predicted.shape[1] != starts:
        raise _fail(name, f"predicted has shape {predicted.shape}, expected (ascent steps + 1, {starts})")
    if scored.min() < 0 or scored.max() >= len(predicted):
        raise _fail(name, f"eval_steps points outside the {len(predicted)} ascent steps")
    for key in ("true_returns", "params", "predicted"):
        _finite(name, key, c[key])
    if "fresh_returns" in c:
        _shape(name, "fresh_returns", c["fresh_returns"], (starts,), "one re-measured return per start")
        _finite(name, "fresh_returns", c["fresh_returns"])
    if "disagreement" in c:
        _shape(name, "disagreement", c["disagreement"], predicted.shape, "one spread per ascent step and start")
    explored = c.get("explore_env_steps")
    if explored is not None and (explored.shape != () or not np.isfinite(explored) or explored < 0):
        raise _fail(name, "explore_env_steps is not a count of environment steps")
    return c


def check_network(name: str, state: Any, expected: dict) -> None:
    """A loaded state dict against the network its config builds: the same tensors, of the same shapes."""
    if not isinstance(state, dict):
        raise _fail(name, "not a network's weights")
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    if missing or extra:
        which = f"{missing[0]!r} is missing" if missing else f"{extra[0]!r} is not a tensor of this PVN"
        raise _fail(name, f"it is not the PVN config.json describes ({which})")
    for key, tensor in expected.items():
        got = getattr(state[key], "shape", None)
        if got is None or tuple(got) != tuple(tensor.shape):
            shown = tuple(got) if got is not None else "?"
            raise _fail(name, f"{key} has shape {shown}, expected {tuple(tensor.shape)}")
        if state[key].is_floating_point() and not bool(state[key].isfinite().all()):
            raise _fail(name, f"{key} holds NaN or infinity")


def load_network(folder: Path, name: str, expected: dict, budget: Budget) -> dict:
    """``torch.load(weights_only=True)`` of one network file, checked against ``expected``; RunError otherwise.

    A plain file whose size fits ``budget`` (torch holds at most the file's bytes) and whose zip directory is small.
    """
    if not (folder / name).exists():
        raise _fail(name, "the file is missing")
    with open_regular(folder / name, name) as handle:
        budget.take(os.fstat(handle.fileno()).st_size, name)
        check_directory(handle, name)
        try:
            state = torch.load(handle, weights_only=True, map_location="cpu")
        except (OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile) as err:
            raise _fail(name, f"not a network file this app can read safely ({type(err).__name__})") from None
    check_network(name, state, expected)
    return state


@dataclass(frozen=True)
class CheckedRun:
    """A run's files, read once and checked against its config.json: what ``load_result`` builds from."""

    config: ExperimentConfig
    dataset: PolicyDataset
    split: dict
    curves: dict[str, dict[str, np.ndarray]]


def check_run(folder: Path, info: RunInfo, experiment: str | None = None, budget: Budget | None = None) -> CheckedRun:
    """Every file of a run against its config.json before anything is built from them (each file read once).

    ``budget`` bounds the bytes the run's arrays declare (default ``MAX_RUN_BYTES``), each checked before it is read.
    """
    budget = Budget(MAX_RUN_BYTES) if budget is None else budget
    config = check_config(info, experiment)
    dataset = PolicyDataset.from_arrays(check_dataset(folder, config, budget))
    split = check_split(folder, config, dataset.kept(config.return_limit))
    curves = {mode: check_curves(folder, config, mode, budget) for mode in config.inputs}
    return CheckedRun(config, dataset, split, curves)


def save_result(result: ExperimentResult, out_dir: str | Path) -> None:
    """Write a run's arrays and networks into ``out_dir``: ``dataset.npz``, ``split.json``, and per PVN input
    ``pvn_<input>.pt``, ``ensemble_<input>.pt`` (ensembles) and ``curves_<input>.npz``.

    ``pvnviz.runs.store.write_run`` then adds ``summary.json``, ``config.json`` and, last, ``manifest.json``.
    """
    out = Path(out_dir)
    result.dataset.save(out / "dataset.npz")
    for mode, trained in result.trained.items():
        torch.save(trained.model.state_dict(), out / f"pvn_{mode}.pt")
        if mode in result.ensembles:
            torch.save(result.ensembles[mode].ensemble.state_dict(), out / f"ensemble_{mode}.pt")
        trace = result.traces[mode]
        np.savez_compressed(
            out / f"curves_{mode}.npz",
            steps=trained.steps,
            train_loss=trained.train_loss,
            val_loss=trained.val_loss,
            snapshot_steps=trained.snapshot_steps,
            probe_snapshots=trained.probe_snapshots if trained.probe_snapshots is not None else np.zeros(0),
            seconds=trained.seconds,
            eval_steps=trace.eval_steps,
            true_returns=trace.true_returns,
            predicted=trace.predicted,
            params=trace.params,
            ascent_seconds=trace.seconds,
            **({} if trace.fresh_returns is None else {"fresh_returns": trace.fresh_returns}),
            **({} if trace.disagreement is None else {"disagreement": trace.disagreement}),
            explore_env_steps=trace.explore_env_steps,
        )
    (out / "split.json").write_text(
        json.dumps(
            {
                "train_idx": result.split.train_idx.tolist(),
                "val_idx": result.split.val_idx.tolist(),
                "bins": [result.split.bins.g_min, result.split.bins.g_max, result.split.bins.num_bins],
            }
        )
    )


def load_result(path: str | Path, experiment: str | None = None, *, max_bytes: int = MAX_RUN_BYTES) -> ExperimentResult:
    """Open a run folder written by the CLI; RunError with a clear message if it is not one.

    The run's arrays (as their headers declare them) and network files may take at most ``max_bytes``.
    """
    info = read_run(path, experiment)
    folder = Path(path)
    budget = Budget(max_bytes)
    checked = check_run(folder, info, experiment, budget)  # every file against config.json, before anything is built
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
        for mode in config.inputs:
            shell = dataclasses.replace(config, probe_init="noise")  # saved probes replace these: no rollouts
            model = build_pvn(shell, bins, mode, info.seed)
            model.load_state_dict(load_network(folder, f"pvn_{mode}.pt", model.state_dict(), budget))
            c = checked.curves[mode]
            snaps = c["probe_snapshots"]
            trained[mode] = TrainedPVN(
                model,
                mode,
                c["steps"],
                c["train_loss"],
                c["val_loss"],
                c["snapshot_steps"],
                snaps if snaps.size else None,
                float(c["seconds"]),
            )
            traces[mode] = AscentTrace(
                mode,
                c["eval_steps"],
                c["true_returns"],
                c["predicted"],
                c["params"],
                float(c["ascent_seconds"]),
                c.get("fresh_returns"),  # None in runs before the fresh stage
                c.get("disagreement"),
                start_counts=config.start_from == "dataset",
                explore_env_steps=int(c.get("explore_env_steps", 0)),  # 0 in runs before perturbations
            )
            if config.ensemble_size > 1:
                ensemble = build_ensemble(shell, bins, mode, info.seed)
                ensemble.load_state_dict(load_network(folder, f"ensemble_{mode}.pt", ensemble.state_dict(), budget))
                ensembles[mode] = TrainedEnsemble(ensemble, trained[mode], spreads[mode])
    except RunError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError) as err:
        raise RunError(f"not a complete {info.experiment} run ({type(err).__name__}); run it again.") from None
    return ExperimentResult(config, info.seed, dataset, parts, trained, traces, timings, ensembles)
