"""Systems: anything that returns a team's actions, behind one signature.

A System acts for one team of 5 slots in `n` games at once::

    act(keys, memory, inputs) -> (actions int32 [n, 5, 3], memory)

This is the engine's team contract (`marl_bgs.core.team`: `TeamInputs`, the policy signature,
team slicing, the two-team step); a System is a team policy with what evaluation adds: a name,
the basic Systems acting per slot (`who`), the classes it can play and how its keys are drawn.
`keys` are typed JAX keys [n] (one per game; [n, 5] for `per_agent=True`). Memory starts fresh
every game from `init(key)` (one game, no leading axis). A parametric System keeps its weights
apart, `act(params, keys, memory, inputs)` and `init(params, key)`: evaluation passes `params` to
its compiled programs as data, so Systems of one architecture (same functions, same parameter
shapes) share one compiled program whatever their weights. A host System is a plain Python function
on numpy arrays; it is called from the compiled loop once per tick (`jax.experimental.io_callback`)
and is never traced, so it may call an LLM, a planner or a human.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.experimental import io_callback

import marl_bgs
from marl_bgs import Mode, TeamInputs, idle_policy, random_policy
from marl_bgs.core.team import no_memory
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.modes import parts


class UsageLog(Protocol):
    """What a host System that calls a service (an LLM) records: totals per game of a results
    table it played as `team` (0: A, 1: B), and for all its games. `path`: the `fold_in` indices
    from a game's memory key to the System's own (a composition folds in its member's index)."""

    def per_game(
        self, games: pd.DataFrame, team: int, path: tuple[int, ...] = ()
    ) -> pd.DataFrame: ...

    def summary(self) -> pd.DataFrame: ...


@dataclass(frozen=True, eq=False)
class System:
    """A team policy. Build one with `system`, `team`, `pool` or `random_system`."""

    name: str
    act: Callable[..., tuple[jax.Array, Any]]
    init: Callable[..., Any]  # init(key), or init(params, key) for a parametric System
    leaves: tuple[str, ...]  # names of the basic Systems that may act for a slot
    who: Callable[[Any, TeamInputs], jax.Array]  # leaf index acting for each slot [n, 5] (-1 none)
    per_agent: bool = False
    host: bool = False
    classes: frozenset[int] | None = None  # classes it can play; None: any
    check: Callable[[tuple[int, ...]], str | None] | None = None  # why it cannot play a roster
    usage: UsageLog | None = None  # usage statistics of a host System (saved beside results)
    params: Any = None  # a parametric System's weights (act and init take them first), or None
    mode: str = "tdm-v2"  # the versioned id of the mode it plays
    adapt: Callable[[str], System] | None = None  # a mode-generic System's twin for a mode

    def for_mode(self, mode: str) -> System:
        """This System for `mode` (an id or alias): itself, a mode-generic System's twin for
        that mode (random, idle), or an error naming the mode it plays."""
        try:
            mode_id = marl_bgs.kit(mode).id
        except marl_bgs.ConfigError as err:
            raise EvalError(str(err)) from None
        if mode_id == self.mode:
            return self
        if self.adapt is not None:
            return self.adapt(mode_id)
        raise EvalError(f"System {self.name!r} plays {self.mode}, not {mode_id}")

    def bind(self, params: Any) -> System:
        """This parametric System with `params` (possibly traced) bound into plain act and init."""
        if self.params is None:
            return self
        act, init = self.act, self.init
        return replace(
            self,
            act=lambda keys, memory, inputs: act(params, keys, memory, inputs),
            init=lambda key: init(params, key),
            params=None,
        )

    def program_key(self) -> Any:
        """What its compiled programs depend on: the System itself, or for a parametric System
        its functions and the structure, shapes and dtypes of its parameters."""
        if self.params is None:
            return self
        leaves, tree = jax.tree.flatten(self.params)
        shapes = tuple((jnp.shape(x), jnp.result_type(x)) for x in leaves)
        return (self.act, self.init, self.who, self.per_agent, len(self.leaves), tree, shapes)

    def problem(self, roster: Sequence[int]) -> str | None:
        """Why this System cannot play `roster` (class ids of its 5 slots, 0 unused), or None."""
        used = {int(c) for c in roster if c}
        if self.classes is not None and not used <= self.classes:
            names = parts(self.mode).class_names
            missing = sorted(names[c - 1] for c in used - self.classes)
            return f"System {self.name!r} cannot play class(es) {missing}"
        return self.check(tuple(int(c) for c in roster)) if self.check else None


def _leaf_who(memory: Any, inputs: TeamInputs) -> jax.Array:
    """Its one leaf acts in every slot (the play loop marks the slots nobody plays)."""
    del memory
    return jnp.zeros(inputs.obs.shape[:2], jnp.int32)


def _host(name: str, fn: Callable, init: Callable, heads: int) -> Callable:
    """Wrap a numpy function so the compiled loop calls it on the host once per tick."""

    def act(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
        n, size = inputs.obs.shape[:2]
        spec = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), memory)
        out_spec = (jax.ShapeDtypeStruct((n, size, heads), jnp.int32), spec)

        def call(key_data: np.ndarray, mem: Any, inp: TeamInputs) -> tuple[np.ndarray, Any]:
            mem, inp = jax.tree.map(np.asarray, (mem, inp))
            actions, new_mem = fn(np.asarray(key_data), mem, inp)
            actions = np.asarray(actions)
            if actions.shape != (n, size, heads):
                raise EvalError(
                    f"System {name!r}: actions must have shape ({n}, {size}, {heads}), got "
                    f"{actions.shape}"
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
    init: Callable[..., Any] | None = None,
    host: bool = False,
    per_agent: bool = False,
    classes: str | Sequence[int] | None = None,
    usage: UsageLog | None = None,
    params: Any = None,
    mode: str = "tdm",
) -> System:
    """Make any method a System.

    `fn(keys, memory, inputs) -> (actions [n, 5, 3], memory)`: a JAX function (compiled into the
    game loop) or, with `host=True`, a Python function on numpy arrays (keys as raw uint32 key
    data [n, 2], inputs as numpy). `init(key) -> memory` starts one game's memory (default: none).
    `classes` limits the classes it can play, as letters ("MWH") or class ids of the mode's
    `EvalParts.class_names` (a mode without classes refuses it). `usage`: the
    statistics a host System keeps (`marl-bgs-eval play --out` saves them beside the results).
    `params`: the weights of a parametric System, `fn(params, keys, memory, inputs)` and
    `init(params, key)`; Systems sharing `fn`, `init` and parameter shapes share compiled programs.
    `mode`: the mode it plays (an id or alias; default Team Deathmatch).
    """
    if not isinstance(name, str) or not name or name == "-":
        raise EvalError(f"name: expected a non-empty System name, got {name!r}")
    if not callable(fn):
        raise EvalError(f"fn: System {name!r} needs a callable, got {type(fn).__name__}")
    if params is not None and host:
        raise EvalError(f"params: System {name!r} is a host System; host Systems keep their own")
    try:
        mode_id = marl_bgs.kit(mode).id
    except marl_bgs.ConfigError as err:
        raise EvalError(f"mode: {err}") from None
    init = init or (no_memory if params is None else _no_memory_params)
    act = _host(name, fn, init, _heads(mode_id)) if host else fn
    return System(
        name=name,
        act=act,
        init=init,
        leaves=(name,),
        who=_leaf_who,
        per_agent=per_agent,
        host=host,
        classes=parse_classes(classes, "classes", mode_id),
        usage=usage,
        params=params,
        mode=mode_id,
    )


