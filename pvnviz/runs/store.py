"""Saved runs: a folder with ``config.json``, ``summary.json``, array files and ``manifest.json``.

The CLI writes runs (Section 6 experiments at paper scale); the pages open them.
Layout of a run folder:
- ``config.json``: {"experiment": name, "seed": int, "config": {...}}
- ``summary.json``: the experiment's headline numbers and timings in seconds
- ``*.npz`` / ``*.pt``: arrays and trained networks, experiment-specific
- ``manifest.json``: every other file's relative name, size and sha256, written last
(each file, and each array in the .npz files, is declared in ``pvnviz.runs.schema``)

A run folder is a transaction: the CLI writes it into ``staging_dir(out)``, writes the
manifest, and only then renames it into place (``publish``); an existing run is replaced
only when asked, by an atomic exchange of the two folders where the system has one, else
by renaming the old one aside first (``.NAME.old``, restored by the next ``begin_run`` if a
crash fell between the two renames). ``read_run`` opens only folders whose manifest checks out.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import shutil
import signal
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pvnviz.core.config_fields import to_dict
from pvnviz.runs import paths
from pvnviz.runs.safe_files import RunError, open_regular, read_json
from pvnviz.runs.schema import CONFIG, MANIFEST, SUMMARY

RUN_FORMAT_VERSION = 1  # config.json's "version"; pvnviz.runs.files refuses any other
MAX_META_BYTES = 2**20  # config.json, summary.json and manifest.json: a few KB in any run
MAX_NAME_CHARS = 400  # an experiment's name (a gym: name with its keywords: pvnviz.envs.gym_id.MAX_NAME_CHARS)


class RunFailure(RunError):
    """The run itself failed (not the input): e.g. its results hold NaN. The CLI exits 1."""


@dataclass(frozen=True)
class RunInfo:
    """What config.json and summary.json of a run hold."""

    path: Path
    experiment: str
    seed: int
    config: dict[str, Any]
    summary: dict[str, Any]
    config_version: Any = 1  # config.json's "version" (absent in runs written before it was recorded: 1)


def prepare_out(out_dir: str | Path) -> Path:
    """Create the run folder (or check it is writable); RunError says what to change."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise RunError(f"cannot write run folder {out}: {err.strerror}; choose another --out.") from None
    return out


def write_run(out_dir: str | Path, experiment: str, seed: int, config: Any, summary: dict) -> Path:
    """Create the folder and write config.json, summary.json and, last, manifest.json over every file in it."""
    meta = {"version": RUN_FORMAT_VERSION, "experiment": experiment, "seed": seed, "config": to_dict(config)}
    try:  # strict JSON: NaN and Infinity are not JSON, and other parsers refuse them
        summary_text = json.dumps(summary, indent=2, allow_nan=False)
        config_text = json.dumps(meta, indent=2, allow_nan=False)
    except ValueError:
        raise RunFailure(
            "the run failed: its results hold NaN or infinity (a diverging PVN or ascent); lower a learning rate."
        ) from None
    out = prepare_out(out_dir)
    (out / SUMMARY.name()).write_text(summary_text + "\n")
    (out / CONFIG.name()).write_text(config_text + "\n")
    write_manifest(out)
    return out


