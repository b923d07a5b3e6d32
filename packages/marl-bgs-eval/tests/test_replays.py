"""Replays: recording never changes a game, files round-trip exactly and refuse hostile input,
the engine reproduces every recorded state, and a point of view holds only what an agent saw.

One evaluation (eastward vs broken: 4 games, first to 2 points, draw at tick 40) and one
recording of three of its games (an early win and a spawn-swapped pair of draws) serve every
test, so the module compiles the play loop, the recorder, the verifier and the views once each.
"""

from __future__ import annotations

import builtins
import dataclasses
import io
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jax
import numpy as np
import pytest

import marl_bgs
import marl_bgs_eval as ev
from marl_bgs.tdm.maps import CUSTOM_MAP_ID
from marl_bgs.tdm.perception import perceive, refresh_sight_lines
from marl_bgs_eval import array_zip
from marl_bgs_eval import fingerprint as fp
from marl_bgs_eval.fuzzing import patch_central, zip_members
from marl_bgs_eval.fuzzing import zip_bytes as _zip
from marl_bgs_eval.tdm import replay as tr
from marl_bgs_eval.tdm import replays as rp

SETTINGS = {"maps": [0, 12], "games_per_map": 2, "seed": 5, "tick_limit": 40, "winning_score": 2}
PICKED = [0, 2, 3]


@pytest.fixture(scope="module")
def recorded(kit) -> SimpleNamespace:
    """The evaluation, the picked rows and their replays (recorded by registered name)."""
    games = ev.evaluate(kit.rush, kit.broken, batch_size=4, **SETTINGS)
    rows = games.iloc[PICKED]
    replays = rp.record("eastward", kit.broken, rows, tick_limit=40)
    return SimpleNamespace(games=games, rows=rows, replays=replays, kit=kit)


@pytest.fixture(scope="module")
def valid_file(recorded, tmp_path_factory) -> Path:
    """The first replay (the early win), saved once."""
    return rp.save(recorded.replays[0], tmp_path_factory.mktemp("replay") / "game.replay.zip")


def _leaves_equal(a: Any, b: Any) -> bool:
    pairs = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    return jax.tree.structure(a) == jax.tree.structure(b) and all(
        np.asarray(x).dtype == np.asarray(y).dtype and np.array_equal(x, y) for x, y in pairs
    )


# --- recording --------------------------------------------------------------------------------


def test_recording_never_changes_a_game(recorded) -> None:
    rows = recorded.rows.to_dict("records")
    assert [r["ticks"] for r in rows] == [22, 40, 40]  # an early win, and two draws
    for replay, row in zip(recorded.replays, rows, strict=True):
        a, n = replay.arrays, row["ticks"]
        assert replay.ticks == n
        assert a["state.tick"].tolist() == list(range(n + 1))
        assert a["state.score"][-1].tolist() == [row["points_a"], row["points_b"]]
        assert tr.RESULT_OF_OUTCOME[int(a["state.outcome"][-1])] == row["result"]
        assert (a["state.outcome"][:-1] == 0).all()
        assert a["actions"].shape == (n, 10, 3)
        assert a["facts.died"].shape == (n, 10)
        assert a["masks.pair"].shape == (n, 10, 11, 2)
        for col in ("game", "seed", "seed_number", "map", "map_name", "map_hash", "a_spawn",
                    "system_a", "system_b", "roster_a", "roster_b", "result", "points_a",
                    "points_b", "ticks", "tick_limit", "winning_score"):  # fmt: skip
            assert replay.header[col] == row[col], col
        assert replay.header["format"] == "marl-bgs-replay-v2"
        assert replay.header["engine"] == marl_bgs.__version__
        assert replay.header["mode"] == "tdm-v2"
        assert replay.header["leaves_a"] == ["eastward"]
        assert replay.header["shared_sight"] is True
        assert int(a["state.map_id"]) == row["map"]
        assert bool(a["state.swap"]) == (row["a_spawn"] == "right")


