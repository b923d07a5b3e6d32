"""Obstacles and geometry: signed distances, body clearance and sight-line blocking.

Obstacles are padded arrays (`MAX_OBSTACLES` slots); an inactive obstacle is as good as none. A
pillar is a disc (centre, radius); a wall is a rectangle (centre, full width along its own x
axis, full height, rotated `theta` radians counter-clockwise). Every function here is pure and
vectorised over leading axes.
"""

from __future__ import annotations

from typing import NamedTuple, TypeVar

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from marl_bgs.core.arena import (
    BODY_RADIUS,
    EPS,
    MAP_HEIGHT,
    MAP_WIDTH,
    NEAR_CELL,
    NEAR_GRID,
    NEAR_OBSTACLES,
    OBSTACLE_NONE,
    OBSTACLE_PILLAR,
    OBSTACLE_WALL,
)
from marl_bgs.core.pytree import PyTree, pytree_dataclass


@pytree_dataclass
class Obstacles(PyTree):
    """Padded obstacle slots of one map (a leading batch axis may be added)."""

    kind: jnp.ndarray  # int32 [K]: 0 none, 1 pillar, 2 wall
    center: jnp.ndarray  # float32 [K, 2]
    size: jnp.ndarray  # float32 [K, 2]: pillar (radius, radius); wall (width, height)
    theta: jnp.ndarray  # float32 [K]: wall rotation, radians counter-clockwise
    active: jnp.ndarray  # bool [K]: only active obstacles block bodies and sight (data, traced)
    turn: jnp.ndarray  # float32 [K, 2]: cosine and sine of theta (`rotation`; derived, kept)

    @property
    def live_kind(self) -> jnp.ndarray:
        """int32 [K]: the kind of each active obstacle, 0 (none) where inactive or empty."""
        return jnp.where(self.active, self.kind, OBSTACLE_NONE)


def rotation(theta: ArrayLike) -> jnp.ndarray:
    """[..., 2]: the cosine and sine of angles theta [...] (an obstacle's `turn`)."""
    return jnp.stack([jnp.cos(theta), jnp.sin(theta)], axis=-1)


def make_obstacles(
    kind: ArrayLike, center: ArrayLike, size: ArrayLike, theta: ArrayLike
) -> Obstacles:  # fmt: skip
    """Obstacles from their slots' arrays, every non-empty slot active, `turn` worked out.

    The rotation is kept with the obstacles because XLA fuses a sine or cosine into each of its
    consumers and evaluates it again for every point or path tested against the obstacle."""
    kind = jnp.asarray(kind, jnp.int32)
    return Obstacles(
        kind=kind, center=jnp.asarray(center, jnp.float32), size=jnp.asarray(size, jnp.float32),
        theta=jnp.asarray(theta, jnp.float32), active=kind > 0, turn=rotation(theta),
    )  # fmt: skip


def length(v: jnp.ndarray) -> jnp.ndarray:
    """Euclidean length [...] of vectors [..., 2] (written out: a sum over an axis of two is a
    slow reduction kernel on CPU)."""
    return jnp.sqrt(jnp.square(v[..., 0]) + jnp.square(v[..., 1]))


EMPTY_ROUNDING = -1e9  # a `Frame`'s rounding of an empty or inactive slot


class Frame(NamedTuple):
    """Obstacles as the distance tests read them, fields [..., K]: centre, rotation (cosine and
    sine), half sizes and rounding. A pillar is a point rounded by its radius; a wall a rectangle
    with no rounding; empty or inactive slots get a huge negative rounding (`EMPTY_ROUNDING`,
    never hit). Work it out once (`frame`) where many points are tested against the same
    obstacles, and before choosing some of them (`near_obstacles`)."""

    cx: jnp.ndarray
    cy: jnp.ndarray
    c: jnp.ndarray
    s: jnp.ndarray
    hx: jnp.ndarray
    hy: jnp.ndarray
    rounding: jnp.ndarray


def frame(obs: Obstacles | Frame) -> Frame:
    """The obstacles' `Frame` (unchanged when given one)."""
    if isinstance(obs, Frame):
        return obs
    kind = obs.live_kind
    pillar = kind == OBSTACLE_PILLAR
    hx = jnp.where(pillar, 0.0, obs.size[..., 0] / 2.0)
    hy = jnp.where(pillar, 0.0, obs.size[..., 1] / 2.0)
    rounding = jnp.where(
        pillar, obs.size[..., 0], jnp.where(kind == OBSTACLE_NONE, EMPTY_ROUNDING, 0.0)
    )
    return Frame(
        obs.center[..., 0], obs.center[..., 1], obs.turn[..., 0], obs.turn[..., 1],
        hx, hy, rounding,
    )  # fmt: skip


