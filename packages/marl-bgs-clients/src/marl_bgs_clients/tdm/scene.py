"""Scenes: what one picture of a game shows, read from the engine's state or one agent's view.

A `Scene` is plain numpy data in the world frame (x 0-20 to the right, y 0-10 upward): the
obstacles, Red Zones, each shown unit with its health, statuses and cooldown, last actions as
arrows, score and clock. Two builders make one, and the renderer
(`marl_bgs_clients.tdm.render`) draws any scene the same way:

- `oracle_scene(state, facts)`: everything, for the Oracle view (spectators, replays);
- `pov_scene(view, slot, swap)`: exactly what agent `slot` may know, built from its engine
  `AgentView` alone (rows it cannot see are not drawn; its frame turned back to the world's).

Nothing here recomputes a rule: values come from the state, the view, the step's facts and the
engine's class table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import BODY_RADIUS, MAP_WIDTH, MIRROR_MOVE, MOVE_VECTORS
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.tables import REL_TO_ABS, SLOT_TEAM, spawn_left, spawn_pads

STATUSES = (
    "stun", "trap", "slow_charge", "slow_hunter", "slow_poison", "antiheal", "freedom", "burst",
    "shield",
)  # fmt: skip
NO_SLOT = -1


@dataclass(frozen=True)
class UnitDraw:
    """One unit as drawn: its slot (0-4 team A, 5-9 team B) and what is known of it."""

    slot: int
    class_id: int
    x: float
    y: float
    alive: bool
    health: float
    max_health: float
    cooldown: int
    statuses: dict[str, int] = field(default_factory=dict)  # active statuses and ticks left

    @property
    def team(self) -> int:
        """0 for team A, 1 for team B."""
        return int(SLOT_TEAM[self.slot])


@dataclass(frozen=True)
class Arrow:
    """A last action: `kind` "basic" or "ultimate" from slot `actor` to slot `target` (the same
    slot for a self-cast), `amount` the damage (negative: healing) it did when known; or kind
    "move" with `target` NO_SLOT and `dx, dy` the direction moved."""

    actor: int
    target: int
    kind: str
    amount: float | None = None
    dx: float = 0.0
    dy: float = 0.0


@dataclass(frozen=True)
class Obstacle:
    """An obstacle in the world frame: kind 1 pillar (size = radius, radius), 2 wall."""

    kind: int
    x: float
    y: float
    width: float
    height: float
    theta: float


@dataclass(frozen=True)
class Scene:
    """One picture's content (see the module docstring). `observer` is the POV agent's slot or
    None for the Oracle view; `sighted` the observer's teammates whose sight it shares."""

    obstacles: tuple[Obstacle, ...]
    red_zone_depth: float
    units: tuple[UnitDraw, ...]
    arrows: tuple[Arrow, ...]
    tick: int
    tick_limit: int
    score: tuple[int, int]  # team A, team B
    winning_score: int
    a_left: bool  # team A spawns on the left edge
    observer: int | None = None
    sighted: tuple[int, ...] = ()
    caption: str = ""

    def unit(self, slot: int) -> UnitDraw | None:
        """The drawn unit in `slot`, or None if it is not shown."""
        return next((u for u in self.units if u.slot == slot), None)

    def spawn_pads(self) -> list[tuple[int, float, float]]:
        """(team, x, y) of every spawn pad (the engine's pads for this game's spawn ends)."""
        pads = np.asarray(spawn_pads(jnp.asarray(not self.a_left)))
        return [(int(SLOT_TEAM[s]), float(x), float(y)) for s, (x, y) in enumerate(pads)]

    def unit_at(self, x: float, y: float) -> int | None:
        """The slot of the living unit whose body covers world point (x, y), or None."""
        near = [(math.hypot(u.x - x, u.y - y), u.slot) for u in self.units if u.alive]
        hits = [slot for d, slot in sorted(near) if d <= BODY_RADIUS + 0.1]
        return hits[0] if hits else None


def _obstacles(kind: Any, center: Any, size: Any, theta: Any, flip: bool) -> tuple[Obstacle, ...]:
    out = []
    for k, (x, y), (w, h), t in zip(kind, center, size, theta, strict=True):
        if int(k) == 0:
            continue
        x, t = (MAP_WIDTH - float(x), -float(t)) if flip else (float(x), float(t))
        out.append(Obstacle(int(k), x, float(y), float(w), float(h), t))
    return tuple(out)


def _statuses(values: dict[str, Any], i: int) -> dict[str, int]:
    return {s: int(values[s][i]) for s in STATUSES if int(values[s][i]) > 0}


def _as_np(tree: Any) -> Any:
    import jax

    return jax.tree.map(np.asarray, tree)


