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
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import MAP_WIDTH, MAX_OBSTACLES, MIRROR_MOVE, NUM_MOVES
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import NUM_TARGETS, SPAWN_PAD_X, SPAWN_PAD_Y, TEAM_SIZE
from marl_bgs.tdm.perception import perceive
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.statuses import movement_speed
from marl_bgs.tdm.tables import (
    REL_TO_ABS,
    RELATIVE_INDEX,
    SLOT_INDEX,
    absolute_target,
    lookup,
    observer_columns,
    spawn_left,
)


@pytree_dataclass
class UnitRows(PyTree):
    """Per-row fields [..., 10] (rows: own roster slots 0-4, then enemy roster slots 0-4).

    Declared in three groups, which is also their order in the flat vector: what differs per
    agent, per-unit values (the same for a whole team), then the one-hot fields.
    """

    visible: jnp.ndarray  # seen by the agent or (shared sight) a living teammate
    seen_directly: jnp.ndarray  # seen with the agent's own eyes
    is_self: jnp.ndarray
    is_ally: jnp.ndarray  # own team, self included
    dx: jnp.ndarray  # relative to the agent, own frame
    dy: jnp.ndarray
    distance: jnp.ndarray
    alive: jnp.ndarray
    x: jnp.ndarray  # own frame
    y: jnp.ndarray
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
    sight: jnp.ndarray  # capabilities of its class
    basic_range: jnp.ndarray
    ultimate_range: jnp.ndarray
    basic_amount: jnp.ndarray
    ultimate_amount: jnp.ndarray
    last_ultimate: jnp.ndarray
    class_onehot: jnp.ndarray  # [..., 10, 5]
    last_move: jnp.ndarray  # [..., 10, 9] one-hot, own frame
    last_target: jnp.ndarray  # [..., 10, 11] one-hot, named as the agent names its roster


_PER_AGENT = ("visible", "seen_directly", "is_self", "is_ally", "dx", "dy", "distance")
_ONE_HOT = {"class_onehot": 5, "last_move": NUM_MOVES, "last_target": NUM_TARGETS}
_PER_UNIT = tuple(
    f.name for f in dataclasses.fields(UnitRows) if f.name not in (*_PER_AGENT, *_ONE_HOT)
)


@pytree_dataclass
class PublicContext(PyTree):
    """What every agent knows (own frame, own team first); all but `self_slot` is per team."""

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
    obstacle_kind: jnp.ndarray  # [..., 32]
    obstacle_center: jnp.ndarray  # [..., 32, 2]
    obstacle_size: jnp.ndarray  # [..., 32, 2]
    obstacle_theta: jnp.ndarray  # [..., 32]
    self_slot: jnp.ndarray  # [..., 5] one-hot roster slot of the agent


@pytree_dataclass
class AgentView(PyTree):
    """Everything one agent may know at a decision."""

    units: UnitRows
    public: PublicContext
    seen_by: jnp.ndarray  # [..., 5, 10]: own roster slot k sees row r directly
    messages: jnp.ndarray  # [..., 5, M]: teammates' messages from the previous tick


def _frame_x(x: jnp.ndarray, left: jnp.ndarray) -> jnp.ndarray:
    return jnp.where(left, x, MAP_WIDTH - x)


# Every observer sees the roster in its own team's order: team A's agents see slots 0-9 as they
# are, team B's agents see slots 5-9 then 0-4. Views are built once per team and copied to its five
# agents; only what differs per agent (sight, self, distances) is built per agent.
ROWS = REL_TO_ABS[:, 1:]  # [10 agents, 10 rows]: the slot shown in each row
IS_SELF = (np.arange(10)[:, None] == ROWS).reshape(2, TEAM_SIZE, 10)  # [team, agent, row]
SELF_SLOT = np.eye(TEAM_SIZE, dtype=np.float32)[SLOT_INDEX].reshape(2, TEAM_SIZE, TEAM_SIZE)
PAD_Y = np.asarray(SPAWN_PAD_Y, np.float32)[SLOT_INDEX]  # own pads first, in the agent's frame


def _by_team(for_a: jnp.ndarray, for_b: jnp.ndarray) -> jnp.ndarray:
    """Per-slot arrays [10, ...] as team A and team B order them (own team first): [2, 10, ...]."""
    return jnp.stack([for_a, jnp.roll(for_b, TEAM_SIZE, axis=0)])


def _to_agents(per_team: jnp.ndarray) -> jnp.ndarray:
    """[2, ...] one entry per team -> [2, 5, ...] one per agent (a plain broadcast: XLA's CPU
    code runs far slower on a repeat along a merged axis of 10)."""
    return jnp.broadcast_to(per_team[:, None], (2, TEAM_SIZE, *per_team.shape[1:]))


