"""Hearing a compiled game loop move: a host function told when each team starts and ends its
move and its games' memory, in program order, so a watchdog outside can time each on its own.

`watch(event, team, tick)` runs on the host (an ordered `io_callback`). Each team's work is
fenced by two calls: the start call's reply (a zero) is mixed into the team's keys, so its work
cannot begin before the call; one element of each of its results feeds the end call, so the end
call waits for all of it. Ordered calls keep program order, so team B starts only after team A
ended: a watchdog that hears `MOVE_START` for team A at tick 41 and then nothing for 2 s knows
that team A's move hangs. The fences change no result and cost two host calls per team and tick.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from marl_bgs_eval.systems import System

Watch = Callable[[int, int, int], None]  # (event, team, tick) on the host
MOVE_START, MOVE_END, INIT_START, INIT_END = range(4)
EVENTS = ("move_start", "move_end", "init_start", "init_end")  # names, by event number


def _call(watch: Watch, event: int, team: int, tick: jax.Array, after: Any) -> jax.Array:
    """`watch(event, team, tick)` once `after` is computed; returns a uint32 zero."""

    def on_host(tick: np.ndarray, *_: Any) -> np.ndarray:
        watch(event, team, int(tick))
        return np.zeros((), np.uint32)

    # One element of each leaf is enough to wait for the whole computation that made it.
    firsts = [jnp.ravel(x)[:1] for x in jax.tree.leaves(after) if jnp.size(x)]
    return io_callback(on_host, jax.ShapeDtypeStruct((), jnp.uint32), jnp.max(tick), *firsts,
                       ordered=True)  # fmt: skip


def _after(keys: jax.Array, zero: jax.Array) -> jax.Array:
    """The same keys, made to wait for `zero` (a host call's reply)."""
    return jax.random.wrap_key_data(
        jax.random.key_data(keys) ^ zero, impl=jax.random.key_impl(keys)
    )


def fenced_act(system: System, team: int, watch: Watch, tick: jax.Array) -> System:
    """`system` (bound: no params) whose act is fenced by MOVE_START and MOVE_END calls."""

    def act(keys: jax.Array, memory: Any, inputs: Any) -> tuple[jax.Array, Any]:
        zero = _call(watch, MOVE_START, team, tick, ())
        actions, memory = system.act(_after(keys, zero), memory, inputs)
        _call(watch, MOVE_END, team, tick, (actions, memory))  # an effect: never left out
        return actions, memory

    return replace(system, act=act)


def fenced_init(
    init: Callable[[jax.Array], Any], team: int, watch: Watch, tick: jax.Array, keys: jax.Array
) -> Any:
    """`vmap(init)(keys)` fenced by INIT_START and INIT_END calls (keys: one per game)."""
    zero = _call(watch, INIT_START, team, tick, ())
    memory = jax.vmap(init)(_after(keys, zero))
    _call(watch, INIT_END, team, tick, memory)
    return memory
