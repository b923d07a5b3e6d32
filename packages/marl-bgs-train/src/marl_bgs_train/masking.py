"""Masked choices, for every learner and mode: an illegal choice gets the logit `MASKED` (never
sampled, no gradient through it), and the value learners pick legal choices only."""

from __future__ import annotations

import jax
import jax.numpy as jnp

MASKED = -1e9  # the logit of an illegal choice


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """`logits` with the illegal choices (`mask` False) at `MASKED`."""
    return jnp.where(mask, logits, MASKED)


def masked_log_softmax(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Log-probabilities over the legal choices of the last axis."""
    return jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)


def masked_entropy(logp: jax.Array, mask: jax.Array) -> jax.Array:
    """The entropy of `masked_log_softmax`'s distribution (illegal choices count nothing)."""
    return -jnp.sum(jnp.where(mask, jnp.exp(logp) * logp, 0.0), axis=-1)


def epsilon_greedy(
    key: jax.Array, values: jax.Array, mask: jax.Array, epsilon: jax.Array
) -> jax.Array:
    """Per entry of `values` [..., k]: with probability `epsilon` a legal choice uniformly at
    random, else the legal choice of highest value (int32 [...])."""
    k_explore, k_pick = jax.random.split(key)
    greedy = jnp.argmax(jnp.where(mask, values, -jnp.inf), axis=-1)
    uniform = jax.random.categorical(k_pick, masked_logits(jnp.zeros_like(values), mask), axis=-1)
    explore = jax.random.uniform(k_explore, greedy.shape) < epsilon
    return jnp.where(explore, uniform, greedy).astype(jnp.int32)


def greedy_value(values: jax.Array, mask: jax.Array) -> jax.Array:
    """The highest legal value [...] of `values` [..., k] (a dead agent's all-stay mask still
    leaves one legal choice)."""
    return jnp.max(jnp.where(mask, values, -jnp.inf), axis=-1)
