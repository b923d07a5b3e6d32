"""Settings a run reads as data, not as program constants (its `hyper`): learning rates, the
entropy and clip coefficients, GAE's and TD's lambda (each config class names its own in
`SWEEPABLE`), the game section's data settings (its mode's `TrainParts.game_hyper`: Team
Deathmatch's reward shaping weights) and the layouts (the run's start pool, `SelfPlay.hyper`).
Runs whose configs differ only in these (and in their length) share one compiled program, so a
batch of them trains as one `vmap` (`marl_bgs_train.batch`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import optax

Hyper = dict[str, Any]  # setting name -> float32 scalar (or [runs] in a batch); "layouts": a pool
LAYOUTS = "layouts"  # the hyper entry of a run's start pool (its maps or variants as data)


def _parts(config: Any) -> Any:
    from marl_bgs_train.modes import parts

    return parts(config.mode)


def sweepable(config: Any) -> tuple[str, ...]:
    """The settings of `config` a run reads as data: the learner's, then the game section's
    (`game.`-prefixed), then its mode's layout setting (`game.maps`, `game.variants`)."""
    parts = _parts(config)
    layouts = (f"game.{parts.layout_setting}",) if parts.layout_setting else ()
    own = tuple(getattr(type(config), "SWEEPABLE", ()))
    return own + tuple(parts.game_hyper(config.game)) + layouts


def hyper_of(config: Any) -> Hyper:
    """`config`'s learner and game settings read as data, as float32 scalars (the layouts, a
    start pool, come from the trainer: `SelfPlay.hyper`)."""
    own = {name: jnp.float32(getattr(config, name)) for name in getattr(config, "SWEEPABLE", ())}
    game = _parts(config).game_hyper(config.game)
    return own | {name: jnp.float32(value) for name, value in game.items()}


def program_config(config: Any) -> Any:
    """The config as a compiled program sees it: its length (`total_steps`) only says how many
    updates to run, its sweepable settings are data and so are its layouts (`program_game`), so
    configs that differ in those alone build the same programs."""
    learner = dict.fromkeys(getattr(config, "SWEEPABLE", ()), 0.0)
    game = _parts(config).program_game(config.game)
    return dataclasses.replace(config, total_steps=1, game=game, **learner)


def descend(
    tx: optax.GradientTransformation, lr: jax.Array, grads: Any, opt: Any, params: Any
) -> tuple[Any, Any]:
    """One optimiser step with the learning rate as data: `tx` scales the gradients (Adam's
    moments, say) and the step goes `lr` against them, as optax's own `scale_by_learning_rate`
    does (bit for bit). Returns (params, opt)."""
    updates, opt = tx.update(grads, opt, params)
    step = jax.tree_util.tree_map(lambda u: -lr * u, updates)
    return optax.apply_updates(params, step), opt


def layout_shapes(layouts: Any) -> Any:
    """What a compiled program depends on of a run's layouts (its start pool): the structure,
    shapes and dtypes, not the values."""
    leaves, tree = jax.tree_util.tree_flatten(layouts)
    return tree, tuple((tuple(x.shape), str(x.dtype)) for x in leaves)
