"""The files of a Section 6 run, declared once: every file of a run folder and every array in each .npz.

A run holds Algorithm 1's dataset (Appendix C: K policies x B episodes), Algorithm 2's PVNs and their
training curves, and Algorithm 3's ascent traces over A starts, one set per PVN input. This module is
the one list of them; ``pvnviz.runs.files`` writes (``save_result``), checks (``check_run``) and loads
(``load_result``) from it, and ``pvnviz.runs.archive`` accepts exactly its file names in a zip.

Shapes are written in named sizes (``SIZES``). Sizes known from config.json (K, B, P, D, H, A, n) are
given; the others (L, S, E, T) are bound by the first array that declares them, in the order below, and
every later array must agree. An array is checked for its dtype kind, its shape, and where declared its
finiteness, its range and its equality with config.json. ``field`` names the attribute the array holds
(of ``PolicyDataset``, ``TrainedPVN`` or ``AscentTrace``), the same on saving and on loading.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pvnviz.core.policies import PolicyArch
from pvnviz.runs.safe_files import RunError

DAMAGED = "the run was changed after it was written, or written by another version; run it again"

SIZES = {
    "K": "num_policies in config.json",
    "B": "num_episodes in config.json",
    "P": "the policy's parameters, from config.json's architecture",
    "D": "the observation's size, from config.json's environment",
    "H": "the policy's sizes: observation, action, discrete, then each hidden layer",
    "A": "num_starts in config.json",
    "n": "num_probes in config.json",
    "L": "logged training steps, the length of steps",
    "S": "probe snapshots, the length of snapshot_steps",
    "E": "checked ascent steps, the length of eval_steps",
    "T": "ascent steps + 1, the rows of predicted",
}
KIND_WORDS = {"f": "floating-point numbers", "iu": "integers", "iuf": "numbers", "U": "text"}


def arch_vector(arch: PolicyArch) -> np.ndarray:
    """A policy architecture as dataset.npz stores it: [obs_dim, act_dim, discrete, *hidden]."""
    return np.array([arch.obs_dim, arch.act_dim, int(arch.discrete), *arch.hidden])


def arch_from_vector(vector: np.ndarray) -> PolicyArch:
    """The inverse of ``arch_vector``."""
    a = vector.tolist()
    return PolicyArch(obs_dim=a[0], act_dim=a[1], discrete=bool(a[2]), hidden=tuple(a[3:]))


@dataclass(frozen=True)
class Array:
    """One array of an .npz: its name, dtype kind, shape in named sizes and the limits on its values."""

    name: str
    kinds: str  # numpy dtype kinds: "f" float, "iu" integer, "iuf" a number, "U" text
    shape: tuple[str, ...]  # named sizes (SIZES); () is one value
    field: str  # the attribute of ``owner`` it holds
    owner: str  # "dataset" (PolicyDataset), "trained" (TrainedPVN) or "trace" (AscentTrace)
    why: str  # what the shape means, for messages
    scalar: type | None = None  # shape (): loaded as this Python type
    finite: bool = False  # no NaN or infinity
    low: float | None = None  # smallest value allowed
    below: str | None = None  # a named size every value is less than (an index)
    equals: str | None = None  # the value must be config.json's (a key of ``expected_values``)
    optional: bool = False  # absent from some runs: loaded as ``default``, not written when None
    default: Any = None
    empty_is_none: bool = False  # an empty array stands for None (written as zeros(0), no shape checked)
    nonempty: bool = False
    encode: Callable[[Any], Any] | None = None  # the field's value -> the array written
    decode: Callable[[np.ndarray], Any] | None = None  # the array read -> the field's value


@dataclass(frozen=True)
class RunFile:
    """One file of a run folder; ``{input}`` in a name stands for each of config.json's PVN inputs."""

    pattern: str
    form: str  # "json", "npz" or "network" (a torch state dict, checked against the network config.json builds)
    what: str
    arrays: tuple[Array, ...] = ()
    keys: tuple[str, ...] = ()  # a JSON file's required keys
    needed: Callable[[Any], bool] = lambda config: True  # whether a run of this config holds it

    @property
    def per_input(self) -> bool:
        return "{input}" in self.pattern

    def name(self, input_mode: str = "") -> str:
        return self.pattern.format(input=input_mode)

    def array(self, name: str) -> Array:
        return next(a for a in self.arrays if a.name == name)


def _dataset_array(name: str, kinds: str, shape: tuple[str, ...], why: str, **limits: Any) -> Array:
    return Array(name, kinds, shape, name, "dataset", why, **limits)


