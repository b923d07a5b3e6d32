"""Fuzz: damaged and hostile System files handed to `read_manifest` and `load_system`.

Every input is made from one real System file (mix5 of the season tests) from a fixed seed per
case, so a failure names its case and reproduces: byte flips, cuts and appended bytes anywhere;
a manifest replaced by a random JSON value; one manifest field set to a random JSON value; a
member renamed to a random (often path-like) name; a member's bytes replaced at random. Each must
end in exactly one of two ways: a `TournamentError`, or, when the damage left the file valid, the
original manifest (and, for a full load, a System with the original weights). No other exception
may escape.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from marl_bgs_tournament import TournamentError, load_system, read_manifest

pytestmark = pytest.mark.fuzz_family("System files")
Members = list[tuple[str, bytes]]


def _members(path: Path) -> Members:
    with zipfile.ZipFile(path) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist()]


def _zip(members: Members) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.choice(["null", "bool", "int", "float", "text", "list", "object"][: 7 - depth])
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 1, 16, 2**31, 2**63, -(2**70), rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, -0.0, 1e308, float("nan"), float("inf")])
    if kind == "text":
        return "".join(rng.choice("ab-_/.\\:é\x00 09") for _ in range(rng.randint(0, 12)))
    if kind == "list":
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {str(_json_value(rng, 3)): _json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _with_manifest(m: Members, manifest: Any) -> bytes:
    text = json.dumps(manifest).encode()
    return _zip([(n, text if n == "manifest.json" else d) for n, d in m])


# (bytes, the manifest the file holds if it is still valid: the original one unless edited)
Build = Callable[[random.Random, bytes, Members], tuple[bytes, dict[str, Any] | None]]
SAME: dict[str, Any] = {}  # "the original manifest"


def _flips(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] ^= rng.randint(1, 255)
    return bytes(out), SAME


def _cut(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    return data[: rng.randrange(len(data))], None


def _appended(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    return data + rng.randbytes(rng.randint(1, 300)), SAME


def _random_manifest(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    return _with_manifest(m, _json_value(rng)), None


def _one_field(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    manifest = json.loads(dict(m)["manifest.json"])
    key = rng.choice(sorted(manifest))
    manifest[key] = _json_value(rng, 1)
    return _with_manifest(m, manifest), manifest


def _renamed(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    name = "".join(rng.choice("ab./\\:_") for _ in range(rng.randint(1, 10)))
    return _zip([(name if i == k else n, d) for i, (n, d) in enumerate(m)]), None


def _replaced(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    body = rng.randbytes(rng.randint(0, 2000))
    return _zip([(n, body if i == k else d) for i, (n, d) in enumerate(m)]), None


FAMILIES: dict[str, tuple[Build, int]] = {
    "flip": (_flips, 40),
    "cut": (_cut, 15),
    "append": (_appended, 10),
    "random manifest": (_random_manifest, 20),
    "one manifest field": (_one_field, 40),
    "renamed member": (_renamed, 10),
    "replaced member": (_replaced, 15),
}
CASES = [(f, k) for f, (_, n) in FAMILIES.items() for k in range(n)]


@pytest.mark.parametrize(("family", "case"), CASES, ids=[f"{f}-{k}" for f, k in CASES])
def test_a_damaged_system_file_is_refused_or_read_exactly(
    mix_files, tmp_path, family, case, record_property
) -> None:
    original = mix_files["mix5"]
    rng = random.Random(f"{family}-{case}")
    data, holds = FAMILIES[family][0](rng, original.read_bytes(), _members(original))
    path = tmp_path / "entry.mbgs"
    path.write_bytes(data)
    want = read_manifest(original) if holds is SAME else holds
    try:
        got = read_manifest(path)
        loaded = load_system(path) if case % 4 == 0 else None  # deserializes the programs too
    except TournamentError as err:
        message = str(err)
        record_property("outcome", "error")
    else:
        message = None
    if message is not None:
        assert message, "an error without a message"
        return
    assert want is not None, f"{family}: a damaged file was accepted"
    assert got == want  # a valid edit (a name, the date, the declared training) reads as written
    if loaded is not None:
        assert np.asarray(loaded.params[0]) == pytest.approx(0.5)
        assert loaded.name == got["name"]
    record_property("outcome", "accepted")
