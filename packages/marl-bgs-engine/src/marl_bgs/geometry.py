"""Obstacles and geometry: signed distances, body clearance and sight-line blocking.

Obstacles are padded arrays (`MAX_OBSTACLES` slots). A pillar is a disc (centre, radius); a wall is a
rectangle (centre, full width along its own x axis, full height, rotated `theta` radians
counter-clockwise). Every function here is pure and vectorised over leading axes.
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.constants import (
    BODY_RADIUS,
    EPS,
    MAP_HEIGHT,
    MAP_WIDTH,
    OBSTACLE_PILLAR,
    OBSTACLE_WALL,
)
from marl_bgs.pytree import pytree_dataclass


@pytree_dataclass
class Obstacles:
    """Padded obstacle slots of one map (a leading batch axis may be added)."""

    kind: jnp.ndarray  # int32 [K]: 0 none, 1 pillar, 2 wall
    center: jnp.ndarray  # float32 [K, 2]
    size: jnp.ndarray  # float32 [K, 2]: pillar (radius, radius); wall (width, height)
    theta: jnp.ndarray  # float32 [K]: wall rotation, radians counter-clockwise


def _local(points: jnp.ndarray, obs: Obstacles) -> jnp.ndarray:
    """Points [..., 2] -> coordinates in every obstacle's own frame [..., K, 2]."""
    d = points[..., None, :] - obs.center
    c, s = jnp.cos(obs.theta), jnp.sin(obs.theta)
    return jnp.stack([c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1]], axis=-1)


def obstacle_distance(points: jnp.ndarray, obs: Obstacles) -> jnp.ndarray:
    """Signed distance from points [..., 2] to every obstacle [..., K] (inf for empty slots)."""
    pillar = jnp.linalg.norm(points[..., None, :] - obs.center, axis=-1) - obs.size[..., 0]
    q = jnp.abs(_local(points, obs)) - obs.size / 2.0
    outside = jnp.linalg.norm(jnp.maximum(q, 0.0), axis=-1)
    inside = jnp.minimum(jnp.max(q, axis=-1), 0.0)
    wall = outside + inside
    dist = jnp.where(obs.kind == OBSTACLE_PILLAR, pillar, wall)
    return jnp.where(obs.kind == 0, jnp.inf, dist)


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
    """True where the open segment p->q ([..., 2] each) passes through any obstacle's interior.

    Touching an obstacle's boundary does not block. Pillars: the segment's closest point lies
    strictly inside the disc. Walls: slab clipping of the segment in the wall's own frame.
    """
    d = q - p
    # Pillars.
    rel = obs.center - p[..., None, :]  # [..., K, 2]
    dd = jnp.sum(d * d, axis=-1)[..., None]
    t = jnp.clip(jnp.sum(rel * d[..., None, :], axis=-1) / jnp.maximum(dd, 1e-12), 0.0, 1.0)
    closest = p[..., None, :] + t[..., None] * d[..., None, :]
    pillar_hit = jnp.linalg.norm(closest - obs.center, axis=-1) < obs.size[..., 0] - EPS
    # Walls: p and d in each wall's frame, then Liang-Barsky clipping against the box.
    c, s = jnp.cos(obs.theta), jnp.sin(obs.theta)
    pl = _local(p, obs)
    dl = jnp.stack(
        [c * d[..., None, 0] + s * d[..., None, 1], -s * d[..., None, 0] + c * d[..., None, 1]],
        axis=-1,
    )
    half = obs.size / 2.0
    small = jnp.abs(dl) < 1e-9
    safe = jnp.where(small, 1.0, dl)
    t1 = (-half - pl) / safe
    t2 = (half - pl) / safe
    lo = jnp.where(small, -jnp.inf, jnp.minimum(t1, t2))
    hi = jnp.where(small, jnp.inf, jnp.maximum(t1, t2))
    parallel_inside = jnp.all(jnp.where(small, jnp.abs(pl) < half - EPS, True), axis=-1)
    t_in = jnp.maximum(jnp.max(lo, axis=-1), 0.0)
    t_out = jnp.minimum(jnp.min(hi, axis=-1), 1.0)
    seg_len = jnp.sqrt(dd[..., 0])[..., None]
    wall_hit = parallel_inside & ((t_out - t_in) * seg_len > EPS)
    hit = jnp.where(obs.kind == OBSTACLE_PILLAR, pillar_hit, (obs.kind == OBSTACLE_WALL) & wall_hit)
    return jnp.any(hit & (obs.kind != 0), axis=-1)


def mirror_obstacles(obs: Obstacles) -> Obstacles:
    """Reflect obstacles across the map's vertical centre line (x -> MAP_WIDTH - x)."""
    center = obs.center.at[..., 0].set(MAP_WIDTH - obs.center[..., 0])
    center = jnp.where((obs.kind == 0)[..., None], obs.center, center)
    return obs.replace(center=center, theta=-obs.theta)
