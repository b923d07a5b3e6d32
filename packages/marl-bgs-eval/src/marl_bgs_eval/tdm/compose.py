"""Mixed teams and pools: `team` fills slots (per slot or per class), `pool` draws per game.

Each member acts for the whole team's inputs and only its own slots' actions are kept, so any
slot can be any System; a host member (an LLM team, a person) is shown a single choice for the
slots it does not play, so it is asked only about its own. Members' memories travel together;
each starts fresh every game. A composition keeps the usage log of its one member that has one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from marl_bgs import TeamInputs
from marl_bgs.tdm.classes import CLASS_NAMES, class_id
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.systems import System, UsageLog


def _slot_classes(inputs: TeamInputs) -> jax.Array:
    """Class id of each own roster slot [n, 5] (public knowledge, read from agent 0's view)."""
    return inputs.views.public.roster_class[:, 0, :5].astype(jnp.int32)


def _offsets(members: Sequence[System]) -> list[int]:
    return list(np.cumsum([0] + [len(m.leaves) for m in members[:-1]]))


def _member_keys(key: jax.Array, count: int) -> list[jax.Array]:
    return [jax.random.fold_in(key, i) for i in range(count)]


def _only(inputs: TeamInputs, mine: jax.Array) -> TeamInputs:
    """`inputs` in which the slots outside `mine` [n, 5] have a single choice (stay, no combat),
    so a host member (an LLM, a person) is asked only about the slots whose actions are used."""
    m = inputs.masks
    stay = jnp.zeros_like(m.move).at[..., 0].set(True)
    idle = jnp.zeros_like(m.pair).at[..., 0, 0].set(True)
    move = jnp.where(mine[..., None], m.move, stay)
    pair = jnp.where(mine[..., None, None], m.pair, idle)
    masks = m.replace(move=move, pair=pair, target=pair.any(-1), ultimate=pair.any(-2))
    return inputs._replace(masks=masks)


@dataclass(frozen=True)
class _MemberUsage:
    """The usage log of the one member that keeps one, seen from the composed System (its games'
    memory keys are the composition's, folded with the member's index)."""

    inner: UsageLog
    fold: int

    def per_game(self, games: pd.DataFrame, team: int, path: tuple[int, ...] = ()) -> pd.DataFrame:
        return self.inner.per_game(games, team, (*path, self.fold))

    def summary(self) -> pd.DataFrame:
        return self.inner.summary()


def team(
    slots: Sequence[System] | Mapping[int, System] | None = None,
    *,
    classes: Mapping[str, System] | None = None,
    rest: System | None = None,
    name: str | None = None,
) -> System:
    """A team whose slots come from different Systems.

    `slots`: a System per roster slot (a list of 5, or {slot: System}); `classes`: a System per
    class, by letter or name ({"M": a, "priest": b}); `rest` fills whatever is left. Each System
    acts for its slots only.
    """
    if (slots is None) == (classes is None):
        raise EvalError("team: give exactly one of slots=... or classes=...")
    rest = None if rest is None else _system(rest, "rest")
    if classes is not None:
        by_class: dict[int, System] = {}
        for key, member in classes.items():
            try:
                cid = class_id(key, f"classes[{key!r}]")
            except ValueError as err:
                raise EvalError(str(err)) from None
            by_class[cid] = _system(member, f"classes[{key!r}]")
        owners = {c: by_class.get(c, rest) for c in range(1, 6)}
        per_class = True
    else:
        items = dict(enumerate(slots)) if isinstance(slots, Sequence) else dict(slots or {})
        bad = [s for s in items if not (isinstance(s, int) and 0 <= s < 5)]
        if bad:
            raise EvalError(f"slots: roster slots are 0-4, got {bad}")
        owners = {s: (_system(items[s], f"slots[{s}]") if s in items else rest) for s in range(5)}
        per_class = False
    members: list[System] = []
    for m in owners.values():
        if m is not None and all(m is not x for x in members):
            members.append(m)
    if not members:
        raise EvalError("team: no System given")
    index = {id(m): i for i, m in enumerate(members)}
    table = np.array([-1] + [index[id(m)] if m else -1 for m in owners.values()], np.int32)
    offsets = jnp.asarray(_offsets(members), jnp.int32)
    label = (
        name
        or "team("
        + ",".join(
            f"{(CLASS_NAMES[k][0].upper() if per_class else k)}={m.name if m else '-'}"
            for k, m in owners.items()
        )
        + ")"
    )

    def owner(inputs: TeamInputs) -> jax.Array:  # member index per slot [n, 5] (-1 none)
        if per_class:
            return jnp.asarray(table)[_slot_classes(inputs)]
        n = inputs.obs.shape[0]
        return jnp.broadcast_to(jnp.asarray(table[1:]), (n, 5))

    def init(key: jax.Array) -> tuple:
        return tuple(
            m.init(k) for m, k in zip(members, _member_keys(key, len(members)), strict=True)
        )

    def act(keys: jax.Array, memory: tuple, inputs: TeamInputs) -> tuple[jax.Array, tuple]:
        own = owner(inputs)
        out = jnp.zeros((inputs.obs.shape[0], 5, 3), jnp.int32)
        new = []
        for i, (m, mem) in enumerate(zip(members, memory, strict=True)):
            a, mem2 = m.act(keys, mem, _only(inputs, own == i) if m.host else inputs)
            out = jnp.where((own == i)[..., None], a, out)
            new.append(mem2)
        return out, tuple(new)

    def who(memory: tuple, inputs: TeamInputs) -> jax.Array:
        own = owner(inputs)
        out = jnp.full(own.shape, -1, jnp.int32)
        for i, (m, mem) in enumerate(zip(members, memory, strict=True)):
            out = jnp.where(own == i, offsets[i] + m.who(mem, inputs), out)
        return jnp.where(_slot_classes(inputs) > 0, out, -1)

    def check(roster: tuple[int, ...]) -> str | None:
        for s, c in enumerate(roster):
            if not c:
                continue
            m = owners[c] if per_class else owners[s]
            if m is None:
                what = f"class {CLASS_NAMES[c]!r}" if per_class else f"slot {s}"
                return f"team {label!r} has no System for {what} (roster {roster})"
            reason = m.problem([c if j == s else 0 for j in range(5)])
            if reason:
                return reason
        return None

    return _combined(label, members, act=act, init=init, who=who, check=check)


def pool(
    systems: Sequence[System], weights: Sequence[float] | None = None, *, name: str | None = None
) -> System:
    """One member drawn per game (weighted), from the game's memory-start key."""
    members = [_system(s, f"systems[{i}]") for i, s in enumerate(systems)]
    if not members:
        raise EvalError("systems: a pool needs at least one System")
    w = np.ones(len(members)) if weights is None else np.asarray(weights, float)
    if w.shape != (len(members),) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise EvalError(f"weights: expected {len(members)} non-negative weights, got {weights!r}")
    logits = jnp.asarray(np.log(np.where(w > 0, w / w.sum(), 1e-300)), jnp.float32)
    offsets = jnp.asarray(_offsets(members), jnp.int32)
    label = (
        name or "pool(" + ",".join(f"{m.name}:{x:g}" for m, x in zip(members, w, strict=True)) + ")"
    )

    def init(key: jax.Array) -> tuple[jax.Array, tuple]:
        keys = _member_keys(key, len(members) + 1)
        choice = jax.random.categorical(keys[0], logits)
        return choice, tuple(m.init(k) for m, k in zip(members, keys[1:], strict=True))

    def act(keys: jax.Array, memory: tuple, inputs: TeamInputs) -> tuple[jax.Array, tuple]:
        choice, mems = memory
        out = jnp.zeros((inputs.obs.shape[0], 5, 3), jnp.int32)
        new = []
        for i, (m, mem) in enumerate(zip(members, mems, strict=True)):
            mine = jnp.broadcast_to((choice == i)[:, None], (inputs.obs.shape[0], 5))
            a, mem2 = m.act(keys, mem, _only(inputs, mine) if m.host else inputs)
            out = jnp.where((choice == i)[:, None, None], a, out)
            new.append(mem2)
        return out, (choice, tuple(new))

    def who(memory: tuple, inputs: TeamInputs) -> jax.Array:
        choice, mems = memory
        out = jnp.full((inputs.obs.shape[0], 5), -1, jnp.int32)
        for i, (m, mem) in enumerate(zip(members, mems, strict=True)):
            out = jnp.where((choice == i)[:, None], offsets[i] + m.who(mem, inputs), out)
        return jnp.where(_slot_classes(inputs) > 0, out, -1)

    def check(roster: tuple[int, ...]) -> str | None:
        return next((r for m in members if (r := m.problem(roster))), None)

    return _combined(label, members, act=act, init=init, who=who, check=check, first_fold=1)


def _combined(
    label: str,
    members: Sequence[System],
    *,
    act: Callable[..., tuple[jax.Array, Any]],
    init: Callable[[jax.Array], Any],
    who: Callable[[Any, TeamInputs], jax.Array],
    check: Callable[[tuple[int, ...]], str | None],
    first_fold: int = 0,
) -> System:
    """A System made of `members` (their leaves, key use and host flag) with its own calls;
    member i's memory key is the composition's folded with `first_fold + i`."""
    logs = [(i, m.usage) for i, m in enumerate(members) if m.usage is not None]
    usage = _MemberUsage(logs[0][1], first_fold + logs[0][0]) if len(logs) == 1 else None
    return System(
        name=label,
        act=act,
        init=init,
        leaves=_leaves(members),
        who=who,
        per_agent=_per_agent(members, label),
        host=any(m.host for m in members),
        check=check,
        usage=usage,
    )


def _per_agent(members: Sequence[System], label: str) -> bool:
    kinds = {m.per_agent for m in members}
    if len(kinds) > 1:
        raise EvalError(f"{label}: members mix per-agent and per-team key use; use one kind")
    return kinds.pop()


def _leaves(members: Sequence[System]) -> tuple[str, ...]:
    return tuple(leaf for m in members for leaf in m.leaves)


def _system(obj: Any, field: str) -> System:
    if not isinstance(obj, System):
        raise EvalError(f"{field}: expected a System, got {type(obj).__name__}")
    return obj.bind(obj.params)  # a member's weights are constants of its composition
