"""Start states of Team Deathmatch and the pools `reset` draws them from.

A pool over maps x roster pairs holds one entry per (map, roster pair), entry index
`map_index * num_rosters + roster_index`, each in its two sides (side 1: team A spawns on the
right edge). Pools of authored snapshots and curriculum stages are built with
`marl_bgs.core.pool.make_pool` and `concat_pools` from any states of the same shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.geometry import Obstacles, near_table
from marl_bgs.core.pool import StartPool, check_weights
from marl_bgs.core.pytree import batch_states
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import NUM_SLOTS
from marl_bgs.tdm.perception import sight_lines
from marl_bgs.tdm.shields import free_grid
from marl_bgs.tdm.state import GameState, Rules, Units
from marl_bgs.tdm.tables import lookup, spawn_pads


def start_state(
    obstacles: Obstacles, free: jnp.ndarray, near: jnp.ndarray, clear: jnp.ndarray,
    class_id: jnp.ndarray, swap: jnp.ndarray, rules: Rules, map_id: jnp.ndarray,
    episode: jnp.ndarray, message_dim: int,
) -> GameState:  # fmt: skip
    """A game at tick 0: every roster agent alive on its pad at full health, no statuses.

    `free`, `near` and `clear` are the map's free grid and table of near obstacles
    (`movement.free_grid`, `geometry.near_table`) and the pads' sight lines for this swap."""
    zeros = jnp.zeros(NUM_SLOTS, jnp.int32)
    units = Units(
        class_id=class_id.astype(jnp.int32),
        alive=class_id > 0,
        pos=spawn_pads(swap),
        health=lookup(C.MAX_HEALTH, class_id),
        cooldown=zeros,
        stun=zeros,
        trap=zeros,
        slow_charge=zeros,
        slow_hunter=zeros,
        slow_poison=zeros,
        antiheal=zeros,
        freedom=zeros,
        burst=zeros,
        shield=zeros,
        recovery=zeros,
        last_move=zeros,
        last_target=zeros,
        last_ult=zeros,
    )
    return GameState(
        units=units,
        obstacles=obstacles,
        free=jnp.asarray(free, bool),
        near=jnp.asarray(near, jnp.int8),
        clear=jnp.asarray(clear, bool),
        rules=rules,
        score=jnp.zeros(2, jnp.int32),
        wave=jnp.full(2, rules.wave_period - 1, jnp.int32),
        tick=jnp.int32(0),
        outcome=jnp.int32(0),
        swap=jnp.asarray(swap, bool),
        map_id=jnp.asarray(map_id, jnp.int32),
        episode=jnp.asarray(episode, jnp.int32),
        messages=jnp.zeros((NUM_SLOTS, message_dim), jnp.float32),
    )


def _entry(
    obstacles: Obstacles, class_id: jnp.ndarray, rules: Rules, map_id: jnp.ndarray, message_dim: int
) -> GameState:
    """Both sides [2, ...] of one (map, roster pair) entry at tick 0."""
    free, near = free_grid(obstacles), near_table(obstacles)

    def side(swap: bool) -> GameState:
        clear = sight_lines(spawn_pads(jnp.bool_(swap)), obstacles)
        return start_state(
            obstacles, free, near, clear, class_id, jnp.bool_(swap), rules, map_id,
            jnp.int32(0), message_dim,
        )  # fmt: skip

    return batch_states([side(False), side(True)])


_entries = jax.jit(jax.vmap(_entry, in_axes=(0, 0, None, 0, None)), static_argnums=4)


def pool_from_maps(
    obstacles: Obstacles,
    map_ids: Sequence[int],
    rosters: np.ndarray,
    rules: Rules,
    *,
    message_dim: int = 0,
    weights: Any = None,
) -> StartPool:
    """A pool over stacked maps' obstacles [M, ...] x roster pairs int [R, 10]: entry
    `m * R + r`, both sides; `weights` [M * R] (default uniform)."""
    n_maps, n_rosters = len(map_ids), int(np.shape(rosters)[0])
    m = np.repeat(np.arange(n_maps), n_rosters)
    r = np.tile(np.arange(n_rosters), n_maps)
    obs = jax.tree.map(lambda a: jnp.asarray(a)[m], obstacles)
    classes = jnp.asarray(rosters, jnp.int32)[r]
    both = _entries(obs, classes, rules, jnp.asarray(map_ids, jnp.int32)[m], message_dim)
    return StartPool(states=both, weights=jnp.asarray(check_weights(weights, n_maps * n_rosters)))


def entry_index(map_index: Any, roster_index: Any, num_rosters: int) -> jnp.ndarray:
    """The pool entry of (map, roster pair) in a `pool_from_maps` pool."""
    return jnp.asarray(map_index, jnp.int32) * num_rosters + jnp.asarray(roster_index, jnp.int32)


def with_active_obstacles(state: GameState, active: jax.Array) -> GameState:
    """One game's state with obstacle slots switched on or off (bool [32]), its derived free grid,
    near-obstacle table and sight lines recomputed. Map it over a pool's states (`jax.vmap`
    twice: entries, sides) to make a curriculum stage; only active obstacles block bodies and
    sight."""
    obstacles = state.obstacles.replace(
        active=jnp.asarray(active, bool) & (state.obstacles.kind > 0)
    )
    return state.replace(
        obstacles=obstacles,
        free=free_grid(obstacles),
        near=near_table(obstacles),
        clear=sight_lines(state.units.pos, obstacles),
    )
