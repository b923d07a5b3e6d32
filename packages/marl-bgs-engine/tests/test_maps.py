"""Shipped maps and the map-file validator: ids, splits, symmetry, playability, hostile input."""

from __future__ import annotations

import copy
import json
import math
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

from marl_bgs.core.arena import MAP_WIDTH, MAX_OBSTACLES, NEAR_OBSTACLES
from marl_bgs.core.geometry import clearance
from marl_bgs.tdm.maps import (
    MapError,
    MapSpec,
    all_ids,
    check_playable,
    load,
    load_file,
    map_stats,
    parse,
    split,
)
from marl_bgs.tdm.maps.checks import blocked_pads, crowding, flood_fill, unreachable_pads
from marl_bgs.tdm.maps.registry import MAX_FILE_BYTES
from marl_bgs.testing import DELETE, mutated

IDS = list(range(52))

# Test map 47 as printed in the paper's S7.2 prompt (kind, x, y, radius | width, height, theta).
MAP_47 = [
    ("pillar", 4.0, 7.5, 0.5),
    ("pillar", 10.0, 9.5, 0.5),
    ("pillar", 6.0, 0.5, 0.5),
    ("pillar", 10.0, 0.5, 0.5),
    ("pillar", 14.0, 0.5, 0.5),
    ("pillar", 16.0, 2.5, 0.5),
    ("pillar", 16.0, 7.5, 0.5),
    ("pillar", 7.8, 2.0, 0.5),
    ("pillar", 12.2, 8.0, 0.5),
    ("pillar", 6.0, 9.5, 0.5),
    ("pillar", 12.2, 2.0, 0.5),
    ("pillar", 7.8, 8.0, 0.5),
    ("pillar", 14.0, 9.5, 0.5),
    ("pillar", 4.0, 2.5, 0.5),
    ("wall", 8.0, 5.0, 0.5, 1.5, 0.0),
    ("wall", 12.0, 5.0, 0.5, 1.5, 0.0),
    ("wall", 6.0, 6.5, 1.0, 0.5, 0.0),
    ("wall", 14.0, 6.5, 1.0, 0.5, 0.0),
    ("wall", 6.0, 3.5, 1.0, 0.5, 0.0),
    ("wall", 14.0, 3.5, 1.0, 0.5, 0.0),
    ("wall", 2.0, 7.9, 0.01, 2.0, 0.0),
    ("wall", 3.0, 5.0, 0.01, 2.0, 0.0),
    ("wall", 2.0, 2.1, 0.01, 2.0, 0.0),
    ("wall", 18.0, 7.9, 0.01, 2.0, 0.0),
    ("wall", 17.0, 5.0, 0.01, 2.0, 0.0),
    ("wall", 18.0, 2.1, 0.01, 2.0, 0.0),
    ("wall", 10.0, 1.5, 0.01, 1.0, 0.0),
    ("wall", 10.0, 8.5, 0.01, 1.0, 0.0),
    ("wall", 3.0, 5.0, 1.0, 1.0, 0.7853982),
    ("wall", 17.0, 5.0, 1.0, 1.0, 0.7853982),
    ("pillar", 10.0, 2.5, 0.5),
    ("pillar", 10.0, 7.5, 0.5),
]


