"""The learners' compiled programs: one cache shared by every trainer with the same program
config, and the buffer copy that lets a state be donated to them."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def distinct_buffers(tree: Any) -> Any:
    """`tree` with every array leaf its own buffer: a leaf seen before (one array placed in two
    fields, as an eager `init` may) is copied, so the tree can be donated to a program."""
    seen: set[int] = set()

    def own(leaf: Any) -> Any:
        if not isinstance(leaf, jax.Array):
            return leaf
        if id(leaf) in seen:
            return jnp.copy(leaf)
        seen.add(id(leaf))
        return leaf

    return jax.tree_util.tree_map(own, tree)


PROGRAMS: dict[Any, Any] = {}  # compiled functions, shared by trainers with one program config
PROGRAMS_KEPT = 64  # the oldest is dropped beyond this many
