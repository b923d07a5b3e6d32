"""A frozen dataclass registered as a JAX pytree, with `.replace` (type checkers see through it)."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, dataclass_transform

import jax

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
