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

import marl_bgs
from marl_bgs import Facts, GameState, TeamInputs, team_inputs
from marl_bgs.core.env import shard_games
from marl_bgs.core.pytree import where_games
from marl_bgs.core.team import act_teams
from marl_bgs_eval import fingerprint as fp
from marl_bgs_eval import metrics as mt
from marl_bgs_eval.metrics.timing import Memory
from marl_bgs_eval.seeds import action_keys, memory_keys
from marl_bgs_eval.systems import System


class Plan(NamedTuple):
    """The schedule on the device (padded to a bucketed length)."""

    starts: GameState  # [G_pad, ...] start state of every scheduled game
    seed_number: jax.Array  # int32 [G_pad]
    game_number: jax.Array  # int32 [G_pad]
    n_games: jax.Array  # int32 []: how many of the rows are real games
    root: jax.Array  # the root key
    params: tuple[Any, Any] = (None, None)  # each team's weights (parametric Systems), or None


class Out(NamedTuple):
    """Per-game results [G_pad, ...], written when each game ends."""

    outcome: jax.Array
    score: jax.Array
    ticks: jax.Array
    counters: jax.Array  # float32 [G_pad, K]
    who_a: jax.Array  # int32 [G_pad, 5]: leaf System index per slot
    who_b: jax.Array
    trajectory: jax.Array  # uint32 [G_pad, 2]: the game's fingerprint (`fingerprint`)


class Carry(NamedTuple):
    state: GameState
    mem_a: Any
    mem_b: Any
    slot_game: jax.Array  # int32 [B]: schedule row each slot plays (-1: idle)
    counters: jax.Array  # float32 [B, K]
    trace: jax.Array  # uint32 [B, 2]: each slot's game's fingerprint so far
    memory: Memory  # the metrics' per-game memory [B, ...]
    next_game: jax.Array  # int32 []
    n_done: jax.Array  # int32 []
    out: Out


HUMAN = "human"  # the leaf name of slots whose actions were fixed outside the Systems


class Tick(NamedTuple):
    """One played tick of a batch of games: what results, metrics and replays read."""

    before: GameState  # the state the tick started from
    inputs: tuple[TeamInputs, TeamInputs]  # each team's permitted inputs (observations, masks)
    actions: jax.Array  # int32 [n, 10, 3]: the actions the Systems chose (before repair)
    state: GameState  # the state after the tick
    memories: tuple[Any, Any]  # each team's memory after the tick
    facts: Facts  # what happened (batched [n, ...])
    whos: tuple[jax.Array, jax.Array]  # int32 [n, 5] per team: leaf System index per slot


def play_tick(
    env: Any, teams: tuple[System, System], root: jax.Array, seeds: jax.Array,
    state: GameState, memories: tuple[Any, Any], fixed: tuple[jax.Array, jax.Array] | None = None,
) -> Tick:  # fmt: skip
    """Both teams act on their permitted inputs with keys of (seed number, tick, team), then the
    engine steps: the one definition of a tick that evaluation, replay recording and the
    BattleClient share. `fixed` = (actions [n, 10, 3], which bool [n, 10]): actions chosen
    outside the Systems (a person's) that replace theirs in those slots; there `whos` names an
    extra leaf after the System's own (`HUMAN`, index `len(system.leaves)`)."""
    inputs_a, inputs_b = team_inputs(env, state)
    inputs = (inputs_a, inputs_b)
    keys = [action_keys(root, seeds, state.tick, t, s.per_agent) for t, s in enumerate(teams)]
    who_a, who_b = (s.who(m, i) for s, m, i in zip(teams, memories, inputs, strict=True))
    actions, mems = act_teams(env.spec, teams, keys, memories, inputs)
    if fixed is not None:
        given, which = fixed
        actions = jnp.where(which[..., None], given, actions)
        who_a = jnp.where(which[:, :5], len(teams[0].leaves), who_a)
        who_b = jnp.where(which[:, 5:], len(teams[1].leaves), who_b)
    _, nxt, _, _, info = env.step(root, state, actions)
    return Tick(state, inputs, actions, nxt, tuple(mems), info["facts"], (who_a, who_b))


def join_teams(team_a: Any, team_b: Any) -> Any:
    """Both teams' [n, 5, ...] leaves joined into slot order [n, 10, ...] (team A's slots first)."""
    return jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=1), team_a, team_b)


def _take(tree: Any, idx: jax.Array) -> Any:
    return jax.tree.map(lambda a: a[idx], tree)


Programs = tuple[Callable[[Plan], Carry], Callable[[Carry, Plan], Carry]]
_PROGRAMS: dict[Any, Programs] = {}


def programs(
    batch: int, shared_sight: bool, team_a: System, team_b: System, level: str, chunk: int,
    mesh: Mesh | None = None,
) -> Programs:  # fmt: skip
    """The jitted (start, run-a-chunk) pair for these static settings; with a `mesh`, the batch's
    games are split over its devices (the env's games sharding). Parametric Systems are keyed by
    their `program_key` (their weights come with the plan), others by identity."""
    key = (batch, shared_sight, team_a.program_key(), team_b.program_key(), level, chunk, mesh)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = _build(batch, shared_sight, team_a, team_b, level, chunk, mesh)
    return _PROGRAMS[key]


