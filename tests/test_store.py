"""Run folders as transactions (``pvnviz.runs.store``): --overwrite, manifests, corruption, SIGKILL mid-run,
a folder that is not a run, no JSON written for a NaN result.

The reference for "whole" is independent of the code under test's bookkeeping: a run is whole when
``load_result`` opens it, and a folder is "the old run" when every file is byte-identical to a copy
taken before.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pvnviz.cli.main import main
from pvnviz.runs.files import load_result
from pvnviz.runs.pipeline import ExperimentConfig
from pvnviz.runs.store import MANIFEST, RunError, read_run, write_run

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--preset", "quick", "--quiet",
    "--set", "num_policies=40", "--set", "num_episodes=5", "--set", "train_steps=100", "--set", "ascent_steps=20",
    "--set", "eval_every=10", "--set", "eval_episodes=5", "--set", "num_starts=2",
]  # fmt: skip
BOTH = ["--set", "inputs=fingerprint,flattened"]
FINGERPRINT = ["--set", "inputs=fingerprint"]


def _cli(out: Path, seed: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pvnviz", "run", "cartpole", "--out", str(out), "--seed", str(seed), *TINY, *extra]


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file's sha256, by relative name (hashlib directly: not the manifest code under test)."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def good_run(tmp_path_factory) -> Path:
    """A small CLI run with both PVN inputs (seed 0)."""
    out = tmp_path_factory.mktemp("good") / "run"
    assert main(["run", "cartpole", "--out", str(out), "--seed", "0", *TINY, *BOTH]) == 0
    return out


def _copy(run: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(run, out)
    return out


@pytest.mark.slow  # a CLI run or subprocess
def test_a_run_into_an_existing_run_is_refused_without_overwrite(good_run, tmp_path):
    out = _copy(good_run, tmp_path)
    before = _snapshot(out)
    proc = subprocess.run(_cli(out, 1, *FINGERPRINT), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--overwrite" in lines[0] and "Traceback" not in proc.stderr
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # refused before any work: nothing staged


@pytest.mark.slow  # a CLI run or subprocess
def test_overwrite_replaces_the_whole_run_and_leaves_no_stale_file(good_run, tmp_path):
    out = _copy(good_run, tmp_path)
    assert {"pvn_flattened.pt", "curves_flattened.npz"} <= set(_snapshot(out))
    proc = subprocess.run(
        _cli(out, 1, *FINGERPRINT, "--overwrite"), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    names = set(_snapshot(out))
    assert names == {
        "config.json", "summary.json", "manifest.json", "split.json", "dataset.npz",
        "pvn_fingerprint.pt", "curves_fingerprint.npz",
    }  # fmt: skip
    result = load_result(out, "cartpole")
    assert result.seed == 1 and result.config.inputs == ("fingerprint",)
    old = load_result(good_run, "cartpole")
    assert not np.array_equal(result.dataset.returns, old.dataset.returns)  # seed 1's data, not seed 0's
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no .run.partial, no .run.old


@pytest.mark.slow  # a CLI run or subprocess
def test_an_empty_folder_is_filled_and_a_folder_of_other_files_is_never_replaced(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["run", "polytope", "--out", str(empty), "--set", "train_steps=50", "--quiet"]) == 0
    assert read_run(empty, "polytope").experiment == "polytope"
    other = tmp_path / "homework"
    other.mkdir()
    (other / "essay.txt").write_text("mine")
    for flags in ([], ["--overwrite"]):
        assert main(["run", "polytope", "--out", str(other), "--set", "train_steps=50", "--quiet", *flags]) == 2
    assert [p.name for p in other.iterdir()] == ["essay.txt"]


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


CORRUPTIONS = {"truncate": _truncate, "flip a byte": _flip, "delete": Path.unlink}


@pytest.mark.slow  # a CLI run or subprocess
def test_every_corruption_of_every_file_is_refused_naming_the_file(good_run, tmp_path):
    names = sorted(_snapshot(good_run))
    assert len(names) == 9 and MANIFEST in names
    load_result(good_run, "cartpole")  # the intact run opens
    tried = 0
    cases = [(name, how) for name in names for how in CORRUPTIONS]
    cases += [("notes.txt", "stray file"), ("chunks/chunk-00000.npz", "stray file")]
    for i, (name, how) in enumerate(cases):
        folder = tmp_path / f"case{i}"
        shutil.copytree(good_run, folder)
        if how == "stray file":
            (folder / name).parent.mkdir(exist_ok=True)
            (folder / name).write_bytes(b"left over")
        else:
            CORRUPTIONS[how](folder / name)
        with pytest.raises(RunError) as err:
            load_result(folder, "cartpole")
        message = str(err.value)
        assert name in message and "\n" not in message, (name, how, message)
        assert str(tmp_path) not in message, message  # a relative name, never the server path
        tried += 1
    print(f"corruptions tried: {tried}, all refused")


@pytest.mark.slow  # a CLI run or subprocess
def test_a_file_changed_after_a_successful_open_is_refused(good_run, tmp_path):
    out = _copy(good_run, tmp_path)
    load_result(out, "cartpole")
    time.sleep(0.01)
    _flip(out / "split.json")  # same size: only the hash can tell
    with pytest.raises(RunError, match="split.json does not match"):
        load_result(out, "cartpole")


@pytest.mark.slow  # a CLI run or subprocess
def test_the_manifest_command_blesses_an_intact_legacy_run_and_refuses_a_broken_one(good_run, tmp_path, capsys):
    out = _copy(good_run, tmp_path)
    (out / MANIFEST).unlink()
    with pytest.raises(RunError, match="manifest.json is missing"):
        load_result(out, "cartpole")
    assert main(["manifest", str(out)]) == 0
    assert load_result(out, "cartpole").seed == 0
    (out / MANIFEST).unlink()
    _truncate(out / "pvn_fingerprint.pt")
    capsys.readouterr()
    assert main(["manifest", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "pvn_fingerprint.pt" in err[0]
    assert not (out / MANIFEST).exists()  # a broken run gets no manifest


@pytest.mark.slow
def test_sigkill_at_random_points_never_leaves_a_half_run(good_run, tmp_path):
    """Kill a --overwrite run at seeded random moments: ``out`` is always the old run or a new whole one."""
    out = _copy(good_run, tmp_path)
    old = _snapshot(out)
    t0 = time.perf_counter()
    proc = subprocess.run(_cli(tmp_path / "timing", 1, *FINGERPRINT), cwd=ROOT, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    duration = time.perf_counter() - t0
    rng = np.random.default_rng(10)
    delays = rng.uniform(0.3, 1.0, size=5) * duration  # startup, collection, training, ascent, the save
    outcomes = []
    for seed, delay in enumerate(delays, start=1):
        proc = subprocess.Popen(
            _cli(out, seed, *FINGERPRINT, "--overwrite"),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        result = load_result(out, "cartpole")  # whole: the manifest checks out and every array opens
        if _snapshot(out) == old:
            outcomes.append("old")
        else:
            assert result.seed == seed and result.config.inputs == ("fingerprint",)
            assert not (out / "pvn_flattened.pt").exists()
            outcomes.append("new")
            old = _snapshot(out)
    print(f"kill delays {np.round(delays, 2).tolist()} s of a {duration:.1f} s run: {outcomes}; runs lost: 0")


@pytest.mark.slow  # a CLI run or subprocess
def test_without_an_atomic_exchange_the_old_run_is_renamed_aside_and_a_crash_between_renames_is_undone(
    tmp_path, monkeypatch
):
    import pvnviz.runs.store as runs

    out = tmp_path / "run"
    polytope = ["run", "polytope", "--out", str(out), "--set", "train_steps=50", "--quiet"]
    assert main([*polytope, "--seed", "1"]) == 0
    monkeypatch.setattr(runs, "_exchange", lambda a, b: False)
    assert main([*polytope, "--seed", "2", "--overwrite"]) == 0
    assert read_run(out).seed == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    out.rename(tmp_path / ".run.old")  # a crash after the first rename, before the second
    assert main([*polytope, "--seed", "3"]) == 2  # the next run puts the old run back first, then refuses
    assert read_run(out).seed == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_reading_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(RunError, match="config.json is missing"):
        read_run(tmp_path)
    with pytest.raises(RunError, match="not a folder"):
        read_run(tmp_path / "nope")


def test_a_nan_result_is_a_failed_run_and_writes_no_json(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(RunError, match="NaN"):
        write_run(out, "cartpole", 0, ExperimentConfig(), {"final_mean_return": float("nan")})
    assert not (out / "config.json").exists() and not (out / "summary.json").exists()
    write_run(out, "cartpole", 0, ExperimentConfig(), {"final_mean_return": 1.5})
    assert json.loads((out / "summary.json").read_text()) == {"final_mean_return": 1.5}
