"""Fuzz: damaged and hostile replay files handed to `load` (`marl_bgs_eval.replay_files`, the one
format of every mode): Team Deathmatch replays and single-team episode replays (Two-Bridge), as
written today, and the committed files of the legacy formats (tests/data) that still load.

Every input comes from one real file of its format (a Team Deathmatch early win, recorded from
the same evaluation as test_replays.py, so a session compiles it once; a short Two-Bridge
episode) and is generated from a fixed seed per case, so a
failure names its case and reproduces: random byte flips, cuts and appended bytes anywhere in the
zip; a header replaced by a random JSON value; one header field, or one entry of the array list,
set to a random JSON value; a member renamed to a random (often path-like) name. Each must end in
exactly one of two ways: an `EvalError` that names the file, or, when the damage left the file
valid, a `Replay` equal to what the file holds (the original, or the original with the edited
header field). No other exception may escape, and nothing may be misread silently. Episode
replays add a family that edits one array value and re-signs its checksum: only the engine's
replay (`verify`, run by `load`) can catch it, and it must.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

import marl_bgs
import marl_bgs_eval as ev
from marl_bgs_eval import array_zip, episode_replays
from marl_bgs_eval.fuzzing import Members, json_value, zip_bytes, zip_members
from marl_bgs_eval.tdm import replays as rp

pytestmark = pytest.mark.fuzz_family("replay files")

SETTINGS = {"maps": [0, 12], "games_per_map": 2, "seed": 5, "tick_limit": 40, "winning_score": 2}


@pytest.fixture(scope="module")
def original(kit, tmp_path_factory) -> tuple[rp.Replay, Path]:
    """One recorded game and its file, built once for the module."""
    games = ev.evaluate(kit.rush, kit.broken, batch_size=4, **SETTINGS)
    replay = rp.record(kit.rush, kit.broken, games.iloc[[0, 2, 3]], tick_limit=40)[0]
    return replay, rp.save(replay, tmp_path_factory.mktemp("fuzz") / "game.replay.zip")


EPISODE = {"variant": "V1_Combat", "tick_limit": 30}


@pytest.fixture(scope="module")
def episode_original(tmp_path_factory) -> tuple[rp.Replay, Path]:
    """One recorded Two-Bridge episode and its file, built once for the module."""
    policy = marl_bgs.random_policy(marl_bgs.make("two-bridge", **EPISODE).mode)
    replay = episode_replays.record(policy, jax.random.key(2), mode="two-bridge", settings=EPISODE)[
        0
    ]
    path = tmp_path_factory.mktemp("fuzz") / "game.episode.zip"
    return replay, episode_replays.save(replay, path)


def _header(members: Members) -> dict[str, Any]:
    return json.loads(dict(members)["header.json"])


def _put_header(members: Members, header: Any) -> bytes:
    text = json.dumps(header).encode()
    return zip_bytes([(n, text if n == "header.json" else d) for n, d in members])


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
    return _put_header(m, json_value(rng)), None


def _one_field(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    header = _header(m)
    header[rng.choice(sorted(header))] = json_value(rng, 1)
    kept = {k: v for k, v in header.items() if k != "arrays"}
    return _put_header(m, header), rp.Replay(header=kept, arrays=r.arrays)


def _one_array_entry(
    rng: random.Random, data: bytes, m: Members, r: rp.Replay
) -> tuple[bytes, Any]:
    header = _header(m)
    entry = header["arrays"][rng.choice(sorted(header["arrays"]))]
    entry[rng.choice(["shape", "dtype", "sha256", "extra"])] = json_value(rng, 1)
    return _put_header(m, header), r


def _renamed(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    k = rng.randrange(len(m))
    name = "".join(rng.choice("ab./\\:_") for _ in range(rng.randint(1, 10)))
    return zip_bytes([(name if i == k else n, d) for i, (n, d) in enumerate(m)]), r


def _one_value(rng: random.Random, data: bytes, m: Members, r: rp.Replay) -> tuple[bytes, Any]:
    """One element of one array changed, the checksum recomputed: a valid container."""
    header = _header(m)
    name = rng.choice(sorted(header["arrays"]))
    array = r.arrays[name].copy()
    if array.size == 0:
        return data, r
    flat = array.reshape(-1)
    i = rng.randrange(flat.size)
    flat[i] = (not flat[i]) if array.dtype == bool else flat[i] + rng.choice([-3, -1, 1, 7])
    blob = io.BytesIO()
    np.save(blob, array, allow_pickle=False)
    header["arrays"][name]["sha256"] = array_zip.checksum(blob.getvalue())
    members = [(n, blob.getvalue() if n == f"{name}.npy" else d) for n, d in m]
    return _put_header(members, header), None


FAMILIES: dict[str, tuple[Build, int]] = {
    "flip": (_flips, 60),
    "cut": (_cut, 25),
    "append": (_appended, 10),
    "random header": (_random_header, 30),
    "one header field": (_one_field, 40),
    "one array entry": (_one_array_entry, 20),
    "renamed member": (_renamed, 15),
}
EPISODE_FAMILIES: dict[str, tuple[Build, int]] = {**FAMILIES, "one array value": (_one_value, 40)}
CASES = [(family, seed) for family, (_, count) in FAMILIES.items() for seed in range(count)]
EPISODE_CASES = [
    pytest.param(family, seed, id=f"{family}-{seed}",
                 marks=pytest.mark.fuzz_family("episode replay files"))
    for family, (_, count) in EPISODE_FAMILIES.items() for seed in range(count)
]  # fmt: skip


LEGACY_FILES = ("tdm-v1.replay.zip", "two-bridge-v1.episode.zip")
LEGACY_FAMILIES = {
    k: (FAMILIES[k][0], 6) for k in ("flip", "cut", "append", "one array entry", "renamed member")
}
LEGACY_CASES = [
    pytest.param(name, family, seed, id=f"{name}-{family}-{seed}",
                 marks=pytest.mark.fuzz_family("legacy replay files"))
    for name in LEGACY_FILES for family, (_, count) in LEGACY_FAMILIES.items()
    for seed in range(count)
]  # fmt: skip
_legacy: dict[str, tuple[rp.Replay, Path]] = {}


@pytest.mark.default_compile  # loading verifies games a default build recorded
@pytest.mark.parametrize(("name", "family", "seed"), LEGACY_CASES)
def test_legacy_replay_files(tmp_path, record_property, name: str, family: str, seed: int) -> None:
    if name not in _legacy:  # each file read once per session
        path = Path(__file__).parent / "data" / name
        _legacy[name] = rp.load(path), path
    _fuzz(_legacy[name], rp.load, LEGACY_FAMILIES, tmp_path, record_property, family, seed)


@pytest.mark.parametrize(("family", "seed"), CASES, ids=[f"{f}-{s}" for f, s in CASES])
def test_replay_files(original, tmp_path, record_property, family: str, seed: int) -> None:
    _fuzz(original, rp.load, FAMILIES, tmp_path, record_property, family, seed)


@pytest.mark.parametrize(("family", "seed"), EPISODE_CASES)
def test_episode_replay_files(
    episode_original, tmp_path, record_property, family: str, seed: int
) -> None:
    _fuzz(episode_original, episode_replays.load, EPISODE_FAMILIES, tmp_path, record_property,
          family, seed)  # fmt: skip


def _fuzz(
    original: tuple[rp.Replay, Path],
    load: Callable[[Path], rp.Replay],
    families: dict[str, tuple[Build, int]],
    tmp_path: Path,
    record_property: Callable[[str, str], None],
    family: str,
    seed: int,
) -> None:
    replay, path = original
    build = families[family][0]
    data, holds = build(
        random.Random(f"{family}-{seed}"), path.read_bytes(), zip_members(path), replay
    )
    hostile = tmp_path / "fuzzed.replay.zip"
    hostile.write_bytes(data)
    loaded, message = None, ""
    try:
        loaded = load(hostile)
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
    assert len(EPISODE_CASES) >= 200
    assert len(LEGACY_CASES) >= 60
    assert {f for f, _ in CASES} == set(FAMILIES)
