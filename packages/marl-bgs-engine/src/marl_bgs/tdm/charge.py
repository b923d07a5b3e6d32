"""Warrior Charge relocation: a charging Warrior lands at contact distance with its target, backing
off along the line towards itself where the landing point does not fit."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.core.geometry import Obstacles, body_fits
from marl_bgs.core.movement import CONTACT, overlap_pairs, touching

CHARGE_STEPS = 8
BISECTIONS = 3  # towards the contact point, to 1/64 of the way
SEARCHED_TOGETHER = 2  # chargers whose landing points one pass of the search tries


def charge(
    pos: jnp.ndarray, charger: jnp.ndarray, target: jnp.ndarray, solid: jnp.ndarray,
    obstacles: Obstacles,
) -> jnp.ndarray:  # fmt: skip
    """Relocate charging Warriors to contact distance with their target, over obstacles.

    The landing point backs off along the line towards the Warrior while it overlaps an obstacle,
    the map border or another body (at start-of-tick positions): the first of 9 evenly spaced
    points that fits, refined by bisection towards the contact point to 1/64 of the way. Two
    Warriors landing on each other both stay where they were.

    Only chargers are searched, `SEARCHED_TOGETHER` at a time (all their points at once), so the
    work follows the number of chargers in a game and never the state of other games in a batch.
    """
    n = pos.shape[0]
    x, y = pos[:, 0], pos[:, 1]
    t = jnp.clip(target, 0)
    gx, gy = x[t] - x, y[t] - y
    length = jnp.sqrt(gx * gx + gy * gy)
    scale = jnp.where(length > CONTACT, 1.0 - CONTACT / jnp.maximum(length, 1e-9), 0.0)
    ax, ay = gx * scale, gy * scale  # from the Warrior to its contact point
    others = solid[None, :] & ~jnp.eye(n, dtype=bool)
    coarse = jnp.linspace(1.0, 0.0, CHARGE_STEPS + 1)  # contact point first, start last

    def free_at(rows: jnp.ndarray, frac: jnp.ndarray) -> jnp.ndarray:
        """[R, S] whether the point at `frac` [R, S] of the way to the contact point fits, for the
        slots `rows` [R]."""
        px, py = x[rows, None] + ax[rows, None] * frac, y[rows, None] + ay[rows, None] * frac
        near = touching(px[..., None], py[..., None], x[None, None, :], y[None, None, :])
        fits = body_fits(jnp.stack([px, py], -1), obstacles)
        return fits & ~jnp.any(near & others[rows][:, None, :], axis=-1)

    def search(rows: jnp.ndarray) -> jnp.ndarray:
        """[R] the landing fraction of the slots `rows`: the first coarse point that fits (the
        start always does), then bisection between it and the point before it."""
        ok = free_at(rows, jnp.broadcast_to(coarse, (rows.shape[0], CHARGE_STEPS + 1)))
        first = jnp.argmax(ok.at[:, CHARGE_STEPS].set(True), axis=1)
        good = coarse[first]
        bad = jnp.where(first > 0, coarse[jnp.maximum(first - 1, 0)], good)
        for _ in range(BISECTIONS):
            mid = 0.5 * (good + bad)
            fits = free_at(rows, mid[:, None])[:, 0]
            good, bad = jnp.where(fits, mid, good), jnp.where(fits, bad, mid)
        return good

    chargers_to = jnp.cumsum(charger)  # [n]: chargers up to and including each slot
    groups = -(-chargers_to[-1] // SEARCHED_TOGETHER)

    def one_group(g: jnp.ndarray, frac: jnp.ndarray) -> jnp.ndarray:
        # The group's chargers by slot order; past the last charger a row falls on slot 0, whose
        # search gives its own value again (or a value that no charger reads).
        wanted = g * SEARCHED_TOGETHER + jnp.arange(SEARCHED_TOGETHER)
        rows = jnp.argmax(chargers_to[None, :] > wanted[:, None], axis=1)
        return frac.at[rows].set(search(rows))

    frac = jax.lax.fori_loop(0, groups, one_group, jnp.ones(n, jnp.float32))
    lx = jnp.where(charger, x + ax * frac, x)
    ly = jnp.where(charger, y + ay * frac, y)
    landing = jnp.stack([lx, ly], axis=-1)
    clash = jnp.any(overlap_pairs(landing, charger & solid), axis=1)
    return jnp.where(clash[:, None], pos, landing)
