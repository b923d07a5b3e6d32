"""Movement: Warrior Charge relocation, ordinary moves with obstacle and body collisions, and
clearing bodies when a spawn shield ends.

Ordinary moves are exact and never depend on slot order: every body takes its path past the
obstacles (straight, else sliding along x or y) and covers it at constant speed during the tick;
a body stops where it first touches an obstacle or the border, or at the moment it walks into
another body (contact found analytically, not by sampling). Two bodies block each other only
when both are alive and unshielded; a standing body is never pushed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import (
    BODY_RADIUS,
    EPS,
    MAP_HEIGHT,
    MAP_WIDTH,
    MOVE_VECTORS,
)
from marl_bgs.core.geometry import Obstacles, body_fits, near_obstacles, near_table, sweep_reach

CHARGE_STEPS = 8
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
    _, good, _ = jax.lax.while_loop(lambda c: needs & (c[0] < 3), bisect, (jnp.int32(0), good, bad))
    lx = jnp.where(charger, x + gx * scale * good, x)
    ly = jnp.where(charger, y + gy * scale * good, y)
    landing = jnp.stack([lx, ly], axis=-1)
    clash = jnp.any(_overlaps(landing, charger & solid), axis=1)
    return jnp.where(clash[:, None], pos, landing)


def _path(
    start: jnp.ndarray, step: jnp.ndarray, obstacles: Obstacles, near: jnp.ndarray
) -> tuple[jnp.ndarray, ...]:
    """Each body's path past the obstacles: straight, else sliding along x or y.

    Returns (vx, vy, reach) [10]: the chosen path's full displacement and the fraction of it the
    body covers before touching an obstacle or the border (exact, `geometry.sweep_reach`). The
    path that gets furthest along the intended step wins; ties prefer straight, then x.
    """
    sx, sy = step[:, 0], step[:, 1]
    zero = jnp.zeros_like(sx)
    px = jnp.stack([sx, sx, zero], axis=1)  # [10, 3]: straight, x only, y only
    py = jnp.stack([sy, zero, sy], axis=1)
    reach = sweep_reach(
        start[:, 0], start[:, 1], px, py, near_obstacles(start[:, 0], start[:, 1], obstacles, near)
    )
    progress = reach * (px * sx[:, None] + py * sy[:, None])
    best = jax.nn.one_hot(jnp.argmax(progress + jnp.array([2e-5, 1e-5, 0.0]), axis=1), 3)
    pick = lambda a: jnp.sum(best * a, axis=1)  # noqa: E731
    return pick(px), pick(py), pick(reach)


def _contacts(
    bx: jnp.ndarray, by: jnp.ndarray, vx: jnp.ndarray, vy: jnp.ndarray, now: jnp.ndarray,
    blocks: jnp.ndarray,
) -> jnp.ndarray:  # fmt: skip
    """[10] earliest time after `now` [10] at which each body walks into another one (inf if
    never); `now` is the same for every body of a group that can meet.

    Bodies are at b + t v. A pair meets when it would overlap by more than EPS; the time given is
    that of exact contact. A body is stopped by a meeting only if it moves towards the other at
    that moment (one walking away, or standing, is not).
    """
    qx, qy = bx[None, :] - bx[:, None], by[None, :] - by[:, None]  # [i, j]: from i to j
    wx, wy = vx[None, :] - vx[:, None], vy[None, :] - vy[:, None]
    a = wx * wx + wy * wy
    b = qx * wx + qy * wy
    qq = qx * qx + qy * qy
    inv_a = 1.0 / jnp.where(a > 0.0, a, 1.0)
    # The pair goes EPS deep (radius CONTACT - EPS) before t = 1 unless the approach ends first.
    disc_deep = b * b - a * (qq - (CONTACT - EPS) ** 2)
    early = -b - a  # the deep entry -b - sqrt(disc_deep) is below a (t < 1) iff
    deep_soon = (early < 0.0) | (early * early < disc_deep)
    now = now[:, None]
    meets = blocks & (a > 0.0) & (disc_deep > 0.0) & deep_soon & (-b > a * now)
    # Exact contact (radius CONTACT) comes first; a pair already in contact meets now.
    touch = (-b - jnp.sqrt(jnp.maximum(disc_deep + a * (2.0 * CONTACT - EPS) * EPS, 0.0))) * inv_a
    when = jnp.maximum(touch, now)
    nx, ny = qx + when * wx, qy + when * wy
    towards = vx[:, None] * nx + vy[:, None] * ny > 0.0
    return jnp.min(jnp.where(meets & towards, when, jnp.inf), axis=1)


def move(
    start: jnp.ndarray, world_move: jnp.ndarray, speed: jnp.ndarray, mobile: jnp.ndarray,
    solid: jnp.ndarray, obstacles: Obstacles, near: jnp.ndarray | None = None,
) -> jnp.ndarray:  # fmt: skip
    """Ordinary movement of every slot at once; returns final positions [10, 2].

    `near` is the map's table of obstacles near each cell (`geometry.near_table`, kept in the
    game state; computed here when not given).

    Bodies move at the same time, each at constant velocity along its path (`_path`) during the
    tick (t from 0 to 1). Events are resolved in time order: a body stops for the rest of the tick
    where it touches an obstacle or the border, or the moment it walks into a solid body (both
    solid); bodies whose events fall at the same moment stop together. No slot order enters.
    Bodies that cannot meet during the tick form separate groups, whose events are taken in
    parallel (each group in its own time order).
    """
    step = jnp.asarray(MOVE_VECTORS)[world_move] * (speed * mobile)[:, None]
    near = near_table(obstacles) if near is None else near
    vx, vy, reach = _path(start, step, obstacles, near)
    moving = (vx != 0.0) | (vy != 0.0)
    n = start.shape[0]
    bx, by = start[:, 0], start[:, 1]
    blocks = solid[:, None] & solid[None, :] & ~jnp.eye(n, dtype=bool)
    halt = jnp.where(moving & (reach < 1.0), reach, jnp.inf)  # [10]: obstacle or border contact
    # Groups: bodies linked by pairs that could touch during the tick (their gap at most the sum
    # of their paths' lengths), closed transitively. Stopping early only shortens paths, so two
    # groups never meet.
    length = jnp.sqrt(vx * vx + vy * vy)
    gap = jnp.sqrt(jnp.square(bx[None, :] - bx[:, None]) + jnp.square(by[None, :] - by[:, None]))
    blocks &= gap < CONTACT + length[:, None] + length[None, :] + EPS
    group = blocks | jnp.eye(n, dtype=bool)
    for _ in range(max(n - 1, 1).bit_length()):  # paths double in length each squaring
        group = jnp.any(group[:, :, None] & group[None, :, :], axis=1)

    def events(
        bx: jnp.ndarray, by: jnp.ndarray, vx: jnp.ndarray, vy: jnp.ndarray, active: jnp.ndarray,
        now: jnp.ndarray,
    ) -> jnp.ndarray:  # fmt: skip
        """[10] when each still-moving body next stops (inf if it finishes its path)."""
        when = jnp.minimum(_contacts(bx, by, vx, vy, now, blocks), halt)
        return jnp.where(active, when, jnp.inf)

    def stop(carry: tuple[jnp.ndarray, ...]) -> tuple[jnp.ndarray, ...]:
        bx, by, vx, vy, active, when, now = carry
        first = jnp.min(jnp.where(group, when[None, :], jnp.inf), axis=1)  # [10]: in its group
        halted = (when <= first) & (when < 1.0)
        bx, by = jnp.where(halted, bx + when * vx, bx), jnp.where(halted, by + when * vy, by)
        vx, vy = jnp.where(halted, 0.0, vx), jnp.where(halted, 0.0, vy)
        active = active & ~halted
        now = jnp.where(first < 1.0, first, now)
        return bx, by, vx, vy, active, events(bx, by, vx, vy, active, now), now

    now = jnp.zeros(n, jnp.float32)
    init = (bx, by, vx, vy, moving, events(bx, by, vx, vy, moving, now), now)
    bx, by, vx, vy, *_ = jax.lax.while_loop(lambda c: jnp.any(c[5] < 1.0), stop, init)
    return jnp.stack([bx + vx, by + vy], axis=-1)


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
    needs = ending & jnp.any(_overlaps(pos, blockers), axis=1)
    own_x = jnp.where(left, pos[:, 0], MAP_WIDTH - pos[:, 0])
    # Each agent's place in the order (a sort by pairwise comparison: ten agents, no sort kernel);
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
        overlapping = jnp.any(_overlaps(p, blockers)[i] & others)
        own = offsets * jnp.where(left[i], 1, flip)  # [C, 2] in the agent's own frame
        cell = jnp.round(p[i] / GRID_STEP).astype(jnp.int32) + own
        inside = jnp.all((cell >= 0) & (cell < jnp.asarray(GRID_SHAPE)), axis=-1)
        cell = jnp.clip(cell, 0, jnp.asarray(GRID_SHAPE) - 1)
        cand = cell.astype(jnp.float32) * GRID_STEP
        near = _close(cand[:, None, 0], cand[:, None, 1], p[None, :, 0], p[None, :, 1])
        blocked = jnp.any(near & others[None], -1)
        ok = inside & free[cell[:, 0], cell[:, 1]] & ~blocked
        gap = jnp.sum(jnp.square(cand - p[i]), axis=-1)
        best = jnp.argmin(jnp.where(ok, gap, jnp.inf))  # the first of equally near points
        move_it = overlapping & jnp.any(ok)
        return r + 1, jnp.where(move_it, p.at[i].set(cand[best]), p)

    _, new = jax.lax.while_loop(lambda c: c[0] < count, place, (jnp.int32(0), pos))
    return new, jnp.any(new != pos, axis=-1)
