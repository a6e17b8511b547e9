"""A run's files read as untrusted input: plain files only, JSON within size and depth, arrays by their headers.

A run reaches the app from a folder under the runs roots (``pvnviz.runs.store``) or from an uploaded zip
(``pvnviz.runs.archive``), and either may be hostile. Nothing here trusts a size the input states about itself:
- ``open_regular``: a descriptor opened ``O_NONBLOCK | O_NOFOLLOW`` and ``fstat``-checked ``S_ISREG``, so a
  FIFO (whose open would block), a socket, a device or a link is refused before a byte is read;
- ``read_json``: at most ``MAX_JSON_BYTES``, UTF-8, nesting at most ``MAX_JSON_DEPTH`` (counted without
  recursion before ``json.loads``), numbers finite and of at most 19 digits, no NaN or Infinity;
- ``check_directory``: a zip's central directory at most ``MAX_DIRECTORY_BYTES`` (``zipfile`` keeps one
  object per listed member, so a zip listing a million empty members would fill the memory);
- ``inflate``: a zip member in chunks of at most ``CHUNK`` bytes, counted, and cut one byte past a limit
  whatever its header says (the header's size and CRC are compared only once the member is whole);
- ``check_npz``: every ``.npy`` member of an ``.npz`` (itself a zip) by its header, shape x dtype size taken
  from a ``ByteCap`` before ``np.load`` allocates it, and its real inflated size equal to what the header declares.
Every refusal is a ``RunError`` whose message names the run's file, never a server path.
"""

from __future__ import annotations

import copy
import io
import json
import math
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

CHUNK = 1 << 20  # bytes inflated or read at once
MAX_JSON_BYTES = 8 * 2**20  # split.json of 10^6 policies is about 7 MB
MAX_JSON_DEPTH = 32  # a run's JSON nests 4 deep
MAX_NUMBER_DIGITS = 19  # 2**63 has 19 digits
MAX_DIRECTORY_BYTES = 2**20  # a zip's central directory: about 20,000 members
MAX_NPY_DIMS = 8
ARRAY_KINDS = "biufU"  # bool, integers, floats, text: never objects (pickles) or records
NPY_MEMBER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}\.npy$")


class RunError(ValueError):
    """A folder that is not a readable run; the message says what is missing."""


def _megabytes(nbytes: int) -> str:
    return f"{nbytes / 2**20:,.0f} MB" if nbytes >= 2**20 else f"{nbytes:,} bytes"


class ByteCap:
    """The bytes an opened run may still take in memory (arrays as declared, network files as stored)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self, nbytes: int, what: str) -> None:
        """Count ``nbytes`` against the limit; RunError naming ``what`` if they do not fit."""
        if self.used + nbytes > self.limit:
            raise RunError(
                f"{what} takes {_megabytes(nbytes)}; with the rest of the run that is over the "
                f"{_megabytes(self.limit)} a run may take in this app."
            )
        self.used += nbytes


def _refuse_kind(mode: int, name: str) -> None:
    if stat.S_ISLNK(mode):
        raise RunError(f"{name} is a link; a run holds plain files only.")
    if stat.S_ISDIR(mode):
        raise RunError(f"{name} is a folder where the run's file should be; a run holds plain files only.")
    if not stat.S_ISREG(mode):
        raise RunError(f"{name} is not a plain file (a pipe, socket or device); a run holds plain files only.")


def check_regular(path: str | Path, name: str) -> os.stat_result:
    """``os.lstat`` of a run's file; RunError unless it is a plain file (links are refused, not followed)."""
    try:
        info = os.lstat(path)
    except OSError:
        raise RunError(f"{name} is missing or cannot be read.") from None
    _refuse_kind(info.st_mode, name)
    return info


def open_regular(path: str | Path, name: str) -> BinaryIO:
    """A run's file opened for reading without blocking or following a link; RunError unless a plain file."""
    check_regular(path, name)  # a FIFO is refused here, before any open
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        raise RunError(f"{name} cannot be read (missing, a link, or not allowed).") from None
    try:
        _refuse_kind(os.fstat(fd).st_mode, name)  # what was opened, if the path changed since the lstat
    except RunError:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bytes(path: str | Path, name: str, max_bytes: int) -> bytes:
    """A plain file's bytes, reading at most ``max_bytes + 1`` of them; RunError if it is longer."""
    with open_regular(path, name) as handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError:
            raise RunError(f"{name} cannot be read.") from None
    if len(data) > max_bytes:
        raise RunError(f"{name} is over {_megabytes(max_bytes)}; no file of a run is that large.")
    return data


