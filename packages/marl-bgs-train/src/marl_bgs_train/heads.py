"""Masked action heads, for every mode: how a network's outputs become one team's actions.

`ActionHeads` is one parameterisation of an agent's choice: the logits each head needs, the
head masks read from the team's engine masks, and the conversions between head choices and the
engine's actions. Every mode has `flat_heads` (one head over its flat action, masked by its flat
mask); a mode's training kit may add others (Team Deathmatch's `factored`: a move head and a
(target, Ultimate) head, `marl_bgs_train.tdm.actions`). `sample` and `evaluate` work on any.
Masked logits are replaced by a large finite negative, so a masked choice has probability exactly
0 in float32 and sampling never picks one (while gradients stay finite).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from marl_bgs_train.masking import masked_entropy, masked_log_softmax, masked_logits


@dataclass(frozen=True, eq=False)
class ActionHeads:
    """One way to choose an action: `sizes` logits per head; `masks(engine_masks)` -> a mask per
    head [..., size]; `to_env(choices [..., heads])` -> engine actions; `from_env` its inverse."""

    sizes: tuple[int, ...]
    masks: Callable[[Any], tuple[jax.Array, ...]]
    to_env: Callable[[jax.Array], jax.Array]
    from_env: Callable[[jax.Array], jax.Array]


def flat_heads(
    num_actions: int,
    unflatten: Callable[[jax.Array], jax.Array],
    flatten: Callable[[jax.Array], jax.Array],
) -> ActionHeads:
    """One head over a mode's `num_actions` flat actions, masked by its flat mask (`.flat` of its
    engine masks); `unflatten` / `flatten` are the mode's own (`env.mode.unflatten_actions`)."""
    return ActionHeads(
        sizes=(num_actions,),
        masks=lambda masks: (masks.flat,),
        to_env=lambda choices: unflatten(choices[..., 0]).astype(jnp.int32),
        from_env=lambda actions: flatten(actions)[..., None].astype(jnp.int32),
    )


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
