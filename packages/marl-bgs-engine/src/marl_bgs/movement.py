"""Movement: Warrior Charge relocation, ordinary moves with obstacle and body collisions, and
clearing bodies when a spawn shield ends.

Body collisions are resolved symmetrically, so the outcome never depends on slot order: every
agent proposes the furthest obstacle-free point of its move; while proposals overlap, each agent in
an overlap steps back along its own path, all at once, until nothing overlaps (an agent standing
still never moves). Two bodies block each other only when both are alive and unshielded.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.constants import BODY_RADIUS, EPS, MAP_HEIGHT, MAP_WIDTH
from marl_bgs.geometry import Obstacles, body_fits
from marl_bgs.tables import MOVE_VECTORS

PATH_STEPS = 8  # samples along a move: spacing <= 2/8 map units, so no wall can be jumped
CHARGE_STEPS = 16
CONTACT = 2.0 * BODY_RADIUS


def _overlaps(pos: jnp.ndarray, solid: jnp.ndarray) -> jnp.ndarray:
    """[10, 10] pairs of distinct solid bodies closer than contact distance."""
    diff = pos[:, None, :] - pos[None, :, :]
    close = jnp.sum(diff * diff, axis=-1) < (CONTACT - EPS) ** 2
    return close & solid[:, None] & solid[None, :] & ~jnp.eye(pos.shape[0], dtype=bool)


def charge(
    pos: jnp.ndarray, charger: jnp.ndarray, target: jnp.ndarray, solid: jnp.ndarray,
    obstacles: Obstacles,
) -> jnp.ndarray:  # fmt: skip
    """Relocate charging Warriors to contact distance with their target, over obstacles.

    The landing point backs off along the line towards the Warrior while it overlaps an obstacle,
    the map border or another body (at start-of-tick positions). Two Warriors landing on each other
    both stay where they were.
    """
    tpos = pos[jnp.clip(target, 0)]
    gap = tpos - pos
    length = jnp.sqrt(jnp.sum(gap * gap, axis=-1, keepdims=True))
    contact = jnp.where(length > CONTACT, tpos - gap / jnp.maximum(length, 1e-9) * CONTACT, pos)
    k = jnp.linspace(0.0, 1.0, CHARGE_STEPS + 1)[None, :, None]
    cand = contact[:, None, :] + (pos - contact)[:, None, :] * k  # [10, S, 2], start last
    diff = cand[:, :, None, :] - pos[None, None, :, :]
    near = jnp.sum(diff * diff, axis=-1) < (CONTACT - EPS) ** 2  # [10, S, 10]
    others = solid[None, None, :] & ~jnp.eye(10, dtype=bool)[:, None, :]
    free = body_fits(cand, obstacles) & ~jnp.any(near & others, axis=-1)
    free = free.at[:, -1].set(True)
    first = jnp.argmax(free, axis=1)
    landing = jnp.where(charger[:, None], cand[jnp.arange(10), first], pos)
    clash = jnp.any(_overlaps(landing, charger & solid), axis=1)
    return jnp.where(clash[:, None], pos, landing)


def _best_path(start: jnp.ndarray, step: jnp.ndarray, obstacles: Obstacles) -> jnp.ndarray:
    """Furthest obstacle-free displacement [10, 2]: straight, else sliding along x or y."""
    paths = jnp.stack(
        [step, step * jnp.array([1.0, 0.0]), step * jnp.array([0.0, 1.0])], axis=1
    )  # [10, 3, 2]
    f = jnp.linspace(0.0, 1.0, PATH_STEPS + 1)
    pts = start[:, None, None, :] + paths[:, :, None, :] * f[None, None, :, None]
    fits = body_fits(pts, obstacles).at[:, :, 0].set(True)
    reach = (jnp.sum(jnp.cumprod(fits, axis=-1), axis=-1) - 1) / PATH_STEPS  # [10, 3]
    progress = reach * jnp.sum(paths * step[:, None, :], axis=-1)
    preference = progress + jnp.array([2e-5, 1e-5, 0.0])
    best = jnp.argmax(preference, axis=1)
    return paths[jnp.arange(10), best] * reach[jnp.arange(10), best][:, None]


def move(
    start: jnp.ndarray, world_move: jnp.ndarray, speed: jnp.ndarray, mobile: jnp.ndarray,
    solid: jnp.ndarray, obstacles: Obstacles,
) -> jnp.ndarray:  # fmt: skip
    """Ordinary movement of every slot at once; returns final positions [10, 2]."""
    step = jnp.asarray(MOVE_VECTORS)[world_move] * (speed * mobile)[:, None]
    disp = _best_path(start, step, obstacles)
    levels = jnp.linspace(1.0, 0.0, PATH_STEPS + 1)  # candidate l: start + disp * levels[l]

    def at(level: jnp.ndarray) -> jnp.ndarray:
        return start + disp * levels[level][:, None]

    def conflicted(level: jnp.ndarray) -> jnp.ndarray:
        return jnp.any(_overlaps(at(level), solid), axis=1) & (level < PATH_STEPS)

    def cond(carry: tuple[jnp.ndarray, jnp.ndarray]) -> jnp.ndarray:
        level, n = carry
        return jnp.any(conflicted(level)) & (n < 10 * PATH_STEPS + 1)

    def body(carry: tuple[jnp.ndarray, jnp.ndarray]) -> tuple[jnp.ndarray, jnp.ndarray]:
        level, n = carry
        return level + conflicted(level).astype(jnp.int32), n + 1

    level, _ = jax.lax.while_loop(cond, body, (jnp.zeros(10, jnp.int32), jnp.int32(0)))
    return at(level)


GRID_STEP = 0.25  # resolution of the free-space grid used to clear bodies
GRID_SHAPE = (int(round(MAP_WIDTH / GRID_STEP)) + 1, int(round(MAP_HEIGHT / GRID_STEP)) + 1)


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
    pos: jnp.ndarray, ending: jnp.ndarray, solid: jnp.ndarray, free: jnp.ndarray
) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Move agents whose shield ends, if they overlap a solid body, to the nearest free grid point.

    A free point fits the body (map and obstacles, from the `free` grid) and touches no solid body.
    Overlapping agents are placed one at a time in order of position (x, then y), never of slot,
    each against the bodies already settled; one with no free point within 2 units stays.
    Returns (positions, displaced).
    """
    n = pos.shape[0]
    offsets = jnp.asarray(OFFSETS)
    blockers = solid | ending
    needs = ending & jnp.any(_overlaps(pos, blockers), axis=1)
    # Agents to place first, by position; the loop runs only as long as some game needs it.
    order = jnp.lexsort((pos[:, 1], pos[:, 0], ~needs))
    count = jnp.sum(needs)

    def place(carry: tuple[jnp.ndarray, jnp.ndarray]) -> tuple[jnp.ndarray, jnp.ndarray]:
        r, p = carry
        i = order[r]
        others = blockers & (jnp.arange(n) != i)
        overlapping = jnp.any(_overlaps(p, blockers)[i] & others)
        cell = jnp.round(p[i] / GRID_STEP).astype(jnp.int32) + offsets  # [C, 2]
        inside = jnp.all((cell >= 0) & (cell < jnp.asarray(GRID_SHAPE)), axis=-1)
        cell = jnp.clip(cell, 0, jnp.asarray(GRID_SHAPE) - 1)
        cand = cell.astype(jnp.float32) * GRID_STEP
        diff = cand[:, None, :] - p[None, :, :]
        blocked = jnp.any((jnp.sum(diff * diff, -1) < (CONTACT - EPS) ** 2) & others[None], -1)
        ok = inside & free[cell[:, 0], cell[:, 1]] & ~blocked
        move_it = overlapping & jnp.any(ok)
        return r + 1, jnp.where(move_it, p.at[i].set(cand[jnp.argmax(ok)]), p)

    _, new = jax.lax.while_loop(lambda c: c[0] < count, place, (jnp.int32(0), pos))
    return new, jnp.any(new != pos, axis=-1)