def _build(
    batch: int, shared_sight: bool, team_a: System, team_b: System, level: str, chunk: int,
    mesh: Mesh | None,
) -> Programs:  # fmt: skip
    env = marl_bgs.make("tdm", num_envs=batch, shared_sight=shared_sight, mesh=mesh)

    def bound(plan: Plan) -> tuple[System, System]:
        return team_a.bind(plan.params[0]), team_b.bind(plan.params[1])

    def fresh_memory(plan: Plan, rows: jax.Array) -> tuple[Any, Any]:
        teams = bound(plan)
        seeds, games = plan.seed_number[rows], plan.game_number[rows]
        return tuple(
            jax.vmap(s.init)(memory_keys(plan.root, seeds, games, t)) for t, s in enumerate(teams)
        )

    def start(plan: Plan) -> Carry:
        g_pad = plan.seed_number.shape[0]
        rows = jnp.arange(batch, dtype=jnp.int32)
        clipped = jnp.minimum(rows, g_pad - 1)
        mem_a, mem_b = fresh_memory(plan, clipped)
        width = mt.width(level)
        out = Out(
            outcome=jnp.zeros(g_pad, jnp.int32),
            score=jnp.zeros((g_pad, 2), jnp.int32),
            ticks=jnp.zeros(g_pad, jnp.int32),
            counters=jnp.zeros((g_pad, width), jnp.float32),
            who_a=jnp.full((g_pad, 5), -1, jnp.int32),
            who_b=jnp.full((g_pad, 5), -1, jnp.int32),
            trajectory=jnp.zeros((g_pad, 2), jnp.uint32),
        )
        n_first = jnp.minimum(plan.n_games, batch)
        return Carry(
            state=shard_games(_take(plan.starts, clipped), env),
            mem_a=mem_a,
            mem_b=mem_b,
            slot_game=jnp.where(rows < plan.n_games, rows, -1),
            counters=jnp.zeros((batch, width), jnp.float32),
            trace=fp.start(batch),
            memory=mt.fresh_memory(batch),
            next_game=n_first,
            n_done=jnp.int32(0),
            out=out,
        )

    def tick(c: Carry, plan: Plan) -> Carry:
        g_pad = plan.seed_number.shape[0]
        seeds = plan.seed_number[jnp.maximum(c.slot_game, 0)]
        t = play_tick(env, bound(plan), plan.root, seeds, c.state, (c.mem_a, c.mem_b))
        nxt, mems, whos = t.state, t.memories, t.whos
        pair_mask = join_teams(t.inputs[0].masks.pair, t.inputs[1].masks.pair)
        added, memory = mt.tally(level, t.before, t.facts, pair_mask, c.memory)
        counters = c.counters + added
        trace = fp.fold(c.trace, t.facts.accepted, t.facts.died, nxt.score)
        finished = (nxt.outcome != 0) & (c.slot_game >= 0)
        carry = Carry(
            nxt,
            mems[0],
            mems[1],
            c.slot_game,
            counters,
            trace,
            memory,
            c.next_game,
            c.n_done + jnp.sum(finished, dtype=jnp.int32),
            c.out,
        )

        def write(k: Carry) -> Carry:
            """Results of the games that just ended into their schedule rows."""
            idx = jnp.where(finished, k.slot_game, g_pad)
            o = k.out
            out = Out(
                outcome=o.outcome.at[idx].set(nxt.outcome, mode="drop"),
                score=o.score.at[idx].set(nxt.score, mode="drop"),
                ticks=o.ticks.at[idx].set(nxt.tick, mode="drop"),
                counters=o.counters.at[idx].set(counters, mode="drop"),
                who_a=o.who_a.at[idx].set(whos[0], mode="drop"),
                who_b=o.who_b.at[idx].set(whos[1], mode="drop"),
                trajectory=o.trajectory.at[idx].set(trace, mode="drop"),
            )
            return k._replace(out=out)

        def restart(k: Carry) -> Carry:
            k = write(k)
            new_row = k.next_game + jnp.cumsum(finished, dtype=jnp.int32) - 1
            real = finished & (new_row < plan.n_games)
            take = jnp.minimum(new_row, g_pad - 1)
            fresh_a, fresh_b = fresh_memory(plan, take)
            return k._replace(
                state=where_games(real, _take(plan.starts, take), k.state),
                mem_a=where_games(real, fresh_a, k.mem_a),
                mem_b=where_games(real, fresh_b, k.mem_b),
                slot_game=jnp.where(finished, jnp.where(real, new_row, -1), k.slot_game),
                counters=jnp.where(finished[:, None], 0.0, k.counters),
                trace=jnp.where(finished[:, None], fp.start(batch), k.trace),
                memory=where_games(finished, mt.fresh_memory(batch), k.memory),
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
