"""Masked action heads over Team Deathmatch's actions.

Two parameterisations of one agent's choice, both exact under the engine's masks:

- `factored`: a move head (9 logits, masked by the move mask) and a combat head over the 22
  (target, Ultimate) pairs (masked by the exact pair mask). The two are independent given the
  inputs, so the joint log-probability is the sum, and every legal (move, pair) is reachable.
- `flat`: one head over the 198 (move, target, Ultimate) triples, masked by the flat mask.

Masked logits are replaced by a large finite negative, so a masked choice has probability exactly 0
in float32 and sampling never picks one (while gradients stay finite).
"""

from __future__ import annotations

import functools
import operator
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp

from marl_bgs.core.arena import NUM_MOVES
from marl_bgs.tdm.actions import flatten, unflatten
from marl_bgs.tdm.constants import NUM_TARGETS, NUM_ULTIMATE
from marl_bgs_train.masking import masked_entropy, masked_log_softmax, masked_logits

HeadKind = Literal["factored", "flat"]
HEAD_KINDS: tuple[HeadKind, ...] = ("factored", "flat")
NUM_PAIRS = NUM_TARGETS * NUM_ULTIMATE


def logit_sizes(kind: HeadKind) -> tuple[int, ...]:
    """The logits each head needs: (9, 22) factored, (198,) flat."""
    return (NUM_MOVES, NUM_PAIRS) if kind == "factored" else (NUM_MOVES * NUM_PAIRS,)


def head_masks(kind: HeadKind, move: jax.Array, pair: jax.Array) -> tuple[jax.Array, ...]:
    """Masks matching `logit_sizes(kind)` from the engine's move [..., 9] and pair
    [..., 11, 2] masks."""
    flat_pair = pair.reshape(*pair.shape[:-2], NUM_PAIRS)
    if kind == "factored":
        return move, flat_pair
    joint = move[..., :, None] & flat_pair[..., None, :]
    return (joint.reshape(*joint.shape[:-2], NUM_MOVES * NUM_PAIRS),)


class HeadSample(NamedTuple):
    """Per-head choices [..., heads] and their total log-probability and entropy [...]."""

    choices: jax.Array
    log_prob: jax.Array
    entropy: jax.Array


def _total(terms: list[jax.Array]) -> jax.Array:
    """The sum of the heads' terms (one per head, so never empty)."""
    return functools.reduce(operator.add, terms)


def evaluate(
    logits: tuple[jax.Array, ...], masks: tuple[jax.Array, ...], choices: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """(log-probability, entropy) [...] of `choices` [..., heads] under masked `logits`."""
    logp = [masked_log_softmax(lg, m) for lg, m in zip(logits, masks, strict=True)]
    picked = [
        jnp.take_along_axis(lp, choices[..., h, None], axis=-1)[..., 0] for h, lp in enumerate(logp)
    ]
    entropy = [masked_entropy(lp, m) for lp, m in zip(logp, masks, strict=True)]
    return _total(picked), _total(entropy)


def sample(
    key: jax.Array,
    logits: tuple[jax.Array, ...],
    masks: tuple[jax.Array, ...],
    greedy: bool = False,
) -> HeadSample:
    """One legal choice per head (or the most likely legal one when `greedy`)."""
    keys = jax.random.split(key, len(logits))
    masked = [masked_logits(lg, m) for lg, m in zip(logits, masks, strict=True)]
    if greedy:
        choices = jnp.stack([jnp.argmax(lg, axis=-1) for lg in masked], axis=-1)
    else:
        picks = [jax.random.categorical(k, lg, axis=-1) for k, lg in zip(keys, masked, strict=True)]
        choices = jnp.stack(picks, axis=-1)
    log_prob, entropy = evaluate(logits, masks, choices)
    return HeadSample(choices.astype(jnp.int32), log_prob, entropy)


def to_env_actions(kind: HeadKind, choices: jax.Array) -> jax.Array:
    """Head choices [..., heads] -> the engine's (move, target, Ultimate) int32 [..., 3]."""
    if kind == "factored":
        move, pair = choices[..., 0], choices[..., 1]
        return jnp.stack([move, pair // NUM_ULTIMATE, pair % NUM_ULTIMATE], axis=-1)
    return unflatten(choices[..., 0]).astype(jnp.int32)


def from_env_actions(kind: HeadKind, actions: jax.Array) -> jax.Array:
    """The inverse of `to_env_actions`: (move, target, Ultimate) [..., 3] -> head choices."""
    if kind == "factored":
        pair = actions[..., 1] * NUM_ULTIMATE + actions[..., 2]
        return jnp.stack([actions[..., 0], pair], axis=-1).astype(jnp.int32)
    return flatten(actions)[..., None].astype(jnp.int32)