def _agents(per_slot: jnp.ndarray) -> jnp.ndarray:
    """[10, ...] one entry per agent -> [2, 5, ...]."""
    return per_slot.reshape(2, TEAM_SIZE, *per_slot.shape[1:])


def _rows(a: jnp.ndarray) -> jnp.ndarray:
    """A frame-free per-slot array [10, ...] in every agent's row order: [2, 5, 10 rows, ...]."""
    return _to_agents(_by_team(a, a))


def _unit_columns(state: GameState, team: int) -> tuple[jnp.ndarray, dict[str, jnp.ndarray]]:
    """Per-unit fields as `team` reads them (its frame, its naming), rows in world slot order.

    Returns the `_PER_UNIT` values as one table [U, 10 slots] and the `_ONE_HOT` indices [10].
    """
    u = state.units
    cls = u.class_id
    left = spawn_left(state.swap)[team * TEAM_SIZE]
    # Each unit's last target, renamed from its own roster naming into the team's naming.
    named = absolute_target(u.last_target)
    renamed = jnp.where(named >= 0, jnp.asarray(RELATIVE_INDEX[team * TEAM_SIZE])[named], 0)
    values = {
        "alive": u.alive, "x": _frame_x(u.pos[:, 0], left), "y": u.pos[:, 1],
        "health": u.health, "max_health": lookup(C.MAX_HEALTH, cls), "shield": u.shield,
        "stun": u.stun, "trap": u.trap, "slow_charge": u.slow_charge,
        "slow_hunter": u.slow_hunter, "slow_poison": u.slow_poison, "antiheal": u.antiheal,
        "freedom": u.freedom, "burst": u.burst, "cooldown": u.cooldown, "recovery": u.recovery,
        "speed": movement_speed(u, state.rules.shield_speed) * u.alive,
        "sight": lookup(C.SIGHT, cls), "basic_range": lookup(C.BASIC_RANGE, cls),
        "ultimate_range": lookup(C.ULT_RANGE, cls),
        "basic_amount": lookup(C.BASIC_DAMAGE + C.BASIC_HEAL, cls),
        "ultimate_amount": lookup(C.ULT_DAMAGE + C.ULT_HEAL, cls),
        "last_ultimate": u.last_ult,
    }  # fmt: skip
    table = jnp.stack([values[name].astype(jnp.float32) for name in _PER_UNIT])
    indices = {
        "class_onehot": cls - 1,
        "last_move": jnp.where(left, u.last_move, jnp.asarray(MIRROR_MOVE)[u.last_move]),
        "last_target": renamed,
    }
    return table, indices


def _public_columns(state: GameState, team: int) -> dict[str, jnp.ndarray]:
    """Every `PublicContext` field but `self_slot`, as `team` reads it, each float32 [width]."""
    u, r, o = state.units, state.rules, state.obstacles
    left = spawn_left(state.swap)[team * TEAM_SIZE]
    own_first = (lambda a: a) if team == 0 else (lambda a: a[::-1])
    rows = (lambda a: a) if team == 0 else (lambda a: jnp.roll(a, TEAM_SIZE, axis=0))
    sizes = jnp.stack([jnp.sum(u.class_id[:TEAM_SIZE] > 0), jnp.sum(u.class_id[TEAM_SIZE:] > 0)])
    pads_x = jnp.where(jnp.arange(10) < TEAM_SIZE, SPAWN_PAD_X, MAP_WIDTH - SPAWN_PAD_X)
    live = o.live_kind > 0  # an inactive obstacle is shown as an empty slot
    ox = jnp.where(live, _frame_x(o.center[:, 0], left), 0.0)
    zero = lambda a: jnp.where(live.reshape(-1, *[1] * (a.ndim - 1)), a, 0.0)  # noqa: E731
    values = {
        "tick": state.tick, "tick_limit": r.tick_limit, "winning_score": r.winning_score,
        "red_zone_depth": r.red_zone_depth, "score": own_first(state.score),
        "team_size": own_first(sizes), "wave_countdown": own_first(state.wave),
        "wave_period": r.wave_period, "shield_ticks": r.shield_ticks,
        "roster_class": rows(u.class_id), "roster_alive": rows(u.alive),
        "roster_shield": rows(u.shield),
        "spawn_pads": jnp.stack([pads_x, jnp.asarray(PAD_Y)], axis=-1),
        "obstacle_kind": o.live_kind,
        "obstacle_center": jnp.stack([ox, zero(o.center[:, 1])], axis=-1),
        "obstacle_size": zero(o.size), "obstacle_theta": zero(jnp.where(left, o.theta, -o.theta)),
    }  # fmt: skip
    return {name: jnp.reshape(v.astype(jnp.float32), (-1,)) for name, v in values.items()}


