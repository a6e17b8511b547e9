"""No input can hurt the server (issue 17, items 4 and 5): hostile run zips and run folders, and the error boundary.

Each hostile input (``tests/hostile_inputs.py``) is refused with a message naming what is wrong and no server
path: by ``read_run_zip`` / ``load_result`` directly, and through the CartPole page (an ``st.error``, never an
exception element). The memory an upload takes is measured in a fresh process with ``ru_maxrss``, whose
probe is itself checked against a known 400 MB allocation. A page or fragment that raises shows one
``st.error`` with an error id, and the traceback goes to the ``pvnlab`` log under that id.
"""

import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
import zipfile
from pathlib import Path

import hostile_inputs as hostile
import numpy as np
import pytest
from streamlit.errors import FragmentHandledException
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from conftest import figures, open_page
from pvnviz.runs import archive
from pvnviz.runs.files import load_result
from pvnviz.runs.safe_files import CHUNK, Budget, check_npz, inflate, json_depth
from pvnviz.runs.store import RunError, list_runs, read_run, write_manifest
from ui.errors import boundary

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

ROOT = Path(__file__).resolve().parents[1]
MEMORY_BOUND = 300 * 2**20
ERROR_ID = re.compile(r"error id `([0-9a-f]{8})`")


@pytest.fixture(scope="module")
def bad_zips() -> dict[str, tuple[bytes, str]]:
    return hostile.bad_zips()


def _clean(message: str, *folders: Path) -> bool:
    """No server path in a message shown to users."""
    return not any(str(f) in message for f in (ROOT, *folders)) and "pvn-open-" not in message and "/tmp" not in message


def test_every_hostile_zip_is_refused_naming_what_is_wrong(bad_zips):
    assert len(bad_zips) == 17
    for what, (data, phrase) in bad_zips.items():
        with pytest.raises(archive.ArchiveError) as err:
            archive.read_run_zip(data, "cartpole")
        message = str(err.value)
        assert phrase in message, (what, message)
        assert _clean(message) and len(message) < 400, (what, message)


MEASURE = """
import sys
from pvnviz.runs import archive
import pvnviz.runs.files  # torch and numpy in memory before the baseline

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

data = open(sys.argv[1], "rb").read()
with open("/proc/self/clear_refs", "w") as refs:
    refs.write("5")  # the peak (VmHWM) starts again from the memory in use now
before = status("VmRSS")
if sys.argv[2] == "control":
    import numpy
    held = numpy.ones(100 * 2**20 // 2, dtype="f8")  # 400 MB touched
    outcome = "control"
else:
    try:
        archive.read_run_zip(data, "cartpole")
        outcome = "opened"
    except archive.ArchiveError:
        outcome = "refused"
print(outcome, status("VmHWM") - before)
"""


def _peak_rise(data: bytes, tmp_path: Path, mode: str = "open") -> tuple[str, int]:
    """(outcome, rise of the peak resident memory in bytes) of opening ``data`` in a fresh process."""
    path = tmp_path / "upload.zip"
    path.write_bytes(data)
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), mode], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcome, rise = proc.stdout.split()
    return outcome, int(rise)


MEMORY_ATTACKS = [
    "3 GiB array in dataset.npz",
    "lying size header",
    "lying size header in dataset.npz",
    "npy header of shape (10**12, 34)",
    "summary.json nested 100,000 deep",
    "300,000 members",
]


def test_the_memory_probe_sees_a_400_mb_allocation(tmp_path):
    outcome, rise = _peak_rise(b"", tmp_path, "control")
    assert outcome == "control" and rise >= 390 * 2**20


@pytest.mark.parametrize("what", MEMORY_ATTACKS)
def test_a_hostile_zip_raises_the_peak_memory_by_less_than_300_mb(bad_zips, tmp_path, what):
    outcome, rise = _peak_rise(bad_zips[what][0], tmp_path)
    assert outcome == "refused"
    assert rise < MEMORY_BOUND, f"{what}: the peak rose by {rise / 2**20:.0f} MB"


def test_the_largest_run_the_checks_accept_opens_within_the_bound(tmp_path):
    """The bound README states: a valid upload of 190 MB of arrays opens, its peak under 300 MB beyond the zip."""
    data = hostile.largest_run_zip()
    assert len(data) <= archive.MAX_ZIP_BYTES
    outcome, rise = _peak_rise(data, tmp_path)
    assert outcome == "opened"
    assert 190 * 2**20 < rise < MEMORY_BOUND, f"the peak rose by {rise / 2**20:.0f} MB"


