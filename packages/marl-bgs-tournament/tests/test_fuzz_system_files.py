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

import json
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from marl_bgs_eval.fuzzing import Members, json_value, zip_bytes, zip_members
from marl_bgs_tournament import TournamentError, load_system, read_manifest

pytestmark = pytest.mark.fuzz_family("System files")


def _with_manifest(m: Members, manifest: Any) -> bytes:
    text = json.dumps(manifest).encode()
    return zip_bytes([(n, text if n == "manifest.json" else d) for n, d in m])


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
    return _with_manifest(m, json_value(rng)), None


def _one_field(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    manifest = json.loads(dict(m)["manifest.json"])
    key = rng.choice(sorted(manifest))
    manifest[key] = json_value(rng, 1)
    return _with_manifest(m, manifest), manifest


def _renamed(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    name = "".join(rng.choice("ab./\\:_") for _ in range(rng.randint(1, 10)))
    return zip_bytes([(name if i == k else n, d) for i, (n, d) in enumerate(m)]), None


def _replaced(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    body = rng.randbytes(rng.randint(0, 2000))
    return zip_bytes([(n, body if i == k else d) for i, (n, d) in enumerate(m)]), None


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
    data, holds = FAMILIES[family][0](rng, original.read_bytes(), zip_members(original))
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
