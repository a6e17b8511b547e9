"""A run's files read as untrusted input (``pvnviz.runs.safe_files``): plain files only (no link, no FIFO that
could block the server), JSON depth against the parsed value, an .npz's cap against numpy's own allocation,
inflation cut one byte past its limit whatever a zip header says."""

import io
import json
import shutil
import threading
import zipfile
from pathlib import Path

import hostile_inputs as hostile
import numpy as np
import pytest

from pvnviz.runs.files import load_result
from pvnviz.runs.safe_files import CHUNK, ByteCap, check_npz, inflate, json_depth
from pvnviz.runs.store import RunError, list_runs, read_run


def test_a_linked_file_in_a_run_folder_is_refused(tmp_path):
    def link(folder: Path) -> None:
        (folder / "split.json").rename(folder.parent / "elsewhere.json")
        (folder / "split.json").symlink_to(folder.parent / "elsewhere.json")

    shutil.copytree(hostile.QUICK, tmp_path / "run")
    link(tmp_path / "run")
    with pytest.raises(RunError, match="split.json, a link"):
        load_result(tmp_path / "run", "cartpole")


def _within(seconds: float, fn, *args):
    """fn(*args) in a daemon thread: its result or exception, or a failure if it has not returned in time."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn(*args)
        except Exception as err:  # noqa: BLE001 - handed to the test
            out["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn.__name__} blocked for {seconds} s"
    return out


def test_a_fifo_in_a_runs_folder_never_blocks_the_list_or_the_open(fifo_runs):
    listed = _within(20, list_runs, "cartpole", [fifo_runs])["value"]
    assert list(listed) == ["runs/fifo-dataset"]  # an unreadable config.json: not a cartpole run it can name
    for name in ("fifo-config", "fifo-dataset"):
        for opener in (read_run, load_result):
            error = _within(20, opener, fifo_runs / name)["error"]
            assert isinstance(error, RunError) and "not a plain file" in str(error), error
            assert hostile.no_server_path(str(error), fifo_runs)


def test_json_depth_matches_the_depth_of_the_parsed_value():
    """Against an independent reference: the nesting of random JSON values, measured on the Python value."""

    def depth(value) -> int:
        if isinstance(value, dict):
            return 1 + max(map(depth, value.values()), default=0)
        if isinstance(value, list):
            return 1 + max(map(depth, value), default=0)
        return 0

    rng = np.random.default_rng(0)

    def random_value(level: int):
        kind = rng.integers(4 if level < 12 else 2)
        if kind == 0:
            return str(rng.choice(["plain", 'a "[{" in a string', "\\\\]}", "[[[[", "}}"]))
        if kind == 1:
            return float(rng.normal())
        if kind == 2:
            return [random_value(level + 1) for _ in range(rng.integers(3))]
        return {f"k{i}[": random_value(level + 1) for i in range(rng.integers(3))}

    for _ in range(300):
        value = random_value(0)
        assert json_depth(json.dumps(value)) == depth(value)


def test_an_npz_takes_the_bytes_numpy_allocates_for_it():
    """Against numpy itself: the cap ``check_npz`` takes is the sum of the loaded arrays' nbytes."""
    rng = np.random.default_rng(1)
    arrays = {
        "a": rng.normal(size=(7, 3)),
        "b": rng.integers(0, 9, size=(2, 3, 4), dtype=np.int16),
        "c": np.array("cartpole"),
        "d": np.zeros((0, 5), dtype=np.float32),
        "e": np.asfortranarray(rng.normal(size=(4, 6)).astype(np.float32)),
    }
    for save in (np.savez, np.savez_compressed):
        buffer = io.BytesIO()
        save(buffer, **arrays)
        cap = ByteCap(2**20)
        check_npz(buffer, "x.npz", cap)
        buffer.seek(0)
        with np.load(buffer) as loaded:
            assert cap.used == sum(loaded[key].nbytes for key in loaded.files)
        with pytest.raises(RunError, match="takes"):
            check_npz(buffer, "x.npz", ByteCap(cap.used - 1))


def test_inflate_stops_one_byte_past_the_limit_whatever_the_header_says():
    data = hostile.raw_zip([("big", hostile.deflate_zeros(b"", 64), 0, 1000, hostile.DEFLATED, 0o100644)])
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        chunks = [len(c) for c in inflate(zf, zf.infolist()[0], 10 * 2**20, "big")]
    assert max(chunks) <= CHUNK and sum(chunks) == 10 * 2**20 + 1
    honest = hostile.raw_zip([hostile.member("small", b"x" * 5000)])
    with zipfile.ZipFile(io.BytesIO(honest)) as zf:
        assert b"".join(inflate(zf, zf.infolist()[0], 10**6, "small")) == b"x" * 5000
        lying = zf.infolist()[0]
        lying.file_size = 4000  # the same member stating less than it holds, but under the limit
        with pytest.raises(RunError, match="size or checksum"):
            list(inflate(zf, lying, 10**6, "small"))
