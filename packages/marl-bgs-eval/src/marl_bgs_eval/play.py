"""The compiled play loop: batches scheduled games, restarts finished slots in place.

`batch_size` games run at once; when one ends, its result and counters are written out and the slot
starts the next scheduled game, with fresh memory. Every game's actions come from keys of its own
(seed number, tick, team), so results do not depend on the batch size or on the order of games.
The programs are cached per (batch size, shared sight, Systems, metric level), so a new map,
roster, seed, score limit or schedule reuses them; a parametric System's weights travel in the
plan, so Systems of one architecture share the programs of a pairing shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from marl_bgs import BatchedEnv, TeamInputs, team_inputs
from marl_bgs.core.env import shard_games
from marl_bgs.core.pytree import where_games
from marl_bgs.core.team import act_teams
from marl_bgs_eval import fingerprint as fp
from marl_bgs_eval.modes import EvalParts
from marl_bgs_eval.seeds import action_keys, memory_keys
from marl_bgs_eval.systems import System


class Plan(NamedTuple):
    """The schedule on the device (padded to a bucketed length)."""

    starts: Any  # [G_pad, ...] start state of every scheduled game
    seed_number: jax.Array  # int32 [G_pad]
    game_number: jax.Array  # int32 [G_pad]
    n_games: jax.Array  # int32 []: how many of the rows are real games
    root: jax.Array  # the root key
    params: tuple[Any, ...] = (None, None)  # each team's weights (parametric Systems), or None


class Out(NamedTuple):
    """Per-game results [G_pad, ...], written when each game ends."""

    outcome: jax.Array
    final: Any  # what the mode's results keep of the last state (`EvalParts.final`)
    ticks: jax.Array
    counters: jax.Array  # float32 [G_pad, K]
    who: tuple[jax.Array, ...]  # int32 [G_pad, team_size] per team: leaf System index per slot
    trajectory: jax.Array  # uint32 [G_pad, 2]: the game's fingerprint (`fingerprint`)


class Carry(NamedTuple):
    state: Any
    memories: tuple[Any, ...]  # each team's memory
    slot_game: jax.Array  # int32 [B]: schedule row each slot plays (-1: idle)
    counters: jax.Array  # float32 [B, K]
    trace: jax.Array  # uint32 [B, 2]: each slot's game's fingerprint so far
    memory: Any  # the metrics' per-game memory [B, ...]
    next_game: jax.Array  # int32 []
    n_done: jax.Array  # int32 []
    out: Out


HUMAN = "human"  # the leaf name of slots whose actions were fixed outside the Systems


class Tick(NamedTuple):
    """One played tick of a batch of games: what results, metrics and replays read."""

    before: Any  # the state the tick started from
    inputs: tuple[TeamInputs, ...]  # each team's permitted inputs (observations, masks)
    actions: jax.Array  # int32 [n, agents, heads]: the actions the Systems chose (before repair)
    state: Any  # the state after the tick
    memories: tuple[Any, ...]  # each team's memory after the tick
    facts: Any  # what happened (batched [n, ...])
    whos: tuple[jax.Array, ...]  # int32 [n, team_size] per team: leaf System index per slot
    reward: jax.Array | None = None  # float32 [n, agents]: the mode's official reward


def play_tick(
    env: BatchedEnv, teams: tuple[System, ...], root: jax.Array, seeds: jax.Array,
    state: Any, memories: tuple[Any, ...], fixed: tuple[jax.Array, jax.Array] | None = None,
    parts: EvalParts | None = None,
) -> Tick:  # fmt: skip
    """Every team acts on its permitted inputs with keys of (seed number, tick, team), then the
    engine steps: the one definition of a tick that evaluation, replay recording and the
    BattleClient share. `fixed` = (actions [n, agents, heads], which bool [n, agents]): actions
    chosen outside the Systems (a person's) that replace theirs in those slots; there `whos`
    names an extra leaf after the System's own (`HUMAN`, index `len(system.leaves)`). `parts`
    (the mode's evaluation parts) says which slots are played (default: Team Deathmatch's)."""
    if parts is None:
        from marl_bgs_eval.modes import parts as parts_of

        parts = parts_of(env.spec.id)
    inputs = team_inputs(env, state)
    keys = [
        action_keys(root, seeds, state.tick, t, s.per_agent, len(env.spec.teams[t]))
        for t, s in enumerate(teams)
    ]
    whos = [
        jnp.where(parts.occupied(i), s.who(m, i), -1).astype(jnp.int32)
        for s, m, i in zip(teams, memories, inputs, strict=True)
    ]
    actions, mems = act_teams(env.spec, teams, keys, memories, inputs)
    if fixed is not None:
        given, which = fixed
        actions = jnp.where(which[..., None], given, actions)
        for t, (slots, s) in enumerate(zip(env.spec.teams, teams, strict=False)):
            whos[t] = jnp.where(which[:, list(slots)], len(s.leaves), whos[t])
    _, nxt, reward, _, info = env.step(root, state, actions)
    rewards = jnp.stack([reward[a] for a in env.agents], axis=1)
    return Tick(state, inputs, actions, nxt, tuple(mems), info["facts"], tuple(whos), rewards)


def join_teams(team_a: Any, team_b: Any) -> Any:
    """Both teams' [n, 5, ...] leaves joined into slot order [n, 10, ...] (team A's slots first)."""
    return jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=1), team_a, team_b)


def _take(tree: Any, idx: jax.Array) -> Any:
    return jax.tree.map(lambda a: a[idx], tree)


Programs = tuple[Callable[[Plan], Carry], Callable[[Carry, Plan], Carry]]
_PROGRAMS: dict[Any, Programs] = {}


def programs(
    env: BatchedEnv, parts: EvalParts, teams: tuple[System, ...], level: str, chunk: int,
    mesh: Mesh | None = None,
) -> Programs:  # fmt: skip
    """The jitted (start, run-a-chunk) pair for these static settings: the env's mode (its
    static settings) and batch size, the Systems, the metric level, the chunk and the `mesh`
    that splits the batch's games over its devices. Parametric Systems are keyed by their
    `program_key` (their weights come with the plan), others by identity; any env of an equal
    mode and batch size (another map, roster or rule values) reuses them."""
    key = (
        env.mode, env.num_envs, env.reward_fn, tuple(s.program_key() for s in teams), level,
        chunk, mesh,
    )  # fmt: skip
    if key not in _PROGRAMS:
        _PROGRAMS[key] = _build(env, parts, teams, level, chunk, mesh)
    return _PROGRAMS[key]


def _build(
    env: BatchedEnv, parts: EvalParts, teams: tuple[System, ...], level: str, chunk: int,
    mesh: Mesh | None,
) -> Programs:  # fmt: skip
    batch = env.num_envs

    def bound(plan: Plan) -> tuple[System, ...]:
        return tuple(s.bind(p) for s, p in zip(teams, plan.params, strict=True))

    def fresh_memory(plan: Plan, rows: jax.Array) -> tuple[Any, ...]:
        seeds, games = plan.seed_number[rows], plan.game_number[rows]
        return tuple(
            jax.vmap(s.init)(memory_keys(plan.root, seeds, games, t))
            for t, s in enumerate(bound(plan))
        )

    def start(plan: Plan) -> Carry:
        g_pad = plan.seed_number.shape[0]
        rows = jnp.arange(batch, dtype=jnp.int32)
        clipped = jnp.minimum(rows, g_pad - 1)
        state = _take(plan.starts, clipped)
        width = len(parts.metric_columns(level))
        final = jax.tree.map(
            lambda x: jnp.zeros((g_pad, *x.shape[1:]), x.dtype), parts.final(state)
        )
        slots = [len(t) for t in env.spec.teams[: len(teams)]]
        out = Out(
            outcome=jnp.zeros(g_pad, jnp.int32),
            final=final,
            ticks=jnp.zeros(g_pad, jnp.int32),
            counters=jnp.zeros((g_pad, width), jnp.float32),
            who=tuple(jnp.full((g_pad, k), -1, jnp.int32) for k in slots),
            trajectory=jnp.zeros((g_pad, 2), jnp.uint32),
        )
        return Carry(
            state=shard_games(state, env),
            memories=fresh_memory(plan, clipped),
            slot_game=jnp.where(rows < plan.n_games, rows, -1),
            counters=jnp.zeros((batch, width), jnp.float32),
            trace=fp.start(batch),
            memory=parts.fresh_memory(batch),
            next_game=jnp.minimum(plan.n_games, batch),
            n_done=jnp.int32(0),
            out=out,
        )

    def tick(c: Carry, plan: Plan) -> Carry:
        g_pad = plan.seed_number.shape[0]
        seeds = plan.seed_number[jnp.maximum(c.slot_game, 0)]
        t = play_tick(env, bound(plan), plan.root, seeds, c.state, c.memories, parts=parts)
        nxt = t.state
        added, memory = parts.tally(level, t, c.memory)
        counters = c.counters + added
        trace = parts.fingerprint(c.trace, t)
        finished = (nxt.outcome != 0) & (c.slot_game >= 0)
        carry = Carry(
            nxt, t.memories, c.slot_game, counters, trace, memory, c.next_game,
            c.n_done + jnp.sum(finished, dtype=jnp.int32), c.out,
        )  # fmt: skip

        def write(k: Carry) -> Carry:
            """Results of the games that just ended into their schedule rows."""
            idx = jnp.where(finished, k.slot_game, g_pad)
            o = k.out
            out = Out(
                outcome=o.outcome.at[idx].set(nxt.outcome, mode="drop"),
                final=jax.tree.map(
                    lambda a, v: a.at[idx].set(v, mode="drop"), o.final, parts.final(nxt)
                ),
                ticks=o.ticks.at[idx].set(nxt.tick, mode="drop"),
                counters=o.counters.at[idx].set(counters, mode="drop"),
                who=tuple(
                    w.at[idx].set(v, mode="drop") for w, v in zip(o.who, t.whos, strict=True)
                ),
                trajectory=o.trajectory.at[idx].set(trace, mode="drop"),
            )
            return k._replace(out=out)

        def restart(k: Carry) -> Carry:
            k = write(k)
            new_row = k.next_game + jnp.cumsum(finished, dtype=jnp.int32) - 1
            real = finished & (new_row < plan.n_games)
            take = jnp.minimum(new_row, g_pad - 1)
            fresh = fresh_memory(plan, take)
            return k._replace(
                state=where_games(real, _take(plan.starts, take), k.state),
                memories=tuple(
                    where_games(real, f, m) for f, m in zip(fresh, k.memories, strict=True)
                ),
                slot_game=jnp.where(finished, jnp.where(real, new_row, -1), k.slot_game),
                counters=jnp.where(finished[:, None], 0.0, k.counters),
                trace=jnp.where(finished[:, None], fp.start(batch), k.trace),
                memory=where_games(finished, parts.fresh_memory(batch), k.memory),
                next_game=jnp.minimum(
                    k.next_game + jnp.sum(finished, dtype=jnp.int32), plan.n_games
                ),
            )

        return jax.lax.cond(jnp.any(finished), restart, lambda k: k, carry)

    def run(c: Carry, plan: Plan) -> Carry:
        def cond(x: tuple[jax.Array, Carry]) -> jax.Array:
            return (x[0] < chunk) & (x[1].n_done < plan.n_games)

        def body(x: tuple[jax.Array, Carry]) -> tuple[jax.Array, Carry]:
            return x[0] + 1, tick(x[1], plan)

        return jax.lax.while_loop(cond, body, (jnp.int32(0), c))[1]

    return jax.jit(start), jax.jit(run)
