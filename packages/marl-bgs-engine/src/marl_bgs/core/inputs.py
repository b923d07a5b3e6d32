"""What a caller hands `step`, checked on the host before it reaches the rules.

Concrete actions (numpy, lists, JAX arrays outside `jit`) must be integers in range for their head
(or the flat index); anything else is a `ConfigError` naming the agent, the game, the value and
the range. In-range illegal choices get the mode's documented repair. Under `jit` the values are
not known on the host: there an out-of-range flat index becomes "illegal in every head" (repaired
to the first choice of every head and counted as rejected) and non-finite message floats become 0.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

from marl_bgs.core.errors import ConfigError
from marl_bgs.core.mode import ModeSpec


def _traced(x: Any) -> bool:
    return isinstance(x, Tracer)


def _array(value: Any, field: str) -> Any:
    """A traced value as it is, anything else as a numpy array (or a ConfigError)."""
    if _traced(value):
        return value
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"{field}: expected an integer array, got {type(value).__name__}"
        ) from None
    return arr


def _integers(arr: Any, field: str) -> None:
    dtype = arr.dtype
    if not jnp.issubdtype(dtype, jnp.integer):
        raise ConfigError(f"{field}: expected integers, got dtype {dtype}")


def _in_range(arr: np.ndarray, highs: np.ndarray, spec: ModeSpec, flat: bool) -> None:
    """Raise for the first value outside [0, high) along the last axis (agents on axis 1)."""
    bad = np.argwhere((arr < 0) | (arr >= highs))
    if bad.size == 0:
        return
    where = tuple(int(i) for i in bad[0])
    game, agent = where[0], spec.agents[where[1]]
    value = int(arr[where])
    if flat:
        raise ConfigError(
            f"actions[{agent!r}]: flat action {value} in game {game} is outside"
            f" [0, {spec.num_actions})"
        )
    head = where[2]
    name = spec.head_names[head] if spec.head_names else f"head {head}"
    raise ConfigError(
        f"actions[{agent!r}]: {name} {value} in game {game} is outside [0,"
        f" {spec.action_heads[head]})"
    )


def _from_dict(actions: dict, spec: ModeSpec, n: int) -> Any:
    unknown = sorted(str(a)[:40] for a in actions if a not in spec.agents)
    if len(unknown) > 3:  # name a few; a hostile dict cannot flood the message
        unknown = [*unknown[:3], f"... {len(unknown) - 3} more"]
    missing = [a for a in spec.agents if a not in actions]
    if unknown or missing:
        raise ConfigError(
            f"actions: unknown agent(s) {unknown}, missing agent(s) {missing}; expected exactly"
            f" {list(spec.agents)}"
        )
    h = len(spec.action_heads)
    parts = []
    for agent in spec.agents:
        arr = _array(actions[agent], f"actions[{agent!r}]")
        if np.shape(arr) not in ((n,), (n, h)):
            raise ConfigError(
                f"actions[{agent!r}]: expected shape ({n},) flat or ({n}, {h}) heads, got"
                f" {tuple(np.shape(arr))}"
            )
        parts.append(arr)
    shapes = {np.shape(p) for p in parts}
    if len(shapes) > 1:
        raise ConfigError("actions: give every agent flat indices or every agent heads, not both")
    stack = jnp.stack if any(_traced(p) for p in parts) else np.stack
    return stack(parts, axis=1)


def check_actions(spec: ModeSpec, n: int, actions: Any, unflatten: Any) -> jax.Array:
    """Actions as int32 heads [n, agents, heads] from a dict of agents, heads or flat indices."""
    arr = _from_dict(actions, spec, n) if isinstance(actions, dict) else _array(actions, "actions")
    k, h = spec.num_agents, len(spec.action_heads)
    shape = tuple(np.shape(arr))
    if shape not in ((n, k), (n, k, h)):
        raise ConfigError(
            f"actions: expected shape ({n}, {k}, {h}) heads or ({n}, {k}) flat indices (or a dict"
            f" of agents), got {shape}"
        )
    _integers(arr, "actions")
    flat = shape == (n, k)
    if not _traced(arr):
        highs = np.asarray([spec.num_actions] if flat else spec.action_heads)
        _in_range(np.asarray(arr), highs, spec, flat)
    arr = jnp.asarray(arr).astype(jnp.int32) if not _traced(arr) else arr.astype(jnp.int32)
    return unflatten(arr) if flat else arr


def check_indices(values: Any, n: int, high: int, field: str) -> np.ndarray:
    """Host-side per-game indices: integers of shape [n] in [0, high) (bools for high == 2)."""
    arr = _array(values, field)
    if _traced(arr):
        raise ConfigError(f"{field}: expected concrete values (this call runs on the host)")
    if np.shape(arr) != (n,):
        raise ConfigError(f"{field}: expected shape ({n},), got {tuple(np.shape(arr))}")
    if high == 2 and arr.dtype == bool:
        return arr.astype(np.int32)
    _integers(arr, field)
    bad = np.flatnonzero((arr < 0) | (arr >= high))
    if bad.size:
        raise ConfigError(
            f"{field}: {int(arr[bad[0]])} in game {int(bad[0])} is outside [0, {high})"
        )
    return arr.astype(np.int32)


def check_messages(spec: ModeSpec, n: int, messages: Any) -> jax.Array:
    """Messages float32 [n, agents, message_dim]: finite on the host; non-finite -> 0 under jit."""
    shape = (n, spec.num_agents, spec.message_dim)
    arr = messages if _traced(messages) else _array(messages, "messages")
    if tuple(np.shape(arr)) != shape:
        raise ConfigError(f"messages: expected shape {shape}, got {tuple(np.shape(arr))}")
    if not (jnp.issubdtype(arr.dtype, jnp.floating) or jnp.issubdtype(arr.dtype, jnp.integer)):
        raise ConfigError(f"messages: expected real numbers, got dtype {arr.dtype}")
    if _traced(arr):
        return jnp.where(jnp.isfinite(arr), arr, 0.0).astype(jnp.float32)
    bad = np.argwhere(~np.isfinite(np.asarray(arr, np.float64)))
    if bad.size:
        game, agent = int(bad[0][0]), spec.agents[int(bad[0][1])]
        raise ConfigError(f"messages: a NaN or infinite value from {agent!r} in game {game}")
    return jnp.asarray(arr, jnp.float32)