DATASET = RunFile(
    "dataset.npz",
    "npz",
    "Algorithm 1's dataset: K policies, each rolled out B times (Appendix C)",
    (
        _dataset_array("params", "f", ("K", "P"), "num_policies x the policy's parameters", finite=True),
        _dataset_array("returns", "f", ("K", "B"), "num_policies x num_episodes", finite=True),
        _dataset_array("env_name", "U", (), "one value", scalar=str, equals="env_name"),
        _dataset_array("horizon", "iu", (), "one value", scalar=int, equals="horizon"),
        _dataset_array("seconds", "f", (), "one value", scalar=float),
        _dataset_array("env_steps", "iu", (), "one value", scalar=int, low=0, optional=True),  # as counted
        _dataset_array(
            "arch", "iu", ("H",), "the policy's sizes", equals="arch", encode=arch_vector, decode=arch_from_vector
        ),
    ),
)


def _trained(name: str, kinds: str, shape: tuple[str, ...], why: str, **limits: Any) -> Array:
    return Array(name, kinds, shape, name, "trained", why, **limits)


def _trace(name: str, kinds: str, shape: tuple[str, ...], why: str, field: str = "", **limits: Any) -> Array:
    return Array(name, kinds, shape, field or name, "trace", why, **limits)


CURVES = RunFile(
    "curves_{input}.npz",
    "npz",
    "one PVN's training curves (Algorithm 2) and its ascent over A starts (Algorithm 3)",
    (
        _trained("steps", "iu", ("L",), "one value per logged training step"),
        _trained("train_loss", "f", ("L",), "one value per logged training step"),
        _trained("val_loss", "f", ("L",), "one value per logged training step"),
        _trained("snapshot_steps", "iu", ("S",), "one step per probe snapshot"),
        _trained(
            "probe_snapshots",
            "f",
            ("S", "n", "D"),
            "snapshots x num_probes x the observation; empty for a flattened PVN",
            empty_is_none=True,
        ),
        _trained("seconds", "f", (), "one value", scalar=float),
        _trace(
            "eval_steps", "iu", ("E",), "the checked ascent steps", "checked_steps", nonempty=True, low=0, below="T"
        ),
        _trace("true_returns", "f", ("E", "A"), "scored steps x num_starts", finite=True),
        _trace("predicted", "f", ("T", "A"), "ascent steps + 1 x num_starts", finite=True),
        _trace("params", "f", ("E", "A", "P"), "scored steps x starts x P", finite=True),
        _trace("ascent_seconds", "f", (), "one value", field="seconds", scalar=float),
        _trace("fresh_returns", "f", ("A",), "one re-measured return per start", finite=True, optional=True),
        _trace("disagreement", "f", ("T", "A"), "one ensemble spread per ascent step and start", optional=True),
        _trace(
            "explore_env_steps",
            "iuf",
            (),
            "one value",
            scalar=int,
            finite=True,
            low=0,
            optional=True,
            default=0,  # runs before active rounds' perturbations
        ),
        _trace("check_env_steps", "iu", (), "one value", scalar=int, low=0, optional=True),  # as counted
    ),
)