def test_recorded_actions_repairs_and_leaves(recorded) -> None:
    """Chosen actions as the Systems gave them; accepted ones and the flags from the facts."""
    a = recorded.replays[1].arrays
    assert (a["actions"][:, 5:] == 99).all()  # "broken" asks for an out-of-range move
    assert (a["facts.requested"] == a["actions"]).all()
    assert a["facts.move_rejected"][:, 5:].all()
    assert a["facts.combat_rejected"][:, 5:].all()
    assert (a["facts.accepted"][:, 5:] == 0).all()  # repaired to (stay, none, no Ultimate)
    assert not a["facts.move_rejected"][:, :5].any()  # eastward only moves when it may
    assert (a["who"][:, :5] == 0).all()
    assert (a["who"][:, 5:] == 0).all()


def test_the_spawn_swapped_pair_are_mirror_images(recorded) -> None:
    """Games 2 and 3 share a seed number and swap ends: both Systems act in their own frame,
    so the pair replays the same game mirrored (same actions, same scores, every tick)."""
    one, two = (r.arrays for r in recorded.replays[1:])
    assert recorded.replays[1].header["seed_number"] == recorded.replays[2].header["seed_number"]
    assert (one["actions"] == two["actions"]).all()
    assert (one["state.score"] == two["state.score"]).all()
    assert not np.array_equal(one["state.units.pos"], two["state.units.pos"])


def test_the_trajectory_fingerprint_folds_every_recorded_tick(recorded) -> None:
    """The results column `trajectory` is `fingerprint.fold` over the recorded ticks (accepted
    actions, deaths, score): the play loop hashes each game whole, from its own start. The
    mirror-image pair shares it; the win differs (slots reused: test_play's batch sizes)."""
    fold = jax.jit(fp.fold)
    rows = recorded.rows.to_dict("records")
    for replay, row in zip(recorded.replays, rows, strict=True):
        a, trace = replay.arrays, fp.start(1)
        for t in range(replay.ticks):
            trace = fold(trace, a["facts.accepted"][t : t + 1], a["facts.died"][t : t + 1],
                         a["state.score"][t + 1 : t + 2])  # fmt: skip
        assert fp.text(trace) == [row["trajectory"]]
    assert rows[1]["trajectory"] == rows[2]["trajectory"] != rows[0]["trajectory"]
    assert ev.distinct_games(recorded.games) == 2  # games 0 and 1 are mirror images too