def read_run(path: str | Path, experiment: str | None = None) -> RunInfo:
    """Read a run folder; RunError if it is not one (or not of the expected experiment).

    Messages name the run's files, never the folder's path: the pages show them to any user. Every file is
    read as untrusted (``pvnviz.runs.safe_files``): plain files only, JSON bounded in size, depth and numbers.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise RunError("it is not a folder; give the --out folder of a saved run.")
    for name in (CONFIG.name(), SUMMARY.name()):
        if not (folder / name).exists():
            raise RunError(f"not a run: {name} is missing (`python -m pvnviz run ... --out DIR` makes a run).")
    check_manifest(folder)
    meta = read_json(folder / "config.json", "config.json", MAX_META_BYTES)
    summary = read_json(folder / "summary.json", "summary.json", MAX_META_BYTES)
    if not isinstance(meta, dict) or "experiment" not in meta or not isinstance(meta.get("config"), dict):
        raise RunError("config.json lacks 'experiment' and 'config'; not a run.")
    if not isinstance(meta["experiment"], str) or len(meta["experiment"]) > MAX_NAME_CHARS:
        raise RunError("config.json's experiment is not the name of an experiment.")
    if not isinstance(summary, dict):
        raise RunError("summary.json is not a JSON object; the run was changed after it was written.")
    if experiment is not None and meta["experiment"] != experiment:
        raise RunError(f"this is a {meta['experiment']} run, not a {experiment} run.")
    seed = meta.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise RunError(f"config.json's seed {seed!r} is not a whole number of 0 or more.")
    return RunInfo(folder, str(meta["experiment"]), seed, meta["config"], summary, meta.get("version", 1))


def staging_dir(out_dir: str | Path) -> Path:
    """Where a run is written before it is complete: a hidden folder beside its target."""
    out = Path(out_dir)
    return out.parent / f".{out.name}.partial"


def chunks_dir(out_dir: str | Path) -> Path:
    """Where a resumable collection keeps its chunks until the run is in place: a hidden folder beside it."""
    out = Path(out_dir)
    return out.parent / f".{out.name}.chunks"


MANIFEST_VERSION = 1
_CHECKED: dict[tuple, None] = {}  # manifests already hashed, keyed on every file's (name, size, inode, ctime)


def _files(folder: Path) -> list[str]:
    """Every file under ``folder`` but the manifest, as sorted relative POSIX names; RunError on a link, a pipe,
    a socket or a device (``lstat``: nothing is opened, so a FIFO cannot block)."""
    names = []
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            raise RunError(f"the run holds {name}, a link; a run folder holds plain files only.")
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise RunError(f"the run holds {name}, which is not a plain file (a pipe, socket or device).")
        if stat.S_ISREG(mode) and name != MANIFEST:
            names.append(name)
    return names


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path, path.name) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_manifest(folder: str | Path) -> Path:
    """Write ``manifest.json``: every other file's relative name, size and sha256 (files synced to disk first)."""
    folder = Path(folder)
    entries = []
    for name in _files(folder):
        path = folder / name
        _fsync(path)
        entries.append({"name": name, "size": path.stat().st_size, "sha256": _sha256(path)})
    text = json.dumps({"version": MANIFEST_VERSION, "files": entries}, indent=2) + "\n"
    partial = folder / f".{MANIFEST}.partial"
    partial.write_text(text)
    _fsync(partial)
    partial.replace(folder / MANIFEST)  # atomic: a manifest is whole or absent
    _fsync(folder)
    return folder / MANIFEST


def check_manifest(folder: str | Path) -> None:
    """RunError naming the first file that does not match ``manifest.json`` (missing, extra, size or sha256)."""
    folder = Path(folder)
    path = folder / MANIFEST
    hint = "the run is damaged or was not written whole; run it again, or restore it from a copy"
    if not path.exists() and not path.is_symlink():
        raise RunError(
            f"{MANIFEST} is missing, so the run cannot be checked; if it is an older run you trust, "
            "give it one with `python -m pvnviz manifest DIR`."
        )
    manifest = read_json(path, MANIFEST, MAX_META_BYTES)
    try:
        listed = {str(e["name"]): (int(e["size"]), str(e["sha256"])) for e in manifest["files"]}
        version = manifest["version"]
    except (TypeError, KeyError, ValueError):
        raise RunError(f"{MANIFEST} is damaged; {hint}.") from None
    if any(len(name) > 255 for name in listed):
        raise RunError(f"{MANIFEST} lists a name longer than a file's; {hint}.")
    if version != MANIFEST_VERSION:
        raise RunError(f"{MANIFEST} has version {version!r}; this app reads version {MANIFEST_VERSION}.")
    present = _files(folder)
    for name in present:
        if name not in listed:
            raise RunError(f"{name} is not in {MANIFEST}: a stray file; remove it or run again.")
    stats = {}
    for name, (size, _) in listed.items():
        if name not in present:
            if (folder / name).is_dir() and not (folder / name).is_symlink():
                raise RunError(f"{name} is a folder where {MANIFEST} lists a file; {hint}.")
            raise RunError(f"{name} is missing; {MANIFEST} lists it, {hint}.")
        stat = (folder / name).stat()
        if stat.st_size != size:
            raise RunError(f"{name} has {stat.st_size} bytes, {MANIFEST} says {size}; {hint}.")
        stats[name] = (stat.st_size, stat.st_ino, stat.st_ctime_ns, stat.st_mtime_ns)
    key = (str(folder.resolve()), path.stat().st_ctime_ns, tuple(sorted(stats.items())))
    if key in _CHECKED:
        return
    for name, (_, digest) in listed.items():
        if _sha256(folder / name) != digest:
            raise RunError(f"{name} does not match its sha256 in {MANIFEST}; {hint}.")
    if len(_CHECKED) > 256:
        _CHECKED.clear()
    _CHECKED[key] = None


def _old_dir(out: Path) -> Path:
    return out.parent / f".{out.name}.old"


def _is_run(folder: Path) -> bool:
    return (folder / MANIFEST).is_file() or (folder / "config.json").is_file()


def recover(out_dir: str | Path) -> None:
    """Finish a replace that a crash cut between its two renames: the old run back in place, or the old one gone."""
    out = Path(out_dir)
    old = _old_dir(out)
    if not old.is_dir():
        return
    if not out.exists():
        old.rename(out)  # the crash fell between the renames: the previous run returns
        return
    try:
        check_manifest(out)
    except RunError:
        raise RunError(
            f"{old} holds the run that {out} replaced, but {out} does not check out; "
            f"move one of them away by hand, then run again."
        ) from None
    shutil.rmtree(old)  # the new run is in place; the old one was about to be deleted


