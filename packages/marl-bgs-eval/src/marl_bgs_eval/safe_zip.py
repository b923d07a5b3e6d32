"""Zip files from strangers, read with every size bounded: the member list before `zipfile`
parses it, each member's method, declared size and compression ratio before it is read, and,
while it is read, the bytes it really holds (streamed in chunks and hashed as they come, so a
member whose stream holds more than it declares is caught at the first byte past its size).
Shared by the array zips of recorded games (`array_zip`) and the tournament's System files.

Every refusal is an `EvalError` naming the file, the member and the bound.
"""

from __future__ import annotations

import copy
import hashlib
import io
import struct
import zipfile
import zlib
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from marl_bgs_eval.errors import EvalError

END_RECORD = 22  # bytes of a zip's end-of-central-directory record, without its comment
MAX_RATIO = 1100  # DEFLATE cannot compress beyond about 1032:1; a higher ratio is a lie
NPY_HEADER_BYTES = 4096  # room for a .npy file's own header
CHUNK = 1 << 20  # bytes decompressed at a time


def check_zip_directory(path: Path, max_members: int, kind: str) -> None:
    """Refuse a zip whose end record declares more members or a larger member list than `kind`
    has, before `zipfile` reads the list (a file of tiny entries would cost memory)."""
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - END_RECORD - 0xFFFF))
        tail = f.read()
    last = len(tail) - END_RECORD
    at = last if tail[last : last + 4] == b"PK\x05\x06" else tail.rfind(b"PK\x05\x06")
    if at < 0 or at + END_RECORD > len(tail):
        return  # no end record: zipfile says why it cannot read the file
    members, size = struct.unpack_from("<HI", tail, at + 10)
    if members > max_members or size > max_members * 1024:
        raise EvalError(
            f"{path.name}: declares {members} members in {size} bytes; {kind} has at most "
            f"{max_members}"
        )


def check_member(info: zipfile.ZipInfo, limit: int, where: str) -> None:
    """Before a member is read: stored or deflated, not encrypted, at most `limit` unpacked
    bytes declared, and at most `MAX_RATIO` unpacked bytes declared per stored byte."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise EvalError(f"{where}: compression method {info.compress_type}; allowed: 0, 8")
    if info.flag_bits & 0x1:
        raise EvalError(f"{where}: encrypted members are not allowed")
    if info.file_size > limit:
        raise EvalError(f"{where}: declares {info.file_size} bytes, more than the limit {limit}")
    if info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise EvalError(
            f"{where}: declares {info.file_size} bytes in {info.compress_size} stored bytes, a "
            f"compression ratio above the limit {MAX_RATIO}:1 (a zip bomb?)"
        )


class MemberStream:
    """One member's bytes, decompressed a chunk at a time and hashed as they come. It never
    yields more than the member declares: a stream that holds more is refused at the first byte
    past the declared size, one that holds less, or other bytes than its CRC-32, when it ends
    (`finish`)."""

    def __init__(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> None:
        # zipfile cuts a stream at the declared size, and checks the CRC there: let it run one
        # byte past, to see a lie, and check the CRC here, once the size is known to hold
        probe = copy.copy(info)
        probe.file_size = info.file_size + 1
        del probe.CRC
        self.declared, self.count, self.where, self._want_crc = info.file_size, 0, where, info.CRC
        self._sha, self._crc = hashlib.sha256(), 0
        self._digest: str | None = None
        self._file = zf.open(probe)

    def read(self, n: int) -> bytes:
        """Up to `n` more bytes (never more than one chunk past what was asked)."""
        data = self._file.read(max(0, min(n, self.declared + 1 - self.count)))
        self.count += len(data)
        if self.count > self.declared:
            raise EvalError(f"{self.where}: holds more than the {self.declared} bytes it declares")
        self._sha.update(data)
        self._crc = zlib.crc32(data, self._crc)
        return data

    def finish(self) -> str:
        """Read to the end; the sha256 of every byte, once the stream held exactly what it
        declares and its CRC-32 agrees."""
        if self._digest is None:
            while self.read(CHUNK):
                pass
            if self.count != self.declared:
                raise EvalError(f"{self.where}: holds {self.count} bytes, declares {self.declared}")
            if self._crc != self._want_crc:
                raise EvalError(f"{self.where}: its CRC-32 differs from the zip's (damaged)")
            self._digest = self._sha.hexdigest()
        return self._digest

    def close(self) -> None:
        """Let go of the member (unread bytes are never decompressed)."""
        self._file.close()

    def __enter__(self) -> MemberStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def read_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, source: str) -> bytes:
    """A member's bytes, at most `limit` of them (`check_member` first; a stream that holds
    more or less than it declares is refused)."""
    where = f"{source}: {info.filename}"
    check_member(info, limit, where)
    with MemberStream(zf, info, where) as stream:
        data = stream.read(info.file_size)
        stream.finish()
    return data


# --- .npy arrays -----------------------------------------------------------------------------


def _npy_header(f: Any, shape: tuple[int, ...], dtype: np.dtype, where: str) -> None:
    """Read a .npy header from `f` (anything with `read(n)`) as a literal, never a pickle, and
    refuse any dtype, shape or order but the expected ones."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        read = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}
        if version not in read:
            raise ValueError(f"unsupported .npy version {version}")
        got_shape, fortran, got_dtype = read[version](f)
    except EvalError:
        raise
    except Exception as err:  # numpy's header parser on hostile bytes: any failure is a refusal
        raise EvalError(f"{where}: not a .npy array ({type(err).__name__})") from None
    if got_dtype.kind not in "biuf" or got_dtype.hasobject or got_dtype.fields:
        raise EvalError(f"{where}: dtype {got_dtype} is not allowed (numeric and bool only)")
    if got_dtype != dtype or tuple(got_shape) != shape:
        raise EvalError(f"{where}: holds {tuple(got_shape)} {got_dtype}, expected {shape} {dtype}")
    if fortran:
        raise EvalError(f"{where}: Fortran order is not allowed (C order only)")


def parse_npy(data: bytes, shape: tuple[int, ...], dtype: np.dtype, where: str) -> np.ndarray:
    """The array in `.npy` bytes, parsed by hand: the header is read as a literal, the data is
    never unpickled, and nothing is allocated before the shape and dtype are known to fit."""
    f = io.BytesIO(data)
    _npy_header(f, shape, dtype, where)
    body, need = data[f.tell() :], int(np.prod(shape)) * dtype.itemsize
    if len(body) != need:
        raise EvalError(f"{where}: holds {len(body)} data bytes, its shape needs {need}")
    return np.frombuffer(body, dtype).reshape(shape).copy()


def read_npy(
    stream: MemberStream, shape: tuple[int, ...], dtype: np.dtype, where: str
) -> np.ndarray:
    """The array in a streamed `.npy` member, read straight into its own memory: the header as
    `parse_npy` reads it, then, once the declared size is exactly the header and the shape's
    bytes, the data a chunk at a time (the stream is finished: its sha256 is `stream.finish()`)."""
    _npy_header(stream, shape, dtype, where)
    need = int(np.prod(shape)) * dtype.itemsize
    if stream.declared - stream.count != need:
        raise EvalError(
            f"{where}: holds {stream.declared - stream.count} data bytes, its shape needs {need}"
        )
    out = np.empty(shape, dtype)
    flat = out.reshape(-1).view(np.uint8)
    done = 0
    while done < need and (chunk := stream.read(min(CHUNK, need - done))):
        flat[done : done + len(chunk)] = np.frombuffer(chunk, np.uint8)
        done += len(chunk)
    stream.finish()
    return out
