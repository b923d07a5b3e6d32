"""Systems: anything that returns a team's actions, behind one signature.

A System acts for one team of 5 slots in `n` games at once::

    act(keys, memory, inputs) -> (actions int32 [n, 5, 3], memory)

`keys` are typed JAX keys [n] (one per game; [n, 5] for `per_agent=True`), `memory` is the System's
own pytree with a leading game axis, and `inputs` is `TeamInputs`: the team's agents' flat
observations, structured views and action masks, never the other team's or the global state.
Actions are the three heads (move, target, ultimate) in each agent's own frame. Memory starts fresh
every game from `init(key)` (one game, no leading axis). A host System is a plain Python function
on numpy arrays; it is called from the compiled loop once per tick (`jax.experimental.io_callback`)
and is never traced, so it may call an LLM, a planner or a human.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from marl_bgs import ActionMasks, AgentView
from marl_bgs_eval.errors import EvalError

CLASS_LETTERS = {"M": 1, "W": 2, "H": 3, "R": 4, "P": 5}
CLASS_NAMES = {1: "mage", 2: "warrior", 3: "hunter", 4: "rogue", 5: "priest"}


class TeamInputs(NamedTuple):
    """One team's permitted input [n_games, 5, ...] (roster slots 0-4 of that team)."""

    obs: jax.Array  # float32 [n, 5, D]: flat observations
    views: AgentView  # structured views [n, 5, ...] (the flat vector's source)
    masks: ActionMasks  # exact legal actions [n, 5, ...]


@dataclass(frozen=True, eq=False)
class System:
    """A team policy. Build one with `system`, `team`, `pool` or `random_system`."""

    name: str
    act: Callable[..., tuple[jax.Array, Any]]
    init: Callable[[jax.Array], Any]
    leaves: tuple[str, ...]  # names of the basic Systems that may act for a slot
    who: Callable[[Any, TeamInputs], jax.Array]  # leaf index acting for each slot [n, 5] (-1 none)
    per_agent: bool = False
    host: bool = False
    classes: frozenset[int] | None = None  # classes it can play; None: any
    check: Callable[[tuple[int, ...]], str | None] | None = None  # why it cannot play a roster

    def problem(self, roster: Sequence[int]) -> str | None:
        """Why this System cannot play `roster` (class ids of its 5 slots, 0 unused), or None."""
        used = {int(c) for c in roster if c}
        if self.classes is not None and not used <= self.classes:
            missing = sorted(CLASS_NAMES[c] for c in used - self.classes)
            return f"System {self.name!r} cannot play class(es) {missing}"
        return self.check(tuple(int(c) for c in roster)) if self.check else None


def _no_memory(key: jax.Array) -> tuple[()]:
    del key
    return ()


def _leaf_who(memory: Any, inputs: TeamInputs) -> jax.Array:
    del memory
    return jnp.where(_slot_classes(inputs) > 0, 0, -1).astype(jnp.int32)


def _slot_classes(inputs: TeamInputs) -> jax.Array:
    """Class id of each own roster slot [n, 5] (public knowledge, read from agent 0's view)."""
    return inputs.views.public.roster_class[:, 0, :5].astype(jnp.int32)


