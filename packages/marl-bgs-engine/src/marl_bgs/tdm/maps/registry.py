"""Map files: format `marl-bgs-map-v1`, validation on load, and the registry of shipped maps.

docs/maps.md ("Map files", written by `ci/docs_pages/maps_page.py`) is the one description of the
format: keys, units, limits, splits and id ranges, the mirror rule for every split but "custom",
the playability checks, and how a custom map is identified (`MapSpec.content_hash`, and
`CUSTOM_MAP_ID` in game states). `parse` checks a decoded document against it; `load_file` first
reads a file (size limit, duplicate keys); both raise `MapError` naming the field. The shipped maps
in `data/` are parsed without the playability flood fill, since the test suite checks them.
"""

from __future__ import annotations

import json
import math
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from marl_bgs.core.arena import MAP_HEIGHT, MAP_WIDTH, MAX_OBSTACLES
from marl_bgs.core.checks import check_float, check_int, did_you_mean, shown
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.files import read_json
from marl_bgs.tdm.maps.checks import check_playable
from marl_bgs.tdm.maps.spec import MapError, MapSpec
from marl_bgs.tdm.maps.symmetry import mirror_mismatches

FORMAT = "marl-bgs-map-v1"
SPLITS = {
    "curriculum": range(12),
    "train": range(42),
    "validation": range(42, 47),
    "test": range(47, 52),
}
_SPLIT_OF_FILE = ("curriculum", "train", "validation", "test", "custom")
_ID_RANGE = {
    "curriculum": range(12),
    "train": range(12, 42),
    "validation": range(42, 47),
    "test": range(47, 52),
}
_TOP_KEYS = {"format", "id", "name", "split", "description", "obstacles"}
_KEYS = {
    "pillar": {"kind", "x", "y", "radius"},
    "wall": {"kind", "x", "y", "width", "height", "theta"},
}
MAX_FILE_BYTES = 1_000_000
MAX_ID = 2**31 - 1  # ids are recorded as int32
MAX_SIZE = 20.0  # largest radius, width or height
# Allowed range of each obstacle number; sizes are further required to be > 0.
_RANGES = {
    "x": (0.0, MAP_WIDTH),
    "y": (0.0, MAP_HEIGHT),
    "radius": (0.0, MAX_SIZE),
    "width": (0.0, MAX_SIZE),
    "height": (0.0, MAX_SIZE),
    "theta": (-math.tau, math.tau),
}


def _number(value: Any, field: str, key: str) -> float:
    """The project's number policy (`check_float`: no bools, NaN, infinities or ints too large
    for a float) with the range of obstacle field `key`, as a MapError."""
    lo, hi = _RANGES[key]
    return check_float(value, field, lo, hi, error=MapError)


def _keys(keys: set[Any]) -> list[str]:
    return sorted(map(str, keys))


def _obstacle(raw: Any, field: str) -> dict[str, float | str]:
    if not isinstance(raw, dict):
        raise MapError(f"{field}: expected an object, got {type(raw).__name__}")
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in _KEYS:
        raise MapError(f"{field}.kind: expected 'pillar' or 'wall', got {shown(kind)}")
    unknown = set(raw) - _KEYS[kind]
    if unknown:
        raise MapError(
            f"{field}: unknown key(s) {shown(_keys(unknown))}; allowed {sorted(_KEYS[kind])}"
        )
    out: dict[str, float | str] = {"kind": kind}
    required = _KEYS[kind] - {"kind", "theta"}
    for key in sorted(required):
        if key not in raw:
            raise MapError(f"{field}.{key}: missing")
        out[key] = _number(raw[key], f"{field}.{key}", key)
    theta = raw.get("theta", 0.0)
    out["theta"] = _number(theta, f"{field}.theta", "theta") if kind == "wall" else 0.0
    for key in ("radius", "width", "height"):
        if key in out and not 0.0 < float(out[key]) <= MAX_SIZE:
            raise MapError(f"{field}.{key}: must be in (0, {MAX_SIZE:g}], got {out[key]}")
    x, y = float(out["x"]), float(out["y"])
    if kind == "pillar":
        r = float(out["radius"])
        ext_x = ext_y = r
    else:
        w, h, t = float(out["width"]) / 2, float(out["height"]) / 2, float(out["theta"])
        ext_x = abs(w * math.cos(t)) + abs(h * math.sin(t))
        ext_y = abs(w * math.sin(t)) + abs(h * math.cos(t))
    if x - ext_x < -1e-6 or x + ext_x > MAP_WIDTH + 1e-6:
        raise MapError(f"{field}: obstacle crosses the map border in x (x={x}, extent {ext_x:g})")
    if y - ext_y < -1e-6 or y + ext_y > MAP_HEIGHT + 1e-6:
        raise MapError(f"{field}: obstacle crosses the map border in y (y={y}, extent {ext_y:g})")
    return out


