"""Movement: Warrior Charge relocation, ordinary moves with obstacle and body collisions, and
clearing bodies when a spawn shield ends.

Body collisions are resolved symmetrically, so the outcome never depends on slot order: every
agent proposes the furthest obstacle-free point of its move; while proposals overlap, every agent
in an overlap backs off along its own path, all at once, to its furthest point (in 1/8 steps of
the move) that is clear of every other body's current proposal, or to its start; an agent standing
still never moves. Two bodies block each other only when both are alive and unshielded.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import BODY_RADIUS, EPS, MAP_HEIGHT, MAP_WIDTH, MOVE_VECTORS
from marl_bgs.core.geometry import Obstacles, body_fits

PATH_STEPS = 8  # body collisions back off in steps of 1/8 of the move
CHARGE_STEPS = 8
SWEEP = np.linspace(
    0.25, 1.0, 4, dtype=np.float32
)  # moments at which simultaneous moves are compared
CONTACT = 2.0 * BODY_RADIUS


def _close(ax: jnp.ndarray, ay: jnp.ndarray, bx: jnp.ndarray, by: jnp.ndarray) -> jnp.ndarray:
    """Closer than contact distance (coordinates given as separate, broadcastable arrays)."""
    return jnp.square(ax - bx) + jnp.square(ay - by) < (CONTACT - EPS) ** 2


def _overlaps(pos: jnp.ndarray, solid: jnp.ndarray) -> jnp.ndarray:
    """[10, 10] pairs of distinct solid bodies closer than contact distance."""
    x, y = pos[:, 0], pos[:, 1]
    close = _close(x[:, None], y[:, None], x[None, :], y[None, :])
    return close & solid[:, None] & solid[None, :] & ~jnp.eye(pos.shape[0], dtype=bool)


def charge(
    pos: jnp.ndarray, charger: jnp.ndarray, target: jnp.ndarray, solid: jnp.ndarray,
    obstacles: Obstacles,
) -> jnp.ndarray:  # fmt: skip
    """Relocate charging Warriors to contact distance with their target, over obstacles.

    The landing point backs off along the line towards the Warrior while it overlaps an obstacle,
    the map border or another body (at start-of-tick positions): the first of 9 evenly spaced
    points that fits, refined by bisection towards the contact point to 1/64 of the way. Two
    Warriors landing on each other both stay where they were.
    """
    x, y = pos[:, 0], pos[:, 1]
    t = jnp.clip(target, 0)
    gx, gy = x[t] - x, y[t] - y
    length = jnp.sqrt(gx * gx + gy * gy)
    scale = jnp.where(length > CONTACT, 1.0 - CONTACT / jnp.maximum(length, 1e-9), 0.0)
    others = solid[None, :] & ~jnp.eye(10, dtype=bool)

    def free_at(frac: jnp.ndarray) -> jnp.ndarray:
        """[10, S] whether the point at `frac` of the way to the contact point fits."""
        px, py = (
            x[:, None] + (gx * scale)[:, None] * frac,
            y[:, None] + (gy * scale)[:, None] * frac,
        )
        near = _close(px[..., None], py[..., None], x[None, None, :], y[None, None, :])
        fits = body_fits(jnp.stack([px, py], -1), obstacles)
        return fits & ~jnp.any(near & others[:, None, :], axis=-1)

    coarse = jnp.linspace(1.0, 0.0, CHARGE_STEPS + 1)  # contact point first, start last

    # The coarse points are tried one at a time, and only while some charger (in any game of a
    # batch) has not found one: most ticks have few chargers and most land at contact.
    def try_next(carry: tuple[jnp.ndarray, ...]) -> tuple[jnp.ndarray, ...]:
        k, found, first = carry
        ok = free_at(jnp.broadcast_to(coarse[k], (10, 1)))[:, 0] | (k == CHARGE_STEPS)
        return k + 1, found | ok, jnp.where(ok & ~found, k, first)

    _, _, first = jax.lax.while_loop(
        lambda c: jnp.any(~c[1]), try_next, (jnp.int32(0), ~charger, jnp.zeros(10, jnp.int32))
    )
    good = coarse[first]  # the first coarse point that fits
    bad = jnp.where(first > 0, coarse[jnp.maximum(first - 1, 0)], good)  # the one before it

    def bisect(carry: tuple[jnp.ndarray, ...]) -> tuple[jnp.ndarray, ...]:
        i, good, bad = carry
        mid = 0.5 * (good + bad)
        ok = free_at(mid[:, None])[:, 0]
        return i + 1, jnp.where(ok, mid, good), jnp.where(ok, bad, mid)

    # Bisection towards the contact point, to 1/64 of the way, where a charger needs it.
    needs = jnp.any(charger & (first > 0))
    _, good, _ = jax.lax.while_loop(lambda c: needs & (c[0] < 3), bisect, (0, good, bad))
    lx = jnp.where(charger, x + gx * scale * good, x)
    ly = jnp.where(charger, y + gy * scale * good, y)
    landing = jnp.stack([lx, ly], axis=-1)
    clash = jnp.any(_overlaps(landing, charger & solid), axis=1)
    return jnp.where(clash[:, None], pos, landing)


def _reach(
    start: jnp.ndarray, px: jnp.ndarray, py: jnp.ndarray, samples: int, obstacles: Obstacles
) -> jnp.ndarray:  # fmt: skip
    """[10, P] furthest fraction of each path whose samples k/samples all fit (0 at the start)."""
    f = jnp.arange(1, samples + 1) / samples
    pts = jnp.stack(
        [start[:, None, None, 0] + px[..., None] * f, start[:, None, None, 1] + py[..., None] * f],
        axis=-1,
    )
    fits = body_fits(pts, obstacles)
    first_bad = jnp.where(jnp.all(fits, axis=-1), samples, jnp.argmin(fits, axis=-1))
    return first_bad / samples


def _best_path(start: jnp.ndarray, step: jnp.ndarray, obstacles: Obstacles) -> jnp.ndarray:
    """Furthest obstacle-free displacement [10, 2]: straight, else sliding along x or y.

    Each path is sampled every quarter of the move (samples at most 0.5 apart for moves of up to 2
    units, the largest allowed, so no wall can be crossed between them); the chosen path's stopping
    point is then refined by bisection to 1/32 of the move.
    """
    sx, sy = step[:, 0], step[:, 1]
    zero = jnp.zeros_like(sx)
    straight = _reach(start, sx[:, None], sy[:, None], 4, obstacles)[:, 0]
    slides = _reach(start, jnp.stack([sx, zero], 1), jnp.stack([zero, sy], 1), 4, obstacles)
    px = jnp.stack([sx, sx, zero], axis=1)  # [10, 3]: straight, x only, y only
    py = jnp.stack([sy, zero, sy], axis=1)
    reach = jnp.concatenate([straight[:, None], slides], axis=1)
    progress = reach * (px * sx[:, None] + py * sy[:, None])
    best = jax.nn.one_hot(jnp.argmax(progress + jnp.array([2e-5, 1e-5, 0.0]), axis=1), 3)
    bx, by = jnp.sum(best * px, axis=1), jnp.sum(best * py, axis=1)
    lo = jnp.sum(best * reach, axis=1)
    width = 0.25
    hi = jnp.minimum(lo + width, 1.0)
    for _ in range(3):  # bisection between the last sample that fits and the first that does not
        mid = jnp.where(lo < 1.0, 0.5 * (lo + hi), 1.0)
        ok = body_fits(jnp.stack([start[:, 0] + bx * mid, start[:, 1] + by * mid], -1), obstacles)
        lo, hi = jnp.where(ok, mid, lo), jnp.where(ok, hi, mid)
    return jnp.stack([bx * lo, by * lo], axis=-1)


def move(
    start: jnp.ndarray, world_move: jnp.ndarray, speed: jnp.ndarray, mobile: jnp.ndarray,
    solid: jnp.ndarray, obstacles: Obstacles,
) -> jnp.ndarray:  # fmt: skip
    """Ordinary movement of every slot at once; returns final positions [10, 2]."""
    step = jnp.asarray(MOVE_VECTORS)[world_move] * (speed * mobile)[:, None]
    disp = _best_path(start, step, obstacles)
    n = start.shape[0]
    frac = jnp.linspace(1.0, 0.0, PATH_STEPS + 1)  # candidate l is start + disp * frac[l]
    cx = start[:, None, 0] + disp[:, None, 0] * frac  # [10, L]
    cy = start[:, None, 1] + disp[:, None, 1] * frac
    blocks = solid[:, None] & solid[None, :] & ~jnp.eye(n, dtype=bool)
    moving = jnp.any(disp != 0.0, axis=-1)

    def positions(level: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        pick = level[:, None]
        x = jnp.take_along_axis(cx, pick, 1, mode="clip")[:, 0]
        y = jnp.take_along_axis(cy, pick, 1, mode="clip")[:, 0]
        # Materialised here: fused into the pairwise tests below, XLA would redo the lookup for
        # every pair.
        return jax.lax.optimization_barrier((x, y))

    def conflicts(level: jnp.ndarray) -> jnp.ndarray:
        # Bodies move at the same time: compare them at matching moments along their proposals,
        # so that two bodies can never pass through each other.
        x, y = positions(level)
        px = start[:, 0, None] + (x - start[:, 0])[:, None] * SWEEP  # [10, T]
        py = start[:, 1, None] + (y - start[:, 1])[:, None] * SWEEP
        px, py = jax.lax.optimization_barrier((px, py))  # likewise, once per round
        close = _close(px[:, None, :], py[:, None, :], px[None, :, :], py[None, :, :])
        return jnp.any(jnp.any(close, -1) & blocks, axis=1) & (level < PATH_STEPS) & moving

    def body(carry: tuple[jnp.ndarray, jnp.ndarray]) -> tuple[jnp.ndarray, jnp.ndarray]:
        level, bad = carry
        x, y = positions(level)
        # Each agent in an overlap backs off to its furthest candidate clear of every other
        # body's current proposal (or to its start), all agents at once.
        near = _close(cx[:, :, None], cy[:, :, None], x[None, None, :], y[None, None, :])
        clear = ~jnp.any(near & blocks[:, None, :], axis=-1)  # [10, L]
        allowed = clear & (jnp.arange(PATH_STEPS + 1)[None, :] > level[:, None])
        allowed = allowed.at[:, -1].set(True)
        level = jnp.where(bad, jnp.argmax(allowed, axis=1), level)
        return level, conflicts(level)

    level0 = jnp.zeros(n, jnp.int32)
    level, _ = jax.lax.while_loop(lambda c: jnp.any(c[1]), body, (level0, conflicts(level0)))
    x, y = positions(level)
    return jnp.stack([x, y], axis=-1)


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
        near = _close(cand[:, None, 0], cand[:, None, 1], p[None, :, 0], p[None, :, 1])
        blocked = jnp.any(near & others[None], -1)
        ok = inside & free[cell[:, 0], cell[:, 1]] & ~blocked
        move_it = overlapping & jnp.any(ok)
        return r + 1, jnp.where(move_it, p.at[i].set(cand[jnp.argmax(ok)]), p)

    _, new = jax.lax.while_loop(lambda c: c[0] < count, place, (jnp.int32(0), pos))
    return new, jnp.any(new != pos, axis=-1)
