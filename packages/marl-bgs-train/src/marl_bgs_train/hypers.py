"""Settings a run reads as data, not as program constants (its `hyper`): learning rates, the
entropy and clip coefficients, GAE's and TD's lambda. Runs whose configs differ only in these
(and in their length) share one compiled program, so a batch of them trains as one `vmap`
(`marl_bgs_train.batch`). Each config class names its own in `SWEEPABLE`."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import optax

Hyper = dict[str, jax.Array]  # setting name -> float32 scalar (or [runs] in a batch)


def sweepable(config: Any) -> tuple[str, ...]:
    """The settings of `config` a run reads as data."""
    return tuple(getattr(type(config), "SWEEPABLE", ()))


def hyper_of(config: Any) -> Hyper:
    """`config`'s sweepable settings as float32 scalars."""
    return {name: jnp.float32(getattr(config, name)) for name in sweepable(config)}


def program_config(config: Any) -> Any:
    """The config as a compiled program sees it: its length (`total_steps`) only says how many
    updates to run and its sweepable settings are data, so configs that differ in those alone
    build the same programs."""
    return dataclasses.replace(config, total_steps=1, **dict.fromkeys(sweepable(config), 0.0))


def descend(
    tx: optax.GradientTransformation, lr: jax.Array, grads: Any, opt: Any, params: Any
) -> tuple[Any, Any]:
    """One optimiser step with the learning rate as data: `tx` scales the gradients (Adam's
    moments, say) and the step goes `lr` against them, as optax's own `scale_by_learning_rate`
    does (bit for bit). Returns (params, opt)."""
    updates, opt = tx.update(grads, opt, params)
    step = jax.tree_util.tree_map(lambda u: -lr * u, updates)
    return optax.apply_updates(params, step), opt
