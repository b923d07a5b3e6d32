"""Obstacles and geometry: signed distances, body clearance and sight-line blocking.

Obstacles are padded arrays (`MAX_OBSTACLES` slots); an inactive obstacle is as good as none. A
pillar is a disc (centre, radius); a wall is a rectangle (centre, full width along its own x
axis, full height, rotated `theta` radians counter-clockwise). Every function here is pure and
vectorised over leading axes.
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.core.arena import (
    BODY_RADIUS,
    EPS,
    MAP_HEIGHT,
    MAP_WIDTH,
    OBSTACLE_NONE,
    OBSTACLE_PILLAR,
    OBSTACLE_WALL,
)
from marl_bgs.core.pytree import pytree_dataclass


@pytree_dataclass
class Obstacles:
    """Padded obstacle slots of one map (a leading batch axis may be added)."""

    kind: jnp.ndarray  # int32 [K]: 0 none, 1 pillar, 2 wall
    center: jnp.ndarray  # float32 [K, 2]
    size: jnp.ndarray  # float32 [K, 2]: pillar (radius, radius); wall (width, height)
    theta: jnp.ndarray  # float32 [K]: wall rotation, radians counter-clockwise
    active: jnp.ndarray  # bool [K]: only active obstacles block bodies and sight (data, traced)

    @property
    def live_kind(self) -> jnp.ndarray:
        """int32 [K]: the kind of each active obstacle, 0 (none) where inactive or empty."""
        return jnp.where(self.active, self.kind, OBSTACLE_NONE)


def _frame(obs: Obstacles) -> tuple[jnp.ndarray, ...]:
    """Per-obstacle centre, rotation and rounded-rectangle shape, as separate [K] arrays.

    A pillar is a point rounded by its radius; a wall a rectangle with no rounding. Empty slots
    get a huge negative rounding so that they never count as hit.
    """
    kind = obs.live_kind
    pillar = kind == OBSTACLE_PILLAR
    cx, cy = obs.center[..., 0], obs.center[..., 1]
    c, s = jnp.cos(obs.theta), jnp.sin(obs.theta)
    hx = jnp.where(pillar, 0.0, obs.size[..., 0] / 2.0)
    hy = jnp.where(pillar, 0.0, obs.size[..., 1] / 2.0)
    rounding = jnp.where(pillar, obs.size[..., 0], jnp.where(kind == OBSTACLE_NONE, -1e9, 0.0))
    return cx, cy, c, s, hx, hy, rounding


def obstacle_distance(points: jnp.ndarray, obs: Obstacles) -> jnp.ndarray:
    """Signed distance from points [..., 2] to every obstacle [..., K] (huge for empty slots)."""
    cx, cy, c, s, hx, hy, rounding = _frame(obs)
    dx = points[..., 0, None] - cx
    dy = points[..., 1, None] - cy
    qx = jnp.abs(c * dx + s * dy) - hx
    qy = jnp.abs(c * dy - s * dx) - hy
    outside = jnp.sqrt(jnp.square(jnp.maximum(qx, 0.0)) + jnp.square(jnp.maximum(qy, 0.0)))
    inside = jnp.minimum(jnp.maximum(qx, qy), 0.0)
    return outside + inside - rounding


def clearance(points: jnp.ndarray, obs: Obstacles) -> jnp.ndarray:
    """Distance from points [..., 2] to the nearest obstacle surface [...]."""
    return jnp.min(obstacle_distance(points, obs), axis=-1)


def body_fits(points: jnp.ndarray, obs: Obstacles) -> jnp.ndarray:
    """True where a body centred at the point lies inside the map and overlaps no obstacle."""
    x, y = points[..., 0], points[..., 1]
    r = BODY_RADIUS - EPS
    inside = (x >= r) & (x <= MAP_WIDTH - r) & (y >= r) & (y <= MAP_HEIGHT - r)
    return inside & (clearance(points, obs) >= BODY_RADIUS - EPS)


def segment_blocked(p: jnp.ndarray, q: jnp.ndarray, obs: Obstacles) -> jnp.ndarray:
    """True where the segment p->q ([..., 2] each) passes through any obstacle's interior.

    Touching an obstacle's boundary does not block. Pillars: the segment's closest point to the
    centre lies strictly inside the disc. Walls: slab clipping of the segment in the wall's frame,
    blocked when a piece longer than EPS lies strictly inside.
    """
    cx, cy, c, s, hx, hy, rounding = _frame(obs)
    px, py = p[..., 0, None] - cx, p[..., 1, None] - cy  # [..., K], relative to the centre
    ex, ey = q[..., 0, None] - p[..., 0, None], q[..., 1, None] - p[..., 1, None]  # [..., 1]
    # Pillars (theta is irrelevant): closest point of the segment to the centre.
    ee = jnp.maximum(ex * ex + ey * ey, 1e-12)
    t = jnp.clip(-(px * ex + py * ey) / ee, 0.0, 1.0)
    pillar_hit = jnp.square(px + t * ex) + jnp.square(py + t * ey) < jnp.square(rounding - EPS)
    # Walls: start and direction in the wall's frame, then clip against the box.
    lx, ly = c * px + s * py, c * py - s * px
    dx, dy = c * ex + s * ey, c * ey - s * ex

    def slab(l: jnp.ndarray, d: jnp.ndarray, h: jnp.ndarray):
        small = jnp.abs(d) < 1e-9
        inv = 1.0 / jnp.where(small, 1.0, d)
        t1, t2 = (-h - l) * inv, (h - l) * inv
        lo = jnp.where(
            small, jnp.where(jnp.abs(l) < h - EPS, -jnp.inf, jnp.inf), jnp.minimum(t1, t2)
        )
        hi = jnp.where(small, jnp.inf, jnp.maximum(t1, t2))
        return lo, hi

    lo_x, hi_x = slab(lx, dx, hx)
    lo_y, hi_y = slab(ly, dy, hy)
    t_in = jnp.maximum(jnp.maximum(lo_x, lo_y), 0.0)
    t_out = jnp.minimum(jnp.minimum(hi_x, hi_y), 1.0)
    wall_hit = (t_out - t_in) * jnp.sqrt(ee) > EPS
    kind = obs.live_kind
    hit = jnp.where(kind == OBSTACLE_PILLAR, pillar_hit, (kind == OBSTACLE_WALL) & wall_hit)
    return jnp.any(hit, axis=-1)


def _first_entry(
    ox: jnp.ndarray, oy: jnp.ndarray, dx: jnp.ndarray, dy: jnp.ndarray, hx: jnp.ndarray,
    hy: jnp.ndarray, rho: jnp.ndarray,
) -> tuple[jnp.ndarray, jnp.ndarray]:  # fmt: skip
    """First time t in [0, 1] at which the point o + t d is inside a rounded rectangle.

    The rectangle has half-extents (hx, hy) and rounding rho, centred at the origin of the frame
    the arguments are given in. Returns (t, hit): hit is False when the segment never enters (t is
    then 1); a start inside gives t = 0. Exact: the segment first meets the bounding box
    (half-extents + rho); where it meets it beside a face, that is the entry, and where it meets
    it in a corner square the entry is into that corner's disc (a path through the corner square
    reaches the faces only through the disc).
    """
    ex, ey = hx + rho, hy + rho

    def slab(o: jnp.ndarray, d: jnp.ndarray, e: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        still = d == 0.0
        inv = 1.0 / jnp.where(still, 1.0, d)
        t1, t2 = (-e - o) * inv, (e - o) * inv
        inside = jnp.abs(o) < e
        lo = jnp.where(still, jnp.where(inside, -jnp.inf, jnp.inf), jnp.minimum(t1, t2))
        hi = jnp.where(still, jnp.where(inside, jnp.inf, -jnp.inf), jnp.maximum(t1, t2))
        return lo, hi

    lo_x, hi_x = slab(ox, dx, ex)
    lo_y, hi_y = slab(oy, dy, ey)
    t_in = jnp.maximum(jnp.maximum(lo_x, lo_y), 0.0)
    t_out = jnp.minimum(jnp.minimum(hi_x, hi_y), 1.0)
    box_hit = t_in < t_out
    qx, qy = ox + t_in * dx, oy + t_in * dy
    beside_face = (jnp.abs(qx) <= hx) | (jnp.abs(qy) <= hy)
    # The corner disc of the corner square the segment meets the box in.
    cx, cy = ox - jnp.sign(qx) * hx, oy - jnp.sign(qy) * hy
    a = dx * dx + dy * dy
    b = cx * dx + cy * dy
    c = cx * cx + cy * cy - rho * rho
    disc = b * b - a * c
    t_disc = (-b - jnp.sqrt(jnp.maximum(disc, 0.0))) / jnp.where(a > 0.0, a, 1.0)
    in_disc = c < 0.0
    disc_hit = in_disc | ((disc > 0.0) & (a > 0.0) & (t_disc >= 0.0) & (t_disc < t_out))
    hit = box_hit & jnp.where(beside_face, True, disc_hit)
    t = jnp.where(beside_face, t_in, jnp.where(in_disc, 0.0, jnp.maximum(t_disc, 0.0)))
    return jnp.where(hit, t, 1.0), hit


def sweep_reach(
    x: jnp.ndarray, y: jnp.ndarray, px: jnp.ndarray, py: jnp.ndarray, obs: Obstacles
) -> jnp.ndarray:  # fmt: skip
    """Furthest fraction [..., P] of each straight path a body travels before it touches an
    obstacle or the map border: bodies at x, y [...], paths px, py [..., P].

    Exact (time of first contact of a moving disc against discs and rounded rectangles): a blocked
    body stops touching the obstacle. A path is blocked only where it would overlap an obstacle or
    cross the border by more than EPS, so sliding along a surface one touches is free.
    """
    cx, cy, c, s, hx, hy, rounding = _frame(obs)
    rx = x[..., None, None] - cx  # [..., 1, K]
    ry = y[..., None, None] - cy
    ox, oy = c * rx + s * ry, c * ry - s * rx
    dx = c * px[..., None] + s * py[..., None]  # [..., P, K]
    dy = c * py[..., None] - s * px[..., None]
    rho = rounding + BODY_RADIUS
    contact, _ = _first_entry(ox, oy, dx, dy, hx, hy, rho)
    deep, blocked = _first_entry(ox, oy, dx, dy, hx, hy, rho - EPS)
    blocked &= obs.live_kind != OBSTACLE_NONE
    reach = jnp.min(jnp.where(blocked, jnp.minimum(contact, deep), 1.0), axis=-1)
    for pos, step, size in ((x, px, MAP_WIDTH), (y, py, MAP_HEIGHT)):
        p = pos[..., None]
        end = p + step
        low = end < BODY_RADIUS - EPS
        high = end > size - BODY_RADIUS + EPS
        safe = jnp.where(step == 0.0, 1.0, step)
        to_wall = jnp.where(low, (BODY_RADIUS - p) / safe, (size - BODY_RADIUS - p) / safe)
        reach = jnp.where(low | high, jnp.minimum(reach, jnp.clip(to_wall, 0.0, 1.0)), reach)
    return reach