# summary.json of a Section 6 run (``pvnviz.runs.pipeline.ExperimentResult.summary``): every key, and what it holds.
SUMMARY_KEYS: dict[str, str] = {
    "experiment": "the experiment: the environment's name (cartpole, swimmer)",
    "seed": "the run's seed",
    "num_policies": "K, the dataset's policies (Algorithm 1)",
    "num_kept": "the policies the return limit keeps for training (Section 6.2's filter)",
    "return_limit": "the filter's limit on a policy's mean return, or null for none",
    "dataset_best_mean_return": "the highest mean return in the dataset",
    "kept_best_mean_return": "the highest mean return among the kept policies",
    "dataset_env_steps": "environment steps Algorithm 1 spent",
    "bins": "[G_min, G_max, number of bins] of the return histograms (Section 3)",
    "inputs": "per PVN input (fingerprint, flattened): the keys of SUMMARY_INPUT_KEYS",
    "timings_seconds": "wall-clock seconds of each stage (collect, train_INPUT, ascent_INPUT) and their total",
}
# summary.json keys written only where they apply: the fresh re-measurement (fresh_episodes > 0; runs before it lack it)
SUMMARY_OPTIONAL_KEYS: dict[str, str] = {
    "kept_best_fresh_return": "the best kept policy re-measured on fresh_episodes fresh episodes",
}
# inputs[INPUT] of summary.json: one PVN input's training and ascent (Algorithms 2-3), A starts.
SUMMARY_INPUT_KEYS: dict[str, str] = {
    "ascent_eval_steps": "(E,) the ascent steps whose iterates were checked by Monte Carlo",
    "ascent_true_returns_per_start": "(A, E) each start's checked mean returns",
    "final_mean_return": "the last iterates' checked mean return, over the starts",
    "best_mean_return": "Algorithm 3's result: each start's best checked return, averaged over the starts",
    "best_return_per_start": "(A,) each start's best checked return",
    "start_mean_return": "the starts' checked mean return, before any step",
    "check_env_steps": "environment steps the checks spent",
    "check_fraction_of_dataset": "check_env_steps over dataset_env_steps",
    "explore_env_steps": "environment steps the active rounds' perturbations spent (0: none)",
    "beyond_dataset_fraction": "checks and perturbations together, over dataset_env_steps",
    "final_val_kl": "the PVN's validation KL loss (its lowest with keep_best, else its last)",
}
# inputs[INPUT] keys written only where they apply: the fresh re-measurement (fresh_episodes > 0), an ensemble of
# more than one PVN (its validation spread, its disagreement at each start's chosen iterate).
SUMMARY_INPUT_OPTIONAL_KEYS: dict[str, str] = {
    "fresh_return_per_start": "(A,) each start's chosen iterate re-measured on fresh episodes",
    "fresh_mean_return": "the fresh re-measurement, averaged over the starts",
    "fresh_episodes": "episodes of each fresh re-measurement",
    "ensemble_val_spread": "the ensemble members' spread on the validation policies",
    "ascent_disagreement_chosen": "(A,) the ensemble's spread of J_hat at each start's chosen iterate",
}
# Keys the shipped zero-shot runs' summary.json lack, as they are 0 there; a run loaded from its files
# (``pvnviz.runs.files.load_result``) has them, as ``summary()`` recomputes every key from the arrays.
SUMMARY_INPUT_DEFAULT_ZERO = ("explore_env_steps", "beyond_dataset_fraction")


def summary_key_problems(summary: dict[str, Any]) -> list[str]:
    """What keeps ``summary`` from holding exactly the declared keys: missing and undeclared ones, by place."""
    problems = [f"missing {k}" for k in SUMMARY_KEYS if k not in summary]
    problems += [f"undeclared {k}" for k in summary if k not in SUMMARY_KEYS and k not in SUMMARY_OPTIONAL_KEYS]
    allowed = {**SUMMARY_INPUT_KEYS, **SUMMARY_INPUT_OPTIONAL_KEYS}
    for input_mode, keys in (summary.get("inputs") or {}).items():
        problems += [f"missing inputs.{input_mode}.{k}" for k in SUMMARY_INPUT_KEYS if k not in keys]
        problems += [f"undeclared inputs.{input_mode}.{k}" for k in keys if k not in allowed]
    return problems


CONFIG = RunFile("config.json", "json", "the experiment, seed and settings", keys=("experiment", "config"))
SUMMARY = RunFile("summary.json", "json", "the headline numbers and timings in seconds", keys=tuple(SUMMARY_KEYS))
MANIFEST_FILE = RunFile("manifest.json", "json", "every other file's name, size and sha256, written last")
SPLIT = RunFile(
    "split.json", "json", "the training and validation policies, and the bins", keys=("train_idx", "val_idx", "bins")
)
PVN_FILE = RunFile("pvn_{input}.pt", "network", "the trained PVN (Algorithm 2)")
ENSEMBLE_FILE = RunFile(
    "ensemble_{input}.pt", "network", "the trained ensemble", needed=lambda config: config.ensemble_size > 1
)
RUN_FILES = (CONFIG, SUMMARY, MANIFEST_FILE, SPLIT, DATASET, PVN_FILE, ENSEMBLE_FILE, CURVES)
MANIFEST = MANIFEST_FILE.pattern


def file_names(config: Any) -> list[str]:
    """Every file a complete run folder of ``config`` holds."""
    input_modes = config.inputs
    return [f.name(m) for f in RUN_FILES if f.needed(config) for m in (input_modes if f.per_input else ("",))]


def member_pattern() -> re.Pattern:
    """The names a run folder (or zip) may hold: ``{input}`` matches a lower-case word."""
    names = [re.escape(f.pattern).replace(re.escape("{input}"), "[a-z]+") for f in RUN_FILES]
    return re.compile("|".join(names))


def member_list() -> str:
    """The declared file names, for messages: ``{input}`` shown as ``*``."""
    return ", ".join(f.pattern.replace("{input}", "*") for f in RUN_FILES)


