"""The game state: one explicit pytree with fixed shapes per game (10 slots, padded obstacles).

Slots 0-4 are team A's roster slots, 5-9 team B's. Positions are in the world frame. Three fields
are caches derived from others and kept with them by every engine function: `free` and `near`
(from the obstacles) and `clear` (sight lines, from positions and obstacles; after editing
positions by hand, call `perception.refresh_sight_lines`). Every duration counts the number of
upcoming decisions it still affects: a stun of 1 applied on tick t blocks the decision of tick
t+1 and is gone after it. A leading batch axis is added by the environment.
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.core.geometry import Obstacles
from marl_bgs.core.pytree import PyTree, pytree_dataclass


@pytree_dataclass
class Rules(PyTree):
    """Traced per-game values: changing them never recompiles."""

    winning_score: jnp.ndarray  # int32 []
    tick_limit: jnp.ndarray  # int32 []
    red_zone_depth: jnp.ndarray  # float32 []: 0 disables Red Zones
    wave_period: jnp.ndarray  # int32 []
    shield_ticks: jnp.ndarray  # int32 []
    shield_speed: jnp.ndarray  # float32 []


@pytree_dataclass
class Units(PyTree):
    """Per-slot arrays [10] (positions [10, 2])."""

    class_id: jnp.ndarray  # int32: 0 unused (padded, inert), 1-5 class
    alive: jnp.ndarray  # bool
    pos: jnp.ndarray  # float32 [10, 2], world frame
    health: jnp.ndarray  # float32
    cooldown: jnp.ndarray  # int32: Ultimate usable when 0
    stun: jnp.ndarray  # int32: Charge/Poison stun
    trap: jnp.ndarray  # int32: Freezing Trap (a stun that damage breaks)
    slow_charge: jnp.ndarray  # int32
    slow_hunter: jnp.ndarray  # int32
    slow_poison: jnp.ndarray  # int32
    antiheal: jnp.ndarray  # int32: Poison's halved healing and regeneration
    freedom: jnp.ndarray  # int32: Blessing of Freedom speed floor
    burst: jnp.ndarray  # int32: Mage Burst damage bonus
    shield: jnp.ndarray  # int32: spawn shield
    recovery: jnp.ndarray  # int32: ticks until out-of-combat regeneration may start
    last_move: jnp.ndarray  # int32: previous accepted move, world frame
    last_target: jnp.ndarray  # int32: previous accepted target, the actor's relative index
    last_ult: jnp.ndarray  # int32: previous accepted Ultimate flag


@pytree_dataclass
class GameState(PyTree):
    """Everything about one game. Rules, observation and masks are pure functions of it."""

    units: Units
    obstacles: Obstacles
    free: jnp.ndarray  # bool [81, 41]: where a body fits on a 0.25 grid (derived from obstacles)
    near: jnp.ndarray  # int8 [20, 10, 12]: obstacles near each unit cell (derived from obstacles)
    clear: jnp.ndarray  # bool [10, 10]: no obstacle between slots i and j (derived from positions)
    rules: Rules
    score: jnp.ndarray  # int32 [2]: team A, team B
    wave: jnp.ndarray  # int32 [2]: respawn countdown per team (0: a wave is due this tick)
    tick: jnp.ndarray  # int32 []: ticks resolved so far
    outcome: jnp.ndarray  # int32 []: 0 ongoing, 1 A wins, 2 B wins, 3 draw
    swap: jnp.ndarray  # bool []: True when team A spawns on the right edge
    map_id: (
        jnp.ndarray
    )  # int32 []: the map's id (maps.CUSTOM_MAP_ID for a custom map), for records only
    episode: jnp.ndarray  # int32 []: how many games this slot has finished
    messages: jnp.ndarray  # float32 [10, M]: teammates' messages, delivered one tick late

    @property
    def done(self) -> jnp.ndarray:
        """True once the game has ended."""
        return self.outcome != 0
