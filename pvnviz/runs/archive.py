"""A run as one zip file: export a finished experiment, open one safely (Section 6 runs, shareable).

The zip holds exactly the files of a run folder, as ``pvnviz.runs.schema.RUN_FILES`` declares them: ``config.json``,
``summary.json``, ``manifest.json``, ``split.json``, ``dataset.npz``, and per PVN input ``pvn_<input>.pt``,
``ensemble_<input>.pt`` (ensembles) and ``curves_<input>.npz``.
A zip exported before manifests existed opens too: the zip's CRC checks stand in for the manifest's hashes.
With or without a manifest, one rule says what a zip may hold: exactly the files its config.json names
(``schema.file_names``: the per-input files of its inputs only), plus the manifest; any other member is refused
before anything is unpacked.
Opening one never unpickles: arrays go through ``np.load(allow_pickle=False)`` and networks through
``torch.load(weights_only=True)`` (in ``load_result``). The upload is size-capped, every member name
is checked against that flat list (no folders, so no zip-slip; no links), and nothing a zip says about its
own sizes is trusted: each member is inflated in bounded chunks and counted, and the unpacking stops at
``MAX_UNPACKED_BYTES`` whatever the headers declare (no zip bombs, no lying size headers). The arrays inside
each .npz (a zip itself) are then checked by their .npy headers before any is loaded, against the same
``MAX_UNPACKED_BYTES`` (``pvnviz.runs.safe_files``). So opening an upload holds at most the zip, plus about
``MAX_UNPACKED_BYTES`` of arrays and networks, plus the JSON files (each at most a few MB), in memory.
Every failure is an ``ArchiveError`` whose message says what is wrong with the file.
"""

from __future__ import annotations

import io
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path

from pvnviz.core.config_fields import ConfigError, from_dict
from pvnviz.runs.safe_files import check_directory, inflate, parse_json
from pvnviz.runs.schema import CONFIG, MANIFEST, RUN_FILES, file_names, member_list, member_pattern
from pvnviz.runs.store import MAX_META_BYTES, RunError, write_manifest, write_run

MAX_ZIP_BYTES = 50 * 2**20
MAX_UNPACKED_BYTES = 200 * 2**20
MEMBER = member_pattern()  # a name a run folder may hold (the whole name: MEMBER.fullmatch)
REQUIRED = tuple(f.name() for f in RUN_FILES if not f.per_input and f.name() != MANIFEST)  # zips before manifests


class ArchiveError(ValueError):
    """A file that is not a readable run zip; the message says why."""


def run_zip(result) -> bytes:
    """The run (an ``ExperimentResult``) as zip bytes: the same files ``python -m pvnviz run --out`` writes."""
    with tempfile.TemporaryDirectory(prefix="pvn-run-") as tmp:
        folder = Path(tmp)
        from pvnviz.runs.files import save_result  # brings torch

        save_result(result, folder)
        write_run(folder, result.config.env_name, result.seed, result.config, result.summary())
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(folder.iterdir()):
                zf.write(path, path.name)
        return buffer.getvalue()


