"""Map files: format `marl-bgs-map-v1`, validation on load, and the registry of shipped maps.

A map file is JSON::

    {"format": "marl-bgs-map-v1", "id": 47, "name": "...", "split": "test",
     "description": "...",
     "obstacles": [{"kind": "pillar", "x": 4.0, "y": 7.5, "radius": 0.5},
                   {"kind": "wall", "x": 8.0, "y": 5.0, "width": 0.5, "height": 1.5,
                    "theta": 0.0}]}

Coordinates are map units (x east, y north, 20 x 10); a wall's width is its full extent along its
own x axis before the counter-clockwise rotation `theta` (radians, default 0). Obstacles must lie
inside the map; at most 32 per map.

Splits and ids: a file's `split` is "curriculum" (ids 0-11), "train" (12-41), "validation"
(42-46), "test" (47-51) or "custom" (any id, for user maps); the id must lie in its split's range.
The registry's `split("train")` returns 0-41, since the curriculum maps are training maps too.

Mirror symmetry: every map whose split is not "custom" must mirror exactly across x = 10: each
obstacle at (x, y, theta) has a partner of the same shape at (20 - x, y, -theta), compared as
shapes (a wall's theta is equivalent modulo pi, a square's modulo pi/2; an obstacle on the centre
line may be its own partner). This is what makes a spawn swap a fair rematch. A "custom" map may be
asymmetric on purpose (attack/defence studies); the engine's per-team frames still work, and
evaluation with spawn swaps keeps such games fair on average. `mirror_mismatches` (in
`marl_bgs.tdm.maps.symmetry`) tells users which obstacles break symmetry.

Playability: `parse` (and so `load_file`) also rejects maps whose spawn pads are blocked or cannot
all reach each other for a body (see `marl_bgs.tdm.maps.checks`); the shipped maps are held to the
same checks by the test suite, so loading them skips the flood fill.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from marl_bgs.core.arena import MAP_HEIGHT, MAP_WIDTH, MAX_OBSTACLES, OBSTACLE_PILLAR, OBSTACLE_WALL
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.geometry import Obstacles
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


CUSTOM_MAP_ID = -1  # what `GameState.map_id` records for a map loaded from a file or document


class MapError(ConfigError):
    """A map file or map request is invalid; the message names the field and what is allowed.
    A `ConfigError`, so `except marl_bgs.ConfigError` catches every bad setting, maps included."""


@dataclass(frozen=True)
class MapSpec:
    """One validated map: metadata and its obstacles as plain tuples."""

    id: int
    name: str
    split: str
    description: str
    obstacles: tuple[dict[str, float | str], ...]

    @property
    def record_id(self) -> int:
        """The id a game state records: the map's id, or `CUSTOM_MAP_ID` for a custom map."""
        return CUSTOM_MAP_ID if self.split == "custom" else self.id

    def to_obstacles(self) -> Obstacles:
        """Padded numpy arrays in the engine's obstacle layout."""
        kind = np.zeros(MAX_OBSTACLES, np.int32)
        center = np.zeros((MAX_OBSTACLES, 2), np.float32)
        size = np.zeros((MAX_OBSTACLES, 2), np.float32)
        theta = np.zeros(MAX_OBSTACLES, np.float32)
        for i, o in enumerate(self.obstacles):
            center[i] = (o["x"], o["y"])
            if o["kind"] == "pillar":
                kind[i] = OBSTACLE_PILLAR
                size[i] = (o["radius"], o["radius"])
            else:
                kind[i] = OBSTACLE_WALL
                size[i] = (o["width"], o["height"])
                theta[i] = o.get("theta", 0.0)
        active = kind > 0
        return Obstacles(kind=kind, center=center, size=size, theta=theta, active=active)  # type: ignore[arg-type]


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MapError(f"{field}: expected a finite number, got {value!r}")
    return float(value)


