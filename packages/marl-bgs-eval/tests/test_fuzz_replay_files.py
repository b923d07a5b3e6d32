"""Fuzz: damaged and hostile replay files handed to `load`.

Every input comes from one real replay file (an early win, recorded from the same evaluation as
test_replays.py, so a session compiles it once) and is generated from a fixed seed per case, so a
failure names its case and reproduces: random byte flips, cuts and appended bytes anywhere in the
zip; a header replaced by a random JSON value; one header field, or one entry of the array list,
set to a random JSON value; a member renamed to a random (often path-like) name. Each must end in
exactly one of two ways: an `EvalError` that names the file, or, when the damage left the file
valid, a `Replay` equal to what the file holds (the original, or the original with the edited
header field). No other exception may escape, and nothing may be misread silently.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import marl_bgs_eval as ev
from marl_bgs_eval import replays as rp

pytestmark = pytest.mark.fuzz_family("replay files")

SETTINGS = {"maps": [0, 12], "games_per_map": 2, "seed": 5, "tick_limit": 40, "winning_score": 2}
Members = list[tuple[str, bytes]]


@pytest.fixture(scope="module")
def original(kit, tmp_path_factory) -> tuple[rp.Replay, Path]:
    """One recorded game and its file, built once for the module."""
    games = ev.evaluate(kit.rush, kit.broken, batch_size=4, **SETTINGS)
    replay = rp.record(kit.rush, kit.broken, games.iloc[[0, 2, 3]], tick_limit=40)[0]
    return replay, rp.save(replay, tmp_path_factory.mktemp("fuzz") / "game.replay.zip")


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
    """A random JSON value: scalars of every kind (huge, negative, NaN, odd text), nested lists
    and objects."""
    kind = rng.choice(["null", "bool", "int", "float", "text", "list", "object"][: 7 - depth])
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 1, 40, 2**31, 2**63, -(2**70), rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, -0.0, 1e308, float("nan"), float("inf"), rng.uniform(-50, 50)])
    if kind == "text":
        return _text(rng)
    if kind == "list":
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {_text(rng): _json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _text(rng: random.Random) -> str:
    return "".join(rng.choice("abMWHRP-_/.\\:é\x00 0123456789") for _ in range(rng.randint(0, 12)))


def _header(members: Members) -> dict[str, Any]:
    return json.loads(dict(members)["header.json"])


def _put_header(members: Members, header: Any) -> bytes:
    text = json.dumps(header).encode()
    return _zip([(n, text if n == "header.json" else d) for n, d in members])


# --- the families: (file bytes, the replay the file holds if it is still valid) -------------

Build = Callable[[random.Random, bytes, Members, rp.Replay], tuple[bytes, rp.Replay | None]]


def _flips(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] ^= rng.randint(1, 255)
    return bytes(out), r


def _cut(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    return data[: rng.randrange(len(data))], r


def _appended(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    return data + rng.randbytes(rng.randint(1, 300)), r


def _random_header(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    return _put_header(m, _json_value(rng)), None


def _one_field(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    header = _header(m)
    header[rng.choice(sorted(header))] = _json_value(rng, 1)
    kept = {k: v for k, v in header.items() if k != "arrays"}
    return _put_header(m, header), rp.Replay(header=kept, arrays=r.arrays)


def _one_array_entry(
    rng: random.Random, data: bytes, m: Members, r: rp.Replay
) -> tuple[bytes, Any]:
    header = _header(m)
    entry = header["arrays"][rng.choice(sorted(header["arrays"]))]
    entry[rng.choice(["shape", "dtype", "sha256", "extra"])] = _json_value(rng, 1)
    return _put_header(m, header), r


def _renamed(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    name = "".join(rng.choice("ab./\\:_") for _ in range(rng.randint(1, 10)))
    return _zip([(name if i == k else n, d) for i, (n, d) in enumerate(m)]), r


FAMILIES: dict[str, tuple[Build, int]] = {
    "flip": (_flips, 60),
    "cut": (_cut, 25),
    "append": (_appended, 10),
    "random header": (_random_header, 30),
    "one header field": (_one_field, 40),
    "one array entry": (_one_array_entry, 20),
    "renamed member": (_renamed, 15),
}
CASES = [(family, seed) for family, (_, count) in FAMILIES.items() for seed in range(count)]


@pytest.mark.parametrize(("family", "seed"), CASES, ids=[f"{f}-{s}" for f, s in CASES])
def test_replay_files(original, tmp_path, record_property, family: str, seed: int) -> None:
    replay, path = original
    build = FAMILIES[family][0]
    data, holds = build(
        random.Random(f"{family}-{seed}"), path.read_bytes(), _members(path), replay
    )
    hostile = tmp_path / "fuzzed.replay.zip"
    hostile.write_bytes(data)
    loaded, message = None, ""
    try:
        loaded = rp.load(hostile)
    except ev.EvalError as err:
        message = str(err)
    record_property("outcome", "error" if message else "accepted")
    if message:
        assert message.startswith("fuzzed.replay.zip: "), message
    else:
        assert holds is not None, f"{family}-{seed}: a damaged file loaded"
        assert loaded == holds


def test_every_family_is_tried() -> None:
    assert len(CASES) >= 150
    assert {f for f, _ in CASES} == set(FAMILIES)