def check_members(zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members if every name is a plain run-file name, none is a link or listed twice, and the sizes the
    headers declare are under the cap (``extract`` counts the real ones)."""
    members = zf.infolist()
    for info in members:
        if not MEMBER.fullmatch(info.filename):
            raise ArchiveError(
                f"it holds {info.filename[:200]!r}, which is not a file of a run "
                f"(expected {member_list()} at the top level)."
            )
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ArchiveError(f"{info.filename} is a link; a run zip holds plain files only.")
    total = sum(info.file_size for info in members)
    if total > MAX_UNPACKED_BYTES:
        raise ArchiveError(f"it unpacks to {total / 2**20:.0f} MB, over the {MAX_UNPACKED_BYTES // 2**20} MB limit.")
    names = {info.filename for info in members}
    if len(names) != len(members):
        raise ArchiveError("it holds a file twice; a run zip holds each file once.")
    missing = set(REQUIRED) - names
    if missing:
        raise ArchiveError(f"it is not a complete run: {', '.join(sorted(missing))} missing.")
    return members


def _config_names(zf: zipfile.ZipFile, members: list[zipfile.ZipInfo]) -> set[str]:
    """The files a run of the zip's config.json holds (manifest included), read from that member alone."""
    from pvnviz.runs.pipeline import ExperimentConfig  # imported here: it brings torch

    name = CONFIG.name()
    info = next(i for i in members if i.filename == name)
    data = b"".join(inflate(zf, info, MAX_META_BYTES, name))
    if len(data) > MAX_META_BYTES:
        raise ArchiveError(f"{name} is over {MAX_META_BYTES // 2**20} MB; a run's is a few KB.")
    meta = parse_json(data, name)
    try:
        config = from_dict(ExperimentConfig, meta["config"])
    except (ConfigError, TypeError, ValueError, KeyError) as err:
        raise ArchiveError(f"{name} is not a run's settings: {str(err)[:200]}") from None
    return {*file_names(config), MANIFEST}


def check_files(zf: zipfile.ZipFile, members: list[zipfile.ZipInfo]) -> None:
    """ArchiveError unless the members are exactly the files the zip's config.json names (its manifest optional):
    the one rule for zips with and without a manifest."""
    expected = _config_names(zf, members)
    names = {info.filename for info in members}
    stray = sorted(names - expected)
    if stray:
        more = f" and {len(stray) - 1} more" if len(stray) > 1 else ""
        raise ArchiveError(
            f"it holds {stray[0][:80]!r}{more}, which is not a file of this run: its config.json names "
            f"{', '.join(sorted(expected))}."
        )
    missing = sorted(expected - names - {MANIFEST})
    if missing:
        raise ArchiveError(f"it is not a complete run: {', '.join(missing)} missing.")


def extract(zf: zipfile.ZipFile, members: list[zipfile.ZipInfo], folder: Path) -> None:
    """Write the members into ``folder``, inflated in bounded chunks and counted: ArchiveError past the cap."""
    left = MAX_UNPACKED_BYTES
    for info in members:
        with open(folder / info.filename, "wb") as out:  # name checked: flat, no '..'
            for chunk in inflate(zf, info, left, info.filename):
                left -= len(chunk)
                if left < 0:
                    raise ArchiveError(
                        f"it unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MB (whatever its headers say), "
                        "over the limit; a run zip unpacks to a few MB."
                    )
                out.write(chunk)


def read_run_zip(data: bytes, experiment: str | None = None):
    """Open zip bytes as an ``ExperimentResult``; ArchiveError with a clear message if they are not a run."""
    from pvnviz.runs.files import load_result  # imported here: it brings torch

    if len(data) > MAX_ZIP_BYTES:
        size, cap = len(data) / 2**20, MAX_ZIP_BYTES // 2**20
        raise ArchiveError(f"the file is {size:.0f} MB; a run zip may be at most {cap} MB.")
    with tempfile.TemporaryDirectory(prefix="pvn-open-") as tmp:
        try:
            stream = io.BytesIO(data)
            check_directory(stream, "the zip")
            with zipfile.ZipFile(stream) as zf:
                members = check_members(zf)
                check_files(zf, members)
                extract(zf, members, Path(tmp))
            if MANIFEST not in {info.filename for info in members}:
                write_manifest(tmp)  # a zip exported before manifests: its members passed the zip's own CRC checks
            return load_result(tmp, experiment, max_bytes=MAX_UNPACKED_BYTES)
        except ArchiveError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError):
            raise ArchiveError("the file is not a zip, or it is damaged (download the run again).") from None
        except (RunError, OSError, ValueError) as err:
            raise ArchiveError(f"the zip is damaged or not a run: {str(err).replace(tmp, 'the zip')}") from None
