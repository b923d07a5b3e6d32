"""Observations: one structured view per agent, and the flat vector derived from it.

An agent's view holds only what it may see (its own sight plus its living teammates' sight, unless
shared sight is off), describes units as self / ally / enemy in rows ordered by roster slot
(rows 0-4 own team, 5-9 enemies), and is given in the agent's own frame (its spawn on the left).
Hidden rows are all zeros. The public context (map, clock, scores, roster, shields, wave
countdowns, spawn pads) is known to everyone. `global_state` is the same view with every unit
visible, for critics only.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs import classes as C
from marl_bgs.constants import MAP_WIDTH, MAX_OBSTACLES, NUM_MOVES, NUM_TARGETS, TEAM_SIZE
from marl_bgs.perception import Perception, perceive
from marl_bgs.pytree import pytree_dataclass
from marl_bgs.state import GameState
from marl_bgs.statuses import movement_speed
from marl_bgs.tables import (
    MIRROR_MOVE,
    REL_TO_ABS,
    RELATIVE_INDEX,
    SLOT_INDEX,
    SLOT_TEAM,
    lookup,
    spawn_left,
)


@pytree_dataclass
class UnitRows:
    """Per-row fields [..., 10] (rows: own roster slots 0-4, then enemy roster slots 0-4)."""

    visible: jnp.ndarray  # seen by the agent or (shared sight) a living teammate
    seen_directly: jnp.ndarray  # seen with the agent's own eyes
    is_self: jnp.ndarray
    is_ally: jnp.ndarray  # own team, self included
    alive: jnp.ndarray
    x: jnp.ndarray  # own frame
    y: jnp.ndarray
    dx: jnp.ndarray  # relative to the agent, own frame
    dy: jnp.ndarray
    distance: jnp.ndarray
    health: jnp.ndarray
    max_health: jnp.ndarray
    shield: jnp.ndarray
    stun: jnp.ndarray
    trap: jnp.ndarray
    slow_charge: jnp.ndarray
    slow_hunter: jnp.ndarray
    slow_poison: jnp.ndarray
    antiheal: jnp.ndarray
    freedom: jnp.ndarray
    burst: jnp.ndarray
    cooldown: jnp.ndarray
    recovery: jnp.ndarray
    speed: jnp.ndarray  # distance it may move next tick
    class_onehot: jnp.ndarray  # [..., 10, 5]
    sight: jnp.ndarray  # capabilities of its class
    basic_range: jnp.ndarray
    ultimate_range: jnp.ndarray
    basic_amount: jnp.ndarray
    ultimate_amount: jnp.ndarray
    last_move: jnp.ndarray  # [..., 10, 9] one-hot, own frame
    last_target: jnp.ndarray  # [..., 10, 11] one-hot, named as the agent names its roster
    last_ultimate: jnp.ndarray


@pytree_dataclass
class PublicContext:
    """What every agent knows (own frame, own team first)."""

    tick: jnp.ndarray
    tick_limit: jnp.ndarray
    winning_score: jnp.ndarray
    red_zone_depth: jnp.ndarray
    score: jnp.ndarray  # [..., 2]: own, enemy
    team_size: jnp.ndarray  # [..., 2]
    wave_countdown: jnp.ndarray  # [..., 2]
    wave_period: jnp.ndarray
    shield_ticks: jnp.ndarray
    roster_class: jnp.ndarray  # [..., 10] class ids (0 unused)
    roster_alive: jnp.ndarray  # [..., 10]
    roster_shield: jnp.ndarray  # [..., 10]
    spawn_pads: jnp.ndarray  # [..., 10, 2]
    self_slot: jnp.ndarray  # [..., 5] one-hot roster slot of the agent
    obstacle_kind: jnp.ndarray  # [..., 32]
    obstacle_center: jnp.ndarray  # [..., 32, 2]
    obstacle_size: jnp.ndarray  # [..., 32, 2]
    obstacle_theta: jnp.ndarray  # [..., 32]


@pytree_dataclass
class AgentView:
    """Everything one agent may know at a decision."""

    units: UnitRows
    public: PublicContext
    seen_by: jnp.ndarray  # [..., 5, 10]: own roster slot k sees row r directly
    messages: jnp.ndarray  # [..., 5, M]: teammates' messages from the previous tick


def _frame_x(x: jnp.ndarray, left: jnp.ndarray) -> jnp.ndarray:
    return jnp.where(left, x, MAP_WIDTH - x)


def _one(state: GameState, seen: Perception, i: int | jnp.ndarray, full: bool, shared: bool):
    u = state.units
    rows = jnp.asarray(REL_TO_ABS)[i, 1:]
    left = spawn_left(state.swap)[i]
    cls = u.class_id
    if full:
        vis = (cls > 0)[rows]
    else:
        sight = seen.team_sight if shared else seen.own_sight
        vis = sight[i, rows] | (rows == i)
    own = seen.own_sight[i, rows] | (rows == i)
    z = lambda a: jnp.where(vis, a, jnp.zeros_like(a))  # noqa: E731
    zz = lambda a: jnp.where(vis[:, None], a, jnp.zeros_like(a))  # noqa: E731
    pos = u.pos[rows]
    x, y = _frame_x(pos[:, 0], left), pos[:, 1]
    sx, sy = _frame_x(u.pos[i, 0], left), u.pos[i, 1]
    c = cls[rows]
    world_moves = u.last_move[rows]
    moves = jnp.where(left, world_moves, jnp.asarray(MIRROR_MOVE)[world_moves])
    # The unit's last target, renamed from its own roster naming into this agent's.
    named = jnp.asarray(REL_TO_ABS)[rows, u.last_target[rows]]
    renamed = jnp.where(named >= 0, jnp.asarray(RELATIVE_INDEX)[i, jnp.clip(named, 0)], 0)
    f32 = lambda a: a.astype(jnp.float32)  # noqa: E731
    amount_b = lookup(C.BASIC_DAMAGE, c) + lookup(C.BASIC_HEAL, c)
    amount_u = lookup(C.ULT_DAMAGE, c) + lookup(C.ULT_HEAL, c)
    units = UnitRows(
        visible=f32(vis),
        seen_directly=f32(own & vis),
        is_self=f32(rows == i),
        is_ally=f32(jnp.arange(10) < TEAM_SIZE) * f32(vis),
        alive=z(f32(u.alive[rows])),
        x=z(x),
        y=z(y),
        dx=z(x - sx),
        dy=z(y - sy),
        distance=z(seen.dist[i, rows]),
        health=z(u.health[rows]),
        max_health=z(lookup(C.MAX_HEALTH, c)),
        shield=z(f32(u.shield[rows])),
        stun=z(f32(u.stun[rows])),
        trap=z(f32(u.trap[rows])),
        slow_charge=z(f32(u.slow_charge[rows])),
        slow_hunter=z(f32(u.slow_hunter[rows])),
        slow_poison=z(f32(u.slow_poison[rows])),
        antiheal=z(f32(u.antiheal[rows])),
        freedom=z(f32(u.freedom[rows])),
        burst=z(f32(u.burst[rows])),
        cooldown=z(f32(u.cooldown[rows])),
        recovery=z(f32(u.recovery[rows])),
        speed=z(movement_speed(u, state.rules.shield_speed)[rows] * f32(u.alive[rows])),
        class_onehot=zz(jax.nn.one_hot(c - 1, C.NUM_CLASSES)),
        sight=z(lookup(C.SIGHT, c)),
        basic_range=z(lookup(C.BASIC_RANGE, c)),
        ultimate_range=z(lookup(C.ULT_RANGE, c)),
        basic_amount=z(amount_b),
        ultimate_amount=z(amount_u),
        last_move=zz(jax.nn.one_hot(moves, NUM_MOVES)),
        last_target=zz(jax.nn.one_hot(renamed, NUM_TARGETS)),
        last_ultimate=z(f32(u.last_ult[rows])),
    )
    team = jnp.asarray(SLOT_TEAM)[i]
    own_first = jnp.stack([team, 1 - team])
    r = state.rules
    o = state.obstacles
    ox = jnp.where(o.kind > 0, _frame_x(o.center[:, 0], left), 0.0)
    size = jnp.stack([jnp.sum(cls[rows[:TEAM_SIZE]] > 0), jnp.sum(cls[rows[TEAM_SIZE:]] > 0)])
    pads_x = jnp.where(jnp.arange(10) < TEAM_SIZE, 0.5, MAP_WIDTH - 0.5)
    pads_y = jnp.asarray(np.tile(np.arange(1.0, 10.0, 2.0), 2), jnp.float32)
    public = PublicContext(
        tick=f32(state.tick),
        tick_limit=f32(r.tick_limit),
        winning_score=f32(r.winning_score),
        red_zone_depth=f32(r.red_zone_depth),
        score=f32(state.score[own_first]),
        team_size=f32(size),
        wave_countdown=f32(state.wave[own_first]),
        wave_period=f32(r.wave_period),
        shield_ticks=f32(r.shield_ticks),
        roster_class=f32(c),
        roster_alive=f32(u.alive[rows]),
        roster_shield=f32(u.shield[rows]),
        spawn_pads=jnp.stack([pads_x, pads_y], axis=-1),
        self_slot=jax.nn.one_hot(jnp.asarray(SLOT_INDEX)[i], TEAM_SIZE),
        obstacle_kind=f32(o.kind),
        obstacle_center=jnp.stack([ox, o.center[:, 1]], axis=-1),
        obstacle_size=o.size,
        obstacle_theta=jnp.where(left, o.theta, -o.theta),
    )
    mates = rows[:TEAM_SIZE]
    seen_by = seen.own_sight[mates][:, rows] & u.alive[mates][:, None]
    if not shared:
        # Without shared sight, teammates' sight is not the agent's to know: only its own row.
        seen_by = seen_by & (mates == i)[:, None]
    if full:
        seen_by = seen_by | True
    return AgentView(
        units=units, public=public, seen_by=f32(seen_by), messages=state.messages[mates]
    )


def agent_views(state: GameState, shared_sight: bool = True, full: bool = False) -> AgentView:
    """Views of all 10 slots of one game, stacked on a leading slot axis."""
    seen = perceive(state)
    return jax.vmap(lambda i: _one(state, seen, i, full, shared_sight))(jnp.arange(10))


def flatten_view(view: AgentView) -> jnp.ndarray:
    """The flat float32 vector networks read: every field of the view, in declaration order."""
    lead = view.public.tick.ndim
    parts = [
        jnp.reshape(leaf, (*leaf.shape[:lead], -1)).astype(jnp.float32)
        for leaf in jax.tree.leaves(view)
    ]
    return jnp.concatenate(parts, axis=-1)


def view_field_names(message_dim: int = 0) -> list[tuple[str, int]]:
    """(field path, width) of each block of the flat vector, in order."""
    out: list[tuple[str, int]] = []
    widths = {"class_onehot": 5, "last_move": NUM_MOVES, "last_target": NUM_TARGETS}
    for f in dataclasses.fields(UnitRows):
        out.append((f"units.{f.name}", 10 * widths.get(f.name, 1)))
    public = {
        "score": 2, "team_size": 2, "wave_countdown": 2, "roster_class": 10, "roster_alive": 10,
        "roster_shield": 10, "spawn_pads": 20, "self_slot": TEAM_SIZE,
        "obstacle_kind": MAX_OBSTACLES, "obstacle_center": 2 * MAX_OBSTACLES,
        "obstacle_size": 2 * MAX_OBSTACLES, "obstacle_theta": MAX_OBSTACLES,
    }  # fmt: skip
    for f in dataclasses.fields(PublicContext):
        out.append((f"public.{f.name}", public.get(f.name, 1)))
    out.append(("seen_by", TEAM_SIZE * 10))
    out.append(("messages", TEAM_SIZE * message_dim))
    return out
