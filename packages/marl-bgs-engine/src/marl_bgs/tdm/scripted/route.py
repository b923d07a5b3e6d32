"""Routes around obstacles for the scripted teams: walking distances on a 1 x 1 grid of the field.

Each cell is stood for by its centre, or where a body does not fit there by the first of four
points around it that fits (so narrow passages between obstacles stay connected). A game's
`terrain` (those points, and which steps between neighbouring cells' points a body can take) is a
constant of its map, worked out on a game's first tick from the public obstacles and kept in the
team's memory. The walking distance to the team's goal is relaxed a few sweeps every
tick from the previous tick's field (the goal moves little from tick to tick), so a route settles
within a few ticks of a new goal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import MAP_HEIGHT, MAP_WIDTH, NEAR_GRID, NEAR_OBSTACLES
from marl_bgs.core.geometry import (
    Obstacles,
    body_fits,
    length,
    near_obstacles,
    near_table,
    sweep_reach,
)

SHAPE = (round(MAP_WIDTH), round(MAP_HEIGHT))  # cells of 1 x 1, [x, y]
STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))
_OPPOSITE = tuple(STEPS.index((-dx, -dy)) for dx, dy in STEPS)
FAR = 99.0  # unreachable
SWEEPS = 4  # relaxation sweeps per tick
BATCH = 8  # games whose terrain is worked out together (`prepare`)

_CENTRES = np.stack(
    np.meshgrid(np.arange(SHAPE[0]) + 0.5, np.arange(SHAPE[1]) + 0.5, indexing="ij"), axis=-1
).astype(np.float32)  # [20, 10, 2]
# Where a cell may be stood for: its centre first, then four points around it.
OFFSETS = np.array([(0, 0), (0.3, 0.3), (-0.3, 0.3), (0.3, -0.3), (-0.3, -0.3)], np.float32)

# points [20, 10, 2], step lengths [20, 10, 8] (FAR where no step), near-obstacle table
# (`geometry.near_table`)
Terrain = tuple[jax.Array, jax.Array, jax.Array]


def _shift(a: jax.Array, dx: int, dy: int, fill: float | bool) -> jax.Array:
    """a[i + dx, j + dy] over the cells [20, 10, ...], `fill` outside the field."""
    pad = [(1, 1), (1, 1)] + [(0, 0)] * (a.ndim - 2)
    padded = jnp.pad(a, pad, constant_values=fill)
    return padded[1 + dx : 1 + dx + SHAPE[0], 1 + dy : 1 + dy + SHAPE[1]]


def terrain(obs: Obstacles, offsets: np.ndarray = OFFSETS) -> Terrain:
    """Each cell's point (the first of `offsets` from its centre where a body fits, default
    `OFFSETS`; the centre where nothing fits), the length of the step
    from it to the neighbour's point in each direction of `STEPS` (FAR where a body cannot walk
    it straight: both points fit and a body walks each half of the segment to its midpoint
    without touching an obstacle, exact by `sweep_reach`, each half tested against the obstacles
    near its own cell), and the obstacles near each cell (for testing moves)."""
    near = near_table(obs)
    # The obstacles near each cell (all a body within reach of the cell can touch), [20, 10, 12].
    centres = jnp.asarray(_CENTRES)
    local = near_obstacles(centres[..., 0], centres[..., 1], obs, near)
    trials = centres[:, :, None, :] + jnp.asarray(offsets)  # [20, 10, offsets, 2]
    ok = body_fits(trials, jax.tree.map(lambda f: f[:, :, None], local))
    fits = jnp.any(ok, axis=-1)
    first = jnp.argmax(ok, axis=-1)
    points = jnp.take_along_axis(trials, first[:, :, None, None], axis=2)[:, :, 0]
    others = jnp.stack([_shift(points, dx, dy, 0.0) for dx, dy in STEPS], axis=2)  # [20, 10, 8, 2]
    half = 0.5 * (others - points[:, :, None])
    clear = sweep_reach(points[..., 0], points[..., 1], half[..., 0], half[..., 1], local) >= 1.0
    steps = []
    for k, (dx, dy) in enumerate(STEPS):
        back = _shift(clear[..., _OPPOSITE[k]], dx, dy, False)  # the neighbour's half, walked back
        ok = fits & _shift(fits, dx, dy, False) & clear[..., k] & back
        steps.append(jnp.where(ok, length(others[:, :, k] - points), FAR))
    return points, jnp.stack(steps, axis=-1), near


def empty_terrain() -> Terrain:
    """The terrain of a game not worked out yet (no steps)."""
    near = jnp.zeros((*NEAR_GRID, NEAR_OBSTACLES), jnp.int8)
    return (
        jnp.zeros((*SHAPE, 2), jnp.float32),
        jnp.full((*SHAPE, len(STEPS)), FAR, jnp.float32),
        near,
    )


def prepare(ready: jax.Array, grid: Terrain, obs: Obstacles) -> Terrain:
    """Batched [n]: each game's `terrain`, worked out for the games not `ready` (their first
    tick) by `refresh`."""
    return refresh(~ready, grid, terrain, obs)


def refresh(need: jax.Array, kept: Any, make: Callable[[Any], Any], inputs: Any) -> Any:
    """Batched [n]: `kept` with the games that `need` it replaced by `make` of their `inputs`
    (one game's), `BATCH` games at a time in a loop that runs no round on a tick where no game
    needs it (`kept` is updated in place, never copied). For what is worked out once a game."""
    n = need.shape[0]
    size = min(BATCH, n)
    order = jnp.nonzero(need, size=n, fill_value=n)[0]  # the games to work out first
    order = jnp.concatenate([order, jnp.full(size, n, order.dtype)])  # a last round's padding

    def one_round(k: jax.Array, kept: Any) -> Any:
        idx = jax.lax.dynamic_slice(order, (k * size,), (size,))
        fresh = jax.vmap(make)(jax.tree.map(lambda a: a[jnp.minimum(idx, n - 1)], inputs))
        return jax.tree.map(lambda g, f: g.at[idx].set(f, mode="drop"), kept, fresh)

    rounds = (jnp.sum(need) + size - 1) // size
    return jax.lax.fori_loop(0, rounds, one_round, kept)


def relax(field: jax.Array, grid: Terrain, goal: jax.Array) -> jax.Array:
    """One game: the walking-distance field [20, 10] (from each cell's point) to `goal` [2]
    after `SWEEPS` sweeps from `field`. Cells whose point lies within 1.5 of the goal are seeded
    with their straight distance."""
    points, steps, _ = grid
    straight = length(points - goal)
    seed = jnp.where((straight <= 1.5) & jnp.any(steps < FAR, axis=-1), straight, FAR)
    return sweep(field, grid, seed, SWEEPS)


def sweep(field: jax.Array, grid: Terrain, seed: jax.Array, sweeps: int) -> jax.Array:
    """One game: `sweeps` relaxation sweeps of the walking-distance field [20, 10] from `field`,
    each cell at most its `seed` value (its distance to the goal where it is one, FAR
    elsewhere) and at most a neighbour's value plus the step between their points."""
    steps = grid[1]
    out = field
    for _ in range(sweeps):
        best = seed
        for k, (dx, dy) in enumerate(STEPS):
            best = jnp.minimum(best, _shift(out, dx, dy, FAR) + steps[..., k])
        out = jnp.minimum(best, FAR)
    return out


def walking(field: jax.Array, points: jax.Array, at: jax.Array) -> jax.Array:
    """Walking distance [...] from points `at` [..., 2] to the goal: through the best point of
    the four nearest cells (`points`, the terrain's first part; FAR where none is reachable)."""
    base = jnp.floor(at - 0.5).astype(jnp.int32)
    best = jnp.full(at.shape[:-1], FAR, jnp.float32)
    for ox, oy in ((0, 0), (1, 0), (0, 1), (1, 1)):
        i = jnp.clip(base[..., 0] + ox, 0, SHAPE[0] - 1)
        j = jnp.clip(base[..., 1] + oy, 0, SHAPE[1] - 1)
        hop = length(at - points[i, j])
        best = jnp.minimum(best, field[i, j] + hop)
    return best


def start_field() -> jax.Array:
    """A field with no goal yet."""
    return jnp.full(SHAPE, FAR, jnp.float32)