def _obstacle(raw: Any, field: str) -> dict[str, float | str]:
    if not isinstance(raw, dict):
        raise MapError(f"{field}: expected an object, got {type(raw).__name__}")
    kind = raw.get("kind")
    if kind not in _KEYS:
        raise MapError(f"{field}.kind: expected 'pillar' or 'wall', got {kind!r}")
    unknown = set(raw) - _KEYS[kind]
    if unknown:
        raise MapError(f"{field}: unknown key(s) {sorted(unknown)}; allowed {sorted(_KEYS[kind])}")
    out: dict[str, float | str] = {"kind": kind}
    required = _KEYS[kind] - {"kind", "theta"}
    for key in sorted(required):
        if key not in raw:
            raise MapError(f"{field}.{key}: missing")
        out[key] = _number(raw[key], f"{field}.{key}")
    out["theta"] = _number(raw.get("theta", 0.0), f"{field}.theta") if kind == "wall" else 0.0
    for key in ("radius", "width", "height"):
        if key in out and not 0.0 < float(out[key]) <= 20.0:
            raise MapError(f"{field}.{key}: must be in (0, 20], got {out[key]}")
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
        raise MapError(f"{source}: unknown key(s) {sorted(unknown)}; allowed {sorted(_TOP_KEYS)}")
    if raw.get("format") != FORMAT:
        raise MapError(f"{source}.format: expected {FORMAT!r}, got {raw.get('format')!r}")
    map_id = raw.get("id")
    if isinstance(map_id, bool) or not isinstance(map_id, int) or map_id < 0:
        raise MapError(f"{source}.id: expected a non-negative integer, got {map_id!r}")
    name, desc = raw.get("name"), raw.get("description", "")
    if not isinstance(name, str) or not 0 < len(name) <= 64:
        raise MapError(f"{source}.name: expected a string of 1-64 characters, got {name!r}")
    if not isinstance(desc, str) or len(desc) > 2000:
        raise MapError(f"{source}.description: expected a string of at most 2000 characters")
    split_name = raw.get("split")
    if split_name not in _SPLIT_OF_FILE:
        allowed = list(_SPLIT_OF_FILE)
        raise MapError(f"{source}.split: expected one of {allowed}, got {split_name!r}")
    obstacles = raw.get("obstacles")
    if not isinstance(obstacles, list) or len(obstacles) > MAX_OBSTACLES:
        raise MapError(f"{source}.obstacles: expected a list of 0 to {MAX_OBSTACLES} obstacles")
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
        from marl_bgs.tdm.maps.checks import check_playable  # late: checks imports this module

        check_playable(spec, source=source)
    return spec


def load_file(path: str | Path) -> MapSpec:
    """Read and validate a map file from disk (size-limited; malformed JSON is a MapError)."""
    path = Path(path)
    if not path.is_file():
        raise MapError(f"map file {str(path)!r} does not exist")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise MapError(f"map file {str(path)!r} is larger than {MAX_FILE_BYTES} bytes")
    try:
        raw = json.loads(path.read_bytes().decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as err:  # bad UTF-8 or JSON, huge ints, deep nesting
        raise MapError(f"map file {str(path)!r} is not valid JSON: {err}") from None
    return parse(raw, source=path.name)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        dup = sorted(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise json.JSONDecodeError(f"duplicate key(s) {dup[:5]}", "", 0)
    return out


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


def load(map_ref: int | str | Path | MapSpec) -> MapSpec:
    """A map by id, by name (case-insensitive), by file path, or a MapSpec passed through."""
    if isinstance(map_ref, MapSpec):
        return map_ref
    shipped = _shipped()
    if isinstance(map_ref, bool) or not isinstance(map_ref, int | np.integer | str | Path):
        raise MapError(f"map_id: expected an int id, a map name or a path, got {map_ref!r}")
    if isinstance(map_ref, int | np.integer):
        map_ref = int(map_ref)
        if map_ref not in shipped:
            raise MapError(f"map_id: {map_ref} is not a shipped map; allowed ids {all_ids()}")
        return shipped[map_ref]
    if isinstance(map_ref, str):
        by_name = {s.name.lower(): s for s in shipped.values()}
        if map_ref.lower() in by_name:
            return by_name[map_ref.lower()]
        if not map_ref.endswith(".json"):
            raise MapError(f"map_id: no shipped map is named {map_ref!r}")
    return load_file(map_ref)
