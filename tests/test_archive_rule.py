"""One rule for what a run holds (``pvnviz.runs.archive``, ``pvnviz.runs.safe_files``): a zip, with or without a
manifest, holds exactly the files its config.json names, and a folder where a run's file should be is named as a
folder, not as a missing file."""

import hashlib
import itertools
import json
import pickle
import shutil
import string
from pathlib import Path

import hostile_inputs as hostile
import pytest

from pvnviz.runs import archive
from pvnviz.runs.files import load_result
from pvnviz.runs.store import RunError, write_manifest

EVIL = pickle.dumps({"weights": [1, 2, 3]})  # a pickle where a network's file would be: never loaded


def _manifest(files: dict[str, bytes]) -> bytes:
    """A manifest.json listing ``files`` as the CLI writes it (so it agrees with the zip)."""
    entries = [
        {"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in sorted(files.items())
    ]
    return json.dumps({"version": 1, "files": entries}).encode()


def _refusal(data: bytes) -> str:
    with pytest.raises(archive.ArchiveError) as err:
        archive.read_run_zip(data, "cartpole")
    return str(err.value)


def test_a_complete_zip_opens_with_and_without_its_manifest():
    files = hostile.quick_files()
    assert archive.read_run_zip(hostile.run_zip({}), "cartpole").seed == 0
    assert archive.read_run_zip(hostile.run_zip({"manifest.json": _manifest(files)}), "cartpole").seed == 0


def test_a_stray_member_is_refused_with_or_without_a_manifest():
    files = {**hostile.quick_files(), "pvn_evil.pt": EVIL}
    without = _refusal(hostile.run_zip({"pvn_evil.pt": EVIL}))
    listed = _refusal(hostile.run_zip({"pvn_evil.pt": EVIL, "manifest.json": _manifest(files)}))
    for message in (without, listed):
        assert "'pvn_evil.pt'" in message and "not a file of this run" in message, message
        assert "pvn_fingerprint.pt" in message  # what the run's config.json names instead


def test_five_thousand_empty_network_files_are_refused():
    names = ("pvn_" + "".join(letters) + ".pt" for letters in itertools.product(string.ascii_lowercase, repeat=3))
    extra = tuple(hostile.member(name, b"") for name in itertools.islice(names, 5000))
    message = _refusal(hostile.run_zip({}, extra))
    assert "'pvn_aaa.pt' and 4999 more" in message and "not a file of this run" in message, message


def test_a_zip_missing_a_network_of_its_inputs_is_refused():
    files = {n: d for n, d in hostile.quick_files().items() if n != "pvn_fingerprint.pt"}
    data = hostile.raw_zip([hostile.member(n, d) for n, d in files.items()])
    assert "pvn_fingerprint.pt missing" in _refusal(data)


@pytest.mark.parametrize("manifest", ["shipped", "rewritten"])
def test_a_folder_where_dataset_npz_should_be_is_named_as_a_folder(tmp_path, manifest):
    run = tmp_path / "run"
    shutil.copytree(Path(hostile.QUICK), run)
    (run / "dataset.npz").unlink()
    (run / "dataset.npz").mkdir()
    if manifest == "rewritten":  # `pvnviz manifest DIR` over the damaged folder: the file check itself names it
        write_manifest(run)
    with pytest.raises(RunError) as err:
        load_result(run, "cartpole")
    assert "dataset.npz is a folder" in str(err.value), str(err.value)
    assert str(tmp_path) not in str(err.value)
