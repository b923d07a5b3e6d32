"""Fuzz: malformed map files handed to `marl_bgs.maps.load_file`, `maps.load` and `make`.

Every input below is generated, not hand-picked one by one, and each must end in exactly one
outcome class: a `MapError` (a `ConfigError`) whose message starts with the file and the field it
names, or, for the valid edge cases among them, a map that loads with exactly the values written.
No `TypeError`, `OverflowError`, `RecursionError` or numpy/JAX error may escape, and nothing may be
misread silently.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import marl_bgs
from marl_bgs.core.arena import MAX_OBSTACLES
from marl_bgs.tdm.maps import MapError, MapSpec, load, load_file
from marl_bgs.tdm.maps.registry import FORMAT, MAX_FILE_BYTES
from marl_bgs.testing import DELETE, mutated

pytestmark = pytest.mark.fuzz_family("map files")

NAME = "m.json"  # every case is written to tmp_path / NAME, so errors start with "m.json"
FILE = r"^map file '[^']*m\.json' "  # file-level refusals name the file
RAW = "@@raw@@"  # _raw: a placeholder replaced by a literal json.dumps cannot write


def _pillar(x: float, y: float, r: float = 0.5) -> dict[str, Any]:
    return {"kind": "pillar", "x": x, "y": y, "radius": r}


def _wall(x: float, y: float, w: float, h: float, theta: float = 0.0) -> dict[str, Any]:
    return {"kind": "wall", "x": x, "y": y, "width": w, "height": h, "theta": theta}


# A playable, deliberately asymmetric custom map: the base every malformed document starts from.
VALID: dict[str, Any] = {
    "format": FORMAT,
    "id": 100,
    "name": "Fuzz",
    "split": "custom",
    "description": "the fuzz base map",
    "obstacles": [_pillar(6.0, 5.0), _wall(10.0, 5.0, 0.5, 2.0), _wall(14.0, 3.0, 2.0, 0.3, 0.5)],
}
SHIPPED_47 = resources.files("marl_bgs.tdm.maps").joinpath("data", "47_crossfire.json").read_bytes()


_HUGE = {10**30: "10**30", 2**31: "2**31", 2**63: "2**63", -(2**63): "-2**63"}


def _label(value: Any) -> str:
    """A short case id for a value (huge integers by their formula)."""
    if isinstance(value, int) and not isinstance(value, bool) and value in _HUGE:
        return _HUGE[value]
    return repr(value)


def _mutate(path: str, value: Any, base: dict[str, Any] = VALID) -> dict[str, Any]:
    """A deep copy of `base` with the dotted `path` ("obstacles.0.x") set to `value`."""
    return mutated(base, path, value)


def _raw(path: str, literal: str) -> str:
    """VALID as JSON text with the value at `path` replaced by a raw JSON literal."""
    return json.dumps(_mutate(path, RAW)).replace(f'"{RAW}"', literal)


def _field(path: str) -> str:
    """The message prefix of a field: "obstacles.0.x" -> r"^m\\.json\\.obstacles\\[0\\]\\.x: "."""
    parts = [f"[{p}]" if p.isdigit() else f".{p}" for p in path.split(".")]
    return "^" + re.escape(NAME + "".join(parts)) + ": "


Expect = str | Callable[[MapSpec], bool]  # a regex for MapError, or a check of the loaded map


def _file_level_cases() -> list[tuple[str, bytes | str, Expect]]:
    bad_json = FILE + "is not valid JSON"
    cases: list[tuple[str, bytes | str, Expect]] = [
        ("empty file", b"", bad_json),
        ("whitespace only", " \n\t ", bad_json),
        ("not JSON", "{not json", bad_json),
        ("plain text", "a map of the arena", bad_json),
        ("single quotes", "{'format': 'marl-bgs-map-v1'}", bad_json),
        ("trailing comma", '{"format": "marl-bgs-map-v1",}', bad_json),
        ("two documents", json.dumps(VALID) * 2, bad_json),
        ("bad UTF-8 bytes", b"\xff\xfe{}", bad_json),
        (
            "cut UTF-8 sequence",
            json.dumps(VALID).replace("Fuzz", "@").encode().replace(b"@", b"\xc3"),
            bad_json,
        ),
        (
            "latin-1 name",
            json.dumps(VALID).replace("Fuzz", "@").encode().replace(b"@", b"\xe9"),
            bad_json,
        ),
        ("UTF-8 byte order mark", b"\xef\xbb\xbf" + json.dumps(VALID).encode(), bad_json),
        ("UTF-16 encoded", json.dumps(VALID).encode("utf-16"), bad_json),
        ("NUL byte", json.dumps(VALID).encode() + b"\x00", bad_json),
        ("100000 nested lists", "[" * 100_000 + "]" * 100_000, bad_json),
        (
            "100000 nested lists in a field",
            _raw("description", "[" * 100_000 + "]" * 100_000),
            bad_json,
        ),
        ("a 5000-digit integer", _raw("id", "9" * 5000), bad_json),
        (
            "top-level duplicate key",
            '{"format": "marl-bgs-map-v1", "format": "x"}',
            FILE + "is not valid JSON: duplicate key.*format",
        ),
        (
            "duplicate id with the same value",
            json.dumps(VALID)[:-1] + ', "id": 100}',
            FILE + "is not valid JSON: duplicate key.*id",
        ),
        (
            "duplicate key in an obstacle",
            _raw("obstacles.0", '{"kind": "pillar", "x": 6, "x": 7, "y": 5, "radius": 0.5}'),
            FILE + "is not valid JSON: duplicate key.*x",
        ),
        (
            "one byte over the size limit",
            json.dumps(VALID) + " " * (MAX_FILE_BYTES + 1 - len(json.dumps(VALID))),
            FILE + f"is larger than {MAX_FILE_BYTES} bytes",
        ),
        (
            "exactly the size limit",
            json.dumps(VALID) + " " * (MAX_FILE_BYTES - len(json.dumps(VALID))),
            lambda s: s.name == "Fuzz" and len(s.obstacles) == 3,
        ),
        (
            "shipped map 47, byte for byte",
            SHIPPED_47,
            lambda s: (s.id, s.split, len(s.obstacles)) == (47, "test", MAX_OBSTACLES),
        ),
    ]
    end = SHIPPED_47.rindex(b"}")  # any cut before the last brace leaves the object unclosed
    for cut in (1, 2, 17, 100, 1000, end // 2, end - 1, end):
        cases.append((f"shipped map 47 cut at byte {cut}", SHIPPED_47[:cut], bad_json))
    return cases


def _document_cases() -> list[tuple[str, Any, Expect]]:
    top = r"^m\.json: expected a JSON object at the top level"
    cases: list[tuple[str, Any, Expect]] = [
        ("top-level list", [], top),
        ("top-level list of a valid map", [VALID], top),
        ("top-level string", '"map"', top),
        ("top-level number", 47, top),
        ("top-level null", None, top),
        ("top-level true", True, top),
        (
            "unknown top-level key",
            {**VALID, "version": 2},
            r"^m\.json: unknown key\(s\) \['version'\]",
        ),
        (
            "split omitted and unknown key",
            {**_mutate("split", DELETE), "Split": "custom"},
            r"^m\.json: unknown key\(s\) \['Split'\]",
        ),
    ]
    for key in ("format", "id", "name", "split", "obstacles"):
        cases.append((f"missing {key}", _mutate(key, DELETE), _field(key)))
    cases.append(
        ("description omitted", _mutate("description", DELETE), lambda s: s.description == "")
    )
    for value in ("marl-bgs-map-v2", "", None, 1, [FORMAT], {"v": 1}):
        cases.append((f"format {_label(value)}", _mutate("format", value), _field("format")))
    for value in (-1, 1.5, 100.0, True, False, "100", None, [100], 10**30, 2**63, 2**31):
        cases.append((f"id {_label(value)}", _mutate("id", value), _field("id")))
    cases += [
        ("id 2**31 - 1 (custom)", _mutate("id", 2**31 - 1), lambda s: s.id == 2**31 - 1),
        ("id 0 (custom)", _mutate("id", 0), lambda s: s.id == 0 and s.record_id == -1),
    ]
    for value in ("", "x" * 65, 5, None, ["Fuzz"]):
        cases.append((f"name {str(value)[:10]!r}", _mutate("name", value), _field("name")))
    cases.append(("name of 64 characters", _mutate("name", "x" * 64), lambda s: len(s.name) == 64))
    for value in ("x" * 2001, 5, None, ["a"]):
        cases.append(
            (
                f"description {str(value)[:10]!r}",
                _mutate("description", value),
                _field("description"),
            )
        )
    cases.append(
        (
            "description of 2000 characters",
            _mutate("description", "d" * 2000),
            lambda s: len(s.description) == 2000,
        )
    )
    for value in ("training", "", None, ["test"], 3, "TEST"):
        cases.append((f"split {_label(value)}", _mutate("split", value), _field("split")))
    for map_id, split in ((47, "train"), (5, "test"), (100, "validation"), (12, "curriculum")):
        doc = {**VALID, "id": map_id, "split": split}
        cases.append(
            (f"id {map_id} in split {split}", doc, _field("split") + f"'{split}' holds ids")
        )
    return cases


def _obstacle_cases() -> list[tuple[str, Any, Expect]]:
    cases: list[tuple[str, Any, Expect]] = []
    literals = {
        "NaN": "NaN",
        "Infinity": "Infinity",
        "-Infinity": "-Infinity",
        "1e400": "1e400",
        "-1e400": "-1e400",
        "10**400": "1" + "0" * 400,
        "-10**400": "-1" + "0" * 400,
    }
    for what, literal in literals.items():
        for path in ("obstacles.0.x", "obstacles.0.radius", "obstacles.2.theta"):
            cases.append((f"{path} = {what}", _raw(path, literal), _field(path)))
    for value in ("5", True, None, [], {}, 2**63, -(2**63), 1e308):
        cases.append(
            (
                f"obstacles.0.y = {_label(value)}",
                _mutate("obstacles.0.y", value),
                _field("obstacles.0.y"),
            )
        )
    for path, value in (
        ("obstacles.0.radius", -1.0),
        ("obstacles.0.radius", 0),
        ("obstacles.1.width", 0.0),
        ("obstacles.1.height", -0.5),
        ("obstacles.0.radius", 20.5),
        ("obstacles.1.width", 1e9),
        ("obstacles.2.theta", 7.0),
        ("obstacles.2.theta", -100.0),
        ("obstacles.2.theta", 1e300),
        ("obstacles.0.x", -1.0),
        ("obstacles.0.y", 10.5),
    ):
        cases.append((f"{path} = {_label(value)}", _mutate(path, value), _field(path)))
    border = r"obstacle crosses the map border"
    cases += [
        (
            "pillar across the west border",
            _mutate("obstacles.0", _pillar(0.2, 5.0)),
            _field("obstacles.0") + border + " in x",
        ),
        (
            "pillar across the north border",
            _mutate("obstacles.0", _pillar(8.0, 9.8)),
            _field("obstacles.0") + border + " in y",
        ),
        (
            "rotated wall across the south border",
            _mutate("obstacles.2", _wall(14.0, 0.6, 3.0, 0.2, 1.2)),
            _field("obstacles.2") + border + " in y",
        ),
        (
            "33 obstacles",
            _mutate("obstacles", [_pillar(10.0, 5.0, 0.1)] * (MAX_OBSTACLES + 1)),
            _field("obstacles") + "expected a list of 0 to 32 obstacles, got 33",
        ),
        ("obstacles an object", _mutate("obstacles", {"0": _pillar(6, 5)}), _field("obstacles")),
        ("obstacles a string", _mutate("obstacles", "pillar"), _field("obstacles")),
        ("obstacles null", _mutate("obstacles", None), _field("obstacles")),
        ("obstacle kind 'crate'", _mutate("obstacles.0.kind", "crate"), _field("obstacles.0.kind")),
        (
            "obstacle kind 'Pillar'",
            _mutate("obstacles.0.kind", "Pillar"),
            _field("obstacles.0.kind"),
        ),
        ("obstacle kind null", _mutate("obstacles.0.kind", None), _field("obstacles.0.kind")),
        (
            "obstacle kind a list",
            _mutate("obstacles.0.kind", ["pillar"]),
            _field("obstacles.0.kind"),
        ),
        (
            "obstacle kind an object",
            _mutate("obstacles.0.kind", {"k": 1}),
            _field("obstacles.0.kind"),
        ),
        ("obstacle kind missing", _mutate("obstacles.0.kind", DELETE), _field("obstacles.0.kind")),
        (
            "obstacle a list",
            _mutate("obstacles.0", [6, 5, 0.5]),
            _field("obstacles.0") + "expected an object",
        ),
        (
            "obstacle a string",
            _mutate("obstacles.1", "wall"),
            _field("obstacles.1") + "expected an object",
        ),
        (
            "obstacle null",
            _mutate("obstacles.2", None),
            _field("obstacles.2") + "expected an object",
        ),
        (
            "obstacle a number",
            _mutate("obstacles.0", 7),
            _field("obstacles.0") + "expected an object",
        ),
        (
            "obstacle with an unknown key",
            _mutate("obstacles.0.colour", "red"),
            _field("obstacles.0") + r"unknown key\(s\) \['colour'\]",
        ),
        (
            "pillar with a theta",
            _mutate("obstacles.0.theta", 0.0),
            _field("obstacles.0") + "unknown key",
        ),
        (
            "wall with a radius",
            _mutate("obstacles.1.radius", 0.5),
            _field("obstacles.1") + "unknown key",
        ),
        (
            "wall without height",
            _mutate("obstacles.1.height", DELETE),
            _field("obstacles.1.height") + "missing",
        ),
        ("pillar without y", _mutate("obstacles.0.y", DELETE), _field("obstacles.0.y") + "missing"),
    ]
    # Play checks: spawn pads (x 0.5 and 19.5, y 1, 3, 5, 7, 9) must be clear and connected, and
    # no cell may have more than 12 obstacles within one step (movement tests only 12).
    crowded = [_pillar(6.0 + i, 2.0 + 2 * j, 0.1) for j in range(4) for i in range(8)]
    mirrored = {**VALID, "id": 47, "split": "test"}
    cases += [
        (
            "test map not mirrored",
            _mutate("obstacles", [_pillar(6, 5)], mirrored),
            _field("obstacles.0") + "not mirrored",
        ),
        (
            "test map with its mirror wall at the wrong theta",
            _mutate("obstacles", [_wall(6, 5, 2, 0.3, 0.5), _wall(14, 5, 2, 0.3, 0.5)], mirrored),
            _field("obstacles.0") + "not mirrored",
        ),
        (
            "pillar on left pad 2",
            _mutate("obstacles.0", _pillar(0.5, 5.0, 0.4)),
            _field("obstacles.0") + "overlaps the body on the left pad 2",
        ),
        (
            "mirrored pillars on both pads 4",
            _mutate("obstacles", [_pillar(0.8, 9.0, 0.3), _pillar(19.2, 9.0, 0.3)], mirrored),
            _field("obstacles.0") + "overlaps the body on the left pad 4",
        ),
        (
            "a wall across the whole map",
            _mutate("obstacles", [_wall(10, 5, 0.5, 10)]),
            _field("obstacles") + "a body .* cannot walk from left pad 0",
        ),
        (
            "32 small pillars crowded together",
            _mutate("obstacles", crowded),
            _field("obstacles") + r"[1-3]\d obstacles lie within one tick's reach .* of the cell x "
            r"\d+-\d+, y \d+-\d+ .*; at most 12",
        ),
    ]
    # Valid edge cases: what the checks must not refuse.
    grid = [_pillar(2.5 + 2 * i, 1.6 + 2.2 * j, 0.1) for j in range(4) for i in range(8)]  # 32
    cases += [
        (
            "pillar touching the south border",
            _mutate("obstacles.0", _pillar(8.0, 0.5)),
            lambda s: s.obstacles[0]["y"] == 0.5,
        ),
        (
            "wall touching the east border",
            _mutate("obstacles.2", _wall(19.0, 4.0, 2.0, 0.5)),
            lambda s: s.obstacles[2]["x"] == 19.0,
        ),
        (
            "theta omitted",
            _mutate("obstacles.1.theta", DELETE),
            lambda s: s.obstacles[1]["theta"] == 0.0,
        ),
        (
            "theta -2 pi",
            _mutate("obstacles.2.theta", -2 * math.pi),
            lambda s: s.obstacles[2]["theta"] < -6,
        ),
        (
            "integer coordinates",
            _mutate("obstacles.0", _pillar(6, 5, 1)),
            lambda s: (
                s.obstacles[0]
                == {"kind": "pillar", "x": 6.0, "y": 5.0, "radius": 1.0, "theta": 0.0}
            ),
        ),
        (
            "32 small pillars",
            _mutate("obstacles", grid),
            lambda s: len(s.obstacles) == MAX_OBSTACLES,
        ),
        ("no obstacles", _mutate("obstacles", []), lambda s: s.obstacles == ()),
        ("asymmetric custom map", VALID, lambda s: s.split == "custom" and s.record_id == -1),
    ]
    return cases


FILE_CASES: list[tuple[str, Any, Expect]] = (
    _file_level_cases() + _document_cases() + _obstacle_cases()
)


def test_there_are_enough_malformed_map_files(enough_fuzz_cases):
    enough_fuzz_cases(FILE_CASES)


@pytest.mark.parametrize(("what", "content", "expect"), FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_map_files(tmp_path, fuzz_outcome, case_bytes, what, content, expect):
    del what  # the case's id
    path = tmp_path / NAME
    path.write_bytes(case_bytes(content))
    spec = fuzz_outcome(expect, lambda: load_file(path), MapError)
    if spec is not None:
        assert spec == load(path)  # a Path is read as a file


# --- references: strings, paths and make ----------------------------------------------------------
def _reference_cases() -> list[tuple[str, str, Any, Expect]]:
    """(id, file to write as "name:content" or "", reference (a callable of tmp_path), expect)."""
    like_a_path = (
        r"^map_id: '.*' looks like a path, but a map file given as a string must end in \.json"
    )
    ok = json.dumps(VALID)
    return [
        ("string path with .txt suffix", "my.txt:" + ok, lambda d: str(d / "my.txt"), like_a_path),
        ("relative string path without suffix", "", lambda d: "./my_map", like_a_path),
        ("maps/mymap.txt", "", lambda d: "maps/mymap.txt", like_a_path),
        ("existing file without separator", "my_map:" + ok, lambda d: "my_map", like_a_path),
        ("unknown name", "", lambda d: "Nowhere", r"^map_id: no shipped map is named 'Nowhere'"),
        ("name of 5000 characters", "", lambda d: "a" * 5000, r"^map_id: no shipped map is named"),
        ("name with a NUL", "", lambda d: "x\x00y", r"^map_id: no shipped map is named"),
        (
            "missing .json path",
            "",
            lambda d: str(d / "absent.json"),
            FILE.replace("m\\.json", "absent\\.json") + "does not exist",
        ),
        (
            "a directory named .json",
            "dir.json/",
            lambda d: str(d / "dir.json"),
            r"^map file '.*dir\.json' is not a regular file",
        ),
        (
            "path too long",
            "",
            lambda d: "a" * 5000 + ".json",
            r"^map file 'a+\.\.\. cannot be read: File name too long",
        ),
        (
            "NUL in a .json path",
            "",
            lambda d: "x\x00.json",
            r"^map file 'x\\x00\.json' does not exist",
        ),
        ("bool reference", "", lambda d: True, r"^map_id: expected an int id"),
        ("float reference", "", lambda d: 47.0, r"^map_id: expected an int id"),
        ("bytes path", "", lambda d: bytes(d / NAME), r"^map_id: expected an int id"),
        (
            "string path to a malformed file",
            "m.json:" + json.dumps({**VALID, "id": 2**63}),
            lambda d: str(d / NAME),
            _field("id"),
        ),
        (
            "pathlib.Path with .txt suffix",
            "my.txt:" + ok,
            lambda d: d / "my.txt",
            lambda s: s.name == "Fuzz",
        ),
        (
            "pathlib.Path without suffix",
            "my_map:" + ok,
            lambda d: d / "my_map",
            lambda s: s.name == "Fuzz",
        ),
        (
            "string path ending in .json",
            "m.json:" + ok,
            lambda d: str(d / NAME),
            lambda s: s.name == "Fuzz",
        ),
        ("shipped name, any case", "", lambda d: "cRoSsFiRe", lambda s: s.id == 47),
    ]


REFERENCE_CASES = _reference_cases()


def _prepare(directory: Path, setup: str) -> None:
    if not setup:
        return
    name, _, content = setup.partition(":")
    if name.endswith("/"):
        (directory / name).mkdir()
    else:
        (directory / name).write_text(content, encoding="utf-8")


@pytest.mark.parametrize(
    ("what", "setup", "ref", "expect"), REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES]
)
def test_map_references(tmp_path, monkeypatch, fuzz_outcome, what, setup, ref, expect):
    del what
    monkeypatch.chdir(tmp_path)  # relative references resolve inside tmp_path
    _prepare(tmp_path, setup)
    reference = ref(tmp_path)
    fuzz_outcome(expect, lambda: load(reference), MapError)


def test_load_file_refuses_a_non_path(record_property):
    record_property("outcome", "error")
    with pytest.raises(MapError, match=r"^map file: expected a str or pathlib\.Path, got 5"):
        load_file(5)  # type: ignore[arg-type]


MAKE_CASES = [
    ("make with a .txt string path", "maps/mymap.txt", r"^map_id: '.*' looks like a path"),
    ("make with a huge id in the file", {**VALID, "id": 10**30}, _field("id")),
    (
        "make with 10**400 as a radius",
        _raw("obstacles.0.radius", "1" + "0" * 400),
        _field("obstacles.0.radius"),
    ),
    (
        "make with a blocked pad",
        _mutate("obstacles.0", _pillar(0.5, 1.0)),
        _field("obstacles.0") + "overlaps the body on the left pad 0",
    ),
    ("make with a list of a good and a bad file", [VALID, {**VALID, "name": ""}], _field("name")),
]


@pytest.mark.parametrize(("what", "content", "expect"), MAKE_CASES, ids=[c[0] for c in MAKE_CASES])
def test_make_with_malformed_map_files(
    tmp_path, record_property, case_bytes, what, content, expect
):
    del what
    record_property("outcome", "error")
    if isinstance(content, str) and not content.startswith("{"):
        map_id: Any = content
    elif isinstance(content, list):
        map_id = []
        for k, doc in enumerate(content):
            (tmp_path / str(k)).mkdir()
            path = tmp_path / str(k) / NAME
            path.write_text(json.dumps(doc), encoding="utf-8")
            map_id.append(str(path))
    else:
        path = tmp_path / NAME
        path.write_bytes(case_bytes(content))
        map_id = str(path)
    with pytest.raises(MapError, match=expect):
        marl_bgs.make("tdm", map_id=map_id, num_envs=1)


def test_make_with_a_custom_map_file(tmp_path, record_property):
    record_property("outcome", "accepted")
    path = tmp_path / NAME
    path.write_text(json.dumps(VALID), encoding="utf-8")
    env = marl_bgs.make("tdm", map_id=str(path), num_envs=1)
    assert env is not None
