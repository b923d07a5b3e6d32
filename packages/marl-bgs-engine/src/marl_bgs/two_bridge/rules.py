"""The rules of one step: legal actions, fire, movement over the cliff, the outcome.

Order of a step (simultaneous for both sides): every living Marine that fires picks its target
from the positions at the start of the step; all damage lands at once; Marines still alive then
carry out their moves; the outcome is checked. A friend fires when it is told to attack (a legal
target: alive, in range) or when it idles with an enemy in range (StarCraft II units acquire
targets on their own). The built-in enemy controller is that idle rule alone: an enemy stands
still and fires at the nearest living friend in range, so it stays put until provoked.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.pytree import where_games
from marl_bgs.two_bridge import layout as lay
from marl_bgs.two_bridge.state import BridgeFacts, BridgeState

_PATHABLE = np.asarray(lay.PATHABLE)  # numpy: importing the engine starts no JAX backend
_DIRECTIONS = np.asarray(lay.MOVE_DIRECTIONS)


def distances(a: jax.Array, b: jax.Array) -> jax.Array:
    """float32 [len(a), len(b)]: distances between two sets of points."""
    return jnp.linalg.norm(a[:, None, :] - b[None, :, :], axis=-1)


def enemies_visible(state: BridgeState, fog: bool) -> jax.Array:
    """bool [N_E]: enemies the team sees (all, without fog of war)."""
    if not fog:
        return jnp.ones(state.enemy_pos.shape[0], bool)
    near = distances(state.friend_pos, state.enemy_pos) <= lay.SIGHT_RANGE
    return jnp.any(near & state.friend_alive[:, None], axis=0)


def beacon_visible(state: BridgeState, fog: bool) -> jax.Array:
    """bool []: the team sees the beacon (always, without fog of war)."""
    if not fog:
        return jnp.bool_(True)
    near = jnp.linalg.norm(state.friend_pos - state.beacon, axis=-1) <= lay.SIGHT_RANGE
    return jnp.any(near & state.friend_alive)


def action_masks(state: BridgeState, fog: bool) -> jax.Array:
    """bool [5, 9 + N_E]: no-op always; moves when alive; attack j when the friend is alive and
    enemy j is alive, seen and within attack range (the only enemy facts a mask may carry). In
    a finished game every Marine may only idle."""
    alive = state.friend_alive & (state.outcome == lay.RUNNING)
    in_range = distances(state.friend_pos, state.enemy_pos) <= lay.ATTACK_RANGE
    targets = in_range & state.enemy_alive[None] & enemies_visible(state, fog)[None]
    moves = jnp.broadcast_to(alive[:, None], (lay.NUM_FRIENDS, lay.NUM_BASE_ACTIONS - 1))
    noop = jnp.ones((lay.NUM_FRIENDS, 1), bool)
    return jnp.concatenate([noop, moves, targets & alive[:, None]], axis=1)


def nearest_in_range(dist: jax.Array, shooters: jax.Array, targets: jax.Array) -> jax.Array:
    """int32 [shooters]: each living shooter's nearest living target within attack range (the
    lowest slot on ties), -1 for none."""
    allowed = (dist <= lay.ATTACK_RANGE) & targets[None] & shooters[:, None]
    pick = jnp.argmin(jnp.where(allowed, dist, jnp.inf), axis=1)
    return jnp.where(allowed.any(axis=1), pick, -1).astype(jnp.int32)


def damage_taken(target: jax.Array, count: int) -> jax.Array:
    """float32 [count]: DAMAGE per shooter aimed at each slot (target -1: no shot)."""
    hits = (target[:, None] == jnp.arange(count)[None]).sum(axis=0)
    return hits.astype(jnp.float32) * lay.DAMAGE


def cells(pos: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The minimap cell (row, column) of points [..., 2] (clipped to the grid)."""
    cell = jnp.clip(jnp.floor(pos / lay.CELL).astype(jnp.int32), 0, lay.GRID - 1)
    return cell[..., 1], cell[..., 0]


def pathable(pos: jax.Array) -> jax.Array:
    """bool [...]: the point lies on the field and not on the cliff."""
    inside = jnp.all((pos >= 0.0) & (pos < lay.FIELD), axis=-1)
    return inside & jnp.asarray(_PATHABLE)[cells(pos)]


