"""What a friend sees: the 2 x 32 x 32 minimap and the unit-status vector (the paper's reduced
observation), and the critic-only global state. Every friend sees the same thing; learners that
share parameters add an agent id themselves, as the paper's do.

Minimap (cells of 2 x 2 raw units), row = y cell, column = x cell: channel 0 pathability (1
walkable), channel 1 player-relative (0 empty, 1 ally, 2 neutral = the beacon, 3 enemy; a cell
shows the largest).
Status vector (2 x 5 + 2 x N_E + 2 values): per friend then per enemy slot (health / 45,
alive), then elapsed steps / step limit and living enemies / N_E. No coordinates: they would
give the search away. With fog of war, enemies and the beacon appear on the minimap only within
a living friend's sight; the status vector is unchanged (enemies never move and only take
damage in sight, so their health and deaths are always known to the team).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.two_bridge import layout as lay
from marl_bgs.two_bridge.rules import beacon_visible, cells, enemies_visible
from marl_bgs.two_bridge.state import BridgeState

MINIMAP_SIZE = 2 * lay.GRID * lay.GRID
_PATH_CHANNEL = np.asarray(lay.PATHABLE, np.float32)  # numpy: importing starts no backend


@pytree_dataclass
class BridgeView(PyTree):
    """One friend's structured observation (the flat vector is these two, concatenated)."""

    minimap: jax.Array  # float32 [2, 32, 32]
    status: jax.Array  # float32 [2 * 5 + 2 * N_E + 2]


def status_size(num_enemies: int) -> int:
    return 2 * lay.NUM_FRIENDS + 2 * num_enemies + 2


def obs_size(num_enemies: int) -> int:
    return MINIMAP_SIZE + status_size(num_enemies)


def state_size(num_enemies: int) -> int:
    """The global state: the full observation (no fog), every unit's (x, y) / 64 (the field's
    side), the beacon's (x, y) / 64 and the nearest living friend's beacon distance / the
    field's diagonal."""
    return obs_size(num_enemies) + 2 * (lay.NUM_FRIENDS + num_enemies) + 3


def minimap(state: BridgeState, fog: bool) -> jax.Array:
    """float32 [2, 32, 32]."""
    rel = jnp.zeros((lay.GRID, lay.GRID), jnp.float32)
    rows, cols = cells(state.friend_pos)
    rel = rel.at[rows, cols].max(jnp.where(state.friend_alive, lay.ALLY, lay.EMPTY))
    row, col = cells(state.beacon)
    rel = rel.at[row, col].max(jnp.where(beacon_visible(state, fog), lay.NEUTRAL, lay.EMPTY))
    rows, cols = cells(state.enemy_pos)
    shown = state.enemy_alive & enemies_visible(state, fog)
    rel = rel.at[rows, cols].max(jnp.where(shown, lay.ENEMY, lay.EMPTY))
    return jnp.stack([jnp.asarray(_PATH_CHANNEL), rel])


def status(state: BridgeState) -> jax.Array:
    """float32 [2 * 5 + 2 * N_E + 2]."""

    def units(health: jax.Array) -> jax.Array:
        return jnp.stack([health / lay.MARINE_HEALTH, (health > 0).astype(jnp.float32)], 1)

    alive = jnp.mean(state.enemy_alive.astype(jnp.float32))
    elapsed = state.tick.astype(jnp.float32) / state.tick_limit.astype(jnp.float32)
    parts = [units(state.friend_health).ravel(), units(state.enemy_health).ravel()]
    return jnp.concatenate([*parts, jnp.stack([jnp.minimum(elapsed, 1.0), alive])])


def team_view(state: BridgeState, fog: bool) -> BridgeView:
    return BridgeView(minimap=minimap(state, fog), status=status(state))


def flat(view: BridgeView) -> jax.Array:
    return jnp.concatenate([view.minimap.ravel(), view.status])


def global_row(state: BridgeState) -> jax.Array:
    """float32 [state_size]: the critic-only state (no fog, coordinates included)."""
    alive = state.friend_alive
    gap = jnp.linalg.norm(state.friend_pos - state.beacon, axis=-1)
    nearest = jnp.min(jnp.where(alive, gap, jnp.inf))
    diagonal = lay.FIELD * np.sqrt(2.0)
    extra = [
        state.friend_pos.ravel() / lay.FIELD,
        state.enemy_pos.ravel() / lay.FIELD,
        state.beacon / lay.FIELD,
        jnp.where(jnp.isfinite(nearest), nearest / diagonal, 1.0)[None],
    ]
    return jnp.concatenate([flat(team_view(state, False)), *extra])


def bounds(num_enemies: int) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 [obs_size] of the flat observation."""
    high = np.ones(obs_size(num_enemies), np.float32)
    high[lay.GRID * lay.GRID : MINIMAP_SIZE] = lay.ENEMY
    return np.zeros_like(high), high
