"""A frozen dataclass registered as a JAX pytree, with a typed `.replace` from its `PyTree` base."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Self, TypeVar, dataclass_transform

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class PyTree:
    """Base of every `pytree_dataclass` class: gives it a typed `.replace`."""

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` (field=value) applied, as `dataclasses.replace`."""
        return dataclasses.replace(self, **changes)


T = TypeVar("T", bound=PyTree)


@dataclass_transform(frozen_default=True)
def pytree_dataclass(cls: type[T]) -> type[T]:
    """Make `cls` (a `PyTree` subclass) a frozen dataclass whose fields are all pytree children."""
    dc = dataclasses.dataclass(frozen=True)(cls)
    fields = [f.name for f in dataclasses.fields(dc)]
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