def sizes_of(config: Any) -> dict[str, int]:
    """The named sizes config.json fixes (``SIZES``); the others are bound by the run's arrays."""
    arch = config.arch()
    return {
        "K": config.num_policies,
        "B": config.num_episodes,
        "P": arch.num_params,
        "D": arch.obs_dim,
        "H": len(arch_vector(arch)),
        "A": config.num_starts,
        "n": config.num_probes,
    }


def expected_values(config: Any) -> dict[str, Any]:
    """What arrays declared ``equals`` must hold: config.json's environment, horizon and architecture."""
    return {"env_name": config.env_name, "horizon": config.horizon, "arch": arch_vector(config.arch()).tolist()}


def refuse(name: str, problem: str) -> RunError:
    """The RunError for one file of a run: its name, what is wrong, and what to do."""
    return RunError(f"{name}: {problem}; {DAMAGED}.")


def _check_kinds(file: str, spec: RunFile, arrays: dict[str, np.ndarray]) -> None:
    for a in spec.arrays:
        if a.name not in arrays:
            if a.optional:
                continue
            raise refuse(file, f"the array {a.name!r} is missing")
        array = arrays[a.name]
        if array.size and array.dtype.kind not in a.kinds:
            raise refuse(file, f"{a.name} holds {array.dtype}, expected {KIND_WORDS[a.kinds]}")


def _check_shape(file: str, a: Array, array: np.ndarray, sizes: dict[str, int]) -> None:
    """``array`` against ``a.shape``; a named size not yet known is bound here (``sizes`` is updated)."""
    if a.empty_is_none and array.size == 0:
        return
    if array.ndim == len(a.shape):
        for dim, got in zip(a.shape, array.shape):
            sizes.setdefault(dim, got)
    expected = tuple(sizes.get(dim, dim) for dim in a.shape)
    if array.shape != expected:
        shown = "(" + ", ".join(map(str, expected)) + ("," if len(expected) == 1 else "") + ")"  # (L,), not ('L',)
        raise refuse(file, f"{a.name} has shape {array.shape}, expected {shown} ({a.why})")
    if a.nonempty and array.size == 0:
        raise refuse(file, f"{a.name} is empty ({a.why})")


def _check_values(file: str, a: Array, array: np.ndarray, sizes: dict[str, int], values: dict[str, Any]) -> None:
    if a.finite and array.dtype.kind == "f" and not np.isfinite(array).all():
        raise refuse(file, f"{a.name} holds NaN or infinity")
    if array.size and a.low is not None and array.min() < a.low:
        raise refuse(file, f"{a.name} holds {array.min()}, below {a.low}")
    if array.size and a.below is not None and array.max() >= sizes[a.below]:
        size = sizes[a.below]
        raise refuse(file, f"{a.name} holds {array.max()}, expected below {a.below} = {size} ({SIZES[a.below]})")
    if a.equals is not None and array.tolist() != values[a.equals]:
        raise refuse(file, f"{a.name} is {array.tolist()!r}, config.json says {values[a.equals]!r}")


def check_arrays(file: str, spec: RunFile, arrays: dict[str, np.ndarray], sizes: dict[str, int], values: dict) -> None:
    """RunError naming ``file`` and the array unless every declared array is present (or optional), of its
    kind, of its shape (binding the sizes not in ``sizes``) and within its limits. Undeclared arrays are ignored.
    """
    sizes = dict(sizes)
    _check_kinds(file, spec, arrays)
    present = [a for a in spec.arrays if a.name in arrays]
    for a in present:
        _check_shape(file, a, arrays[a.name], sizes)
    for a in present:
        _check_values(file, a, arrays[a.name], sizes, values)


def to_arrays(spec: RunFile, owners: dict[str, Any]) -> dict[str, Any]:
    """What ``np.savez_compressed`` writes for ``spec``: each declared array from its owner's field, in order."""
    out = {}
    for a in spec.arrays:
        value = getattr(owners[a.owner], a.field)
        if value is None and a.empty_is_none:
            value = np.zeros(0)
        elif value is None and a.optional:
            continue
        out[a.name] = value if a.encode is None else a.encode(value)
    return out


def from_arrays(spec: RunFile, arrays: dict[str, np.ndarray], owner: str) -> dict[str, Any]:
    """The fields of ``owner`` (keyword arguments of its class) from checked arrays: the inverse of ``to_arrays``."""
    fields = {}
    for a in spec.arrays:
        if a.owner != owner:
            continue
        if a.name not in arrays:
            fields[a.field] = a.default
            continue
        array = arrays[a.name]
        if a.decode is not None:
            fields[a.field] = a.decode(array)
        elif a.scalar is not None:
            fields[a.field] = a.scalar(array)
        elif a.empty_is_none and array.size == 0:
            fields[a.field] = None
        else:
            fields[a.field] = array
    return fields
