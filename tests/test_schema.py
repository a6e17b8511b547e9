"""The run format is declared once (``pvnviz.runs.schema``): the saver, the checks, the loader and the zip
importer must agree with it.

A small real run (both PVN inputs, an ensemble of two and two active rounds, so every optional array is
written) is saved by the CLI. Its files and arrays must be exactly the declared ones; loading and saving
again must give the same arrays; and each declared array, damaged one way at a time (missing, of another
kind, of another shape, out of its range), must be refused naming the file and the array. The damage is
generated from the schema, so an array added to it is covered without a new test.
"""

import dataclasses
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from pvnviz.cli.main import main
from pvnviz.core.ascent import AscentTrace
from pvnviz.core.pvn import INPUT_MODES, TrainedPVN
from pvnviz.runs.archive import MEMBER, REQUIRED, ArchiveError, check_members, run_zip
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.files import check_run, load_result
from pvnviz.runs.schema import (
    CURVES,
    DATASET,
    MANIFEST,
    RUN_FILES,
    SIZES,
    SUMMARY_INPUT_DEFAULT_ZERO,
    SUMMARY_INPUT_KEYS,
    SUMMARY_INPUT_OPTIONAL_KEYS,
    SUMMARY_KEYS,
    SUMMARY_OPTIONAL_KEYS,
    Array,
    RunFile,
    file_names,
    sizes_of,
    summary_key_problems,
)
from pvnviz.runs.store import RunError, read_run, write_manifest

ROOT = Path(__file__).resolve().parents[1]