def obstacle_distance(points: jnp.ndarray, obs: Obstacles | Frame) -> jnp.ndarray:
    """Signed distance from points [..., 2] to every obstacle [..., K] (huge for empty slots)."""
    cx, cy, c, s, hx, hy, rounding = frame(obs)
    dx = points[..., 0, None] - cx
    dy = points[..., 1, None] - cy
    qx = jnp.abs(c * dx + s * dy) - hx
    qy = jnp.abs(c * dy - s * dx) - hy
    outside = jnp.sqrt(jnp.square(jnp.maximum(qx, 0.0)) + jnp.square(jnp.maximum(qy, 0.0)))
    inside = jnp.minimum(jnp.maximum(qx, qy), 0.0)
    return outside + inside - rounding


def clearance(points: jnp.ndarray, obs: Obstacles | Frame) -> jnp.ndarray:
    """Distance from points [..., 2] to the nearest obstacle surface [...]."""
    return jnp.min(obstacle_distance(points, obs), axis=-1)


def body_fits(points: jnp.ndarray, obs: Obstacles | Frame) -> jnp.ndarray:
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
    cx, cy, c, s, hx, hy, rounding = frame(obs)
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


def _first_contact(
    ox: jnp.ndarray, oy: jnp.ndarray, dx: jnp.ndarray, dy: jnp.ndarray, hx: jnp.ndarray,
    hy: jnp.ndarray, rho: jnp.ndarray,
) -> tuple[jnp.ndarray, jnp.ndarray]:  # fmt: skip
    """When the point o + t d (t in [0, 1]) first touches a rounded rectangle, if it goes in.

    The rectangle has half-extents (hx, hy) and rounding rho, centred at the origin of the frame
    the arguments are given in. Returns (t, blocked): blocked when the segment goes deeper than
    EPS into it, t the moment of exact contact (0 for a start already in contact); t is 1 when
    not blocked. Exact: a segment first meets the bounding box (half-extents + rounding); where
    it meets it beside a face, that is the entry, and where it meets it in a corner square the
    entry is into that corner's disc (a path through the corner square reaches the faces only
    through the disc).
    """
    still_x, still_y = dx == 0.0, dy == 0.0
    inv_x = 1.0 / jnp.where(still_x, 1.0, dx)
    inv_y = 1.0 / jnp.where(still_y, 1.0, dy)
    mid_x, mid_y = -ox * inv_x, -oy * inv_y  # when the point crosses each axis of the frame
    ex, ey = hx + rho - EPS, hy + rho - EPS  # the box of depth EPS (the decision)
    wx, wy = ex * jnp.abs(inv_x), ey * jnp.abs(inv_y)  # half the time spent within each slab
    in_x, in_y = jnp.abs(ox) < ex, jnp.abs(oy) < ey
    lo_x = jnp.where(still_x, jnp.where(in_x, -jnp.inf, jnp.inf), mid_x - wx)
    lo_y = jnp.where(still_y, jnp.where(in_y, -jnp.inf, jnp.inf), mid_y - wy)
    hi_x = jnp.where(still_x, jnp.where(in_x, jnp.inf, -jnp.inf), mid_x + wx)
    hi_y = jnp.where(still_y, jnp.where(in_y, jnp.inf, -jnp.inf), mid_y + wy)
    t_in = jnp.maximum(jnp.maximum(lo_x, lo_y), 0.0)
    t_out = jnp.minimum(jnp.minimum(hi_x, hi_y), 1.0)
    qx, qy = ox + t_in * dx, oy + t_in * dy
    beside_face = (jnp.abs(qx) <= hx) | (jnp.abs(qy) <= hy)
    # Exact contact with a face: the same slabs EPS wider.
    face = jnp.maximum(jnp.maximum(lo_x - EPS * jnp.abs(inv_x), lo_y - EPS * jnp.abs(inv_y)), 0.0)
    # The disc of the corner square the segment meets the box in.
    cx, cy = ox - jnp.sign(qx) * hx, oy - jnp.sign(qy) * hy
    a = dx * dx + dy * dy
    inv_a = 1.0 / jnp.where(a > 0.0, a, 1.0)
    b = cx * dx + cy * dy
    c = cx * cx + cy * cy - rho * rho  # exact contact
    c_deep = c + EPS * (2.0 * rho - EPS)
    disc, disc_deep = b * b - a * c, b * b - a * c_deep
    t_deep = (-b - jnp.sqrt(jnp.maximum(disc_deep, 0.0))) * inv_a
    in_disc = c_deep < 0.0
    disc_hit = in_disc | ((disc_deep > 0.0) & (a > 0.0) & (t_deep >= 0.0) & (t_deep < t_out))
    corner = jnp.maximum((-b - jnp.sqrt(jnp.maximum(disc, 0.0))) * inv_a, 0.0)
    blocked = (t_in < t_out) & (beside_face | disc_hit)
    touch = jnp.where(beside_face, face, corner)
    deep = jnp.where(beside_face, t_in, jnp.maximum(t_deep, 0.0))  # when it goes EPS deep
    return jnp.where(blocked, jnp.minimum(touch, deep), 1.0), blocked