def _checked(name: str, act: Callable) -> Callable:
    def run(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
        actions, memory = act(keys, memory, inputs)
        n = inputs.obs.shape[0]
        if tuple(actions.shape) != (n, 5, 3):
            raise EvalError(
                f"System {name!r}: actions must have shape ({n}, 5, 3), got {tuple(actions.shape)}"
            )
        return actions.astype(jnp.int32), memory

    return run


def _host(name: str, fn: Callable, init: Callable) -> Callable:
    """Wrap a numpy function so the compiled loop calls it on the host once per tick."""

    def act(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
        n = inputs.obs.shape[0]
        spec = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), memory)
        out_spec = (jax.ShapeDtypeStruct((n, 5, 3), jnp.int32), spec)

        def call(key_data: np.ndarray, mem: Any, inp: TeamInputs) -> tuple[np.ndarray, Any]:
            mem, inp = jax.tree.map(np.asarray, (mem, inp))
            actions, new_mem = fn(np.asarray(key_data), mem, inp)
            actions = np.asarray(actions)
            if actions.shape != (n, 5, 3):
                raise EvalError(
                    f"System {name!r}: actions must have shape ({n}, 5, 3), got {actions.shape}"
                )
            new_mem = jax.tree.map(
                lambda x, s: np.asarray(x, s.dtype).reshape(s.shape), new_mem, spec
            )
            return actions.astype(np.int32), new_mem

        return io_callback(call, out_spec, jax.random.key_data(keys), memory, inputs, ordered=True)

    del init
    return act


def system(
    fn: Callable,
    *,
    name: str,
    init: Callable[[jax.Array], Any] | None = None,
    host: bool = False,
    per_agent: bool = False,
    classes: str | Sequence[int] | None = None,
) -> System:
    """Make any method a System.

    `fn(keys, memory, inputs) -> (actions [n, 5, 3], memory)`: a JAX function (compiled into the
    game loop) or, with `host=True`, a Python function on numpy arrays (keys as raw uint32 key
    data [n, 2], inputs as numpy). `init(key) -> memory` starts one game's memory (default: none).
    `classes` limits the classes it can play, as letters ("MWH") or class ids.
    """
    if not isinstance(name, str) or not name or name == "-":
        raise EvalError(f"name: expected a non-empty System name, got {name!r}")
    if not callable(fn):
        raise EvalError(f"fn: System {name!r} needs a callable, got {type(fn).__name__}")
    init = init or _no_memory
    act = _host(name, fn, init) if host else _checked(name, fn)
    return System(
        name=name,
        act=act,
        init=init,
        leaves=(name,),
        who=_leaf_who,
        per_agent=per_agent,
        host=host,
        classes=parse_classes(classes, "classes"),
    )


def parse_classes(classes: str | Sequence[int] | None, field: str) -> frozenset[int] | None:
    """Letters ("MWHRP") or class ids (1-5) -> a set of class ids."""
    if classes is None:
        return None
    ids = (
        [CLASS_LETTERS.get(c.upper(), -1) for c in classes]
        if isinstance(classes, str)
        else list(classes)
    )
    if not all(isinstance(c, int | np.integer) and 1 <= c <= 5 for c in ids):
        raise EvalError(f"{field}: expected class letters from 'MWHRP' or ids 1-5, got {classes!r}")
    return frozenset(int(c) for c in ids)


def _uniform_legal(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
    masks = inputs.masks

    def agent(key: jax.Array, move: jax.Array, pair: jax.Array) -> jax.Array:
        k_move, k_pair = jax.random.split(key)
        m = jax.random.categorical(k_move, jnp.where(move, 0.0, -jnp.inf))
        p = jax.random.categorical(k_pair, jnp.where(pair.reshape(-1), 0.0, -jnp.inf))
        return jnp.stack([m, p // 2, p % 2])

    def one(key: jax.Array, move: jax.Array, pair: jax.Array) -> jax.Array:
        agent_keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(jnp.arange(5))
        return jax.vmap(agent)(agent_keys, move, pair)

    return jax.vmap(one)(keys, masks.move, masks.pair).astype(jnp.int32), memory


def _stay(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
    del keys
    return jnp.zeros((inputs.obs.shape[0], 5, 3), jnp.int32), memory


RANDOM = system(_uniform_legal, name="random")
IDLE = system(_stay, name="idle")


def random_system() -> System:
    """Uniform legal actions: a uniform legal move and, independently, a uniform legal
    (target, ultimate) pair, from the masks (the same System object every call)."""
    return RANDOM


def idle_system() -> System:
    """Every agent stays and does nothing (always legal; never samples)."""
    return IDLE