TINY = [
    "--preset", "quick", "--quiet",
    "--set", "num_policies=40", "--set", "num_episodes=5", "--set", "train_steps=60", "--set", "ascent_steps=20",
    "--set", "eval_every=10", "--set", "eval_episodes=5", "--set", "num_starts=2",
    "--set", "inputs=fingerprint,flattened",
    "--set", "ensemble_size=2", "--set", "rounds=2", "--set", "round_train_steps=20",
]  # fmt: skip
NPZ_FILES = [f for f in RUN_FILES if f.form == "npz"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A small CLI run that writes every declared file and array (ensembles, disagreement, fresh returns)."""
    out = tmp_path_factory.mktemp("schema") / "run"
    assert main(["run", "cartpole", "--out", str(out), "--seed", "0", *TINY]) == 0
    return out


def _npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def _npz_paths(folder: Path) -> list[tuple[RunFile, Path]]:
    return [(spec, path) for spec in NPZ_FILES for path in sorted(folder.glob(spec.pattern.format(input="*")))]


@pytest.mark.slow
def test_the_folder_holds_exactly_the_declared_files(run):
    config = load_result(run, "cartpole").config
    assert sorted(p.name for p in run.iterdir()) == sorted(file_names(config))


def test_every_array_written_is_declared_in_the_declared_order_and_every_required_one_is_written(run):
    found = _npz_paths(run)
    assert len(found) == 1 + 2  # dataset, and curves per input
    for spec, path in found:
        with zipfile.ZipFile(path) as zf:
            written = [info.filename.removesuffix(".npy") for info in zf.infolist()]
        declared = [a.name for a in spec.arrays]
        assert written == declared, path.name  # this run writes every optional array, in the schema's order
        arrays = _npz(path)
        for a in spec.arrays:
            value = arrays[a.name]
            assert value.size == 0 or value.dtype.kind in a.kinds, (path.name, a.name)  # an empty one: any dtype
            assert value.ndim == len(a.shape) or (a.empty_is_none and value.size == 0), (path.name, a.name)


def test_loading_then_saving_gives_back_the_same_arrays(run, tmp_path):
    """The loader reads each declared field and the saver writes it back: a round trip through the schema."""
    result = load_result(run, "cartpole")
    assert set(result.ensembles) == set(INPUT_MODES)
    from pvnviz.runs.files import save_result

    save_result(result, tmp_path)
    for (spec, before), (_, after) in zip(_npz_paths(run), _npz_paths(tmp_path), strict=True):
        a, b = _npz(before), _npz(after)
        assert list(a) == list(b), spec.pattern
        for key in a:
            assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), (before.name, key)
    for name in ("split.json", *(f"{kind}_{m}.pt" for kind in ("pvn", "ensemble") for m in INPUT_MODES)):
        assert (tmp_path / name).read_bytes() == (run / name).read_bytes(), name


def test_the_loaded_classes_have_a_declared_array_for_every_field():
    """A field added to the dataset, a trained PVN or an ascent trace is saved only if the schema declares it."""
    from_file = {"model", "input_mode"}, {"input_mode"}  # from the .pt file and the file's name
    from_config = {"start_counts", "pool_checks"}  # config.json's start_from and pool_checks
    in_memory = {"episode_returns"}  # the checks' episodes, for the active rounds' fine-tuning only: never saved
    arrays = [*DATASET.arrays, *CURVES.arrays]
    declared = {owner: {a.field for a in arrays if a.owner == owner} for owner in ("dataset", "trained", "trace")}
    assert declared["dataset"] == {f.name for f in dataclasses.fields(PolicyDataset)}
    assert declared["trained"] | from_file[0] == {f.name for f in dataclasses.fields(TrainedPVN)}
    fields = {f.name for f in dataclasses.fields(AscentTrace)}
    assert declared["trace"] | from_file[1] | from_config | in_memory == fields


@pytest.mark.parametrize("shipped_run", ["cartpole-quick", "swimmer-budget-10000x1"])
def test_policy_dataset_save_writes_the_shipped_files_arrays(shipped_run, tmp_path):
    """``PolicyDataset.save`` (the one writer of dataset.npz, runs and ``collect`` alike) writes back exactly the
    arrays of a shipped run's dataset.npz, which an earlier, hand-written writer made; ``load`` reads them back."""
    shipped_file = ROOT / "data" / shipped_run / "dataset.npz"
    dataset = PolicyDataset.load(shipped_file)
    dataset.save(tmp_path / "own.npz")
    own, shipped = _npz(tmp_path / "own.npz"), _npz(shipped_file)
    assert list(own) == list(shipped) == [a.name for a in DATASET.arrays if not a.optional]  # no count: none saved
    assert all(own[k].dtype == shipped[k].dtype and np.array_equal(own[k], shipped[k]) for k in own)
    again = PolicyDataset.load(tmp_path / "own.npz")
    assert again.arch == dataset.arch and np.array_equal(again.params, dataset.params)


def test_every_shape_is_written_in_declared_sizes():
    arrays = [a for spec in NPZ_FILES for a in spec.arrays]
    assert {dim for a in arrays for dim in a.shape} <= set(SIZES)
    assert {a.below for a in arrays if a.below} <= set(SIZES)


def _damages(a: Array, value: np.ndarray) -> dict[str, np.ndarray | None]:
    """Ways to damage one declared array: None removes it."""
    out: dict[str, np.ndarray | None] = {"missing": None} if not a.optional else {}
    out["kind"] = np.full(value.shape, "x") if "U" not in a.kinds else np.full(value.shape, 1.5)
    out["shape"] = value[None]
    if a.finite and "f" in a.kinds:
        out["nan"] = value.astype(float)
        out["nan"].flat[0] = np.nan
    if a.low is not None:
        out["low"] = value.copy()
        out["low"].flat[0] = a.low - 1
    if a.below is not None:
        out["below"] = value.copy()
        out["below"].flat[-1] = 10**9
    if a.equals is not None:
        out["equals"] = np.array("other") if value.dtype.kind == "U" else value + 1
    return out


def _cases() -> list[tuple[str, str, str]]:
    """(file pattern, array, damage) for every declared array, from a value of its declared kind and rank."""
    cases = []
    for spec in NPZ_FILES:
        for a in spec.arrays:
            dummy = np.zeros((2,) * len(a.shape), dtype="U1" if a.kinds == "U" else float)
            cases += [(spec.pattern, a.name, damage) for damage in _damages(a, dummy)]
    return cases


@pytest.mark.parametrize("pattern, key, damage", _cases())
def test_a_damaged_declared_array_is_refused_naming_the_file_and_the_array(pattern, key, damage, run, tmp_path):
    spec = next(f for f in NPZ_FILES if f.pattern == pattern)
    name = spec.name("fingerprint")  # the fingerprint curves: probe snapshots are not empty
    folder = tmp_path / "run"
    shutil.copytree(run, folder)
    arrays = _npz(folder / name)
    changed = _damages(spec.array(key), arrays[key])[damage]
    if changed is None:
        del arrays[key]
    else:
        arrays[key] = changed
    np.savez_compressed(folder / name, **arrays)
    write_manifest(folder)  # blessed: only the content checks can catch it
    with pytest.raises(RunError) as err:
        check_run(folder, read_run(folder, "cartpole"), "cartpole")
    message = str(err.value)
    assert message.startswith(f"{name}: ") and re.search(rf"\b{key}\b", message), message
    assert "\n" not in message and str(tmp_path) not in message, message


def test_an_undeclared_array_is_ignored_and_optional_ones_may_be_absent(run, tmp_path):
    """As before the schema: extra arrays are read (within the budget) but unused; older runs lack the optional."""
    folder = tmp_path / "run"
    shutil.copytree(run, folder)
    name = CURVES.name("flattened")
    arrays = {k: v for k, v in _npz(folder / name).items() if not CURVES.array(k).optional}
    np.savez_compressed(folder / name, **arrays, notes=np.array("kept by hand"))
    write_manifest(folder)
    trace = load_result(folder, "cartpole").traces["flattened"]
    assert trace.fresh_returns is None and trace.disagreement is None and trace.explore_env_steps == 0


def test_the_named_sizes_of_a_run_are_its_config_s(run):
    config = load_result(run, "cartpole").config
    sizes = sizes_of(config)
    assert sizes["K"] == 40 and sizes["B"] == 5 and sizes["A"] == 2 and sizes["D"] == 4
    assert sizes["P"] == config.arch().num_params and sizes["H"] == 3 + len(config.arch().hidden)


def test_the_archive_accepts_exactly_the_declared_file_names(run):
    declared = {spec.name(m) for spec in RUN_FILES for m in (INPUT_MODES if spec.per_input else ("",))}
    assert all(MEMBER.fullmatch(name) for name in declared)
    near_misses = [
        *(f"{name}{extra}" for name in declared for extra in (".bak", "\n", "/", "~")),
        *(f"{extra}{name}" for name in declared for extra in ("../", "/", "x", "sub/", ".")),
        "pvn_.pt", "curves_Fingerprint.npz", "curves_finger print.npz", "ensemble_a.npz", "notes.txt", "",
    ]  # fmt: skip
    assert not [name for name in near_misses if MEMBER.fullmatch(name)]
    assert set(REQUIRED) == {spec.name() for spec in RUN_FILES if not spec.per_input} - {MANIFEST}


def test_a_run_zip_holds_only_declared_names_and_a_stray_member_is_refused(run):
    data = run_zip(load_result(run, "cartpole"))
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert all(MEMBER.fullmatch(info.filename) for info in check_members(zf))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("curves_fingerprint.npz.bak", b"")
    with zipfile.ZipFile(buffer) as zf, pytest.raises(ArchiveError, match="not a file of a run"):
        check_members(zf)


def test_a_written_summary_holds_exactly_the_declared_keys(run):
    """summary.json of a run with every optional part (fresh episodes, an ensemble, rounds): the keys
    ``pvnviz.runs.schema`` declares, no more and no fewer, for every input."""
    summary = json.loads((run / "summary.json").read_text())
    assert list(summary) == list(SUMMARY_KEYS) + list(SUMMARY_OPTIONAL_KEYS)
    assert set(summary["inputs"]) == {"fingerprint", "flattened"}
    for keys in summary["inputs"].values():
        assert set(keys) == set(SUMMARY_INPUT_KEYS) | set(SUMMARY_INPUT_OPTIONAL_KEYS)
    assert summary_key_problems(summary) == []


def test_summary_key_problems_names_a_missing_and_an_undeclared_key(run):
    summary = json.loads((run / "summary.json").read_text())
    del summary["num_kept"]
    summary["inputs"]["flattened"]["surprise"] = 1
    del summary["inputs"]["fingerprint"]["check_env_steps"]
    assert summary_key_problems(summary) == [
        "missing num_kept",
        "missing inputs.fingerprint.check_env_steps",
        "undeclared inputs.flattened.surprise",
    ]


@pytest.mark.parametrize("shipped_run", sorted(p.parent.name for p in (ROOT / "data").glob("*/summary.json")))
def test_the_shipped_summaries_hold_the_declared_keys(shipped_run):
    """The shipped runs' summary.json: declared keys only; the zero-shot ones lack just the keys that are 0 there."""
    summary = json.loads((ROOT / "data" / shipped_run / "summary.json").read_text())
    missing = {p.rsplit(".", 1)[-1] for p in summary_key_problems(summary) if p.startswith("missing inputs.")}
    assert [p for p in summary_key_problems(summary) if not p.startswith("missing inputs.")] == []
    assert missing <= set(SUMMARY_INPUT_DEFAULT_ZERO)