def json_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON text, counted without recursion (strings skipped)."""
    outside = re.sub(r'"[^"\\]*(?:\\.[^"\\]*)*"', "", text)
    brackets = np.frombuffer(re.sub(r"[^\[\]{}]", "", outside).encode("ascii"), dtype=np.uint8)
    if brackets.size == 0:
        return 0
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def _refuse_constant(token: str) -> Any:
    raise RunError(f"holds {token}, which is not a JSON number")


def _parse_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise RunError(f"holds the number {token[:30]}, beyond the range of a float")
    return value


def _parse_int(token: str) -> int:
    if len(token.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise RunError(f"holds a whole number of {len(token)} digits; a run's numbers have at most {MAX_NUMBER_DIGITS}")
    return int(token)


def parse_json(data: bytes, name: str) -> Any:
    """JSON bytes as Python values; RunError (naming ``name``) for bad UTF-8, deep nesting or odd numbers."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RunError(f"{name} is not UTF-8 text; it is damaged or not a run's file.") from None
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise RunError(f"{name} nests {depth} levels deep; a run's JSON nests at most {MAX_JSON_DEPTH}.")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_parse_float, parse_int=_parse_int)
    except RunError as err:
        raise RunError(f"{name} {err}.") from None
    except json.JSONDecodeError as err:
        raise RunError(f"{name} is damaged JSON: {err.msg}.") from None
    except (ValueError, RecursionError):
        raise RunError(f"{name} is not JSON this app can read.") from None


def read_json(path: str | Path, name: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """``parse_json`` of a plain file of at most ``max_bytes``."""
    return parse_json(read_bytes(path, name, max_bytes), name)


def check_directory(fileobj: BinaryIO, name: str) -> None:
    """RunError if a zip's central directory (as ``zipfile`` will find it) is over ``MAX_DIRECTORY_BYTES``."""
    try:
        end = zipfile._EndRecData(fileobj)  # the record ZipFile reads: its directory size bounds its members
    except OSError:
        end = None
    finally:
        fileobj.seek(0)
    if end is not None and end[zipfile._ECD_SIZE] > MAX_DIRECTORY_BYTES:
        raise RunError(f"{name} lists too many members for a run's file.")


def inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, name: str) -> Iterator[bytes]:
    """A member's bytes in chunks of at most ``CHUNK``: at most ``limit + 1`` in all, whatever its header says.

    The caller refuses a member once it has counted ``limit + 1`` bytes. A member read whole must match
    its header's size and CRC, else RunError.
    """
    if info.flag_bits & 0x1:
        raise RunError(f"{name} is encrypted; a run is not.")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise RunError(f"{name} is compressed with a method a run never uses (only stored or deflated).")
    probe = copy.copy(info)
    probe.file_size = limit + 1  # zipfile stops at the stated size: ours, not the header's
    del probe.CRC  # checked below, once the member is whole (cut at the limit, the CRC could not match)
    total, crc = 0, 0
    with zf.open(probe) as stream:
        while chunk := stream.read(CHUNK):
            total += len(chunk)
            crc = zlib.crc32(chunk, crc)
            yield chunk
    if total <= limit and (total != info.file_size or crc != info.CRC):
        raise RunError(f"{name} is damaged: its size or checksum is not what its zip header says.")


def _npy_header(head: bytes, what: str) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, header length) of an .npy from its first bytes; RunError for anything a run never holds."""
    stream = io.BytesIO(head)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"version {version}")
    except (ValueError, EOFError):
        raise RunError(f"{what} is not an array file this app reads.") from None
    if dtype.hasobject or dtype.fields is not None or dtype.kind not in ARRAY_KINDS:
        raise RunError(f"{what} holds {dtype.str!r} values; a run holds numbers and text only.")
    if len(shape) > MAX_NPY_DIMS:
        raise RunError(f"{what} has {len(shape)} dimensions; a run's arrays have at most {MAX_NPY_DIMS}.")
    return shape, dtype, stream.tell()


def _check_npy(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, cap: ByteCap) -> None:
    """One .npy member: declared bytes (read from its header) counted against the cap, then its real length counted."""
    what = f"{name}: {info.filename[:-4]}"
    chunks = inflate(zf, info, cap.limit - cap.used + 2**16, what)  # room for the header itself
    head = next(chunks, b"")
    shape, dtype, header_bytes = _npy_header(head, what)
    declared = math.prod(shape) * dtype.itemsize  # Python ints: no overflow for (10**12, 34)
    cap.take(declared, what)
    total = len(head)
    for chunk in chunks:
        total += len(chunk)
        if total > header_bytes + declared:
            break
    if total != header_bytes + declared:
        raise RunError(f"{what} is damaged: its data is not the length its header declares.")
    chunks.close()


def check_npz(handle: BinaryIO, name: str, cap: ByteCap) -> None:
    """Every member of an .npz: a plain ``<key>.npy`` whose header's size fits the cap and is its real size.

    Reads the members through ``inflate`` (bounded chunks); nothing is allocated from a declared size.
    """
    check_directory(handle, name)
    try:
        with zipfile.ZipFile(handle) as zf:
            members = zf.infolist()
            if len({info.filename for info in members}) != len(members):
                raise RunError(f"{name} holds an array twice.")
            for info in members:
                if not NPY_MEMBER.match(info.filename):
                    raise RunError(f"{name} holds {info.filename[:80]!r}, which is not an array of a run.")
                _check_npy(zf, info, name, cap)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError):
        raise RunError(f"{name} is not a readable array file (damaged).") from None
    finally:
        handle.seek(0)