_Obs = TypeVar("_Obs", Obstacles, Frame)


def near_table(obs: Obstacles) -> jnp.ndarray:
    """int8 [*NEAR_GRID, NEAR_OBSTACLES]: the obstacles nearest to each cell's centre (a map's
    constant, kept with its obstacles; `near_obstacles` reads it)."""
    cx = (jnp.arange(NEAR_GRID[0]) + 0.5) * NEAR_CELL
    cy = (jnp.arange(NEAR_GRID[1]) + 0.5) * NEAR_CELL
    centres = jnp.stack(jnp.meshgrid(cx, cy, indexing="ij"), axis=-1)
    _, index = jax.lax.top_k(-obstacle_distance(centres, obs), NEAR_OBSTACLES)
    return index.astype(jnp.int8)


def near_obstacles(x: jnp.ndarray, y: jnp.ndarray, obs: _Obs, near: jnp.ndarray) -> _Obs:
    """The obstacles (or their `Frame`) a body at x, y [...] can reach in one tick, fields
    [..., NEAR_OBSTACLES]: those listed for its cell in `near` (`near_table` of `obs`)."""
    i = jnp.clip(jnp.floor(x / NEAR_CELL).astype(jnp.int32), 0, NEAR_GRID[0] - 1)
    j = jnp.clip(jnp.floor(y / NEAR_CELL).astype(jnp.int32), 0, NEAR_GRID[1] - 1)
    index = near[i, j].astype(jnp.int32)
    return jax.tree.map(lambda field: jnp.asarray(field)[index], obs)


def sweep_reach(
    x: jnp.ndarray, y: jnp.ndarray, px: jnp.ndarray, py: jnp.ndarray, obs: Obstacles | Frame
) -> jnp.ndarray:  # fmt: skip
    """Furthest fraction [..., P] of each straight path a body travels before it touches an
    obstacle or the map border: bodies at x, y [...], paths px, py [..., P], and for each body
    the obstacles to test, fields [..., K] (e.g. from `near_obstacles`, best of their `Frame`).

    Exact (time of first contact of a moving disc against discs and rounded rectangles): a blocked
    body stops touching the obstacle. A path is blocked only where it would overlap an obstacle or
    cross the border by more than EPS, so sliding along a surface one touches is free.
    """
    cx, cy, c, s, hx, hy, rounding = (a[..., None, :] for a in frame(obs))  # [..., 1, K]
    rx, ry = x[..., None, None] - cx, y[..., None, None] - cy
    ox, oy = c * rx + s * ry, c * ry - s * rx
    dx = c * px[..., None] + s * py[..., None]  # [..., P, K]
    dy = c * py[..., None] - s * px[..., None]
    contact, blocked = _first_contact(ox, oy, dx, dy, hx, hy, rounding + BODY_RADIUS)
    blocked &= rounding != EMPTY_ROUNDING
    reach = jnp.min(jnp.where(blocked, contact, 1.0), axis=-1)
    for pos, step, size in ((x, px, MAP_WIDTH), (y, py, MAP_HEIGHT)):
        p = pos[..., None]
        end = p + step
        low = end < BODY_RADIUS - EPS
        high = end > size - BODY_RADIUS + EPS
        safe = jnp.where(step == 0.0, 1.0, step)
        to_wall = jnp.where(low, (BODY_RADIUS - p) / safe, (size - BODY_RADIUS - p) / safe)
        reach = jnp.where(low | high, jnp.minimum(reach, jnp.clip(to_wall, 0.0, 1.0)), reach)
    return reach
