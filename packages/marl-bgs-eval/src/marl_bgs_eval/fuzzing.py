"""Hostile inputs for fuzz tests of file readers (replay files, System files, your own formats).

Every value comes from a `random.Random` the caller seeds per case, so a failing case names its
seed and reproduces.
"""

from __future__ import annotations

import io
import random
import struct
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

Members = list[tuple[str, bytes]]
# Fields of a zip's central directory entry (what `zipfile` trusts): offset and struct format
CENTRAL_FIELDS = {"flags": (8, "<H"), "method": (10, "<H"), "crc": (16, "<I"),
                  "stored_size": (20, "<I"), "size": (24, "<I")}  # fmt: skip
ODD_CHARACTERS = "abMWHRP-_/.\\:é\x00 0123456789"


def odd_text(rng: random.Random) -> str:
    """0-12 characters, paths, separators, NUL and non-ASCII among them."""
    return "".join(rng.choice(ODD_CHARACTERS) for _ in range(rng.randint(0, 12)))


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    """`data` with 1-4 random bytes XORed with a random non-zero value."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] ^= rng.randint(1, 255)
    return bytes(out)


def json_value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value: scalars of every kind (huge, negative, NaN, odd text), nested lists
    and objects (deeper calls pick from fewer kinds, so values stay small)."""
    kind = rng.choice(["null", "bool", "int", "float", "text", "list", "object"][: 7 - depth])
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 1, 16, 40, 2**31, 2**63, -(2**70), rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, -0.0, 1e308, float("nan"), float("inf"), rng.uniform(-50, 50)])
    if kind == "text":
        return odd_text(rng)
    if kind == "list":
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {odd_text(rng): json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def zip_members(path: str | Path) -> Members:
    """A zip file's members, in order, as (name, bytes)."""
    with zipfile.ZipFile(path) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist()]


def zip_bytes(members: Members, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip of `members` (repeated names allowed: they are among the hostile inputs)."""
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w", compression=method) as zf:
        warnings.simplefilter("ignore")
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def patch_central(data: bytes, name: str, **fields: int) -> bytes:
    """`data` (a zip) with fields of member `name`'s central directory entry replaced (see
    `CENTRAL_FIELDS`: flags, method, crc, stored_size, size): a zip whose directory lies."""
    out, pos = bytearray(data), data.find(b"PK\x01\x02")
    while pos >= 0:
        length = struct.unpack_from("<H", data, pos + 28)[0]
        if data[pos + 46 : pos + 46 + length] == name.encode():
            for field, value in fields.items():
                offset, fmt = CENTRAL_FIELDS[field]
                struct.pack_into(fmt, out, pos + offset, value)
            return bytes(out)
        pos = data.find(b"PK\x01\x02", pos + 46)
    raise ValueError(f"no member {name!r} in the zip's central directory")


def npy_bytes(array: np.ndarray, header: int | None = None) -> bytes:
    """`array` as .npy bytes (version 1.0); with `header`, its header (magic, length and text)
    padded with spaces to exactly that many bytes, as a reader must still take it."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False, version=(1, 0))
    data = buf.getvalue()
    if header is None:
        return data
    text = data[10 : 10 + int.from_bytes(data[8:10], "little")].rstrip()
    text += b" " * (header - 10 - len(text) - 1) + b"\n"
    return data[:8] + len(text).to_bytes(2, "little") + text + np.asarray(array).tobytes()
