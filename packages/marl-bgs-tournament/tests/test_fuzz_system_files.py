"""Fuzz: damaged and hostile System files handed to `read_manifest` and `load_system`.

Every input is made from one real System file (mix5 of the season tests) from a fixed seed per
case, so a failure names its case and reproduces: byte flips, cuts and appended bytes anywhere;
a manifest replaced by a random JSON value; one manifest field set to a random JSON value; the
mode set to another mode, an alias, another version or a near miss; a member renamed to a random
(often path-like) name; a member's bytes replaced at random; a member's declared size set to a
lie (a zip bomb's way); a member whose stream goes on past its declared size, CRC and hash
agreeing with the declared bytes; a program whose metadata lies (its shapes, module, grouping or
kept arguments; its name changed is valid) with every hash agreeing. Each must end in exactly one
of two ways: a `TournamentError`, or, when the damage left the file valid, the original manifest
(and, for a full load, a System with the original weights). No other exception may escape.
"""

from __future__ import annotations

import dataclasses
import io
import json
import random
import zipfile
import zlib
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from jax import export
from jax.core import ShapedArray

from marl_bgs_eval.fuzzing import Members, json_value, patch_central, zip_bytes, zip_members
from marl_bgs_eval.safe_zip import MAX_RATIO
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


MODE_VALUES = ("duel-v1", "two-bridge-v1", "tdm", "", "tdm-v2", "tdm-v1", "../tdm-v2", "TDM-v2",
               "two-bridge", "tdm-v3", "tdm-v2 ")  # fmt: skip


def _mode(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    """The manifest's mode set to another mode's id, an alias, another version, a near miss or
    a random JSON value: only the mode the file was exported for (tdm-v2) reads."""
    manifest = json.loads(dict(m)["manifest.json"])
    k = rng.randrange(len(MODE_VALUES) + 1)
    manifest["mode"] = MODE_VALUES[k] if k < len(MODE_VALUES) else json_value(rng, 1)
    return _with_manifest(m, manifest), SAME if manifest["mode"] == "tdm-v2" else None


def _renamed(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    name = "".join(rng.choice("ab./\\:_") for _ in range(rng.randint(1, 10)))
    return zip_bytes([(name if i == k else n, d) for i, (n, d) in enumerate(m)]), None


def _replaced(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    body = rng.randbytes(rng.randint(0, 2000))
    return zip_bytes([(n, body if i == k else d) for i, (n, d) in enumerate(m)]), None


def _declared(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = rng.choice(zf.infolist())
    true, stored = info.file_size, info.compress_size
    size = rng.choice([true - 1, true + 1, 2 * true + 7, 2**31, 2**32 - 1, MAX_RATIO * stored,
                       MAX_RATIO * stored + 1])  # fmt: skip
    return patch_central(data, info.filename, size=max(size, 0)), None


def _past_its_size(rng: random.Random, data: bytes, m: Members) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    name, body = m[k]
    extra = rng.choice([bytes(rng.randint(1, 1 << 20)), rng.randbytes(rng.randint(1, 300))])
    longer = zip_bytes([(n, d + extra if i == k else d) for i, (n, d) in enumerate(m)])
    return patch_central(longer, name, size=len(body), crc=zlib.crc32(body)), None


FAMILIES: dict[str, tuple[Build, int]] = {
    "flip": (_flips, 40),
    "cut": (_cut, 15),
    "append": (_appended, 10),
    "random manifest": (_random_manifest, 20),
    "one manifest field": (_one_field, 40),
    "mode": (_mode, 12),
    "renamed member": (_renamed, 10),
    "replaced member": (_replaced, 15),
    "declared size": (_declared, 14),
    "stream past its size": (_past_its_size, 10),
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


# --- programs whose metadata lies, every hash agreeing -------------------------------------------

PROGRAMS = ("act-1.jaxexport", "init-1.jaxexport", "act-16.jaxexport", "init-16.jaxexport")


def _lie(rng: random.Random, programs: dict[str, export.Exported], name: str) -> tuple[Any, bool]:
    """A copy of program `name` with one part of its metadata changed; whether it stays valid."""
    ex = programs[name]
    kind = rng.choice(["avals", "module", "in_tree", "out_tree", "kept", "fun_name"])
    if kind == "avals":
        field = rng.choice(["in_avals", "out_avals"])
        avals = list(getattr(ex, field))
        if not avals:
            return dataclasses.replace(
                ex, **{field: (jax.core.ShapedArray((1,), np.int32),)}
            ), False
        k = rng.randrange(len(avals))
        shape = list(avals[k].shape) or [1]
        shape[rng.randrange(len(shape))] += rng.choice([-1, 1, 7])
        avals[k] = ShapedArray(tuple(max(d, 0) for d in shape), avals[k].dtype)
        return dataclasses.replace(ex, **{field: tuple(avals)}), False
    if kind == "module":  # init-1's and init-16's are the same when there is no memory
        module = programs[rng.choice([p for p in PROGRAMS if p != name])].mlir_module_serialized
        same = module == ex.mlir_module_serialized
        return dataclasses.replace(ex, mlir_module_serialized=module), same
    if kind in ("in_tree", "out_tree"):
        leaves = getattr(ex, kind).num_leaves
        cut = rng.randint(0, leaves)
        tree = jax.tree.structure(([0] * cut, [0] * (leaves - cut)))
        return dataclasses.replace(ex, **{kind: tree}), False
    if kind == "kept":
        kept = list(ex.module_kept_var_idx)
        kept = kept[1:] if kept and rng.random() < 0.5 else [*kept, len(ex.in_avals) + 3]
        return dataclasses.replace(ex, module_kept_var_idx=tuple(kept)), False
    return dataclasses.replace(ex, fun_name=f"renamed_{rng.randint(0, 99)}"), True


@pytest.fixture(scope="module")
def mix5_programs(mix_files) -> dict[str, export.Exported]:
    return {n: export.deserialize(bytearray(d)) for n, d in zip_members(mix_files["mix5"])
            if n in PROGRAMS}  # fmt: skip


@pytest.mark.parametrize("case", range(16), ids=[f"lying program-{k}" for k in range(16)])
def test_a_program_whose_metadata_lies_is_refused_at_load(
    mix_files, mix5_programs, system_zip, tmp_path, case, record_property
) -> None:
    rng = random.Random(f"lying program-{case}")
    name = rng.choice(PROGRAMS)
    ex, valid = _lie(rng, mix5_programs, name)
    try:
        blob = bytes(ex.serialize())
    except Exception:  # metadata the serializer itself refuses: nothing to hand the loader
        blob = rng.randbytes(64)
        valid = False
    path = tmp_path / "entry.mbgs"
    path.write_bytes(system_zip(mix_files["mix5"], {name: blob}))
    assert read_manifest(path)["name"] == "mix5"  # every hash agrees: only loading can tell
    try:
        loaded = load_system(path)
    except TournamentError as err:
        message = str(err)
    else:
        message = None
    if message is not None:
        assert message.startswith(f"entry.mbgs: {name}: "), message
        assert not valid, f"a valid change was refused: {message}"
        record_property("outcome", "error")
        return
    assert valid, f"{name}: a program whose metadata lies was loaded"
    assert np.asarray(loaded.params[0]) == pytest.approx(0.5)
    record_property("outcome", "accepted")
