"""Zips from strangers (`safe_zip`): every bound holds exactly at its edge, and a member's stream
is held to its declared size, a byte over or under."""

from __future__ import annotations

import hashlib
import io
import zipfile
import zlib

import numpy as np
import pytest

from marl_bgs_eval import EvalError
from marl_bgs_eval.fuzzing import npy_bytes, patch_central, zip_bytes
from marl_bgs_eval.safe_zip import (
    MAX_RATIO,
    NPY_HEADER_BYTES,
    MemberStream,
    check_member,
    read_bounded,
    read_npy,
)

BODY = bytes(range(256)) * 40  # 10,240 bytes that deflate to a few hundred


def _info(size: int, stored: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("w.npy")
    info.compress_type, info.file_size, info.compress_size = zipfile.ZIP_DEFLATED, size, stored
    return info


def test_declared_sizes_and_ratios_pass_at_their_limit_and_fail_one_over() -> None:
    check_member(_info(1000, 10), 1000, "f: w.npy")
    over = r"^f: w.npy: declares 1001 bytes, more than the limit 1000$"
    with pytest.raises(EvalError, match=over):
        check_member(_info(1001, 10), 1000, "f: w.npy")
    check_member(_info(MAX_RATIO * 10, 10), 1 << 30, "f: w.npy")
    with pytest.raises(EvalError, match=rf"in 10 stored bytes, a compression ratio above the "
                                        rf"limit {MAX_RATIO}:1"):  # fmt: skip
        check_member(_info(MAX_RATIO * 10 + 1, 10), 1 << 30, "f: w.npy")
    check_member(_info(MAX_RATIO, 0), 1 << 30, "f: empty")  # nothing stored counts as one byte


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (len(BODY), None),
        (len(BODY) - 1, rf"holds more than the {len(BODY) - 1} bytes it declares"),
        (len(BODY) + 1, rf"holds {len(BODY)} bytes, declares {len(BODY) + 1}"),
    ],
)
@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_a_stream_is_held_to_its_declared_size(declared, message, method) -> None:
    """zipfile alone cuts a longer stream at the declared size and accepts a shorter one whose
    CRC matches: both are refused here, by the bytes actually read."""
    data = patch_central(zip_bytes([("w.bin", BODY)], method), "w.bin", size=declared)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        if message is None:
            assert read_bounded(zf, zf.getinfo("w.bin"), len(BODY), "f") == BODY
        else:
            with pytest.raises(EvalError, match=rf"^f: w.bin: {message}"):
                read_bounded(zf, zf.getinfo("w.bin"), len(BODY) + 1, "f")


def test_a_stream_is_held_to_its_crc() -> None:
    data = patch_central(zip_bytes([("w.bin", BODY)]), "w.bin", crc=zlib.crc32(BODY) ^ 1)
    with (
        zipfile.ZipFile(io.BytesIO(data)) as zf,
        pytest.raises(EvalError, match=r"^f: w.bin: its CRC-32 differs from the zip's"),
    ):
        read_bounded(zf, zf.getinfo("w.bin"), len(BODY), "f")


def test_an_array_is_read_streamed_into_its_own_memory() -> None:
    array = np.arange(3000, dtype=np.float32).reshape(30, 100)
    for header in (None, NPY_HEADER_BYTES):  # the room a weight's member has for its header
        data = npy_bytes(array, header)
        with (
            zipfile.ZipFile(io.BytesIO(zip_bytes([("w.npy", data)]))) as zf,
            MemberStream(zf, zf.getinfo("w.npy"), "f: w.npy") as stream,
        ):
            got = read_npy(stream, (30, 100), np.dtype(np.float32), "f: w.npy")
            assert stream.count == len(data)
            assert stream.finish() == hashlib.sha256(data).hexdigest()
        np.testing.assert_array_equal(got, array)
    for body, held in ((npy_bytes(array)[:-4], 11996), (npy_bytes(array) + bytes(4), 12004)):
        with (  # a declared size that does not fit the shape: nothing is allocated
            zipfile.ZipFile(io.BytesIO(zip_bytes([("w.npy", body)]))) as zf,
            MemberStream(zf, zf.getinfo("w.npy"), "f: w.npy") as stream,
            pytest.raises(EvalError, match=rf"holds {held} data bytes, its shape needs 12000"),
        ):
            read_npy(stream, (30, 100), np.dtype(np.float32), "f: w.npy")