def _doc(obstacles: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    base = {"format": "marl-bgs-map-v1", "id": 100, "name": "Mine", "split": "custom"}
    return {**base, "description": "", "obstacles": obstacles, **top}


def _pillar(x: float, y: float, r: float = 0.5) -> dict[str, Any]:
    return {"kind": "pillar", "x": x, "y": y, "radius": r}


def _wall(x: float, y: float, w: float, h: float, theta: float = 0.0) -> dict[str, Any]:
    return {"kind": "wall", "x": x, "y": y, "width": w, "height": h, "theta": theta}


@pytest.fixture(scope="module")
def specs() -> dict[int, MapSpec]:
    return {i: load(i) for i in all_ids()}


@pytest.fixture(scope="module")
def stats(specs: dict[int, MapSpec]) -> dict[int, Any]:
    return {i: map_stats(s, resolution=0.1) for i, s in specs.items()}


# ---------------------------------------------------------------- registry and splits


def test_52_maps_with_ids_names_and_files(specs: dict[int, MapSpec]) -> None:
    assert all_ids() == IDS
    names = [s.name for s in specs.values()]
    assert len({n.lower() for n in names}) == 52
    assert all(s.description for s in specs.values())
    files = sorted(
        e.name for e in resources.files("marl_bgs.tdm.maps").joinpath("data").iterdir()
        if e.name.endswith(".json")
    )  # fmt: skip
    assert len(files) == 52
    for name, spec in zip(files, specs.values(), strict=True):
        assert re.fullmatch(rf"{spec.id:02d}_[a-z0-9_]+\.json", name)


def test_splits(specs: dict[int, MapSpec]) -> None:
    assert split("curriculum") == list(range(12))
    assert split("train") == list(range(42))
    assert split("validation") == [42, 43, 44, 45, 46]
    assert split("test") == [47, 48, 49, 50, 51]
    file_split = {i: s.split for i, s in specs.items()}
    assert {file_split[i] for i in range(12)} == {"curriculum"}
    assert {file_split[i] for i in range(12, 42)} == {"train"}
    assert {file_split[i] for i in range(42, 47)} == {"validation"}
    assert {file_split[i] for i in range(47, 52)} == {"test"}
    with pytest.raises(MapError, match="split"):
        split("training")


def test_load_by_name_and_id() -> None:
    assert load(34).name == "Infinity"
    assert load("Infinity").id == 34
    assert load("infinity") is load(34)
    assert load(0).obstacles == ()
    with pytest.raises(MapError, match="map_id"):
        load(52)
    with pytest.raises(MapError, match="map_id"):
        load("Nowhere")
    with pytest.raises(MapError, match="map_id"):
        load(True)


def test_map_47_is_the_papers_layout(specs: dict[int, MapSpec]) -> None:
    got = []
    for o in specs[47].obstacles:
        if o["kind"] == "pillar":
            got.append(("pillar", o["x"], o["y"], o["radius"]))
        else:
            got.append(("wall", o["x"], o["y"], o["width"], o["height"], o["theta"]))
    assert got == MAP_47
    assert specs[47].split == "test"


def test_counts_and_kinds(specs: dict[int, MapSpec], stats: dict[int, Any]) -> None:
    assert all(0 <= len(s.obstacles) <= MAX_OBSTACLES for s in specs.values())
    assert len(specs[0].obstacles) == 0
    assert max(len(s.obstacles) for s in specs.values()) == MAX_OBSTACLES
    # The curriculum introduces pillars, then straight walls, then diagonal walls, then mixes them.
    first = {
        kind: min(i for i in range(12) if getattr(stats[i], kind) > 0)
        for kind in ("pillars", "straight_walls", "diagonal_walls")
    }
    assert 0 < first["pillars"] < first["straight_walls"] < first["diagonal_walls"] < 11
    assert stats[11].pillars
    assert stats[11].straight_walls
    assert stats[11].diagonal_walls
    walls = [o for s in specs.values() for o in s.obstacles if o["kind"] == "wall"]
    thicknesses = {min(float(o["width"]), float(o["height"])) for o in walls}
    assert min(thicknesses) <= 0.01
    assert max(thicknesses) >= 1.0


def test_statistics_span_a_wide_range(stats: dict[int, Any]) -> None:
    free = [s.free_area for s in stats.values()]
    blocked = [s.sight_blocked for s in stats.values()]
    assert max(free) == 1.0
    assert min(free) < 0.8
    assert min(blocked) == 0.0
    assert max(blocked) == 1.0
    assert len({round(b, 2) for b in blocked}) >= 10
    assert stats[1].free_area == pytest.approx(1 - math.pi / 200, abs=2e-3)  # one pillar, r = 1
    assert any(s.pillars == 0 and s.obstacles > 0 for s in stats.values())
    assert any(s.pillars == s.obstacles > 20 for s in stats.values())


# ---------------------------------------------------------------- symmetry


def _outline(o: dict[str, Any], mirror: bool) -> tuple[str, np.ndarray]:
    """A pillar as (x, y, r); a wall as its four corners, optionally mirrored across x = 10."""
    x = MAP_WIDTH - o["x"] if mirror else o["x"]
    if o["kind"] == "pillar":
        return "pillar", np.array([[x, o["y"], o["radius"]]])
    t = -o["theta"] if mirror else o["theta"]
    w, h, c, s = o["width"] / 2, o["height"] / 2, math.cos(t), math.sin(t)
    uv = ((w, h), (-w, h), (-w, -h), (w, -h))
    return "wall", np.array([(x + c * u - s * v, o["y"] + s * u + c * v) for u, v in uv])


def _same(a: tuple[str, np.ndarray], b: tuple[str, np.ndarray]) -> bool:
    if a[0] != b[0]:
        return False
    d = np.linalg.norm(a[1][:, None, :] - b[1][None, :, :], axis=-1)
    return bool((d.min(axis=0) < 1e-4).all() and (d.min(axis=1) < 1e-4).all())


@pytest.mark.parametrize("map_id", IDS)
def test_halves_mirror_exactly(map_id: int, specs: dict[int, MapSpec]) -> None:
    originals = [_outline(o, mirror=False) for o in specs[map_id].obstacles]
    unmatched = list(range(len(originals)))
    for i, o in enumerate(specs[map_id].obstacles):  # each mirror image takes one original, once
        image = _outline(o, mirror=True)
        j = next((j for j in unmatched if _same(image, originals[j])), None)
        assert j is not None, f"map {map_id} obstacle {i} {o} has no mirror partner"
        unmatched.remove(j)
    assert unmatched == []


_clearance = jax.jit(clearance)


def test_clearance_field_is_mirror_symmetric(specs: dict[int, MapSpec]) -> None:
    gx, gy = np.meshgrid(np.linspace(0, 20, 81), np.linspace(0, 10, 41))
    points = np.stack([gx, gy], -1).astype(np.float32)
    flipped = points.copy()
    flipped[..., 0] = MAP_WIDTH - flipped[..., 0]
    for spec in specs.values():
        obs = spec.to_obstacles()
        a, b = np.asarray(_clearance(points, obs)), np.asarray(_clearance(flipped, obs))
        np.testing.assert_allclose(np.minimum(a, 20), np.minimum(b, 20), atol=1e-4)


def test_not_mirrored_is_rejected_except_custom() -> None:
    doc = _doc([_pillar(6, 3), _pillar(14, 3), _wall(5, 7, 2, 0.3, 0.5), _wall(15, 7, 2, 0.3, 0.5)])
    with pytest.raises(MapError, match=r"obstacles\[2\]: not mirrored"):
        parse({**doc, "id": 20, "split": "train"})
    doc["obstacles"][3]["theta"] = -0.5 + math.pi  # equivalent modulo pi
    assert len(parse({**doc, "id": 20, "split": "train"}).obstacles) == 4
    lone = _doc([_pillar(6, 3), _pillar(6, 3), _pillar(14, 3)], id=48, split="test")
    with pytest.raises(MapError, match=r"obstacles\[1\]: not mirrored"):
        parse(lone)
    assert parse({**lone, "id": 7, "split": "custom"}).split == "custom"


# ---------------------------------------------------------------- playability


@pytest.mark.parametrize("map_id", IDS)
def test_pads_clear_and_connected(map_id: int, specs: dict[int, MapSpec]) -> None:
    spec = specs[map_id]
    assert blocked_pads(spec) == {}
    assert unreachable_pads(spec) == []


def test_shipped_maps_are_not_too_crowded_for_movement(specs: dict[int, MapSpec]) -> None:
    # Movement tests only the NEAR_OBSTACLES obstacles listed for a body's cell; every map keeps
    # to it.
    counts = [crowding(specs[m])[0] for m in IDS]
    assert max(counts) <= NEAR_OBSTACLES
    assert max(counts) >= 8  # the check sees real crowds (the most crowded cells reach 12)


def test_crowded_maps_are_rejected() -> None:
    # Thirteen small pillars in a ring of radius 2 around (10.5, 5.5), the centre of a cell: all
    # within a step of it.
    ring = [_pillar(10.5 + 2 * math.cos(a), 5.5 + 2 * math.sin(a), 0.1)
            for a in np.linspace(0, 2 * math.pi, 13, endpoint=False)]  # fmt: skip
    with pytest.raises(MapError, match=r"obstacles: 13 obstacles lie within one tick's reach "
                       r"\(2.5 units\) of the cell x \d+-\d+, y \d+-\d+ \(counted out to 3.21 "
                       r"from its centre\); at most 12 may"):  # fmt: skip
        parse(_doc(ring))
    check_playable(parse(_doc(ring[:12])))


def test_flood_fill_small_grid() -> None:
    free = np.array(
        [[1, 1, 0, 1], [0, 1, 0, 1], [1, 1, 0, 1], [1, 0, 0, 1], [1, 1, 1, 1]], bool
    )  # fmt: skip
    reached = flood_fill(free, (0, 0))
    assert reached.sum() == free.sum()
    free[4, 1] = False
    reached = flood_fill(free, (0, 0))
    assert not reached[:, 3].any()
    assert reached[3, 0]


def test_blocked_or_cut_maps_are_rejected() -> None:
    with pytest.raises(MapError, match=r"obstacles\[0\]: overlaps the body on the left pad 2"):
        parse(_doc([_pillar(1.2, 5.0, 0.3)]))
    cut = _doc([_wall(10, 5, 0.2, 10)])
    with pytest.raises(MapError, match="cannot walk"):
        parse(cut)
    cut["obstacles"][0]["height"] = 8.8  # leaves gaps of 0.6 at both edges: too narrow
    with pytest.raises(MapError, match="cannot walk"):
        parse(cut)
    cut["obstacles"][0]["height"] = 7.6  # gaps of 1.2 map units: a body passes
    check_playable(parse(cut))


# ---------------------------------------------------------------- hostile and malformed input

VALID = _doc([_pillar(6, 5), _pillar(14, 5), _wall(10, 2, 1, 1, 0.3), _wall(10, 2, 1, 1, -0.3)])


def _mutate(path: str, value: Any) -> dict[str, Any]:
    """VALID with one field set, or removed where `value` is KeyError."""
    return mutated(VALID, path, DELETE if value is KeyError else value)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("extra", 1, "unknown key"),
        ("obstacles.0.theta", 0.0, r"obstacles\[0\]: unknown key"),
        ("obstacles.0.radius", -0.5, r"obstacles\[0\]\.radius"),
        ("obstacles.2.width", 0.0, r"obstacles\[2\]\.width"),
        ("obstacles.0.x", float("nan"), r"obstacles\[0\]\.x"),
        ("obstacles.0.y", float("inf"), r"obstacles\[0\]\.y"),
        ("obstacles.0.x", True, r"obstacles\[0\]\.x"),
        ("obstacles.0.radius", "0.5", r"obstacles\[0\]\.radius"),
        ("obstacles.0.kind", "crate", r"obstacles\[0\]\.kind"),
        ("obstacles.1.y", KeyError, r"obstacles\[1\]\.y: missing"),
        ("obstacles.1.x", 19.8, r"obstacles\[1\]: obstacle crosses the map border"),
        ("obstacles.2.y", 0.4, r"obstacles\[2\]: obstacle crosses the map border"),
        ("obstacles.0", [6, 5, 0.5], r"obstacles\[0\]: expected an object"),
        ("obstacles", {"0": 1}, r"\.obstacles"),
        ("obstacles", [_pillar(10, 5, 0.1)] * (MAX_OBSTACLES + 1), r"\.obstacles"),
        ("format", "marl-bgs-map-v2", r"\.format"),
        ("split", "training", r"\.split"),
        ("id", True, r"\.id"),
        ("id", -1, r"\.id"),
        ("id", "3", r"\.id"),
        ("name", "", r"\.name"),
        ("name", 5, r"\.name"),
        ("description", None, r"\.description"),
    ],
)
def test_malformed_documents_name_the_field(path: str, value: Any, message: str) -> None:
    with pytest.raises(MapError, match=message):
        parse(_mutate(path, value))


