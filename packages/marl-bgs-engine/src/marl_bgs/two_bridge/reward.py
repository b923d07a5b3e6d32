"""The official team reward: the paper's shaped "reduced" reward (MAPPO and QMIX version),
one scalar per step shared by the five friends."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.two_bridge import layout as lay
from marl_bgs.two_bridge.state import BridgeState


def _mean_over(values: jax.Array, alive: jax.Array) -> jax.Array:
    """Mean of `values` over living friends (0 when none lives)."""
    return jnp.sum(jnp.where(alive, values, 0.0)) / jnp.maximum(jnp.sum(alive), 1)


def _centroid(pos: jax.Array, alive: jax.Array) -> jax.Array:
    weights = alive.astype(jnp.float32)
    return (pos * weights[:, None]).sum(axis=0) / jnp.maximum(weights.sum(), 1.0)


def shaping(state: BridgeState, nxt: BridgeState) -> jax.Array:
    """The shaping terms of one step: mean approach to the beacon and to the living enemies'
    centroid (over the friends alive after it), 0.05 x enemy health lost - 0.05 x friendly
    health lost, +1 per enemy killed. The centroid term is 0 once no enemy lives."""
    alive = nxt.friend_alive
    beacon = jnp.linalg.norm(state.friend_pos - state.beacon, axis=-1) - jnp.linalg.norm(
        nxt.friend_pos - nxt.beacon, axis=-1
    )
    before = jnp.linalg.norm(
        state.friend_pos - _centroid(state.enemy_pos, state.enemy_alive), axis=-1
    )
    after = jnp.linalg.norm(nxt.friend_pos - _centroid(nxt.enemy_pos, nxt.enemy_alive), axis=-1)
    centroid = jnp.where(jnp.any(nxt.enemy_alive), _mean_over(before - after, alive), 0.0)
    health = lay.HEALTH_WEIGHT * (
        jnp.sum(state.enemy_health - nxt.enemy_health)
        - jnp.sum(state.friend_health - nxt.friend_health)
    )
    kills = lay.KILL_BONUS * jnp.sum(state.enemy_alive & ~nxt.enemy_alive)
    return _mean_over(beacon, alive) + centroid + health + kills


def terminal(nxt: BridgeState) -> jax.Array:
    """+25 navigation win, +10 combat win, -10 combat loss, -15 timeout loss, else 0."""
    table = jnp.zeros(len(lay.OUTCOMES), jnp.float32)
    for code, value in lay.TERMINAL_REWARD.items():
        table = table.at[code].set(value)
    return table[nxt.outcome]


def team_reward(state: BridgeState, nxt: BridgeState) -> jax.Array:
    """float32 [5]: the step's shared reward. No shaping on a game's first step (the paper's
    buffers start there), and nothing once the game had ended."""
    shaped = jnp.where(state.tick == 0, 0.0, shaping(state, nxt))
    value = jnp.where(state.outcome != lay.RUNNING, 0.0, shaped + terminal(nxt))
    return jnp.full((lay.NUM_FRIENDS,), value, jnp.float32)