def parse(raw: Any, source: str = "map", *, check_play: bool = True) -> MapSpec:
    """Validate a decoded map document and return its MapSpec; raise MapError naming the field.

    `check_play=False` skips the spawn-pad flood fill (the shipped maps: the tests check them).
    """
    if not isinstance(raw, dict):
        raise MapError(f"{source}: expected a JSON object at the top level")
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise MapError(
            f"{source}: unknown key(s) {shown(_keys(unknown))}; allowed {sorted(_TOP_KEYS)}"
        )
    if not isinstance(raw.get("format"), str) or raw.get("format") != FORMAT:
        raise MapError(f"{source}.format: expected {FORMAT!r}, got {shown(raw.get('format'))}")
    try:
        map_id = check_int(raw.get("id"), f"{source}.id", 0, MAX_ID)
    except ConfigError as err:
        raise MapError(str(err)) from None
    name, desc = raw.get("name"), raw.get("description", "")
    if not isinstance(name, str) or not 0 < len(name) <= 64:
        raise MapError(f"{source}.name: expected a string of 1-64 characters, got {shown(name)}")
    if not isinstance(desc, str) or len(desc) > 2000:
        got = f"{len(desc)} characters" if isinstance(desc, str) else shown(desc)
        raise MapError(
            f"{source}.description: expected a string of at most 2000 characters, got {got}"
        )
    split_name = raw.get("split")
    if not isinstance(split_name, str) or split_name not in _SPLIT_OF_FILE:
        allowed = list(_SPLIT_OF_FILE)
        raise MapError(f"{source}.split: expected one of {allowed}, got {shown(split_name)}")
    obstacles = raw.get("obstacles")
    if not isinstance(obstacles, list) or len(obstacles) > MAX_OBSTACLES:
        got = f"{len(obstacles)} obstacles" if isinstance(obstacles, list) else shown(obstacles)
        raise MapError(
            f"{source}.obstacles: expected a list of 0 to {MAX_OBSTACLES} obstacles, got {got}"
        )
    if split_name in _ID_RANGE and map_id not in _ID_RANGE[split_name]:
        span = _ID_RANGE[split_name]
        raise MapError(
            f"{source}.split: {split_name!r} holds ids {span.start}-{span.stop - 1}, not {map_id}; "
            "user maps use split 'custom'"
        )
    parsed = tuple(_obstacle(o, f"{source}.obstacles[{i}]") for i, o in enumerate(obstacles))
    if split_name != "custom":
        for i in mirror_mismatches(parsed)[:1]:
            o = parsed[i]
            x, y, t = MAP_WIDTH - float(o["x"]), float(o["y"]), -float(o["theta"])
            at = f"x={x:g}, y={y:g}, theta={t:g}"
            raise MapError(
                f"{source}.obstacles[{i}]: not mirrored: no {o['kind']} matches it at {at} "
                "(maps outside split 'custom' must mirror across x = 10)"
            )
    spec = MapSpec(id=map_id, name=name, split=split_name, description=desc, obstacles=parsed)
    if check_play:
        check_playable(spec, source=source)
    return spec


def load_file(path: str | Path) -> MapSpec:
    """Read and validate a map file from disk (size-limited; malformed JSON is a MapError)."""
    path, raw = read_json(path, "map file", MAX_FILE_BYTES, MapError)
    spec = parse(raw, source=path.name)
    shipped = _shipped().get(spec.id)
    if spec.split != "custom" and shipped and spec.content_hash != shipped.content_hash:
        raise MapError(
            f"{path.name}.id: {spec.id} is shipped map {shipped.name!r}, but this file's "
            "obstacles differ from it; a user map takes split 'custom' (any id)"
        )
    return spec


@cache
def _shipped() -> dict[int, MapSpec]:
    specs: dict[int, MapSpec] = {}
    for entry in sorted(resources.files("marl_bgs.tdm.maps").joinpath("data").iterdir(), key=str):
        if entry.name.endswith(".json"):
            raw = json.loads(entry.read_text(encoding="utf-8"))
            spec = parse(raw, source=entry.name, check_play=False)
            if spec.id in specs or not entry.name.startswith(f"{spec.id:02d}_"):
                raise MapError(f"{entry.name}: id {spec.id} is repeated or disagrees with the name")
            specs[spec.id] = spec
    return dict(sorted(specs.items()))


def all_ids() -> list[int]:
    """Ids of every shipped map."""
    return list(_shipped())


def split(name: str) -> list[int]:
    """Map ids of a split: 'curriculum' (0-11), 'train' (0-41), 'validation' (42-46), 'test'."""
    if name not in SPLITS:
        raise MapError(f"split: expected one of {list(SPLITS)}, got {name!r}")
    return [i for i in SPLITS[name] if i in _shipped()]


def _looks_like_path(ref: str) -> bool:
    seps = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    if any(s in ref for s in seps) or ref.endswith(".json"):
        return True
    try:
        return Path(ref).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL character
        return False


def load(map_ref: int | str | Path | MapSpec) -> MapSpec:
    """A map by id, by name (case-insensitive), by file path, or a MapSpec passed through.

    A string is a shipped map's name unless it looks like a path (see the module docstring); a
    string path must end in ".json", a `pathlib.Path` may have any suffix.
    """
    if isinstance(map_ref, MapSpec):
        return map_ref
    shipped = _shipped()
    if isinstance(map_ref, bool) or not isinstance(map_ref, int | np.integer | str | Path):
        raise MapError(f"map_id: expected an int id, a map name or a path, got {shown(map_ref)}")
    if isinstance(map_ref, int | np.integer):
        map_ref = int(map_ref)
        if map_ref not in shipped:
            span = f"{all_ids()[0]}-{all_ids()[-1]}"
            raise MapError(f"map_id: {shown(map_ref)} is not a shipped map; shipped ids: {span}")
        return shipped[map_ref]
    if isinstance(map_ref, str):
        by_name = {s.name.lower(): s for s in shipped.values()}
        if map_ref.lower() in by_name:
            return by_name[map_ref.lower()]
        if not _looks_like_path(map_ref):
            hint = did_you_mean(map_ref, (s.name for s in shipped.values()))
            raise MapError(
                f"map_id: no shipped map is named {shown(map_ref)}{hint}; give a shipped map's id "
                "or name, or a path to a map file ending in .json"
            )
        if not map_ref.endswith(".json"):
            raise MapError(
                f"map_id: {shown(map_ref, 300)} looks like a path, but a map file given as a "
                "string must end in .json (pass a pathlib.Path to read a file with another suffix)"
            )
    return load_file(map_ref)