def test_split_must_match_id() -> None:
    with pytest.raises(MapError, match=r"\.split: 'train' holds ids 12-41"):
        parse({**VALID, "id": 47, "split": "train"})
    assert parse({**VALID, "id": 47, "split": "test"}).id == 47


def test_mirroring_is_checked_after_fields() -> None:
    doc = _mutate("obstacles.1.y", 4.0)
    doc.update(id=49, split="test")
    with pytest.raises(MapError, match=r"obstacles\[0\]: not mirrored"):
        parse(doc)


def _write(tmp_path: Path, text: str | bytes, name: str = "mine.json") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        (b"\xff\xfe{}", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
        ('{"id": ' + "9" * 5000 + "}", "not valid JSON"),
        ('{"format": "marl-bgs-map-v1", "format": "x"}', "duplicate key"),
        ("[]", "top level"),
        ('{"format": "marl-bgs-map-v1", "id": 100, "name": "n", "split": "custom", '
         '"obstacles": [{"kind": "pillar", "x": NaN, "y": 5, "radius": 0.5}]}',
         r"obstacles\[0\]\.x"),
    ],
)  # fmt: skip
def test_hostile_files(tmp_path: Path, text: str | bytes, message: str) -> None:
    with pytest.raises(MapError, match=message):
        load_file(_write(tmp_path, text))