def oracle_scene(state: Any, facts: Any | None = None, caption: str = "") -> Scene:
    """The whole state of one game (a `GameState` without batch axis). `facts`: the step that
    led to it (for hit amounts on the arrows), or None."""
    s = _as_np(state)
    u = s.units
    values = {k: getattr(u, k) for k in STATUSES}
    units = tuple(
        UnitDraw(
            slot=i, class_id=int(u.class_id[i]), x=float(u.pos[i, 0]), y=float(u.pos[i, 1]),
            alive=bool(u.alive[i]), health=float(u.health[i]),
            max_health=float(C.MAX_HEALTH[int(u.class_id[i])]), cooldown=int(u.cooldown[i]),
            statuses=_statuses(values, i),
        )
        for i in range(10)
        if int(u.class_id[i]) > 0
    )  # fmt: skip
    arrows = _arrows(
        slots=range(10),
        target_slot=lambda i: int(REL_TO_ABS[i, int(u.last_target[i])]),
        ult=u.last_ult,
        world_move=u.last_move,
        alive=u.alive,
        facts=None if facts is None else _as_np(facts),
    )
    ob = s.obstacles
    kind = np.where(ob.active, ob.kind, 0)
    return Scene(
        obstacles=_obstacles(kind, ob.center, ob.size, ob.theta, flip=False),
        red_zone_depth=float(s.rules.red_zone_depth),
        units=units, arrows=arrows, tick=int(s.tick), tick_limit=int(s.rules.tick_limit),
        score=(int(s.score[0]), int(s.score[1])), winning_score=int(s.rules.winning_score),
        a_left=not bool(s.swap), observer=None, caption=caption,
    )  # fmt: skip


def _arrows(
    slots: Any, target_slot: Any, ult: Any, world_move: Any, alive: Any, facts: Any | None
) -> tuple[Arrow, ...]:
    """Arrows of the last accepted actions of the living units in `slots`."""
    out = []
    for i in slots:
        if not alive[i]:
            continue
        move = int(world_move[i])
        if move:
            dx, dy = MOVE_VECTORS[move]
            out.append(Arrow(i, NO_SLOT, "move", dx=float(dx), dy=float(dy)))
        j, kind = target_slot(i), "ultimate" if int(ult[i]) else "basic"
        if j == NO_SLOT and kind == "ultimate":
            j = i  # an untargeted Ultimate (Burst) lands on the caster
        if j == NO_SLOT:
            continue
        amount = None
        if facts is not None:
            dmg = facts.damage_ultimate if kind == "ultimate" else facts.damage_basic
            heal = facts.heal_ultimate if kind == "ultimate" else facts.heal_basic
            amount = float(dmg[i, j]) - float(heal[i, j])
        out.append(Arrow(i, j, kind, amount))
    return tuple(out)


def pov_scene(view: Any, slot: int, swap: bool, caption: str = "") -> Scene:
    """What agent `slot` may know: its `AgentView` (no batch axis; rows in its roster order,
    own frame) turned into the world frame. `swap`: team A spawns on the right, which is public."""
    v = _as_np(view)
    team = int(SLOT_TEAM[slot])
    left = bool(np.asarray(spawn_left(jnp.asarray(swap, bool)))[slot])
    rows = REL_TO_ABS[slot, 1:]  # the slot each row shows
    world_x = (lambda x: float(x)) if left else (lambda x: MAP_WIDTH - float(x))
    r = v.units
    values = {k: getattr(r, k) for k in STATUSES}
    units = []
    for row, s_ in enumerate(rows):
        if not r.visible[row]:
            continue
        cls = int(v.public.roster_class[row])
        units.append(
            UnitDraw(
                slot=int(s_), class_id=cls, x=world_x(r.x[row]), y=float(r.y[row]),
                alive=bool(r.alive[row]), health=float(r.health[row]),
                max_health=float(r.max_health[row]), cooldown=int(r.cooldown[row]),
                statuses=_statuses(values, row),
            )
        )  # fmt: skip
    shown = {int(rows[row]): row for row in np.flatnonzero(r.visible)}
    by_slot = {int(s_): row for row, s_ in enumerate(rows)}

    def target_slot(s_: int) -> int:
        index = int(np.argmax(r.last_target[by_slot[s_]]))  # 0 none, 1-5 own team, 6-10 enemy
        return int(rows[index - 1]) if index else NO_SLOT

    own_moves = {s_: int(np.argmax(r.last_move[row])) for s_, row in shown.items()}
    world_move = {s_: m if left else int(MIRROR_MOVE[m]) for s_, m in own_moves.items()}
    arrows = _arrows(
        slots=list(shown), target_slot=target_slot,
        ult={s_: r.last_ultimate[row] for s_, row in shown.items()}, world_move=world_move,
        alive={s_: bool(r.alive[row]) for s_, row in shown.items()}, facts=None,
    )  # fmt: skip
    arrows = tuple(a for a in arrows if a.target == NO_SLOT or a.target in shown)
    p = v.public
    own, enemy = int(p.score[0]), int(p.score[1])
    mates = [int(rows[k]) for k in range(TEAM_SIZE) if p.roster_alive[k] and v.seen_by[k].any()]
    return Scene(
        obstacles=_obstacles(p.obstacle_kind, p.obstacle_center, p.obstacle_size,
                             p.obstacle_theta, flip=not left),
        red_zone_depth=float(p.red_zone_depth), units=tuple(units), arrows=arrows,
        tick=int(p.tick), tick_limit=int(p.tick_limit),
        score=(own, enemy) if team == 0 else (enemy, own), winning_score=int(p.winning_score),
        a_left=not bool(swap), observer=slot, sighted=tuple(mates), caption=caption,
    )  # fmt: skip
