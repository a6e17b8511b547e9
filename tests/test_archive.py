"""A run as one zip file (``pvnviz.runs.archive``): a round trip keeps every array; damaged, foreign and hostile
zips are refused with a message naming what is wrong and no server path.

The hostile zips are ``tests/hostile_inputs.py``'s (the same files in a run folder: tests/test_files.py; an
upload through the page: tests/test_app_cartpole.py). The memory opening one takes is measured in a fresh
process from ``/proc/self/status`` (the peak, ``VmHWM``), whose probe is itself checked against a known 400 MB
allocation.
"""

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import hostile_inputs as hostile
import numpy as np
import pytest

from pvnviz.runs import archive
from pvnviz.runs.files import load_result

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

ROOT = Path(__file__).resolve().parents[1]
MEMORY_BOUND = 300 * 2**20


def test_every_hostile_zip_is_refused_naming_what_is_wrong(bad_zips):
    for what, (data, phrase) in bad_zips.items():
        with pytest.raises(archive.ArchiveError) as err:
            archive.read_run_zip(data, "cartpole")
        message = str(err.value)
        assert phrase in message, (what, message)
        assert hostile.no_server_path(message) and len(message) < 400, (what, message)


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


@pytest.fixture(scope="module")
def quick_run():
    return load_result("data/cartpole-quick", "cartpole")


def test_run_zip_round_trip_keeps_every_array(quick_run):
    opened = archive.read_run_zip(archive.run_zip(quick_run), "cartpole")
    assert opened.config == quick_run.config and opened.seed == quick_run.seed
    np.testing.assert_array_equal(opened.dataset.returns, quick_run.dataset.returns)
    np.testing.assert_array_equal(opened.dataset.params, quick_run.dataset.params)
    for mode, trace in quick_run.traces.items():
        np.testing.assert_array_equal(opened.traces[mode].true_returns, trace.true_returns)
        np.testing.assert_array_equal(opened.trained[mode].val_loss, quick_run.trained[mode].val_loss)
        params = quick_run.dataset.params[:7]
        np.testing.assert_allclose(opened.trained[mode].predict(params)[1], quick_run.trained[mode].predict(params)[1])


def _rezip(data: bytes, change) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            name, content = change(info.filename, src.read(info))
            if name:
                dst.writestr(name, content)
    return out.getvalue()


def test_damaged_or_foreign_zips_are_refused_with_a_message(quick_run):
    good = archive.run_zip(quick_run)
    bad = {
        "truncated": good[: len(good) // 2],
        "not a zip": b"PK but not really" * 10,
        "zip slip": _rezip(good, lambda n, c: ("../" + n if n == "split.json" else n, c)),
        "missing dataset": _rezip(good, lambda n, c: (None if n == "dataset.npz" else n, c)),
        "corrupt array": _rezip(good, lambda n, c: (n, c[:100] if n == "dataset.npz" else c)),
        "pickled array": _rezip(good, lambda n, c: (n, _pickled_npz() if n == "curves_fingerprint.npz" else c)),
    }
    for what, data in bad.items():
        with pytest.raises(archive.ArchiveError) as err:
            archive.read_run_zip(data, "cartpole")
        assert str(err.value), what
    with pytest.raises(archive.ArchiveError, match="not a swimmer run"):
        archive.read_run_zip(good, "swimmer")
    with pytest.raises(archive.ArchiveError, match="at most"):
        archive.read_run_zip(b"0" * (archive.MAX_ZIP_BYTES + 1))


def _pickled_npz() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, steps=np.array([{"a": 1}], dtype=object))
    return buffer.getvalue()