@pytree_dataclass
class ViewBlocks(PyTree):
    """The views of a game's 10 agents as a few dense blocks, leading axes [team, agent] = [2, 5]
    (or none: one agent's cut, `_agent_blocks`).

    Both the structured `AgentView` and the flat vector are cut from these; building the flat
    vector from a handful of blocks instead of ~50 fields is what keeps observations cheap.
    """

    per_agent: jnp.ndarray  # [2, 5, 7, 10]: the `_PER_AGENT` fields
    per_unit: jnp.ndarray  # [2, 5, U, 10]: the `_PER_UNIT` fields, hidden rows zero
    one_hot: dict[str, jnp.ndarray]  # {field: [2, 5, 10, k]}, hidden rows zero
    public: jnp.ndarray  # [2, 5, P]: `_public_columns` concatenated
    self_slot: jnp.ndarray  # [2, 5, 5]
    seen_by: jnp.ndarray  # [2, 5, 5, 10]
    messages: jnp.ndarray  # [2, 5, 5, M]


@pytree_dataclass
class ViewPieces(PyTree):
    """What a game's 10 views are cut from, before anything is copied per agent: the per-unit
    values and one-hot codes once per team, with each agent's mask of what it sees."""

    visible: jnp.ndarray  # bool [2, 5, 10]: row r is visible to agent (team, k)
    per_agent: jnp.ndarray  # [2, 5, 7, 10]: the `_PER_AGENT` fields
    per_unit: jnp.ndarray  # [2, U, 10]: the `_PER_UNIT` fields of every row, in each team's terms
    one_hot: dict[str, jnp.ndarray]  # {field: [2, 10, k]}, every row
    public: jnp.ndarray  # [2, P]
    seen_by: jnp.ndarray  # [2, 5, 5, 10]
    messages: jnp.ndarray  # [2, 5, 5, M]


def view_pieces(state: GameState, shared_sight: bool = True, full: bool = False) -> ViewPieces:
    """The pieces of all 10 agents' views of one game (`full`: every unit visible)."""
    seen = perceive(state)
    u = state.units
    f32 = lambda a: a.astype(jnp.float32)  # noqa: E731
    is_self = jnp.asarray(IS_SELF)
    if full:
        vis = _rows(u.class_id > 0)
    else:
        sight = seen.team_sight if shared_sight else seen.own_sight
        vis = _agents(observer_columns(sight)) | is_self
    own = _agents(observer_columns(seen.own_sight)) | is_self
    z = lambda a: jnp.where(vis, a, jnp.zeros_like(a))  # noqa: E731

    tables, indices = zip(*(_unit_columns(state, team) for team in (0, 1)), strict=True)
    x = _to_agents(_by_team(*(t[_PER_UNIT.index("x")] for t in tables)))
    self_x = _agents(_frame_x(u.pos[:, 0], spawn_left(state.swap)))[..., None]
    per_agent = {
        "visible": f32(vis),
        "seen_directly": f32(own & vis),
        "is_self": f32(jnp.broadcast_to(is_self, vis.shape)),
        "is_ally": f32(jnp.arange(10) < TEAM_SIZE) * f32(vis),
        "dx": z(x - self_x),
        "dy": z(_rows(u.pos[:, 1]) - _agents(u.pos[:, 1])[..., None]),
        "distance": z(_agents(observer_columns(seen.dist))),
    }
    public = [jnp.concatenate(list(_public_columns(state, team).values())) for team in (0, 1)]
    # Own roster slot k (of the agent's team) sees row r directly, in the team's row order.
    mates_see = observer_columns(seen.own_sight) & u.alive[:, None]
    seen_by = _to_agents(mates_see.reshape(2, TEAM_SIZE, 10))
    if not shared_sight:
        # Without shared sight, teammates' sight is not the agent's to know: only its own row.
        seen_by = seen_by & jnp.asarray(SELF_SLOT, bool)[..., None]
    if full:
        seen_by = seen_by | True
    return ViewPieces(
        visible=vis,
        per_agent=jnp.stack([per_agent[name] for name in _PER_AGENT], axis=2),
        # Rows last, the layout of the flat vector (no transposes).
        per_unit=jnp.stack([tables[0], jnp.roll(tables[1], TEAM_SIZE, axis=-1)]),
        one_hot={  # [2 teams, 10 rows, k]
            name: _by_team(*(f32(ix[name][:, None] == jnp.arange(k)) for ix in indices))
            for name, k in _ONE_HOT.items()
        },
        public=jnp.stack(public),
        seen_by=f32(seen_by),
        messages=_to_agents(state.messages.reshape(2, TEAM_SIZE, -1)),
    )


