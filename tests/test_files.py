"""Saved runs are validated before they open (``pvnviz.runs.files``): a run edited by hand and given a fresh
manifest, the hostile files of ``tests/hostile_inputs.py`` in a run folder, a folder that is not a run.

Each case changes one file the way a careless or hostile user could, then blesses the folder with a
new manifest (so the manifest's hashes cannot catch it): opening it must raise one RunError naming
the file, without a traceback or a server path; the pages show that message (tests/test_app.py's fuzz).
A run written before an optional array existed still opens, and opening a run never runs the environment.
"""

import dataclasses
import io
import json
import shutil
import zipfile
from pathlib import Path

import hostile_inputs as hostile
import numpy as np
import pytest
import torch

from pvnviz.cli.main import main
from pvnviz.runs.files import load_result
from pvnviz.runs.store import RunError, write_manifest

TINY = [
    "--preset", "quick", "--quiet",
    "--set", "num_policies=40", "--set", "num_episodes=5", "--set", "train_steps=60", "--set", "ascent_steps=20",
    "--set", "eval_every=10", "--set", "eval_episodes=5", "--set", "num_starts=2",
    "--set", "inputs=fingerprint,flattened",
]  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Two small CLI runs: the one under test, and one with another PVN (for a swapped network)."""
    base = tmp_path_factory.mktemp("runs")
    assert main(["run", "cartpole", "--out", str(base / "good"), "--seed", "0", *TINY]) == 0
    other = ["--set", "pvn_hidden=40"]
    assert main(["run", "cartpole", "--out", str(base / "other"), "--seed", "1", *TINY, *other]) == 0
    return {"good": base / "good", "other": base / "other"}


def _json(name: str, change):
    def edit(folder: Path, runs: dict) -> None:
        data = json.loads((folder / name).read_text())
        (folder / name).write_text(json.dumps(change(data)))

    return edit


def _npz(name: str, change):
    def edit(folder: Path, runs: dict) -> None:
        with np.load(folder / name) as f:
            arrays = {k: f[k] for k in f.files}
        change(arrays)
        np.savez_compressed(folder / name, **arrays)

    return edit


def _config(**changes):
    return _json("config.json", lambda m: {**m, "config": {**m["config"], **changes}})


def _swap_network(folder: Path, runs: dict) -> None:
    shutil.copy(runs["other"] / "pvn_fingerprint.pt", folder / "pvn_fingerprint.pt")


def _inputs_swapped(folder: Path, runs: dict) -> None:
    shutil.copy(folder / "pvn_flattened.pt", folder / "pvn_fingerprint.pt")


def _nan_weights(folder: Path, runs: dict) -> None:
    state = torch.load(folder / "pvn_flattened.pt", weights_only=True)
    key = next(iter(state))
    state[key][0] = float("nan")
    torch.save(state, folder / "pvn_flattened.pt")


class Evil:
    """Any class: torch.load(weights_only=True) must refuse to build it."""


def _pickled(folder: Path, runs: dict) -> None:
    torch.save({"payload": Evil()}, folder / "pvn_fingerprint.pt")


def _set(key, value):
    def change(arrays):
        arrays[key] = value

    return change


def _cut(key, rows):
    return lambda arrays: arrays.__setitem__(key, arrays[key][:rows])


def _drop(key):
    return lambda arrays: arrays.pop(key)


# (file the message must name, how it is changed)
CASES = {
    "summary.json holds a list": ("summary.json", _json("summary.json", lambda s: [s])),
    "config.json version 99": ("config.json", _json("config.json", lambda m: {**m, "version": 99})),
    "config.json num_probes 10^9": ("config.json", _config(num_probes=10**9)),
    "config.json unknown setting": ("config.json", _config(warp_drive=True)),
    "config.json layer of 10^6 units": ("config.json", _config(pvn_hidden=[10**6])),
    "config.json says 41 bins, split 51": ("split.json", _config(num_bins=51)),
    "config.json says 80 policies": ("dataset.npz", _config(num_policies=80)),
    "config.json negative seed": ("config.json", _json("config.json", lambda m: {**m, "seed": -1})),
    "config.json lists no config": ("config.json", _json("config.json", lambda m: {**m, "config": [1, 2]})),
    "dataset cut to 20 rows": ("dataset.npz", _npz("dataset.npz", _cut("params", 20))),
    "dataset returns cut": ("dataset.npz", _npz("dataset.npz", _cut("returns", 20))),
    "dataset returns NaN": ("dataset.npz", _npz("dataset.npz", lambda a: a["returns"].__setitem__((0, 0), np.nan))),
    "dataset params as text": ("dataset.npz", _npz("dataset.npz", _set("params", np.array(["a", "b"])))),
    "dataset of swimmer": ("dataset.npz", _npz("dataset.npz", _set("env_name", np.array("swimmer")))),
    "dataset horizon 500": ("dataset.npz", _npz("dataset.npz", _set("horizon", np.array(500)))),
    "dataset without returns": ("dataset.npz", _npz("dataset.npz", _drop("returns"))),
    "dataset of another architecture": ("dataset.npz", _npz("dataset.npz", _set("arch", np.array([4, 2, 1, 64])))),
    "split index out of range": ("split.json", _json("split.json", lambda s: {**s, "train_idx": [10**6]})),
    "split negative index": ("split.json", _json("split.json", lambda s: {**s, "val_idx": [-1]})),
    "split index as text": ("split.json", _json("split.json", lambda s: {**s, "train_idx": ["0"]})),
    "split overlap": ("split.json", _json("split.json", lambda s: {**s, "val_idx": s["train_idx"][:1]})),
    "split empty train": ("split.json", _json("split.json", lambda s: {**s, "train_idx": []})),
    "split bins reversed": ("split.json", _json("split.json", lambda s: {**s, "bins": s["bins"][1::-1] + [41]})),
    "split is a list": ("split.json", _json("split.json", lambda s: [s])),
    "curves wrong shape": ("curves_fingerprint.npz", _npz("curves_fingerprint.npz", _cut("true_returns", 1))),
    "curves losses of two lengths": ("curves_flattened.npz", _npz("curves_flattened.npz", _cut("val_loss", 2))),
    "curves params wrong width": (
        "curves_flattened.npz",
        _npz("curves_flattened.npz", lambda a: a.__setitem__("params", a["params"][..., :5])),
    ),
    "curves eval step beyond the ascent": (
        "curves_fingerprint.npz",
        _npz("curves_fingerprint.npz", lambda a: a.__setitem__("eval_steps", a["eval_steps"] + 10**6)),
    ),
    "curves fresh returns of 7 starts": (
        "curves_fingerprint.npz",
        _npz("curves_fingerprint.npz", _set("fresh_returns", np.zeros(7))),
    ),
    "curves without predictions": ("curves_fingerprint.npz", _npz("curves_fingerprint.npz", _drop("predicted"))),
    "curves probe snapshots of 3 probes": (
        "curves_fingerprint.npz",
        _npz("curves_fingerprint.npz", lambda a: a.__setitem__("probe_snapshots", a["probe_snapshots"][:, :3])),
    ),
    "a PVN from another run": ("pvn_fingerprint.pt", _swap_network),
    "the flattened PVN as the fingerprint one": ("pvn_fingerprint.pt", _inputs_swapped),
    "a PVN with NaN weights": ("pvn_flattened.pt", _nan_weights),
    "a pickled object in a PVN file": ("pvn_fingerprint.pt", _pickled),
}


def test_the_intact_runs_open(runs):
    assert load_result(runs["good"], "cartpole").config.num_policies == 40
    assert load_result(runs["other"], "cartpole").config.pvn_hidden == (40,)


@pytest.mark.parametrize("case", list(CASES))
def test_a_run_changed_by_hand_and_re_manifested_is_refused_naming_the_file(case, runs, tmp_path):
    name, edit = CASES[case]
    folder = tmp_path / "run"
    shutil.copytree(runs["good"], folder)
    edit(folder, runs)
    write_manifest(folder)  # blessed: only the content checks can catch it
    with pytest.raises(RunError) as err:
        load_result(folder, "cartpole")
    message = str(err.value)
    assert name in message, (case, message)
    assert "\n" not in message and str(tmp_path) not in message and "Traceback" not in message, message


def test_opening_a_visited_probe_run_never_runs_the_environment(tmp_path, monkeypatch):
    """probe_init=visited samples states by rollouts when training; opening the saved run must not."""
    import pvnviz.envs.registry as envs

    out = tmp_path / "visited"
    assert main(["run", "cartpole", "--out", str(out), *TINY, "--set", "probe_init=visited"]) == 0
    saved = load_result(out, "cartpole")

    def no_rollouts(*args, **kwargs):
        raise AssertionError("the environment ran while opening a saved run")

    spec = envs.get_env("cartpole")
    monkeypatch.setattr(envs, "get_env", lambda name: dataclasses.replace(spec, visited_states=no_rollouts))
    import pvnviz.runs.pipeline as experiment

    monkeypatch.setattr(experiment, "get_env", envs.get_env)
    loaded = load_result(out, "cartpole")
    for mode in ("fingerprint", "flattened"):
        a, b = saved.trained[mode].model.state_dict(), loaded.trained[mode].model.state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_opening_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(RunError, match="not a run"):
        load_result(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"experiment": "polytope", "config": {}}))
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(RunError, match="manifest.json is missing"):
        load_result(tmp_path, "cartpole")
    write_manifest(tmp_path)
    with pytest.raises(RunError, match="not a cartpole run"):
        load_result(tmp_path, "cartpole")


def test_a_folder_whose_config_is_not_json_is_refused_as_damaged(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "summary.json").write_text("{}")
    write_manifest(tmp_path)
    with pytest.raises(RunError, match="damaged"):
        load_result(tmp_path, "swimmer")


def test_runs_without_fresh_fields_still_load(runs, tmp_path):
    """A run without Algorithm 3's re-measured chosen iterates (no ``fresh_returns``) opens without them."""
    folder = tmp_path / "run"
    shutil.copytree(runs["good"], folder)
    assert load_result(folder, "cartpole").traces["fingerprint"].fresh_returns is not None  # this run has them
    curves = folder / "curves_fingerprint.npz"
    with np.load(curves) as c:
        old = {k: c[k] for k in c.files if k != "fresh_returns"}
    np.savez_compressed(curves, **old)
    write_manifest(folder)  # an older run, given a manifest by `python -m pvnviz manifest`
    loaded = load_result(folder, "cartpole")
    trace = loaded.traces["fingerprint"]
    assert trace.fresh_returns is None and trace.params.shape[:2] == trace.true_returns.shape
    assert "fresh_mean_return" not in loaded.summary()["inputs"]["fingerprint"]


