"""Warrior Charge relocation: a charging Warrior lands at contact distance with its target, backing
off along the line towards itself where the landing point does not fit."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.core.geometry import Obstacles, body_fits
from marl_bgs.core.movement import CONTACT, overlap_pairs, touching

CHARGE_STEPS = 8


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
    n = pos.shape[0]
    x, y = pos[:, 0], pos[:, 1]
    t = jnp.clip(target, 0)
    gx, gy = x[t] - x, y[t] - y
    length = jnp.sqrt(gx * gx + gy * gy)
    scale = jnp.where(length > CONTACT, 1.0 - CONTACT / jnp.maximum(length, 1e-9), 0.0)
    others = solid[None, :] & ~jnp.eye(n, dtype=bool)

    def free_at(frac: jnp.ndarray) -> jnp.ndarray:
        """[n, S] whether the point at `frac` of the way to the contact point fits."""
        px, py = (
            x[:, None] + (gx * scale)[:, None] * frac,
            y[:, None] + (gy * scale)[:, None] * frac,
        )
        near = touching(px[..., None], py[..., None], x[None, None, :], y[None, None, :])
        fits = body_fits(jnp.stack([px, py], -1), obstacles)
        return fits & ~jnp.any(near & others[:, None, :], axis=-1)

    coarse = jnp.linspace(1.0, 0.0, CHARGE_STEPS + 1)  # contact point first, start last

    # The coarse points are tried one at a time, and only while some charger (in any game of a
    # batch) has not found one: most ticks have few chargers and most land at contact.
    def try_next(carry: tuple[jnp.ndarray, ...]) -> tuple[jnp.ndarray, ...]:
        k, found, first = carry
        ok = free_at(jnp.broadcast_to(coarse[k], (n, 1)))[:, 0] | (k == CHARGE_STEPS)
        return k + 1, found | ok, jnp.where(ok & ~found, k, first)

    _, _, first = jax.lax.while_loop(
        lambda c: jnp.any(~c[1]), try_next, (jnp.int32(0), ~charger, jnp.zeros(n, jnp.int32))
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
    clash = jnp.any(overlap_pairs(landing, charger & solid), axis=1)
    return jnp.where(clash[:, None], pos, landing)
