"""Ultimates used together: a small per-game memory carried through the compiled loop.

An Ultimate counts as together when a teammate used one within `WINDOW` ticks of it, before or
after. One used first is held as pending and counted when a teammate follows in time; each
Ultimate counts at most once. No trajectory is stored: two values per slot.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from marl_bgs.tdm.constants import NUM_SLOTS
from marl_bgs_eval.tdm.metrics.axes import MATES

WINDOW = 4
NEVER = -(2**20)  # the last-Ultimate tick of a slot that has not used one
_MATES = jnp.asarray(MATES)


class Memory(NamedTuple):
    """Per game [n, 10]: the tick of each slot's last Ultimate, and whether it is uncounted."""

    last: jnp.ndarray
    pending: jnp.ndarray


def fresh(n: int) -> Memory:
    """The memory of `n` games that have not started."""
    return Memory(jnp.full((n, NUM_SLOTS), NEVER, jnp.int32), jnp.zeros((n, NUM_SLOTS), bool))


def together(used: jnp.ndarray, tick: jnp.ndarray, memory: Memory) -> tuple[jnp.ndarray, Memory]:
    """Ultimates [n, 10] that count as together on this tick (this tick's, and earlier pending
    ones a teammate now joins), and the memory after it. `used` bool [n, 10], `tick` [n]."""
    t = tick[:, None]
    recent = memory.last >= t - WINDOW
    mate_recent = jnp.any(_MATES & recent[:, None, :], axis=-1)
    mate_now = jnp.any(_MATES & used[:, None, :], axis=-1)
    now = used & (mate_recent | mate_now)
    joined = memory.pending & recent & mate_now
    pending = jnp.where(used, ~now, memory.pending & ~joined)
    last = jnp.where(used, t, memory.last)
    return now.astype(jnp.float32) + joined.astype(jnp.float32), Memory(last, pending)