def test_record_refuses_what_it_cannot_rebuild(recorded) -> None:
    rows, rush, broken = recorded.rows, recorded.kit.rush, recorded.kit.broken
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: rp.record("idle", broken, rows), r"^games: row 0 \(game 0\) has system_a "
         r"'eastward', but team_a is 'idle'$"),
        (lambda: rp.record(rush, broken, rows, weights=[1.0]), r"^weights: not a setting "
         r"of record; allowed \['shared_sight'"),
        (lambda: rp.record(rush, broken, rows, spawn_swap="up"), r"^spawn_swap: expected one of"),
        (lambda: rp.record(rush, broken, rows, tick_limit=50), r"^tick_limit: 50 differs"),
        (lambda: rp.record(rush, broken, rows, message_dim=4), r"^message_dim: evaluation"),
        (lambda: rp.record(rush, broken, rows.assign(map_hash="0" * 16)), r"map_hash does not "
         r"match the shipped map"),
        (lambda: rp.record(rush, broken, rows.assign(map=CUSTOM_MAP_ID, map_name="Mine")),
         r"^games: row 0 \(game 0\): custom map 'Mine' \(map_hash [0-9a-f]{16}\) is not among"),
        (lambda: rp.record(rush, broken, rows, red_zone_depth=0.0), r"^games: row 0 \(game 0\) "
         r"ended \{'result': .*\} when recorded, but its row says .*red_zone_depth"),
        (lambda: rp.record(rush, broken, "games.csv"), r"^games: expected a pandas DataFrame"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(ev.EvalError, match=message):
            call()


def test_a_custom_map_is_found_by_content(recorded) -> None:
    """A row of a custom map (recorded as id -1) plays the given map of the same content."""
    mine = dataclasses.replace(marl_bgs.maps.load(0), split="custom", name="Mine")
    rows = recorded.rows.copy()
    rows.loc[rows.index[0], ["map", "map_name"]] = [CUSTOM_MAP_ID, "Mine"]  # game 0: map 0
    kit = recorded.kit  # spawn_swap as evaluate takes it: it changes no scheduled game
    replays = rp.record(kit.rush, kit.broken, rows, maps=[mine], spawn_swap="none")
    assert replays[0].header["map"] == CUSTOM_MAP_ID
    assert replays[0].header["map_name"] == "Mine"
    assert int(replays[0].arrays["state.map_id"]) == CUSTOM_MAP_ID
    assert [r.header["map"] for r in replays[1:]] == [12, 12]
    for new, old in zip(replays, recorded.replays, strict=True):
        assert np.array_equal(new.arrays["actions"], old.arrays["actions"])
        assert new.header["ticks"] == old.header["ticks"]


# --- files ------------------------------------------------------------------------------------


def test_files_round_trip_exactly(recorded, tmp_path) -> None:
    for k, replay in enumerate(recorded.replays):
        path = rp.save(replay, tmp_path / f"{k}.replay.zip")
        back = rp.load(path)
        assert back == replay
        assert back.header == replay.header
        for name, array in replay.arrays.items():
            assert back.arrays[name].dtype == array.dtype, name
            assert np.array_equal(back.arrays[name], array), name
        assert rp.save(replay, tmp_path / "again.zip").read_bytes() == path.read_bytes()
    with zipfile.ZipFile(tmp_path / "0.replay.zip") as zf:
        names = zf.namelist()
        assert names[0] == "header.json"
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
        manifest = json.loads(zf.read("header.json"))["arrays"]
    assert sorted(names[1:]) == sorted(f"{k}.npy" for k in recorded.replays[0].arrays)
    assert manifest["actions"]["shape"] == [22, 10, 3]
    assert manifest["actions"]["dtype"] == "<i4"
    assert re.fullmatch(r"[0-9a-f]{64}", manifest["state.free"]["sha256"])
    assert manifest["state.free"]["shape"] == [81, 41]  # fixed for a game: stored once


def test_save_refuses_a_bad_replay_and_writes_nothing(recorded, tmp_path) -> None:
    good = recorded.replays[0]
    broken = {**good.arrays, "actions": good.arrays["actions"].astype(np.int64)}
    cases = [
        (good.arrays, {**good.header, "points_a": 7}, r"header.points_a is 7, the arrays hold 2"),
        (broken, good.header, r"array actions: expected \(22, 10, 3\) int32, got"),
        ({k: v for k, v in good.arrays.items() if k != "who"}, good.header, r"missing .*'who'"),
        (good.arrays, {**good.header, "seed": "5"}, r"header.seed: expected an integer"),
    ]
    for arrays, header, message in cases:
        with pytest.raises(ev.EvalError, match=message):
            rp.save(rp.Replay(header=header, arrays=arrays), tmp_path / "bad.zip")
    with pytest.raises(ev.EvalError, match=r"^replay: expected a Replay, got dict"):
        rp.save({"header": {}}, tmp_path / "bad.zip")  # type: ignore[arg-type]
    with pytest.raises(ev.EvalError, match=r"^path: folder '.*nowhere' does not exist"):
        rp.save(good, tmp_path / "nowhere" / "x.zip")
    assert list(tmp_path.iterdir()) == []


def _header_of(members: list[tuple[str, bytes]]) -> dict[str, Any]:
    return json.loads(dict(members)["header.json"])


def _with_header(members: list[tuple[str, bytes]], header: Any) -> list[tuple[str, bytes]]:
    text = header if isinstance(header, str | bytes) else json.dumps(header)
    data = text.encode() if isinstance(text, str) else text
    return [(n, data if n == "header.json" else d) for n, d in members]


def _edit_header(**changes: Any) -> Callable[[list[tuple[str, bytes]]], bytes]:
    def build(members: list[tuple[str, bytes]]) -> bytes:
        header = _header_of(members)
        for k, v in changes.items():
            if v is _DROP:
                del header[k]
            else:
                header[k] = v
        return _zip(_with_header(members, header))

    return build


_DROP = object()


def _npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def _replace_array(name: str, data: Callable[[np.ndarray], bytes], sign: bool = True) -> Callable:
    """Put other `.npy` bytes in for array `name` (with a matching checksum when `sign`)."""

    def build(members: list[tuple[str, bytes]]) -> bytes:
        old = np.load(io.BytesIO(dict(members)[f"{name}.npy"]))
        blob = data(old)
        header = _header_of(members)
        if sign:
            header["arrays"][name]["sha256"] = array_zip.checksum(blob)
        members = [(n, blob if n == f"{name}.npy" else d) for n, d in members]
        return _zip(_with_header(members, header))

    return build


class _Exploit:
    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, ("import builtins; builtins.REPLAY_PWNED = True",))


