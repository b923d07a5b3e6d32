"""Playability checks and statistics of maps, for the test suite and for users' own map files.

A map is playable when every spawn pad holds a body clear of obstacles and every pad can reach
every other pad for a body of radius `BODY_RADIUS`. Reachability is a flood fill over a grid of
body centres (default spacing 0.05 map units) whose clearance comes from
`marl_bgs.core.geometry.body_fits`, so it uses the engine's own collision geometry. Statistics:
obstacle counts by kind, the share of the map's area left free, and the share of the 25 left-right
pad-to-pad sight lines that obstacles block.

`python ci/docs_pages/maps_page.py --out docs/maps.md` (a docs tool outside the wheel) checks every
shipped map and writes the statistics page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import jax
import numpy as np

from marl_bgs.core.arena import (
    BODY_RADIUS,
    MAP_HEIGHT,
    MAP_WIDTH,
    MAX_STEP,
    NEAR_CELL,
    NEAR_OBSTACLES,
)
from marl_bgs.core.geometry import body_fits, clearance, obstacle_distance, segment_blocked
from marl_bgs.tdm.constants import SPAWN_PAD_X, SPAWN_PAD_Y
from marl_bgs.tdm.maps.spec import MapError, MapSpec

PADS = np.array(
    [(SPAWN_PAD_X, y) for y in SPAWN_PAD_Y] + [(MAP_WIDTH - SPAWN_PAD_X, y) for y in SPAWN_PAD_Y],
    np.float32,
)  # [10, 2]: left pads 0-4 (south to north), then right pads 0-4
PAD_NAMES = tuple(f"{side} pad {i}" for side in ("left", "right") for i in range(len(SPAWN_PAD_Y)))

_fits = jax.jit(body_fits)
_clearance = jax.jit(clearance)
_distance = jax.jit(obstacle_distance)
_blocked = jax.jit(segment_blocked)


@dataclass(frozen=True)
class MapStats:
    """Summary numbers of one map (see the module docstring)."""

    pillars: int
    straight_walls: int
    diagonal_walls: int
    free_area: float  # share of the 20 x 10 area not covered by obstacles
    sight_blocked: float  # share of the 25 left-right pad-to-pad segments that obstacles block

    @property
    def obstacles(self) -> int:
        """Total obstacle count."""
        return self.pillars + self.straight_walls + self.diagonal_walls


def _grid(resolution: float, centred: bool) -> np.ndarray:
    """Grid points [ny, nx, 2]: nodes k * resolution, or cell centres (k + 0.5) * resolution."""
    nx, ny = round(MAP_WIDTH / resolution), round(MAP_HEIGHT / resolution)
    if centred:
        xs, ys = (np.arange(nx) + 0.5) * resolution, (np.arange(ny) + 0.5) * resolution
    else:
        xs, ys = np.arange(nx + 1) * resolution, np.arange(ny + 1) * resolution
    gx, gy = np.meshgrid(xs, ys)
    return np.stack([gx, gy], axis=-1).astype(np.float32)


@cache
def _node_grid(resolution: float) -> np.ndarray:
    steps = [v / resolution for v in (SPAWN_PAD_X, *SPAWN_PAD_Y, MAP_WIDTH, MAP_HEIGHT)]
    if resolution <= 0 or any(abs(s - round(s)) > 1e-6 for s in steps):
        raise ValueError(f"resolution must divide 0.5 map units (e.g. 0.05, 0.1), got {resolution}")
    return _grid(resolution, centred=False)


def free_grid(spec: MapSpec, resolution: float = 0.05) -> np.ndarray:
    """Bool [ny, nx]: where a body centred on grid node (x=i*res, y=j*res) fits."""
    return np.asarray(_fits(_node_grid(resolution), spec.to_obstacles()))


def _run_labels(free: np.ndarray) -> np.ndarray:
    """Label each horizontal run of free cells with its own positive integer (0 where blocked)."""
    start = free.copy()
    start[:, 1:] &= ~free[:, :-1]
    return np.cumsum(start.ravel()).reshape(free.shape) * free


def flood_fill(free: np.ndarray, seed: tuple[int, int]) -> np.ndarray:
    """Cells of `free` (bool [ny, nx]) 4-connected to `seed` (row, col), as a bool array.

    Alternates whole-run sweeps along rows and columns, so it takes about one pass per turn of the
    longest path rather than one per cell.
    """
    rows, cols = _run_labels(free), _run_labels(free.T.copy())
    reached = np.zeros_like(free)
    reached[seed] = free[seed]
    while True:
        hit = np.zeros(rows.max() + 1, bool)
        hit[rows[reached]] = True
        hit[0] = False
        step = hit[rows]
        hit = np.zeros(cols.max() + 1, bool)
        hit[cols[step.T]] = True
        hit[0] = False
        step = hit[cols].T
        if np.array_equal(step, reached):
            return reached
        reached = step


def blocked_pads(spec: MapSpec) -> dict[str, int]:
    """Pads whose body overlaps an obstacle, each with the index of the nearest such obstacle."""
    obstacles = spec.to_obstacles()
    fits = np.asarray(_fits(PADS, obstacles))
    dist = np.asarray(_distance(PADS, obstacles))[:, : len(spec.obstacles)]
    return {PAD_NAMES[p]: int(np.argmin(dist[p])) for p in np.flatnonzero(~fits)}


def unreachable_pads(spec: MapSpec, resolution: float = 0.05) -> list[str]:
    """Pads a body cannot reach from left pad 0 (meaningful once every pad is clear)."""
    free = free_grid(spec, resolution)
    cells = np.rint(PADS[:, ::-1] / resolution).astype(int)  # (row, col)
    reached = flood_fill(free, (int(cells[0, 0]), int(cells[0, 1])))
    return [PAD_NAMES[p] for p, (r, c) in enumerate(cells) if not reached[r, c]]


# How far from a cell's centre an obstacle a body in the cell can reach in one tick may lie.
CELL_REACH = MAX_STEP + BODY_RADIUS + NEAR_CELL * math.sqrt(0.5)


def crowding(spec: MapSpec) -> tuple[int, float, float]:
    """The most obstacles a body in one NEAR_CELL cell of the field can reach in a tick, and that
    cell's lower corner (x, y).

    Counted from the cell's centre out to one tick's reach (MAX_STEP + BODY_RADIUS) plus half the
    cell's diagonal, so every obstacle a body anywhere in the cell can touch is counted (movement
    tests the NEAR_OBSTACLES obstacles nearest to the centre of the body's cell).
    """
    centres = _grid(NEAR_CELL, centred=True)
    counts = np.sum(np.asarray(_distance(centres, spec.to_obstacles())) < CELL_REACH, axis=-1)
    row, col = np.unravel_index(int(np.argmax(counts)), counts.shape)
    return int(counts[row, col]), float(col * NEAR_CELL), float(row * NEAR_CELL)


def check_playable(spec: MapSpec, source: str = "map", resolution: float = 0.05) -> None:
    """Raise MapError if a spawn pad is blocked, the pads are not all connected, or more than
    NEAR_OBSTACLES obstacles lie within one tick's reach of a cell of the field (`crowding`:
    movement tests only that many per body)."""
    crowded, x, y = crowding(spec)
    if crowded > NEAR_OBSTACLES:
        raise MapError(
            f"{source}.obstacles: {crowded} obstacles lie within one tick's reach "
            f"({MAX_STEP + BODY_RADIUS:g} units) of the cell x {x:g}-{x + NEAR_CELL:g}, "
            f"y {y:g}-{y + NEAR_CELL:g} (counted out to {CELL_REACH:.2f} from its centre); at most "
            f"{NEAR_OBSTACLES} may lie that close to one cell"
        )
    blocked = blocked_pads(spec)
    if blocked:
        pad, idx = next(iter(blocked.items()))
        more = f" (blocked pads: {sorted(blocked)})" if len(blocked) > 1 else ""
        raise MapError(f"{source}.obstacles[{idx}]: overlaps the body on the {pad}{more}")
    lost = unreachable_pads(spec, resolution)
    if lost:
        raise MapError(
            f"{source}.obstacles: a body (radius 0.5) cannot walk from left pad 0 to {lost}"
        )


def is_diagonal(obstacle: dict[str, float | str]) -> bool:
    """A wall whose theta is not a multiple of pi/2 (within 1e-3 radians)."""
    if obstacle["kind"] != "wall":
        return False
    quarter = math.pi / 2
    t = float(obstacle["theta"]) % quarter
    return min(t, quarter - t) > 1e-3


def map_stats(spec: MapSpec, resolution: float = 0.025) -> MapStats:
    """Counts by kind, free-area share (cell-centre sampling) and blocked pad-to-pad sight lines."""
    obstacles = spec.to_obstacles()
    kinds = [o["kind"] for o in spec.obstacles]
    diagonal = sum(is_diagonal(o) for o in spec.obstacles)
    free = np.asarray(_clearance(_grid(resolution, centred=True), obstacles)) > 0.0
    n = len(SPAWN_PAD_Y)
    left, right = np.repeat(PADS[:n], n, axis=0), np.tile(PADS[n:], (n, 1))
    blocked = np.asarray(_blocked(left, right, obstacles))
    return MapStats(
        pillars=kinds.count("pillar"),
        straight_walls=kinds.count("wall") - diagonal,
        diagonal_walls=diagonal,
        free_area=float(free.mean()),
        sight_blocked=float(blocked.mean()),
    )
