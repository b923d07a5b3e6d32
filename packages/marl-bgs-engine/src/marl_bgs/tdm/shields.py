"""Spawn shields ending: an agent whose shield ends inside a solid body moves to the nearest free
point of a grid over the map (`free_grid`, kept in the game state)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import MAP_HEIGHT, MAP_WIDTH
from marl_bgs.core.geometry import Obstacles, body_fits
from marl_bgs.core.movement import overlap_pairs, touching

GRID_STEP = 0.25  # resolution of the free-space grid used to clear bodies
GRID_SHAPE = (round(MAP_WIDTH / GRID_STEP) + 1, round(MAP_HEIGHT / GRID_STEP) + 1)


def free_grid(obstacles: Obstacles) -> jnp.ndarray:
    """bool [81, 41]: whether a body fits at each point (i, j) * GRID_STEP of the map."""
    gx = jnp.arange(GRID_SHAPE[0]) * GRID_STEP
    gy = jnp.arange(GRID_SHAPE[1]) * GRID_STEP
    pts = jnp.stack(jnp.meshgrid(gx, gy, indexing="ij"), axis=-1)
    return body_fits(pts, obstacles)


def _grid_offsets(radius_cells: int = 8) -> np.ndarray:
    """Integer grid offsets within a radius, nearest first (ties broken by angle)."""
    r = np.arange(-radius_cells, radius_cells + 1)
    off = np.stack(np.meshgrid(r, r, indexing="ij"), -1).reshape(-1, 2)
    off = off[np.hypot(off[:, 0], off[:, 1]) <= radius_cells]
    order = np.lexsort((np.arctan2(off[:, 1], off[:, 0]), np.hypot(off[:, 0], off[:, 1])))
    return off[order].astype(np.int32)


OFFSETS = _grid_offsets()


def clear_bodies(
    pos: jnp.ndarray, ending: jnp.ndarray, solid: jnp.ndarray, free: jnp.ndarray,
    left: jnp.ndarray, class_id: jnp.ndarray,
) -> tuple[jnp.ndarray, jnp.ndarray]:  # fmt: skip
    """Move agents whose shield ends, if they overlap a solid body, to the nearest free grid point.

    A free point fits the body (map and obstacles, from the `free` grid) and touches no solid body.
    Overlapping agents are placed one at a time, each against the bodies already settled, in order
    of their distance from their own spawn end, then y, then class (slot order only between two
    agents alike in all of these); each takes the free point nearest to it, equally near points
    ordered in its own frame (`left`: its team spawns on the left). One with no free point within
    2 units stays. Returns (positions, displaced).
    """
    n = pos.shape[0]
    blockers = solid | ending
    needs = ending & jnp.any(overlap_pairs(pos, blockers), axis=1)
    own_x = jnp.where(left, pos[:, 0], MAP_WIDTH - pos[:, 0])
    # Each agent's place in the order (a sort by pairwise comparison: few agents, no sort kernel);
    # the loop runs only as long as some game needs it.
    keys = (own_x, pos[:, 1], class_id, jnp.arange(n))
    before = jnp.zeros((n, n), bool)  # [i, j]: j comes before i
    for key in reversed(keys):
        before = (key[None, :] < key[:, None]) | ((key[None, :] == key[:, None]) & before)
    rank = jnp.sum(before & needs[None, :], axis=1)
    count = jnp.sum(needs)
    offsets = jnp.asarray(OFFSETS)
    flip = jnp.asarray([-1, 1], jnp.int32)

    def place(carry: tuple[jnp.ndarray, jnp.ndarray]) -> tuple[jnp.ndarray, jnp.ndarray]:
        r, p = carry
        i = jnp.argmax(needs & (rank == r))
        others = blockers & (jnp.arange(n) != i)
        overlapping = jnp.any(overlap_pairs(p, blockers)[i] & others)
        own = offsets * jnp.where(left[i], 1, flip)  # [C, 2] in the agent's own frame
        cell = jnp.round(p[i] / GRID_STEP).astype(jnp.int32) + own
        inside = jnp.all((cell >= 0) & (cell < jnp.asarray(GRID_SHAPE)), axis=-1)
        cell = jnp.clip(cell, 0, jnp.asarray(GRID_SHAPE) - 1)
        cand = cell.astype(jnp.float32) * GRID_STEP
        near = touching(cand[:, None, 0], cand[:, None, 1], p[None, :, 0], p[None, :, 1])
        blocked = jnp.any(near & others[None], -1)
        ok = inside & free[cell[:, 0], cell[:, 1]] & ~blocked
        gap = jnp.sum(jnp.square(cand - p[i]), axis=-1)
        best = jnp.argmin(jnp.where(ok, gap, jnp.inf))  # the first of equally near points
        move_it = overlapping & jnp.any(ok)
        return r + 1, jnp.where(move_it, p.at[i].set(cand[best]), p)

    _, new = jax.lax.while_loop(lambda c: c[0] < count, place, (jnp.int32(0), pos))
    return new, jnp.any(new != pos, axis=-1)
