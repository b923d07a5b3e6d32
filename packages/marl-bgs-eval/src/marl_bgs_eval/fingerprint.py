"""Trajectory fingerprints: a 64-bit hash of every tick a game played, folded on the device.

The rules are deterministic, so a game is its start (map, rosters, spawn ends, limits) and the
actions the engine accepted, tick by tick. Each tick folds into the game's fingerprint what every
agent did and what followed, all in each agent's own frame: the accepted actions [10, 3], who died
[10] and the score [2]. A spawn-swapped pair whose games are mirror images (each agent saw and did
the same in its own frame) gets one fingerprint; so do repeats of one game under other seeds.

Two uint32 lanes, each a murmur3-style mix: a tick's values are mixed with their positions and
summed (wrapping), then chained into the running hash, so order and length count. The hash is a
few integer operations per value and tick in the play loop's carry: no host round trip, fixed
shapes. It is for telling games apart, not a cryptographic digest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

SEEDS = (0x9E3779B9, 0x85EBCA77)  # one per lane


def _mix(x: jax.Array) -> jax.Array:
    """murmur3's 32-bit finalizer (a bijection that spreads every input bit)."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    x = x * jnp.uint32(0xC2B2AE35)
    return x ^ (x >> 16)


def start(n: int) -> jax.Array:
    """The fingerprint of `n` games before their first tick: uint32 [n, 2]."""
    return jnp.broadcast_to(jnp.asarray(SEEDS, jnp.uint32), (n, 2))


def fold(trace: jax.Array, accepted: Any, died: Any, score: Any) -> jax.Array:
    """One Team Deathmatch tick more: `trace` uint32 [n, 2]; accepted int [n, 10, 3] (own
    frames), died bool [n, 10], score int [n, 2] after the tick. Returns uint32 [n, 2]."""
    return fold_words(trace, [accepted, died, score])


def fold_words(trace: jax.Array, arrays: Sequence[Any]) -> jax.Array:
    """One tick more of any mode: `arrays` [n, ...] (integers or bools) are flattened per game,
    in order, and folded into `trace` uint32 [n, 2]."""
    n = trace.shape[0]
    values = jnp.concatenate(
        [jnp.reshape(jnp.asarray(a), (n, -1)).astype(jnp.uint32) for a in arrays], axis=1
    )
    where = jnp.arange(values.shape[1], dtype=jnp.uint32) * jnp.uint32(0x27D4EB2F)
    lanes = jnp.asarray(SEEDS, jnp.uint32)
    terms = _mix(values[:, None, :] * jnp.uint32(0x165667B1) + where + lanes[:, None])
    digest = jnp.sum(terms, axis=-1, dtype=jnp.uint32)  # [n, 2], wrapping
    return _mix((trace * jnp.uint32(0x01000193)) ^ digest)


def text(trace: Any) -> list[str]:
    """Fingerprints uint32 [n, 2] as 16 hex digits each (the results column `trajectory`)."""
    t = np.asarray(trace, np.uint32).reshape(-1, 2)
    return [f"{int(a):08x}{int(b):08x}" for a, b in t]
