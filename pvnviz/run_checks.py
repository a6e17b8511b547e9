"""Saved runs are checked before they are opened: every file of a Section 6 run against its config.json.

A run folder (``pvnviz.runs``) whose manifest checks out is whole, but not necessarily sane: a file
edited by hand and given a new manifest, or a run of another version, must not reach the page as an
``IndexError`` or a 30 GB allocation. ``check_run`` reads only the headers and small arrays it needs,
checks every array's shape, dtype and range against ``config.json`` (Algorithm 1's K x B dataset, the
PVN's bins and inputs, Algorithm 3's A starts) and each PVN's tensors against the network its config
builds, and raises ``RunError`` naming the file and what is wrong, never a server path.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from pvnviz.configs import ConfigError, from_dict
from pvnviz.runs import RUN_FORMAT_VERSION, RunError, RunInfo

DAMAGED = "the run was changed after it was written, or written by another version; run it again"


def _fail(name: str, problem: str) -> RunError:
    return RunError(f"{name}: {problem}; {DAMAGED}.")


def _arrays(folder: Path, name: str, required: dict[str, str]) -> dict[str, np.ndarray]:
    """The arrays of an .npz, each present and of its kind ('f' float, 'i' integer, 'U' text)."""
    try:
        with np.load(folder / name, allow_pickle=False) as data:
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


def _finite(name: str, key: str, array: np.ndarray) -> None:
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise _fail(name, f"{key} holds NaN or infinity")


def check_config(info: RunInfo, experiment: str | None):
    """The run's ExperimentConfig from config.json, or RunError (unknown version, bad or out-of-limit setting)."""
    from pvnviz.experiment import ExperimentConfig

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


def check_dataset(folder: Path, config: Any) -> np.ndarray:
    """dataset.npz against the config (K x P parameters, K x B returns, env, horizon, architecture); the kept mask."""
    name = "dataset.npz"
    data = _arrays(folder, name, {"params": "f", "returns": "f", "env_name": "U", "horizon": "iu", "arch": "iu"})
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
    if data["arch"].tolist() != expected_arch:
        raise _fail(name, f"its policy architecture {data['arch'].tolist()} is not config.json's {expected_arch}")
    means = data["returns"].mean(axis=1)  # as PolicyDataset.mean_returns, so the kept count is the page's
    return np.ones(k, dtype=bool) if config.return_limit is None else means <= config.return_limit


def check_split(folder: Path, config: Any, kept: np.ndarray) -> None:
    """split.json: disjoint train and validation indices of kept policies, and config.json's bins."""
    name = "split.json"
    try:
        meta = json.loads((folder / name).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise _fail(name, "not readable JSON") from None
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


def check_curves(folder: Path, config: Any, mode: str) -> None:
    """curves_<input>.npz: training curves of one length, Algorithm 3's arrays over num_starts starts."""
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
    )
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


def load_network(folder: Path, name: str, expected: dict) -> dict:
    """``torch.load(weights_only=True)`` of one network file, checked against ``expected``; RunError otherwise."""
    import pickle

    import torch

    try:
        state = torch.load(folder / name, weights_only=True, map_location="cpu")
    except FileNotFoundError:
        raise _fail(name, "the file is missing") from None
    except (OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile) as err:
        raise _fail(name, f"not a network file this app can read safely ({type(err).__name__})") from None
    check_network(name, state, expected)
    return state


def check_run(folder: Path, info: RunInfo, experiment: str | None = None):
    """Every file of a run against its config.json before anything is built from them; the config."""
    config = check_config(info, experiment)
    kept = check_dataset(folder, config)
    check_split(folder, config, kept)
    for mode in config.inputs:
        check_curves(folder, config, mode)
    return config
