"""A run as one zip file: export a finished experiment, open one safely (Section 6 runs, shareable).

The zip holds exactly the files of a run folder (``pvnviz.runs``): ``config.json``, ``summary.json``,
``manifest.json``, ``dataset.npz``, ``split.json``, and per PVN input ``pvn_<input>.pt`` and ``curves_<input>.npz``.
A zip exported before manifests existed opens too: the zip's CRC checks stand in for the manifest's hashes.
Opening one never unpickles: arrays go through ``np.load(allow_pickle=False)`` and networks through
``torch.load(weights_only=True)`` (in ``load_result``). The upload is size-capped, every member name
is checked against that flat list (no folders, so no zip-slip), and the unpacked size is capped too
(no zip bombs). Every failure is an ``ArchiveError`` whose message says what is wrong with the file.
"""

from __future__ import annotations

import io
import re
import tempfile
import zipfile
import zlib
from pathlib import Path

from pvnviz.runs import MANIFEST, RunError, write_manifest, write_run

MAX_ZIP_BYTES = 50 * 2**20
MAX_UNPACKED_BYTES = 200 * 2**20
MEMBER = re.compile(
    r"^(config\.json|summary\.json|manifest\.json|split\.json|dataset\.npz|(pvn|ensemble)_[a-z]+\.pt|curves_[a-z]+\.npz)$"
)


class ArchiveError(ValueError):
    """A file that is not a readable run zip; the message says why."""


def run_zip(result) -> bytes:
    """The run (an ``ExperimentResult``) as zip bytes: the same files ``python -m pvnviz run --out`` writes."""
    with tempfile.TemporaryDirectory(prefix="pvn-run-") as tmp:
        folder = Path(tmp)
        from pvnviz.run_files import save_result  # brings torch

        save_result(result, folder)
        write_run(folder, result.config.env, result.seed, result.config, result.summary())
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(folder.iterdir()):
                zf.write(path, path.name)
        return buffer.getvalue()


def check_members(zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members if every name is a plain run-file name and the unpacked total is under the cap."""
    members = zf.infolist()
    for info in members:
        if not MEMBER.match(info.filename):
            raise ArchiveError(
                f"it holds {info.filename!r}, which is not a file of a run (expected config.json, summary.json, "
                "manifest.json, split.json, dataset.npz, pvn_*.pt, curves_*.npz at the top level)."
            )
    total = sum(info.file_size for info in members)
    if total > MAX_UNPACKED_BYTES:
        raise ArchiveError(f"it unpacks to {total / 2**20:.0f} MB, over the {MAX_UNPACKED_BYTES // 2**20} MB limit.")
    names = {info.filename for info in members}
    missing = {"config.json", "summary.json", "split.json", "dataset.npz"} - names
    if missing:
        raise ArchiveError(f"it is not a complete run: {', '.join(sorted(missing))} missing.")
    return members


def read_run_zip(data: bytes, experiment: str | None = None):
    """Open zip bytes as an ``ExperimentResult``; ArchiveError with a clear message if they are not a run."""
    from pvnviz.run_files import load_result  # imported here: it brings torch

    if len(data) > MAX_ZIP_BYTES:
        size, cap = len(data) / 2**20, MAX_ZIP_BYTES // 2**20
        raise ArchiveError(f"the file is {size:.0f} MB; a run zip may be at most {cap} MB.")
    with tempfile.TemporaryDirectory(prefix="pvn-open-") as tmp:
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                members = check_members(zf)
                for info in members:
                    (Path(tmp) / info.filename).write_bytes(zf.read(info))  # name checked: flat, no '..'
            if MANIFEST not in {info.filename for info in members}:
                write_manifest(tmp)  # a zip exported before manifests: its members passed the zip's own CRC checks
            return load_result(tmp, experiment)
        except ArchiveError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError):
            raise ArchiveError("the file is not a zip, or it is damaged (download the run again).") from None
        except (RunError, OSError, ValueError) as err:
            raise ArchiveError(f"the zip is damaged or not a run: {str(err).replace(tmp, 'the zip')}") from None
