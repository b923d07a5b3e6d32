"""Mirror symmetry of obstacle lists across the centre line x = MAP_WIDTH / 2 (pure Python).

Obstacles are the validated dicts of `marl_bgs.tdm.maps.registry`. Shapes are compared as regions of
the plane: pillars by centre and radius, walls by their corner sets, so a wall's theta is equivalent
modulo pi (and a square's modulo pi/2) and width/height may swap with a quarter turn.
"""

from __future__ import annotations

import math

from marl_bgs.core.arena import MAP_WIDTH

MIRROR_TOL = 1e-5  # map units: absorbs float rounding of 20 - x, not design slop


def wall_corners(o: dict[str, float | str]) -> list[tuple[float, float]]:
    """The four corners of a wall (centre, full width and height, rotation theta)."""
    x, y, t = float(o["x"]), float(o["y"]), float(o["theta"])
    w, h = float(o["width"]) / 2, float(o["height"]) / 2
    c, s = math.cos(t), math.sin(t)
    return [(x + c * u - s * v, y + s * u + c * v) for u, v in ((w, h), (-w, h), (-w, -h), (w, -h))]


def _same_shape(a: dict[str, float | str], b: dict[str, float | str]) -> bool:
    """Same obstacle as a region of the plane (walls compared by their corner sets)."""
    if a["kind"] != b["kind"]:
        return False
    if a["kind"] == "pillar":
        return all(abs(float(a[k]) - float(b[k])) <= MIRROR_TOL for k in ("x", "y", "radius"))
    ca, cb = wall_corners(a), wall_corners(b)
    near = [[math.dist(p, q) <= MIRROR_TOL for q in cb] for p in ca]
    return all(any(row) for row in near) and all(any(col) for col in zip(*near, strict=True))


def mirrored(o: dict[str, float | str]) -> dict[str, float | str]:
    """The obstacle reflected across the centre line x = MAP_WIDTH / 2."""
    return {**o, "x": MAP_WIDTH - float(o["x"]), "theta": -float(o.get("theta", 0.0))}


def mirror_mismatches(obstacles: tuple[dict[str, float | str], ...]) -> list[int]:
    """Indices of obstacles left without a mirror partner (each partner is used once)."""
    used: set[int] = set()
    missing: list[int] = []
    for i, o in enumerate(obstacles):
        if i in used:
            continue
        m = mirrored(o)
        free = (j for j in range(i, len(obstacles)) if j not in used)
        j = next((j for j in free if _same_shape(m, obstacles[j])), None)
        if j is None:
            missing.append(i)
        else:
            used.update((i, j))
    return missing
