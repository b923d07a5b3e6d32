"""Evaluation keys (paper S5.3): every key depends only on which game, tick and team it serves.

    action key = root | ACTIONS | seed number | tick | team (or agent slot)
    memory key = root | MEMORY  | seed number | tick | game number | team
    start key  = root | START   | seed number   (a mode's own start draws, e.g. Two-Bridge's)

where `|` is `jax.random.fold_in`. The two games of a spawn-swapped pair share a seed number, so
they draw identical action keys; memory-start keys also fold the game's own number, so a System
whose memory starts at random (a pool choosing its member) starts the two games independently.
Nothing depends on how many games run at once or in which order.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

ACTIONS = 0
MEMORY = 1
START = 2


def root_key(seed: int) -> jax.Array:
    """The evaluation's root key from its published integer seed."""
    return jax.random.key(seed)


def _fold(keys: jax.Array, data: jax.Array) -> jax.Array:
    return jax.vmap(jax.random.fold_in)(keys, data)


def _base(root: jax.Array, use: int, seed_numbers: jax.Array, ticks: jax.Array) -> jax.Array:
    n = seed_numbers.shape[0]
    k = jax.random.fold_in(root, use)
    keys = jnp.broadcast_to(k, (n,))
    return _fold(_fold(keys, seed_numbers.astype(jnp.uint32)), ticks.astype(jnp.uint32))


def action_keys(
    root: jax.Array, seed_numbers: jax.Array, ticks: jax.Array, team: int, per_agent: bool = False,
    team_size: int = 5,
) -> jax.Array:  # fmt: skip
    """Keys [n] for one team's action call in each game (or [n, team_size] folded per agent
    slot, slots numbered team by team)."""
    base = _base(root, ACTIONS, seed_numbers, ticks)
    if not per_agent:
        return _fold(base, jnp.full(base.shape, team, jnp.uint32))
    slots = jnp.arange(team_size, dtype=jnp.uint32) + team_size * team
    return jax.vmap(lambda k: jax.vmap(lambda s: jax.random.fold_in(k, s))(slots))(base)


def memory_keys(
    root: jax.Array, seed_numbers: jax.Array, game_numbers: jax.Array, team: int
) -> jax.Array:
    """Keys [n] that start one team's memory in each game (tick 0)."""
    base = _base(root, MEMORY, seed_numbers, jnp.zeros_like(seed_numbers))
    base = _fold(base, game_numbers.astype(jnp.uint32))
    return _fold(base, jnp.full(base.shape, team, jnp.uint32))


def start_keys(root: jax.Array, seed_numbers: jax.Array) -> jax.Array:
    """Keys [n] of each game's own start draws: both games of a pair draw alike."""
    return _base(root, START, seed_numbers, jnp.zeros_like(seed_numbers))
