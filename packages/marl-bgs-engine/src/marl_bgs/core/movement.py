"""Movement on the open arena: ordinary moves with obstacle and body collisions, for any number of
bodies (the slot axis of the arrays).

Ordinary moves are exact and never depend on slot order: every body takes its path past the
obstacles (straight, else sliding along x or y) and covers it at constant speed during the tick;
a body stops where it first touches an obstacle or the border, or at the moment it walks into
another body (contact found analytically, not by sampling). Two bodies block each other only
when both are alive and unshielded; a standing body is never pushed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.core.arena import (
    BODY_RADIUS,
    EPS,
    MOVE_VECTORS,
)
from marl_bgs.core.geometry import Obstacles, frame, near_obstacles, near_table, sweep_reach

CONTACT = 2.0 * BODY_RADIUS


def touching(ax: jnp.ndarray, ay: jnp.ndarray, bx: jnp.ndarray, by: jnp.ndarray) -> jnp.ndarray:
    """Closer than contact distance (coordinates given as separate, broadcastable arrays)."""
    return jnp.square(ax - bx) + jnp.square(ay - by) < (CONTACT - EPS) ** 2


def overlap_pairs(pos: jnp.ndarray, solid: jnp.ndarray) -> jnp.ndarray:
    """[n, n] pairs of distinct solid bodies closer than contact distance."""
    x, y = pos[:, 0], pos[:, 1]
    close = touching(x[:, None], y[:, None], x[None, :], y[None, :])
    return close & solid[:, None] & solid[None, :] & ~jnp.eye(pos.shape[0], dtype=bool)


def path_past(
    start: jnp.ndarray, step: jnp.ndarray, obstacles: Obstacles, near: jnp.ndarray
) -> tuple[jnp.ndarray, ...]:
    """Each body's path past the obstacles: straight, else sliding along x or y.

    Returns (vx, vy, reach) [n]: the chosen path's full displacement and the fraction of it the
    body covers before touching an obstacle or the border (exact, `geometry.sweep_reach`). The
    path that gets furthest along the intended step wins; ties prefer straight, then x.
    """
    sx, sy = step[:, 0], step[:, 1]
    zero = jnp.zeros_like(sx)
    px = jnp.stack([sx, sx, zero], axis=1)  # [n, 3]: straight, x only, y only
    py = jnp.stack([sy, zero, sy], axis=1)
    local = near_obstacles(start[:, 0], start[:, 1], frame(obstacles), near)
    reach = sweep_reach(start[:, 0], start[:, 1], px, py, local)
    progress = reach * (px * sx[:, None] + py * sy[:, None])
    best = jax.nn.one_hot(jnp.argmax(progress + jnp.array([2e-5, 1e-5, 0.0]), axis=1), 3)
    pick = lambda a: jnp.sum(best * a, axis=1)  # noqa: E731
    return pick(px), pick(py), pick(reach)


def _contacts(
    bx: jnp.ndarray, by: jnp.ndarray, vx: jnp.ndarray, vy: jnp.ndarray, now: jnp.ndarray,
    blocks: jnp.ndarray,
) -> jnp.ndarray:  # fmt: skip
    """[n] earliest time after `now` [n] at which each body walks into another one (inf if
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
    """Ordinary movement of every slot at once; returns final positions [n, 2].

    `near` is the map's table of obstacles near each cell (`geometry.near_table`, kept in the
    game state; computed here when not given).

    Bodies move at the same time, each at constant velocity along its path (`path_past`) during the
    tick (t from 0 to 1). Events are resolved in time order: a body stops for the rest of the tick
    where it touches an obstacle or the border, or the moment it walks into a solid body (both
    solid); bodies whose events fall at the same moment stop together. No slot order enters.
    Bodies that cannot meet during the tick form separate groups, whose events are taken in
    parallel (each group in its own time order).
    """
    step = jnp.asarray(MOVE_VECTORS)[world_move] * (speed * mobile)[:, None]
    near = near_table(obstacles) if near is None else near
    vx, vy, reach = path_past(start, step, obstacles, near)
    moving = (vx != 0.0) | (vy != 0.0)
    n = start.shape[0]
    bx, by = start[:, 0], start[:, 1]
    blocks = solid[:, None] & solid[None, :] & ~jnp.eye(n, dtype=bool)
    halt = jnp.where(moving & (reach < 1.0), reach, jnp.inf)  # [n]: obstacle or border contact
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
        """[n] when each still-moving body next stops (inf if it finishes its path)."""
        when = jnp.minimum(_contacts(bx, by, vx, vy, now, blocks), halt)
        return jnp.where(active, when, jnp.inf)

    def stop(carry: tuple[jnp.ndarray, ...]) -> tuple[jnp.ndarray, ...]:
        # Events are found from the loop's own carry, at the top of each pass: found after the
        # halts below, XLA fused the halts into the pair kernel and compiled it as scalar code
        # (about 7x slower on the CPU). The last pass halts nobody and ends the loop.
        bx, by, vx, vy, active, now, _ = carry
        when = events(bx, by, vx, vy, active, now)
        first = jnp.min(jnp.where(group, when[None, :], jnp.inf), axis=1)  # [n]: in its group
        halted = (when <= first) & (when < 1.0)
        bx, by = jnp.where(halted, bx + when * vx, bx), jnp.where(halted, by + when * vy, by)
        vx, vy = jnp.where(halted, 0.0, vx), jnp.where(halted, 0.0, vy)
        active = active & ~halted
        now = jnp.where(first < 1.0, first, now)
        return bx, by, vx, vy, active, now, jnp.any(halted)

    now = jnp.zeros(n, jnp.float32)
    init = (bx, by, vx, vy, moving, now, jnp.bool_(True))
    bx, by, vx, vy, *_ = jax.lax.while_loop(lambda c: c[6], stop, init)
    return jnp.stack([bx + vx, by + vy], axis=-1)