def _copy_quick(folder: Path, change) -> Path:
    shutil.copytree(hostile.QUICK, folder)
    change(folder)
    write_manifest(folder)  # a run changed by hand and blessed again: its content must still be checked
    return folder


FOLDER_CHANGES = {
    "3 GiB array in dataset.npz": ("dataset.npz", "3 GiB array in dataset.npz"),
    "lying size header in dataset.npz": ("dataset.npz", "lying size header in dataset.npz"),
    "npy header of shape (10**12, 34)": ("dataset.npz", "npy header of shape (10**12, 34)"),
    "horizon=[100, 100] in config.json": ("config.json", "horizon=[100, 100] in config.json"),
    "horizon=[100, 100] in dataset.npz": ("dataset.npz", "horizon=[100, 100] in dataset.npz"),
    "seconds=[1, 2] in dataset.npz": ("dataset.npz", "seconds=[1, 2] in dataset.npz"),
    "seconds=[1, 2] in summary.json": ("summary.json", "seconds=[1, 2] in summary.json"),
    "non-UTF-8 config.json": ("config.json", "non-UTF-8 config.json"),
    "summary.json nested 100,000 deep": ("summary.json", "summary.json nested 100,000 deep"),
}


@pytest.mark.slow
def test_hostile_run_folders_are_refused_naming_the_file(bad_zips, tmp_path):
    """The files of the hostile zips, put in a run folder on disk (with a fresh manifest), are refused too."""
    for number, (what, (name, source)) in enumerate(FOLDER_CHANGES.items()):
        with zipfile.ZipFile(io.BytesIO(bad_zips[source][0])) as zf:
            content = zf.read(name)  # these members' headers are honest
        folder = _copy_quick(tmp_path / f"run{number}", lambda f, n=name, c=content: (f / n).write_bytes(c))
        with pytest.raises(RunError) as err:
            load_result(folder, "cartpole")
        message = str(err.value)
        assert name in message and bad_zips[source][1] in message, (what, message)
        assert hostile.no_server_path(message, tmp_path), message