def test_the_page_refuses_every_hostile_upload_with_an_error_and_no_exception(bad_zips):
    at = open_page("pages/cartpole.py")
    for what, (data, phrase) in bad_zips.items():
        at.file_uploader(key="cartpole_upload").set_value((f"{what}.zip", data, "application/zip")).run()
        assert not at.exception, (what, [e.value for e in at.exception])
        shown = [e.value for e in at.error]
        assert any("Cannot open that zip" in e and phrase in e for e in shown), (what, shown)
        assert all(_clean(e) for e in shown), shown
    assert len(figures(at)) >= 5  # the last good result stays on screen


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
        assert _clean(message, tmp_path), message


def test_a_linked_file_in_a_run_folder_is_refused(tmp_path):
    def link(folder: Path) -> None:
        (folder / "split.json").rename(folder.parent / "elsewhere.json")
        (folder / "split.json").symlink_to(folder.parent / "elsewhere.json")

    shutil.copytree(hostile.QUICK, tmp_path / "run")
    link(tmp_path / "run")
    with pytest.raises(RunError, match="split.json, a link"):
        load_result(tmp_path / "run", "cartpole")


@pytest.fixture
def fifo_runs(tmp_path):
    """A runs root with two runs holding a FIFO: one as config.json, one as dataset.npz (manifest intact)."""
    root = tmp_path / "runs"
    root.mkdir()
    fifos = []
    for name, target in (("fifo-config", "config.json"), ("fifo-dataset", "dataset.npz")):
        folder = shutil.copytree(hostile.QUICK, root / name)
        (folder / target).unlink()
        os.mkfifo(folder / target)
        fifos.append(folder / target)
    yield root
    for fifo in fifos:  # should a reader be blocked on a FIFO after all, let it go
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # no reader: nothing waits on it


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
            assert _clean(str(error), fifo_runs)


def test_the_page_lists_and_refuses_a_run_holding_a_fifo(fifo_runs, monkeypatch):
    monkeypatch.setenv("PVN_RUNS_ROOTS", str(fifo_runs))
    at = open_page("pages/cartpole.py", timeout=120)
    assert "runs/fifo-dataset" in at.selectbox(key="cartpole_run").options
    at.selectbox(key="cartpole_run").set_value("runs/fifo-dataset").run()
    assert not at.exception
    assert any("Cannot open that run" in e.value and "dataset.npz" in e.value for e in at.error)
    assert all(_clean(e.value, fifo_runs) for e in at.error)


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
    """Against numpy itself: the budget ``check_npz`` takes is the sum of the loaded arrays' nbytes."""
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
        budget = Budget(2**20)
        check_npz(buffer, "x.npz", budget)
        buffer.seek(0)
        with np.load(buffer) as loaded:
            assert budget.used == sum(loaded[key].nbytes for key in loaded.files)
        with pytest.raises(RunError, match="takes"):
            check_npz(buffer, "x.npz", Budget(budget.used - 1))


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


def test_a_raising_page_shows_an_error_id_and_logs_the_traceback(monkeypatch, caplog):
    def boom(*args, **kwargs):
        raise RuntimeError("boom in /srv/secret/pvnviz/file.py")

    monkeypatch.setattr("ui.experiment.obtain_result", boom)
    with caplog.at_level(logging.ERROR, logger="pvnlab"):
        at = open_page("pages/cartpole.py")
    assert not at.exception
    assert len(at.error) == 1 and "/srv/secret" not in at.error[0].value and "boom" not in at.error[0].value
    error_id = ERROR_ID.search(at.error[0].value).group(1)
    records = [r for r in caplog.records if r.name == "pvnlab" and error_id in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info[0] is RuntimeError
    assert "boom in /srv/secret" in caplog.text and "Traceback" in caplog.text
    assert at.number_input(key="seed").value is not None  # app.py's sidebar is still drawn


def test_a_raising_fragment_shows_an_error_id_and_the_rest_of_the_page(monkeypatch, caplog):
    def boom(*args, **kwargs):
        raise ValueError("fragment failed")

    monkeypatch.setattr("ui.experiment._job_panel", boom)  # the body of the CartPole page's job fragment
    with caplog.at_level(logging.ERROR, logger="pvnlab"):
        at = open_page("pages/cartpole.py")
    assert not at.exception
    error_id = ERROR_ID.search(" ".join(e.value for e in at.error)).group(1)
    assert any(error_id in r.getMessage() and r.exc_info[0] is ValueError for r in caplog.records)
    assert len(figures(at)) >= 2  # the rest of the page is drawn


def test_streamlit_control_flow_passes_through_the_boundary():
    for control in (StopException(), FragmentHandledException(RuntimeError("shown already"))):
        with pytest.raises(type(control)), boundary():
            raise control


def test_streamlit_shows_no_error_details_in_the_browser():
    from streamlit.config import ShowErrorDetailsConfigOptions

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == ShowErrorDetailsConfigOptions.NONE
