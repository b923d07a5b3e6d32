"""One Two-Bridge game's state and the facts of one step: fixed shapes, pytrees."""

from __future__ import annotations

import jax

from marl_bgs.core.pytree import PyTree, pytree_dataclass


@pytree_dataclass
class BridgeState(PyTree):
    """One game. Friends are slots 0-4 (the agents), enemies the built-in controller's N_E."""

    friend_pos: jax.Array  # float32 [5, 2]
    friend_health: jax.Array  # float32 [5]; a Marine is alive while its health is above 0
    enemy_pos: jax.Array  # float32 [N_E, 2]; enemies never move
    enemy_health: jax.Array  # float32 [N_E]
    beacon: jax.Array  # float32 [2]
    regions: jax.Array  # int32 [3]: the spawn region (0-5 for R1-R6) of friends, enemies, beacon
    layout: jax.Array  # int32 []: 0 Base, 1 Combat, 2 Navigate (the pool entry's layout)
    mirrored: jax.Array  # bool []: left and right swapped (the pool's side 1)
    tick_limit: jax.Array  # int32 []: the step limit (600 in the paper)
    tick: jax.Array  # int32 []: steps resolved
    outcome: jax.Array  # int32 []: layout.OUTCOMES code, 0 while running
    episode: jax.Array  # int32 []: games this batch slot has finished

    @property
    def friend_alive(self) -> jax.Array:
        return self.friend_health > 0

    @property
    def enemy_alive(self) -> jax.Array:
        return self.enemy_health > 0


@pytree_dataclass
class BridgeFacts(PyTree):
    """What one step did (recorded for metrics, replays and the conformance suite)."""

    requested: jax.Array  # int32 [5]: each friend's action as given
    accepted: jax.Array  # int32 [5]: as carried out (an illegal request becomes 0, no-op)
    rejected: jax.Array  # bool [5]: the request was illegal and repaired
    friend_target: jax.Array  # int32 [5]: the enemy slot each friend fired at, -1 none
    enemy_target: jax.Array  # int32 [N_E]: the friend slot each enemy fired at, -1 none
    enemy_damage: jax.Array  # float32 [N_E]: health each enemy lost
    friend_damage: jax.Array  # float32 [5]: health each friend lost
    moved: jax.Array  # bool [5]: the friend changed position
    blocked: jax.Array  # bool [5]: a move the cliff or the field's edge stopped entirely