def test_huge_and_missing_files(tmp_path: Path) -> None:
    big = _write(tmp_path, " " * (MAX_FILE_BYTES + 1) + json.dumps(VALID))
    with pytest.raises(MapError, match="larger than"):
        load_file(big)
    with pytest.raises(MapError, match="does not exist"):
        load_file(tmp_path / "absent.json")


def test_user_file_by_path(tmp_path: Path) -> None:
    asymmetric = copy.deepcopy(VALID)
    asymmetric["obstacles"].append(_wall(7, 8, 2, 0.2, 0.7))
    path = _write(tmp_path, json.dumps(asymmetric), "asymmetric.json")
    spec = load(str(path))
    assert spec == load(path) == load_file(path)
    assert (spec.id, spec.name, spec.split, len(spec.obstacles)) == (100, "Mine", "custom", 5)
    assert spec.to_obstacles().kind.tolist()[:6] == [1, 1, 2, 2, 2, 0]


@pytest.mark.slow
def test_docs_page_is_current(docs_pages) -> None:
    page = Path(__file__).resolve().parents[3] / "docs" / "maps.md"
    if not page.is_file():
        pytest.skip("docs/maps.md lives in the repository, not in the installed package")
    markdown = docs_pages("maps_page").markdown

    assert page.read_text(encoding="utf-8") == markdown(), (
        "run python ci/docs_pages/maps_page.py --out docs/maps.md"
    )


def test_the_map_modules_import_each_other_without_a_circle() -> None:
    # registry builds MapSpecs and runs the playability checks; checks reads MapSpecs from spec:
    # no module of the maps folder reaches itself through its imports, late ones included.
    import ast
    from graphlib import TopologicalSorter

    import marl_bgs.tdm.maps

    folder = Path(marl_bgs.tdm.maps.__file__).parent
    package = "marl_bgs.tdm.maps."
    graph = {}
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        graph[path.stem] = {m.removeprefix(package) for m in imported if m.startswith(package)}
    assert graph["checks"] == {"spec"}
    assert {"checks", "spec"} <= graph["registry"]
    order = list(TopologicalSorter(graph).static_order())  # CycleError on a circle
    assert order.index("spec") < order.index("checks") < order.index("registry")