def _renamed(old: str, new: str) -> Callable[[list[tuple[str, bytes]]], bytes]:
    return lambda m: _zip([(new if n == old else n, d) for n, d in m])


def _bomb(members: list[tuple[str, bytes]]) -> bytes:
    """actions.npy replaced by 40 MB of zeros (40 kB compressed)."""
    return _zip([(n, bytes(40 << 20) if n == "actions.npy" else d) for n, d in members])


HOSTILE: list[tuple[str, Callable[[list[tuple[str, bytes]]], bytes], str]] = [
    ("not a zip", lambda m: b"hello, I am not a zip", r"not a readable replay zip \(BadZipFile"),
    ("empty file", lambda m: b"", r"not a readable replay zip"),
    ("truncated", lambda m: _zip(m)[: len(_zip(m)) // 2], r"not a readable replay zip"),
    ("no header", lambda m: _zip(m[1:]), r"no header.json \(not a replay file\?\)"),
    (
        "header not JSON",
        lambda m: _zip(_with_header(m, "{'format': 1")),
        r"header.json is not JSON",
    ),
    (
        "header NaN",
        lambda m: _zip(_with_header(m, '{"format": NaN}')),
        r"header.json is not JSON",
    ),
    ("header not UTF-8", lambda m: _zip(_with_header(m, b"\xff\xfe{}")), r"is not JSON"),
    (
        "header a list",
        lambda m: _zip(_with_header(m, "[1, 2]")),
        r"expected a JSON object, got list",
    ),
    ("header deeply nested", lambda m: _zip(_with_header(m, "[" * 100_000)), r"is not JSON"),
    (
        "format missing",
        _edit_header(format=_DROP),
        r"format is None, expected 'marl-bgs-replay-v2'",
    ),
    (
        "format v3",
        _edit_header(format="marl-bgs-replay-v3"),
        r"format 'marl-bgs-replay-v3'; this version reads 'marl-bgs-replay-v2' and 'marl-bgs-repl",
    ),
    (
        "another mode's legacy format",
        _edit_header(format="marl-bgs-episode-replay-v1"),
        r"format 'marl-bgs-episode-replay-v1'; this version reads 'marl-bgs-replay-v2' and",
    ),
    ("mode tdm-v1", _edit_header(mode="tdm-v1"), r"header.mode: recorded in 'tdm-v1', this engine"),
    ("field missing", _edit_header(seed=_DROP), r"missing field\(s\) \['seed'\]"),
    ("field unknown", _edit_header(cheat=1), r"unknown field\(s\) \['cheat'\]"),
    ("seed as text", _edit_header(seed="5"), r"header.seed: expected an integer in \[0, "),
    ("ticks a bool", _edit_header(ticks=True), r"header.ticks: expected an integer"),
    ("bad roster", _edit_header(roster_a="MWXYZ"), r"header.roster_a: expected \[MWHRP\]"),
    ("bad spawn", _edit_header(a_spawn="top"), r"header.a_spawn: expected one of \['left', 'r"),
    ("sight as 1", _edit_header(shared_sight=1), r"header.shared_sight: expected true or false"),
    ("leaves empty", _edit_header(leaves_b=[]), r"header.leaves_b: expected a list of 1-1000"),
    ("lying points", _edit_header(points_a=5), r"header.points_a is 5, the arrays hold 2"),
    ("lying spawn", _edit_header(a_spawn="right"), r"header.a_spawn is 'right', the arrays hold"),
    ("lying result", _edit_header(result="draw"), r"header.result is 'draw', the arrays hold win"),
    ("lying rule", _edit_header(red_zone_depth=4.5), r"header.red_zone_depth is 4.5, the arrays"),
    ("lying ticks", _edit_header(ticks=21), r"header.arrays.state.units.class_id.shape: expect"),
    ("no manifest", _edit_header(arrays=_DROP), r"header.arrays: expected an object listing"),
    (
        "manifest short",
        lambda m: _edit_header(
            arrays={k: v for k, v in _header_of(m)["arrays"].items() if k != "who"}
        )(m),
        r"header.arrays: missing array\(s\) \['who'\]",
    ),
    (
        "manifest dtype",
        lambda m: _edit_header(
            arrays={
                **_header_of(m)["arrays"],
                "who": {**_header_of(m)["arrays"]["who"], "dtype": "|O"},
            }
        )(m),
        r"header.arrays.who.dtype: expected <i4, got '\|O'",
    ),
    (
        "member missing",
        lambda m: _zip([x for x in m if x[0] != "who.npy"]),
        r"missing member\(s\) \['who.npy'\], unknown member\(s\) \[\]",
    ),
    (
        "many members",
        lambda m: _zip(m + [(f"x{i}.npy", b"") for i in range(1200)]),
        r"declares 1\d{3} members in \d+ bytes; a replay has at most 1024",
    ),
    (
        "member extra",
        lambda m: _zip([*m, ("notes.txt", b"hi")]),
        r"unknown member\(s\) \['notes",
    ),
    (
        "member twice",
        lambda m: _zip([*m, m[-1]]),
        r"member\(s\) \['.*'\] appear more than once",
    ),
    ("path ..", _renamed("who.npy", "../who.npy"), r"member '../who.npy': a path or odd name"),
    ("path absolute", _renamed("who.npy", "/tmp/who.npy"), r"member '/tmp/who.npy': a path"),
    ("path folder", _renamed("who.npy", "a/who.npy"), r"member 'a/who.npy': a path"),
    ("path backslash", _renamed("who.npy", "..\\who.npy"), r"a path or odd name"),
    ("drive letter", _renamed("who.npy", "C:who.npy"), r"member 'C:who.npy': a path"),
    ("bzip2", lambda m: _zip(m, zipfile.ZIP_BZIP2), r"compression method 12; allowed: 0, 8"),
    ("encrypted", lambda m: patch_central(_zip(m), "who.npy", flags=1), r"encrypted members"),
    (
        "huge declared size",
        lambda m: patch_central(_zip(m), "who.npy", size=2**31),
        r"member 'who.npy': declares 2147483648 bytes, more than the limit 67108864",
    ),
    (
        "lying ratio",
        lambda m: patch_central(_zip(m), "who.npy", size=5_000_000),
        r"member 'who.npy': declares 5000000 bytes in \d+ stored bytes, a compression ratio "
        r"above the limit 1100:1 \(a zip bomb\?\)",
    ),
    ("zip bomb", _bomb, r"actions.npy: declares 41943040 bytes, more than the limit 6736"),
    (
        "header bomb",
        lambda m: _zip(_with_header(m, " " * (2 << 20))),
        r"header.json: declares 2097152 bytes, more than the limit 1048576",
    ),
    ("checksum", _replace_array("who", lambda a: _npy(a + 1), sign=False), r"who.npy: checksum"),
    (
        "wrong dtype",
        _replace_array("who", lambda a: _npy(a.astype(np.int64))),
        r"who.npy: holds \(22, 10\) int64, expected \(22, 10\) int32",
    ),
    (
        "wrong shape",
        _replace_array("who", lambda a: _npy(a.reshape(11, 20))),
        r"who.npy: holds \(11, 20\) int32, expected \(22, 10\) int32",
    ),
    (
        "fortran order",
        _replace_array("who", lambda a: _npy(np.asfortranarray(a))),
        r"who.npy: Fortran order is not allowed",
    ),
    (
        "cut data",
        _replace_array("who", lambda a: _npy(a)[:-4]),
        r"who.npy: holds 876 data bytes, its shape needs 880",
    ),
    ("not npy", _replace_array("who", lambda a: b"PK\x03\x04 an npz?"), r"who.npy: not a .npy"),
    (
        "object dtype",
        _replace_array("who", lambda a: _npy(np.array([_Exploit()] * 3), True)),
        r"who.npy: dtype object is not allowed \(numeric and bool only\)",
    ),
    (
        "complex dtype",
        _replace_array("who", lambda a: _npy(a.astype(np.complex64))),
        r"dtype complex64 is not allowed",
    ),
    # Signed edits (checksums recomputed) to values no engine makes: indices and positions a
    # reader would use.
    (
        "class id 7",
        _replace_array(
            "state.units.class_id", lambda a: _npy(np.where(a == 1, 7, a).astype(a.dtype))
        ),
        r"state.units.class_id: values outside \[0, 5\]",
    ),
    (
        "target 40",
        _replace_array("state.units.last_target", lambda a: _npy(a + np.int32(40))),
        r"state.units.last_target: values outside \[0, 10\]",
    ),
    (
        "nan position",
        _replace_array(
            "state.units.pos", lambda a: _npy(np.where(a > 9, np.nan, a).astype(a.dtype))
        ),
        r"state.units.pos: values outside",
    ),
    (
        "who beyond the leaves",
        _replace_array("who", lambda a: _npy(a + np.int32(5))),
        r"who: team A names no leaf in \[-1, 0\]",
    ),
]


@pytest.mark.parametrize(
    ("build", "message"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE]
)
def test_hostile_files_are_refused_clearly(valid_file, tmp_path, build, message) -> None:
    path = tmp_path / "hostile.replay.zip"
    path.write_bytes(build(zip_members(valid_file)))
    with pytest.raises(ev.EvalError, match=r"^hostile.replay.zip: .*" + message):
        rp.load(path)
    assert not hasattr(builtins, "REPLAY_PWNED")


def test_sizes_are_checked_before_reading(valid_file, tmp_path, monkeypatch) -> None:
    members = zip_members(valid_file)
    total = sum(len(d) for _, d in members)
    size = valid_file.stat().st_size
    monkeypatch.setattr(array_zip, "MAX_TOTAL_BYTES", (size + total) // 2)
    with pytest.raises(ev.EvalError, match=rf"^game.replay.zip: declares {total} bytes in all"):
        rp.load(valid_file)
    monkeypatch.setattr(array_zip, "MAX_TOTAL_BYTES", size - 1)
    with pytest.raises(ev.EvalError, match=rf"^game.replay.zip: {size} bytes, more than"):
        rp.load(valid_file)
    with pytest.raises(ev.EvalError, match=r"^path: replay file '.*nothing.zip' does not exist"):
        rp.load(tmp_path / "nothing.zip")
    with pytest.raises(ev.EvalError, match=r"is not a file"):
        rp.load(tmp_path)


# --- engine, point of view ------------------------------------------------------------------


@pytest.mark.default_compile  # the recording and the verifying programs, bit for bit
def test_the_engine_reproduces_every_recorded_state(recorded) -> None:
    for replay in recorded.replays:
        rp.verify(replay)
    good = recorded.replays[0]
    edits = [  # each a change the replay checks allow (health stays within its bounds)
        ("state.units.health", 5, r"tick 4: state.units.health differs", lambda a: a * 0.5),
        ("facts.damage_basic", 3, r"tick 3: facts.damage_basic differs", lambda a: a + 1),
        ("masks.move", 0, r"tick 0: masks.move differs", lambda a: ~a),
    ]
    for name, t, message, edit in edits:
        array = good.arrays[name].copy()
        array[t] = edit(array[t])
        edited = dataclasses.replace(good, arrays={**good.arrays, name: array})
        with pytest.raises(ev.EvalError, match=rf"^replay of game 0: {message} from what"):
            rp.verify(edited)
    actions = good.arrays["actions"].copy()
    actions[10, :5] = (actions[10, :5] + 1) % 9  # other chosen moves change what follows
    with pytest.raises(ev.EvalError, match=r"^replay of game 0: tick 10: "):
        rp.verify(dataclasses.replace(good, arrays={**good.arrays, "actions": actions}))


def test_oracle_is_the_whole_state(recorded) -> None:
    replay = recorded.replays[0]
    start = rp.oracle(replay, 0)
    assert isinstance(start, marl_bgs.GameState)
    assert int(start.tick) == 0
    assert start.units.pos.shape == (10, 2)
    assert int(rp.oracle(replay, replay.ticks).outcome) == 1
    assert np.array_equal(rp.oracle(replay, 7).units.health, replay.arrays["state.units.health"][7])
    for call, message in [
        (lambda: rp.oracle(replay, 23), r"^tick: expected an integer in \[0, 22\], got 23$"),
        (lambda: rp.oracle(replay, -1), r"^tick: expected an integer in \[0, 22\], got -1$"),
        (lambda: rp.pov(replay, 0, 22), r"^tick: expected an integer in \[0, 21\], got 22$"),
        (lambda: rp.pov(replay, 10, 0), r"^slot: expected an integer in \[0, 9\], got 10$"),
        (lambda: rp.pov(replay, True, 0), r"^slot: expected an integer in \[0, 9\], got True$"),
    ]:
        with pytest.raises(ev.EvalError, match=message):
            call()


def test_pov_is_what_the_system_was_given(recorded) -> None:
    """The view and mask equal the team inputs that `play_tick` builds from the same state."""
    env = tr.engine_env(True)
    for replay in recorded.replays[:2]:
        for t in (0, replay.ticks // 2, replay.ticks - 1):
            state = jax.tree.map(lambda x: x[None], rp.oracle(replay, t))
            inputs = marl_bgs.team_inputs(env, state)
            for slot in range(10):
                seen = rp.pov(replay, slot, t)
                given = jax.tree.map(lambda x, s=slot: np.asarray(x[0, s % 5]), inputs[slot // 5])
                assert _leaves_equal(seen.view, given.views)
                assert _leaves_equal(seen.mask, given.masks)


@jax.jit
def _changed(state: Any, enemy: jax.Array, step: jax.Array) -> tuple[Any, jax.Array]:
    """The state with `enemy` moved by `step`, at half health, 3 ticks more cooldown; and
    which slots' teams see it then [10]."""
    u = state.units
    units = u.replace(
        pos=u.pos.at[enemy].add(step),
        health=u.health.at[enemy].multiply(0.5),
        cooldown=u.cooldown.at[enemy].add(3),
    )
    moved = refresh_sight_lines(state.replace(units=units))
    return moved, perceive(moved).team_sight[:, enemy]


def _hide_and_move(state: Any, slot: int, enemy: int) -> Any | None:
    """`_changed` by the first nearby step that keeps `enemy` hidden from `slot`'s team."""
    for step in ((0.7, 0.0), (-0.7, 0.0), (0.0, 0.7), (0.0, -0.7), (0.3, 0.3)):
        moved, seen = _changed(state, enemy, np.float32(step))
        if not bool(seen[slot]):
            return moved
    return None


def test_pov_holds_nothing_the_agent_could_not_see(recorded) -> None:
    """Changing an enemy the agent's team does not see (move it, change its health and
    cooldown) changes nothing in the agent's point of view."""
    changed = 0
    for replay in recorded.replays[:2]:
        for t in range(0, replay.ticks, 7):
            state = jax.tree.map(jax.numpy.asarray, rp.oracle(replay, t))
            for slot in (0, 3, 5, 9):
                before = rp.pov(replay, slot, t)
                hidden = np.flatnonzero(before.view.units.visible[5:] == 0)
                for j in hidden[:2]:
                    enemy = (5 if slot < 5 else 0) + int(j)
                    moved = _hide_and_move(state, slot, enemy)
                    if moved is None:
                        continue
                    arrays = dict(replay.arrays)
                    for path, leaf in jax.tree_util.tree_flatten_with_path(moved)[0]:
                        name = "state" + jax.tree_util.keystr(path)
                        if not tr.is_static(name):
                            arrays[name] = arrays[name].copy()
                            arrays[name][t] = np.asarray(leaf)
                    edited = dataclasses.replace(replay, arrays=arrays)
                    assert not _leaves_equal(rp.oracle(edited, t), rp.oracle(replay, t))
                    assert _leaves_equal(rp.pov(edited, slot, t), before)
                    changed += 1
    assert changed >= 10


def test_summary_per_tick(recorded) -> None:
    replay = recorded.replays[0]
    table = rp.summary(replay)
    assert list(table.columns) == [
        "tick", "score_a", "score_b", "alive_a", "alive_b", "deaths_a", "deaths_b",
    ]  # fmt: skip
    assert table["tick"].tolist() == list(range(1, 23))
    last = table.iloc[-1]
    assert (last["score_a"], last["score_b"]) == (2, 0)
    assert table["deaths_b"].sum() == replay.arrays["facts.died"][:, 5:].sum() >= 1
    assert (table[["alive_a", "alive_b"]] <= 5).all().all()


def test_metrics_up_to_each_tick_end_at_the_results_row(recorded) -> None:
    """Evaluation's counters summed tick by tick over a replay end exactly at the game's results
    row, grow one tick at a time, and the full level's who-did-what-to-whom damage adds up to
    the recorded facts."""
    for replay, row in zip(recorded.replays, recorded.rows.to_dict("records"), strict=True):
        table = rp.metrics(replay, "priority")
        assert table["tick"].tolist() == list(range(1, replay.ticks + 1))
        for col in [*ev.base_columns(), *ev.priority_columns()]:
            assert table[col].iloc[-1] == pytest.approx(row[col], abs=1e-3), col
            assert (np.diff(table[col].to_numpy()) >= -1e-6).all(), col
    replay = recorded.replays[0]
    full = rp.metrics(replay, "full")
    facts = replay.arrays
    dealt = facts["facts.damage_basic"] + facts["facts.damage_ultimate"]  # [T, actor, victim]
    for t in (0, replay.ticks // 2, replay.ticks - 1):
        pairs = [f"damage_done.a{i}>b{j}.{k}" for i in range(5) for j in range(5)
                 for k in ("basic", "ultimate")]  # fmt: skip
        assert full[pairs].iloc[t].sum() == pytest.approx(dealt[: t + 1, :5, 5:].sum(), abs=1e-3)
    with pytest.raises(
        ev.EvalError, match=r"level: expected one of \['none', 'priority', 'full'\]"
    ):
        rp.metrics(replay, "most")


def test_view_reaches_the_final_state(recorded) -> None:
    """`view` is `pov`'s view at every decision and also reads the final state."""
    replay = recorded.replays[0]
    for slot in (0, 7):
        assert _leaves_equal(rp.view(replay, slot, 3), rp.pov(replay, slot, 3).view)
        last = rp.view(replay, slot, replay.ticks)
        assert int(last.public.tick) == replay.ticks
    with pytest.raises(ev.EvalError, match="tick"):
        rp.view(replay, 0, replay.ticks + 1)
