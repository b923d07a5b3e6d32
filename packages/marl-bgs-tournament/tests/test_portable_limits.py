"""System files at their limits: every byte and count bound of the reader and of the manifest
passes exactly at its limit and fails one unit over; zip bombs of declared and of undeclared size
are refused at once, without a big allocation. Files are crafted from mix5 (no new exports)."""

from __future__ import annotations

import io
import json
import resource
import struct
import time
import zipfile
import zlib
from typing import Any

import numpy as np
import pytest

from marl_bgs_eval.fuzzing import npy_bytes, patch_central, zip_bytes, zip_members
from marl_bgs_eval.safe_zip import MAX_RATIO, NPY_HEADER_BYTES
from marl_bgs_tournament import TournamentError, load_system, read_manifest
from marl_bgs_tournament.portable import (
    MAX_MANIFEST_BYTES,
    MAX_MEMBERS,
    MAX_UNPACKED_BYTES,
    zipread,
)
from marl_bgs_tournament.portable import format as fmt

WEIGHT = "param-0000.npy"


def _write(tmp_path, data: bytes, name: str = "edge.mbgs"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _refused(path, message: str, read=read_manifest) -> None:
    with pytest.raises(TournamentError, match=rf"^{path.name}: {message}"):
        read(path)


def test_the_file_size_limit(mix_files) -> None:
    size = mix_files["mix5"].stat().st_size
    assert read_manifest(mix_files["mix5"], max_bytes=size)["name"] == "mix5"
    _refused(mix_files["mix5"], f"{size} bytes, more than the limit {size - 1}",
             lambda p: read_manifest(p, max_bytes=size - 1))  # fmt: skip


def _end_record(data: bytes, count: int) -> bytes:
    """`data` (a zip) whose end record declares `count` members (its directory holds more)."""
    at = data.rfind(b"PK\x05\x06")
    return data[: at + 8] + struct.pack("<HH", count, count) + data[at + 12 :]


def test_the_member_count_limit(mix_files, tmp_path) -> None:
    members = zip_members(mix_files["mix5"])
    for extra in (0, 1):
        padded = members + [(f"pad{k}", b"") for k in range(MAX_MEMBERS - len(members) + extra)]
        data = zip_bytes(padded, zipfile.ZIP_STORED)
        for declared in (data, _end_record(data, 1)):  # the end record's count, or a lie
            path = _write(tmp_path, declared)
            if extra:
                _refused(path, rf"(declares {MAX_MEMBERS + 1} members in \d+ bytes|"
                               rf"{MAX_MEMBERS + 1} members); a System file has at most "
                               rf"{MAX_MEMBERS}")  # fmt: skip
            else:  # the count passes; the names do not
                _refused(path, r"members do not match the manifest \(extra \['pad0'")


def test_the_manifest_size_limit(mix_files, tmp_path) -> None:
    members = dict(zip_members(mix_files["mix5"]))
    text = members["manifest.json"]
    for extra in (0, 1):  # JSON allows trailing white space
        members["manifest.json"] = text + b" " * (MAX_MANIFEST_BYTES - len(text) + extra)
        path = _write(tmp_path, zip_bytes(list(members.items())))
        if extra:
            _refused(path, f"manifest.json: declares {MAX_MANIFEST_BYTES + 1} bytes, more than "
                           f"the limit {MAX_MANIFEST_BYTES}")  # fmt: skip
        else:
            assert read_manifest(path) == read_manifest(mix_files["mix5"])


def _memory(over: int) -> list[list[Any]]:
    return [[[fmt.MAX_MEMORY_BYTES // 4], "float32"]] + [[[], "uint8"]] * over


# (field, value at the limit, value one unit over, the message one over)
_PARAMS = r"manifest.params\[0\]: "
# fmt: off
MANIFEST_EDGES = [
    ("memory", _memory(0), _memory(1),
     rf"manifest.memory: 1048577 bytes per game, more than the rulebook's {fmt.MAX_MEMORY_BYTES}"),
    ("memory", [[[], "bool"]] * fmt.MAX_MEMBERS, [[[], "bool"]] * (fmt.MAX_MEMBERS + 1),
     r"manifest.memory: expected a list"),
    ("params", [[[1] * fmt.MAX_RANK, "float32"]], [[[1] * (fmt.MAX_RANK + 1), "float32"]],
     _PARAMS + r"expected \[shape"),
    ("params", [[[2**31 - 1], "uint8"]], [[[2**31], "uint8"]], _PARAMS + r"expected \[shape"),
    ("params", [[[2**16, 2**15], "uint8"]], [[[2**16, 2**15 + 1], "uint8"]],
     _PARAMS + rf"more than {fmt.MAX_LEAF_ELEMENTS} elements"),
    ("batch_sizes", list(range(1, fmt.MAX_BATCH_SIZES + 1)),
     list(range(1, fmt.MAX_BATCH_SIZES + 2)), r"manifest.batch_sizes"),
    ("batch_sizes", [fmt.MAX_BATCH], [fmt.MAX_BATCH + 1], r"manifest.batch_sizes"),
    ("name", "n" * 64, "n" * 65, r"manifest.name"),
    ("team", "t" * 64, "t" * 65, r"manifest.team"),
    ("engine_version", "v" * 64, "v" * 65, r"manifest.engine_version"),
    ("created", "c" * 64, "c" * 65, r"manifest.created"),
    ("training", {"scenarios": ["s" * 64]}, {"scenarios": ["s" * 65]},
     r"manifest.training.scenarios"),
    ("training", {"maps": [999]}, {"maps": [1000]}, r"manifest.training.maps"),
]
# fmt: on


@pytest.mark.parametrize(("field", "at", "over", "message"), MANIFEST_EDGES,
                         ids=[f"{e[0]}-{k}" for k, e in enumerate(MANIFEST_EDGES)])  # fmt: skip
def test_manifest_limits(mix_files, field, at, over, message) -> None:
    base = read_manifest(mix_files["mix5"])
    for value, refused in ((at, False), (over, True)):
        m = {**base, field: value}
        m["members"] = dict.fromkeys(fmt.members_wanted(m), "0" * 64)  # as the file would list
        if refused:
            with pytest.raises(TournamentError, match=rf"^mix5.mbgs: {message}"):
                fmt.check_manifest(m, "mix5.mbgs")
        else:
            assert fmt.check_manifest(m, "mix5.mbgs")[field] == value


def test_a_programs_own_limit(mix_files, monkeypatch) -> None:
    with zipfile.ZipFile(mix_files["mix5"]) as zf:
        name, size = max(((i.filename, i.file_size) for i in zf.infolist()
                          if i.filename.endswith(".jaxexport")), key=lambda x: x[1])  # fmt: skip
    monkeypatch.setattr(fmt, "MAX_PROGRAM_BYTES", size)
    assert read_manifest(mix_files["mix5"])["name"] == "mix5"
    monkeypatch.setattr(fmt, "MAX_PROGRAM_BYTES", size - 1)
    _refused(mix_files["mix5"], f"{name}: declares {size} bytes, more than the limit {size - 1}")


def test_a_weights_own_limit_is_its_size_and_a_header(mix_files, system_zip, tmp_path) -> None:
    weight = np.float32(0.5)  # mix5's one weight: 4 bytes, and at most NPY_HEADER_BYTES of header
    for header, name in ((NPY_HEADER_BYTES, "at.mbgs"), (NPY_HEADER_BYTES + 1, "over.mbgs")):
        blob = npy_bytes(weight, header)
        path = _write(tmp_path, system_zip(mix_files["mix5"], {WEIGHT: blob}), name)
        if header == NPY_HEADER_BYTES:
            assert float(load_system(path).params[0]) == 0.5
        else:
            _refused(path, f"{WEIGHT}: declares {len(blob)} bytes, more than the limit "
                           f"{4 + NPY_HEADER_BYTES}", load_system)  # fmt: skip


def test_the_whole_files_unpacked_limit(mix_files, monkeypatch) -> None:
    with zipfile.ZipFile(mix_files["mix5"]) as zf:
        infos = zf.infolist()
    total = sum(i.file_size for i in infos)
    monkeypatch.setattr(zipread, "MAX_UNPACKED_BYTES", total)
    assert read_manifest(mix_files["mix5"])["name"] == "mix5"
    monkeypatch.setattr(zipread, "MAX_UNPACKED_BYTES", total - 1)
    _refused(mix_files["mix5"], f"'{infos[-1].filename}': declares {infos[-1].file_size} bytes, "
                                f"{total} with the members before it: more than the limit "
                                f"{total - 1} of a whole System file")  # fmt: skip


def test_the_compression_ratio_limit(mix_files, tmp_path) -> None:
    data = mix_files["mix5"].read_bytes()
    with zipfile.ZipFile(mix_files["mix5"]) as zf:
        stored = zf.getinfo("act-1.jaxexport").compress_size
    at = _write(tmp_path, patch_central(data, "act-1.jaxexport", size=MAX_RATIO * stored))
    _refused(at, rf"act-1.jaxexport: holds \d+ bytes, declares {MAX_RATIO * stored}")  # ratio: ok
    over = _write(tmp_path, patch_central(data, "act-1.jaxexport", size=MAX_RATIO * stored + 1))
    _refused(over, rf"'act-1.jaxexport': declares {MAX_RATIO * stored + 1} bytes in {stored} "
                   rf"stored bytes, a compression ratio above the limit {MAX_RATIO}:1")  # fmt: skip


# --- zip bombs ---------------------------------------------------------------------------------


def _deflated(head: bytes, zero_mib: int) -> bytes:
    """A raw DEFLATE stream of `head` and `zero_mib` MiB of zeros, built in milliseconds: after a
    full flush every MiB of zeros compresses to the same bytes."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    return first + block * zero_mib + c.flush()


def _bomb(mix_files, tmp_path, stream: bytes, declared: int, crc: int, edit=None):
    """mix5 whose weight member holds the DEFLATE `stream` and declares `declared` bytes."""
    members = dict(zip_members(mix_files["mix5"]))
    if edit is not None:
        manifest = json.loads(members["manifest.json"])
        edit(manifest)
        members["manifest.json"] = json.dumps(manifest).encode()
    members[WEIGHT] = stream  # stored as is, then declared deflated
    data = zip_bytes(list(members.items()), zipfile.ZIP_STORED)
    return _write(tmp_path, patch_central(data, WEIGHT, method=8, size=declared, crc=crc))


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


@pytest.mark.parametrize("read", [read_manifest, load_system])
def test_a_zip_bomb_of_declared_size_is_refused_before_reading(mix_files, tmp_path, read) -> None:
    """1.1 MB that declares a 1 GiB weight (a real stream of 1 GiB of zeros, ratio 1011:1)."""
    header = io.BytesIO()  # the weight's .npy header; its zeros follow in the stream
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (1 << 28,)}
    )
    path = _bomb(mix_files, tmp_path, _deflated(header.getvalue(), 1024), (1 << 30) + 128, 0,
                 lambda m: m.update(params=[[[1 << 28], "float32"]]))  # fmt: skip
    assert path.stat().st_size < 1_200_000
    before, start = _peak_rss(), time.perf_counter()
    _refused(path, rf"'{WEIGHT}': declares {(1 << 30) + 128} bytes, more than the limit "
                   rf"{MAX_UNPACKED_BYTES}", read)  # fmt: skip
    assert time.perf_counter() - start < 2
    assert _peak_rss() - before < 32 << 20


@pytest.mark.parametrize("read", [read_manifest, load_system])
def test_a_zip_bomb_of_undeclared_size_is_refused_at_its_declared_size(
    mix_files, tmp_path, read
) -> None:
    """8.5 MB whose weight declares its true 132 bytes (CRC and sha256 agree with them) while
    its stream goes on for 8 GiB of zeros: zipfile alone would cut it there and accept it."""
    weight = dict(zip_members(mix_files["mix5"]))[WEIGHT]
    path = _bomb(mix_files, tmp_path, _deflated(weight, 8192), len(weight), zlib.crc32(weight))
    assert path.stat().st_size < 9_000_000
    before, start = _peak_rss(), time.perf_counter()
    _refused(path, f"{WEIGHT}: holds more than the {len(weight)} bytes it declares", read)
    assert time.perf_counter() - start < 2
    assert _peak_rss() - before < 32 << 20