def move(pos: jax.Array, direction: jax.Array) -> jax.Array:
    """Positions [n, 2] after a step of MOVE_STEP along `direction` [n, 2]: the full step if its
    end is pathable, else its x or its y part alone (sliding along the cliff or the edge), else
    no move."""
    step = direction * lay.MOVE_STEP
    full, along_x = pos + step, pos + step * jnp.asarray([1.0, 0.0])
    along_y = pos + step * jnp.asarray([0.0, 1.0])
    ok_full, ok_x, ok_y = pathable(full), pathable(along_x), pathable(along_y)
    slide = jnp.where(ok_x[:, None], along_x, jnp.where(ok_y[:, None], along_y, pos))
    return jnp.where(ok_full[:, None], full, slide)


def outcome_of(state: BridgeState) -> jax.Array:
    """int32 []: the outcome after a step, in priority order: navigation win (a living friend
    within the beacon radius), combat win (every enemy dead, a friend alive), combat loss
    (every friend dead), timeout loss (the step limit reached), else running."""
    alive = state.friend_alive
    near = jnp.linalg.norm(state.friend_pos - state.beacon, axis=-1) < lay.BEACON_RADIUS
    return jnp.select(
        [
            jnp.any(near & alive),
            ~jnp.any(state.enemy_alive) & jnp.any(alive),
            ~jnp.any(alive),
            state.tick >= state.tick_limit,
        ],
        [lay.NAVIGATION_WIN, lay.COMBAT_WIN, lay.COMBAT_LOSS, lay.TIMEOUT_LOSS],
        lay.RUNNING,
    ).astype(jnp.int32)


def transition(
    state: BridgeState, actions: jax.Array, fog: bool
) -> tuple[BridgeState, BridgeFacts]:
    """One step from actions int [5, 1] (one head); an illegal request becomes a no-op."""
    requested = actions[:, 0].astype(jnp.int32)
    masks = action_masks(state, fog)
    width = masks.shape[1]
    in_bounds = (requested >= 0) & (requested < width)
    legal = in_bounds & masks[jnp.arange(lay.NUM_FRIENDS), jnp.clip(requested, 0, width - 1)]
    accepted = jnp.where(legal, requested, 0)

    f_alive, e_alive = state.friend_alive, state.enemy_alive
    dist = distances(state.friend_pos, state.enemy_pos)
    idle = nearest_in_range(dist, f_alive & (accepted == 0), e_alive)
    ordered = accepted - lay.NUM_BASE_ACTIONS
    friend_target = jnp.where(accepted >= lay.NUM_BASE_ACTIONS, ordered, idle)
    enemy_target = nearest_in_range(dist.T, e_alive, f_alive)
    num_enemies = state.enemy_pos.shape[0]
    enemy_health = jnp.maximum(state.enemy_health - damage_taken(friend_target, num_enemies), 0)
    friend_health = jnp.maximum(
        state.friend_health - damage_taken(enemy_target, lay.NUM_FRIENDS), 0
    )

    moving = (accepted >= 1) & (accepted < lay.NUM_BASE_ACTIONS) & (friend_health > 0)
    moved_to = move(state.friend_pos, jnp.asarray(_DIRECTIONS)[jnp.where(moving, accepted, 0)])
    friend_pos = jnp.where(moving[:, None], moved_to, state.friend_pos)
    nxt = state.replace(
        friend_pos=friend_pos, friend_health=friend_health, enemy_health=enemy_health,
        tick=state.tick + 1,
    )  # fmt: skip
    nxt = nxt.replace(outcome=outcome_of(nxt))
    moved = jnp.any(friend_pos != state.friend_pos, axis=-1)
    facts = BridgeFacts(
        requested=requested, accepted=accepted, rejected=~legal,
        friend_target=friend_target, enemy_target=enemy_target,
        enemy_damage=state.enemy_health - enemy_health,
        friend_damage=state.friend_health - friend_health,
        moved=moved, blocked=moving & ~moved,
    )  # fmt: skip
    running = state.outcome == lay.RUNNING
    still = jax.tree.map(jnp.zeros_like, facts)
    still = still.replace(friend_target=-jnp.ones_like(friend_target),
                          enemy_target=-jnp.ones_like(enemy_target))  # fmt: skip
    return where_games(running, nxt, state), where_games(running, facts, still)