def begin_run(out_dir: str | Path, overwrite: bool = False) -> Path:
    """Before any work: refuse an existing run unless ``overwrite``; empty the staging folder."""
    out = Path(out_dir)
    recover(out)
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out} is a file, not a folder; choose another --out.")
    if out.is_dir() and any(out.iterdir()):
        if not _is_run(out):
            raise RunError(f"--out {out} holds files that are not a run; choose an empty or new folder.")
        if not overwrite:
            raise RunError(f"--out {out} already holds a run; add --overwrite to replace it, or choose another --out.")
    staging = staging_dir(out)
    try:
        staging.mkdir(parents=True, exist_ok=True)
        for path in staging.iterdir():  # what a killed run left, never mixed into this one
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        prepare_out(staging)
    except OSError as err:
        raise RunError(f"cannot write beside {out}: {err.strerror}; choose another --out.") from None
    return staging


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two folders (Linux renameat2 RENAME_EXCHANGE); False where the system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), str(b))


def publish(staging: str | Path, out_dir: str | Path) -> Path:
    """Move a complete, manifested run from ``staging`` to ``out_dir``; an old run there is replaced whole.

    At every instant ``out_dir`` is the old run or the new one (with the fallback, the old one may sit
    at ``.NAME.old`` for the instant between two renames; ``recover`` puts it back).
    """
    staging, out = Path(staging), Path(out_dir)
    check_manifest(staging)
    blocked = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)  # Ctrl-C waits until the swap is done
    try:
        if out.is_dir() and any(out.iterdir()):
            if _exchange(staging, out):
                shutil.rmtree(staging)  # now the old run
            else:
                old = _old_dir(out)
                out.rename(old)
                staging.rename(out)
                shutil.rmtree(old)
        else:
            staging.rename(out)  # atomic; an empty folder at out is replaced
        _fsync(out.parent)
    except OSError as err:
        raise RunError(f"cannot move the finished run into {out}: {err.strerror}; it is kept in {staging}.") from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    return out


REPO_ROOT = paths.app_root()  # the app's folder: a checkout's root, or the installed copy (``paths``)
RUNS_ROOTS_ENV = "PVN_RUNS_ROOTS"


def run_roots() -> list[Path]:
    """The folders the app may open runs from: ``$PVN_RUNS_ROOTS`` (os.pathsep-separated), else the shipped
    ``data/`` and ``runs/`` (the checkout's; for an installed package, the current folder's: ``paths``)."""
    text = os.environ.get(RUNS_ROOTS_ENV, "")
    roots = [Path(p).expanduser() for p in text.split(os.pathsep) if p.strip()]
    return [r.resolve() for r in (roots or [paths.shipped_runs(), paths.user_runs()])]


def _run_name(root: Path, folder: Path) -> str:
    return (Path(root.name) / folder.relative_to(root)).as_posix()


def list_runs(experiment: str | None = None, roots: list[Path] | None = None) -> dict[str, Path]:
    """Run folders under the roots (two levels deep), by name (``data/cartpole-paper``), of ``experiment`` if given.

    Only what config.json says is read; a folder is listed if it looks like a run (whether it opens whole is
    ``read_run``'s answer). Links that lead out of a root are not followed.
    """
    found: dict[str, Path] = {}
    for root in run_roots() if roots is None else roots:
        if not root.is_dir():
            continue
        for folder in sorted([*root.glob("*/config.json"), *root.glob("*/*/config.json")]):
            run = folder.parent
            if run.name.startswith(".") or run.parent.name.startswith(".") or not _inside(run, root):
                continue
            if experiment is not None:
                try:  # never blocks: a FIFO or a link named config.json is refused before any open
                    meta = read_json(folder, "config.json", MAX_META_BYTES)
                except RunError:
                    meta = {}
                if not isinstance(meta, dict) or meta.get("experiment") != experiment:
                    continue
            found.setdefault(_run_name(root, run), run)
    return found


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
        return True
    except (OSError, ValueError):
        return False


def resolve_run(name: str, roots: list[Path] | None = None) -> Path:
    """The folder of a listed run name; RunError (naming no server path) for anything else."""
    if len(name) > 300:
        raise RunError("that run name is too long; choose a run from the list.")
    for root in run_roots() if roots is None else roots:
        head, _, rest = name.partition("/")
        if head != root.name or not rest:
            continue
        candidate = root / rest
        if ".." not in Path(rest).parts and _inside(candidate, root) and candidate.is_dir():
            return candidate.resolve()
    raise RunError(
        f"{name!r} is not a run in the app's runs folders ({', '.join(r.name + '/' for r in run_roots())}); "
        "choose one from the list, or save runs with `--out runs/NAME`."
    )