@functools.cache
def _heads(mode: str) -> int:
    """Action heads per agent of a mode."""
    return len(marl_bgs.make(mode, num_envs=1).spec.action_heads)


def _no_memory_params(params: Any, key: jax.Array) -> tuple[()]:
    del params
    return no_memory(key)


def parse_classes(
    classes: str | Sequence[int] | None, field: str, mode: str
) -> frozenset[int] | None:
    """Letters (each name's initial in `EvalParts.class_names` of `mode`: Team Deathmatch's
    "MWHRP") or class ids (1-k) -> a set of class ids."""
    if classes is None:
        return None
    mode_parts = parts(mode)
    names = mode_parts.class_names
    if not names:
        raise EvalError(
            f"{field}: mode {mode!r} has no classes (its EvalParts.class_names is empty)"
        )
    letters = mode_parts.class_letters()
    ids = (
        [letters.find(c.upper()) + 1 for c in classes]  # 0: not a letter of a class
        if isinstance(classes, str)
        else list(classes)
    )
    if not all(isinstance(c, int | np.integer) and 1 <= c <= len(names) for c in ids):
        raise EvalError(
            f"{field}: expected class letters from {letters!r} or ids 1-{len(names)}, got "
            f"{classes!r}"
        )
    return frozenset(int(c) for c in ids)


@functools.cache
def _generic(kind: str, mode: str) -> System:
    """The random or idle System of a mode (one object per mode: compiled programs are reused)."""
    engine_mode: Mode = marl_bgs.make(mode, num_envs=1).mode
    policy = (random_policy if kind == "random" else idle_policy)(engine_mode)
    made = system(policy.act, name=kind, mode=mode)
    return replace(made, adapt=functools.partial(_generic, kind))


def random_system(mode: str = "tdm") -> System:
    """Uniform legal actions from the masks, by the mode's own sampler (Team Deathmatch: a
    uniform legal move and, independently, a uniform legal (target, ultimate) pair); the same
    System object every call; `for_mode` gives another mode's."""
    return _generic("random", marl_bgs.kit(mode).id)


def idle_system(mode: str = "tdm") -> System:
    """Every agent picks choice 0 of every head (Team Deathmatch: stays and does nothing;
    always legal; never samples); `for_mode` gives another mode's."""
    return _generic("idle", marl_bgs.kit(mode).id)
