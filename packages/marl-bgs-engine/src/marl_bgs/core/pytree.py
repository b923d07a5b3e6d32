"""A frozen dataclass registered as a JAX pytree, with `.replace` (type checkers see through it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeVar, dataclass_transform

import jax
import jax.numpy as jnp

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def pytree_dataclass(cls: type[T]) -> type[T]:
    """Make `cls` a frozen dataclass whose fields are all pytree children."""
    dc = dataclasses.dataclass(frozen=True)(cls)

    def replace(self: Any, **changes: Any) -> Any:
        return dataclasses.replace(self, **changes)

    dc.replace = replace  # type: ignore[attr-defined]
    fields = [f.name for f in dataclasses.fields(dc)]  # type: ignore[arg-type]
    return jax.tree_util.register_dataclass(dc, data_fields=fields, meta_fields=[])


def batch_states(trees: Sequence[Any]) -> Any:
    """Stack single-game pytrees (e.g. authored states) into a batch [len(trees), ...]."""
    if not trees:
        raise ValueError("batch_states: expected at least one state")
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *trees)


def where_games(mask: jax.Array, new: Any, old: Any) -> Any:
    """Per game: `new` where `mask` is True, else `old` (same pytree structure). `mask` is bool
    [n] for a batch of n games (leading axis of every leaf) or a scalar for one game."""

    def pick(n: jax.Array, o: jax.Array) -> jax.Array:
        m = jnp.asarray(mask)
        return jnp.where(m if m.ndim == 0 else m.reshape(-1, *[1] * (o.ndim - 1)), n, o)

    return jax.tree.map(pick, new, old)