def _cut(
    p: ViewPieces,
    team_part: Callable[[jnp.ndarray], jnp.ndarray],
    agent_part: Callable[[jnp.ndarray], jnp.ndarray],
) -> ViewBlocks:
    """Blocks cut from the pieces, hidden rows zeroed: `team_part` takes a per-team piece to the
    agents' axes, `agent_part` picks from a per-agent piece (all agents, or one)."""
    vis = agent_part(p.visible)
    return ViewBlocks(
        per_agent=agent_part(p.per_agent),
        per_unit=jnp.where(vis[..., None, :], team_part(p.per_unit), 0.0),
        one_hot={k: jnp.where(vis[..., None], team_part(c), 0.0) for k, c in p.one_hot.items()},
        public=team_part(p.public),
        self_slot=agent_part(jnp.asarray(SELF_SLOT)),
        seen_by=agent_part(p.seen_by),
        messages=agent_part(p.messages),
    )


def view_blocks(state: GameState, shared_sight: bool = True, full: bool = False) -> ViewBlocks:
    """The dense blocks of all 10 agents' views of one game (`full`: every unit visible)."""
    return _cut(view_pieces(state, shared_sight, full), _to_agents, lambda a: a)


def _agent_blocks(p: ViewPieces, team: int, agent: int) -> ViewBlocks:
    """One agent's cut of the blocks (no leading axes), straight from the pieces, so that XLA
    writes the agent's flat vector without blocks of all ten agents in between."""
    return _cut(p, lambda a: a[team], lambda a: a[team, agent])


def _public_widths() -> dict[str, int]:
    """Width of each per-team public field, in the order of the `public` block."""
    return {
        path.removeprefix("public."): width
        for path, width in view_field_names()
        if path.startswith("public.") and path != "public.self_slot"
    }


def agent_views(state: GameState, shared_sight: bool = True, full: bool = False) -> AgentView:
    """Views of all 10 slots of one game, stacked on a leading slot axis."""
    b = jax.tree.map(lambda a: a.reshape(10, *a.shape[2:]), view_blocks(state, shared_sight, full))
    units = {name: b.per_agent[:, k] for k, name in enumerate(_PER_AGENT)}
    units |= {name: b.per_unit[:, k] for k, name in enumerate(_PER_UNIT)}
    public, start = {}, 0
    for name, width in _public_widths().items():
        public[name] = b.public[:, start : start + width]
        start += width
    shapes = {
        "spawn_pads": (10, 2),
        "obstacle_center": (MAX_OBSTACLES, 2),
        "obstacle_size": (MAX_OBSTACLES, 2),
    }
    public = {
        name: v[:, 0] if v.shape[1] == 1 else v.reshape(10, *shapes.get(name, (-1,)))
        for name, v in public.items()
    }
    return AgentView(
        units=UnitRows(**units, **b.one_hot),
        public=PublicContext(**public, self_slot=b.self_slot),
        seen_by=b.seen_by,
        messages=b.messages,
    )


def _rows_parts(p: ViewPieces) -> list[list[jnp.ndarray]]:
    """Each slot's blocks in the order of its flat vector, each [width], cut straight from the
    pieces (no blocks of all ten agents in between)."""
    rows = []
    for team in range(2):
        for agent in range(TEAM_SIZE):
            b = _agent_blocks(p, team, agent)
            blocks = [b.per_agent, b.per_unit, *b.one_hot.values(), b.public, b.self_slot]
            rows.append([jnp.reshape(x, -1) for x in (*blocks, b.seen_by, b.messages)])
    return rows


def flat_views(state: GameState, shared_sight: bool = True, full: bool = False) -> jnp.ndarray:
    """The flat vectors [10, D] of one game: `flatten_view(agent_views(...))`, built faster. One
    concatenation of the ten rows' parts, so XLA writes each value once (stacking ten rows, or
    concatenating blocks of all ten agents, writes everything twice)."""
    rows = _rows_parts(view_pieces(state, shared_sight, full))
    return jnp.concatenate([part for row in rows for part in row]).reshape(10, -1)


def agent_flat_views(
    state: GameState, shared_sight: bool = True, full: bool = False
) -> tuple[jnp.ndarray, ...]:
    """The rows of `flat_views`, one [D] per slot, each concatenated on its own from the pieces
    (a per-agent dict then needs no slicing copies of a stacked array)."""
    return tuple(
        jnp.concatenate(row) for row in _rows_parts(view_pieces(state, shared_sight, full))
    )


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
    for f in dataclasses.fields(UnitRows):
        out.append((f"units.{f.name}", 10 * _ONE_HOT.get(f.name, 1)))
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
