"""Hostile run zips and run folders, built byte by byte so that their headers can lie.

Every input starts from the shipped run ``data/cartpole-quick`` and changes one thing. Zips are written
here by hand (``raw_zip``): local headers, central directory and end record, each member stating the size
it is given, whatever its data inflates to. Large zero-filled members are raw deflate streams made of one
compressed megabyte repeated (each piece flushed to a byte boundary, so the pieces concatenate), so a
3 GiB member costs 3 MB and no 3 GiB buffer is ever made here. Their CRCs are not the data's: every reader
under test must refuse such a member long before it could reach its end.
"""

from __future__ import annotations

import io
import json
import stat
import struct
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "data" / "cartpole-quick"
MB = 2**20
DEFLATED, STORED = 8, 0


def npy_header(shape: tuple[int, ...], dtype: str = "<f4") -> bytes:
    """The bytes of an .npy header (format 1.0) declaring ``shape`` and ``dtype``, as ``np.save`` writes it."""
    buffer = io.BytesIO()
    header = {"descr": dtype, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def deflate(data: bytes) -> bytes:
    """A raw deflate stream (as in a zip member) of ``data``, flushed to a byte boundary, not final."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush(zlib.Z_FULL_FLUSH)


def deflate_zeros(prefix: bytes, num_megabytes: int) -> bytes:
    """A raw deflate stream of ``prefix`` then ``num_megabytes`` MB of zero bytes (about 1 KB per MB)."""
    return deflate(prefix) + deflate(bytes(MB)) * num_megabytes + b"\x03\x00"  # 03 00: an empty final block


def member(name: str, data: bytes) -> tuple:
    """An honest zip entry: its data deflated, its real size and CRC."""
    return (name, deflate(data) + b"\x03\x00", zlib.crc32(data), len(data), DEFLATED, 0o100644)


def raw_zip(entries: list[tuple]) -> bytes:
    """A zip of ``(name, raw data, crc, stated size, method, mode)`` entries, each header stating that size."""
    out, directory = io.BytesIO(), io.BytesIO()
    for name, raw, crc, size, method, mode in entries:
        offset, encoded = out.tell(), name.encode()
        fields = (20, 0, method, 0, 0x21, crc, len(raw), size, len(encoded))
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", *fields, 0) + encoded + raw)
        directory.write(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, mode << 16, offset))
        directory.write(encoded)
    listing, start, count = directory.getvalue(), out.tell(), len(entries) & 0xFFFF
    out.write(listing + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(listing), start, 0))
    return out.getvalue()


def quick_files() -> dict[str, bytes]:
    """The shipped quick run's files but its manifest (a zip without one opens: the app writes it)."""
    return {p.name: p.read_bytes() for p in sorted(QUICK.iterdir()) if p.name != "manifest.json"}


def run_zip(files: dict[str, bytes], extra: tuple = ()) -> bytes:
    """The quick run as a zip, with ``files`` replacing its files and ``extra`` raw entries added."""
    chosen = {**quick_files(), **files}
    return raw_zip(
        [member(name, data) for name, data in chosen.items() if name not in {e[0] for e in extra}] + [*extra]
    )


def npz_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def dataset_with(key: str, value: np.ndarray) -> bytes:
    """The quick run's dataset.npz with one array replaced."""
    return npz_bytes({**npz_arrays(QUICK / "dataset.npz"), key: value})


def dataset_with_raw(params_entry: tuple) -> bytes:
    """The quick run's dataset.npz with ``params.npy`` replaced by a raw zip entry."""
    arrays = npz_arrays(QUICK / "dataset.npz")
    entries = []
    for key, value in arrays.items():
        buffer = io.BytesIO()
        np.save(buffer, value)
        entries.append(params_entry if key == "params" else member(f"{key}.npy", buffer.getvalue()))
    return raw_zip(entries)


def config_with(**config: object) -> bytes:
    meta = json.loads((QUICK / "config.json").read_text())
    meta["config"].update(config)
    return json.dumps(meta).encode()


def summary_with(**values: object) -> bytes:
    return json.dumps({**json.loads((QUICK / "summary.json").read_text()), **values}).encode()


def _entry(name: str, raw: bytes, stated_size: int, mode: int = 0o100644) -> tuple:
    """A raw zip entry stating ``stated_size`` (its CRC is not its data's: see the module docstring)."""
    return (name, raw, 0, stated_size, DEFLATED, mode)


def bad_zips() -> dict[str, tuple[bytes, str]]:
    """Every hostile upload as (zip bytes, a phrase its refusal must hold)."""
    three_gib = npy_header((3 * 2**20, 256))  # float32: exactly 3 GiB
    declares_3_gib = _entry("params.npy", deflate_zeros(three_gib, 3072), len(three_gib) + 3 * 2**30)
    small = npy_header((300, 34))
    lies_inside = _entry("params.npy", deflate_zeros(small, 1024), len(small) + 300 * 34 * 4)
    huge_shape = member("params.npy", npy_header((10**12, 34), "<f8") + bytes(1000))
    link = member("split.json", b"/etc/passwd")[:5] + (stat.S_IFLNK | 0o777,)
    pickled = np.array([{"a": 1}], dtype=object)
    return {
        "3 GiB array in dataset.npz": (
            run_zip({"dataset.npz": dataset_with_raw(declares_3_gib)}),
            "params takes 3,072 MB",
        ),
        "lying size header": (
            run_zip({}, (_entry("dataset.npz", deflate_zeros(b"", 1024), 1000),)),
            "more than 200 MB",
        ),
        "lying size header in dataset.npz": (run_zip({"dataset.npz": dataset_with_raw(lies_inside)}), "not the length"),
        "npy header of shape (10**12, 34)": (run_zip({"dataset.npz": dataset_with_raw(huge_shape)}), "params takes"),
        "horizon=[100, 100] in config.json": (run_zip({"config.json": config_with(horizon=[100, 100])}), "horizon"),
        "horizon=[100, 100] in dataset.npz": (
            run_zip({"dataset.npz": dataset_with("horizon", np.array([100, 100]))}),
            "horizon has shape (2,)",
        ),
        "seconds=[1, 2] in dataset.npz": (
            run_zip({"dataset.npz": dataset_with("seconds", np.array([1.0, 2.0]))}),
            "seconds has shape (2,)",
        ),
        "seconds=[1, 2] in summary.json": (
            run_zip({"summary.json": summary_with(timings_seconds=[1, 2])}),
            "timings_seconds",
        ),
        "non-UTF-8 config.json": (run_zip({"config.json": b'{"experiment": "cart\xffpole"}'}), "not UTF-8"),
        "summary.json nested 100,000 deep": (
            run_zip({"summary.json": b"[" * 100_000 + b"]" * 100_000}),
            "nests 100000 levels",
        ),
        "NaN in summary.json": (run_zip({"summary.json": b'{"timings_seconds": {"total": NaN}}'}), "NaN"),
        "5,000 digits in summary.json": (run_zip({"summary.json": b'{"seed": 1' + b"0" * 5000 + b"}"}), "digits"),
        "300,000 members": (raw_zip([("x", b"", 0, 0, STORED, 0o100644)] * 300_000), "too many members"),
        "path traversal": (run_zip({}, (member("../split.json", b"{}"),)), "not a file of a run"),
        "absolute name": (run_zip({}, (member("/etc/passwd", b"root"),)), "not a file of a run"),
        "symlink member": (run_zip({}, (link,)), "is a link"),
        "pickled array": (run_zip({"dataset.npz": dataset_with("seconds", pickled)}), "|O"),
    }


def largest_run_zip(array_megabytes: int = 190) -> bytes:
    """A valid run zip near the cap: the quick run with as many policies as fit ``array_megabytes`` of arrays
    (parameters of a few values, so the zip stays under 50 MB); every check passes and it opens."""
    from pvnviz.core.config_fields import from_dict
    from pvnviz.runs.pipeline import ExperimentConfig

    meta = json.loads((QUICK / "config.json").read_text())
    arch = from_dict(ExperimentConfig, meta["config"]).arch()
    num_episodes = meta["config"]["num_episodes"]
    num_policies = array_megabytes * MB // ((arch.num_params + num_episodes) * 4)
    meta["config"]["num_policies"] = num_policies
    rng = np.random.default_rng(0)
    dataset = {
        **npz_arrays(QUICK / "dataset.npz"),
        "params": rng.integers(-2, 3, size=(num_policies, arch.num_params)).astype(np.float32),
        "returns": np.full((num_policies, num_episodes), 10.0, dtype=np.float32),  # under the return limit: all kept
    }
    split = json.loads((QUICK / "split.json").read_text())
    num_train = num_policies - num_policies // 10
    split.update(train_idx=list(range(num_train)), val_idx=list(range(num_train, num_policies)))
    files = {"config.json": json.dumps(meta).encode(), "split.json": json.dumps(split).encode()}
    return run_zip({**files, "dataset.npz": npz_bytes(dataset)})


def no_server_path(message: str, *folders: Path) -> bool:
    """No server path in a message shown to users: not the repository's, not one of ``folders``, no temporary file."""
    return not any(str(f) in message for f in (ROOT, *folders)) and "pvn-open-" not in message and "/tmp" not in message
