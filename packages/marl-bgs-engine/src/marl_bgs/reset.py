"""Start states: what a reset draws (map, roster, spawn end) and the state it builds."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs import classes as C
from marl_bgs.constants import NUM_SLOTS
from marl_bgs.geometry import Obstacles
from marl_bgs.movement import free_grid
from marl_bgs.perception import sight_lines
from marl_bgs.pytree import pytree_dataclass
from marl_bgs.state import GameState, Rules, Units
from marl_bgs.tables import lookup, spawn_pads


@pytree_dataclass
class StartPool:
    """What resets draw from: M maps and R roster pairs (uniformly), and the rule values."""

    obstacles: Obstacles  # [M, 32, ...]
    free: jnp.ndarray  # bool [M, 81, 41]: each map's free-space grid
    start_clear: jnp.ndarray  # bool [M, 2, 10, 10]: sight lines between the pads (swap no, yes)
    map_ids: jnp.ndarray  # int32 [M]
    rosters: jnp.ndarray  # int32 [R, 10]
    rules: Rules


def start_sight_lines(obstacles: Obstacles) -> jnp.ndarray:
    """bool [2, 10, 10]: sight lines between the spawn pads, without and with the spawn swap."""
    return jnp.stack([sight_lines(spawn_pads(jnp.bool_(s)), obstacles) for s in (False, True)])


def start_pool(
    obstacles: Obstacles, map_ids: jnp.ndarray, rosters: jnp.ndarray, rules: Rules
) -> StartPool:
    """A pool over stacked maps [M, ...] and rosters [R, 10], with each map's derived grids."""
    return StartPool(
        obstacles=obstacles,
        free=jax.vmap(free_grid)(obstacles),
        start_clear=jax.vmap(start_sight_lines)(obstacles),
        map_ids=map_ids,
        rosters=rosters,
        rules=rules,
    )


def start_state(
    obstacles: Obstacles, free: jnp.ndarray, clear: jnp.ndarray, class_id: jnp.ndarray,
    swap: jnp.ndarray, rules: Rules, map_id: jnp.ndarray, episode: jnp.ndarray, message_dim: int,
) -> GameState:  # fmt: skip
    """A game at tick 0: every roster agent alive on its pad at full health, no statuses.

    `free` and `clear` are the map's free grid and the pads' sight lines for this swap."""
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


def draw_start(
    key: jax.Array, pool: StartPool, game: jnp.ndarray, episode: jnp.ndarray, spawn_swap: str,
    message_dim: int,
) -> GameState:  # fmt: skip
    """The start state of game `game`'s episode `episode`; depends only on (key, game, episode)."""
    k = jax.random.fold_in(jax.random.fold_in(key, game), episode)
    k_map, k_roster, k_swap = jax.random.split(k, 3)
    m = jax.random.randint(k_map, (), 0, pool.map_ids.shape[0])
    r = jax.random.randint(k_roster, (), 0, pool.rosters.shape[0])
    swap = {
        "half": (game + episode) % 2 == 1,
        "none": jnp.bool_(False),
        "all": jnp.bool_(True),
        "random": jax.random.bernoulli(k_swap),
    }[spawn_swap]
    return start_from_pool(pool, m, r, swap, episode, message_dim)


def start_from_pool(
    pool: StartPool, m: jnp.ndarray, r: jnp.ndarray, swap: jnp.ndarray, episode: jnp.ndarray,
    message_dim: int,
) -> GameState:  # fmt: skip
    """The start state on the pool's map `m` with roster pair `r` and the given spawn swap."""
    obstacles = jax.tree.map(lambda a: a[m], pool.obstacles)
    clear = pool.start_clear[m, jnp.asarray(swap, jnp.int32)]
    return start_state(
        obstacles, pool.free[m], clear, pool.rosters[r], swap, pool.rules, pool.map_ids[m],
        episode, message_dim,
    )  # fmt: skip
