"""Team Deathmatch's action heads for the learners: `flat` (one head over the 198 (move, target,
Ultimate) triples, masked by the flat mask) and `factored` (a move head of 9 logits, masked by
the move mask, and a combat head over the 22 (target, Ultimate) pairs, masked by the exact pair
mask). The two factored heads are independent given the inputs, so the joint log-probability is
the sum, and every legal (move, pair) is reachable."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.core.arena import NUM_MOVES
from marl_bgs.tdm.actions import ActionMasks, flatten, unflatten
from marl_bgs.tdm.constants import NUM_TARGETS, NUM_ULTIMATE
from marl_bgs_train.heads import ActionHeads, flat_heads

NUM_PAIRS = NUM_TARGETS * NUM_ULTIMATE


def _factored_masks(masks: ActionMasks) -> tuple[jax.Array, jax.Array]:
    return masks.move, masks.pair.reshape(*masks.pair.shape[:-2], NUM_PAIRS)


def _factored_to_env(choices: jax.Array) -> jax.Array:
    move, pair = choices[..., 0], choices[..., 1]
    return jnp.stack([move, pair // NUM_ULTIMATE, pair % NUM_ULTIMATE], axis=-1)


def _factored_from_env(actions: jax.Array) -> jax.Array:
    pair = actions[..., 1] * NUM_ULTIMATE + actions[..., 2]
    return jnp.stack([actions[..., 0], pair], axis=-1).astype(jnp.int32)


HEADS: dict[str, ActionHeads] = {
    "factored": ActionHeads(
        sizes=(NUM_MOVES, NUM_PAIRS),
        masks=_factored_masks,
        to_env=_factored_to_env,
        from_env=_factored_from_env,
    ),
    "flat": flat_heads(NUM_MOVES * NUM_PAIRS, unflatten, flatten),
}
