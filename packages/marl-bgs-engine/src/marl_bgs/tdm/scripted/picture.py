"""What a team knows at a decision, gathered from its agents' views (one game, own frame).

Rows follow the views: 0-4 the team's own roster slots, 5-9 the enemy's. A row is known when any
of the team's agents may see it (its own sight, or a teammate's when sight is shared); hidden rows
hold zeros. Nothing here reads the game state: only `TeamInputs.views`.
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.core.geometry import Obstacles, make_obstacles
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.views import AgentView, PublicContext


@pytree_dataclass
class Picture(PyTree):
    """One team's knowledge, rows [10] (positions [10, 2]), own frame."""

    known: jnp.ndarray  # bool: visible to some agent of the team
    alive: jnp.ndarray  # bool: known and alive
    pos: jnp.ndarray  # float32 [10, 2]
    health: jnp.ndarray
    max_health: jnp.ndarray
    class_id: jnp.ndarray  # int32, 0 where unknown
    shield: jnp.ndarray
    stun: jnp.ndarray
    trap: jnp.ndarray
    cooldown: jnp.ndarray
    speed: jnp.ndarray
    sees: jnp.ndarray  # bool [5, 10]: own agent k sees row r with its own eyes
    obstacles: Obstacles
    red_zone_depth: jnp.ndarray  # float32 []
    roster: jnp.ndarray  # bool [10]: the slot is in use (public roster)

    @property
    def frac(self) -> jnp.ndarray:
        """Health fraction of each row (0 where unknown)."""
        return self.health / jnp.maximum(self.max_health, 1.0)

    @property
    def enemy(self) -> jnp.ndarray:
        """[10] row is an enemy."""
        return jnp.arange(10) >= TEAM_SIZE


def obstacles_seen(public: PublicContext) -> Obstacles:
    """The map's active obstacles as a team reads them (own frame), from its agents' public
    context (fields [5, ...]: every agent is told the same)."""
    return make_obstacles(
        jnp.round(public.obstacle_kind[0]), public.obstacle_center[0], public.obstacle_size[0],
        public.obstacle_theta[0],
    )  # fmt: skip


def picture(view: AgentView) -> Picture:
    """The team's knowledge from its five agents' views (fields [5, ...], one game)."""
    u, pub = view.units, view.public
    visible = u.visible > 0.5  # [5 agents, 10 rows]
    known = jnp.any(visible, axis=0)
    src = jnp.argmax(visible, axis=0)  # the first agent that sees each row
    pick = lambda a: a[src, jnp.arange(10)]  # noqa: E731
    class_id = jnp.argmax(pick(u.class_onehot), axis=-1).astype(jnp.int32) + 1
    obstacles = obstacles_seen(pub)
    return Picture(
        known=known,
        alive=known & (pick(u.alive) > 0.5),
        pos=jnp.stack([pick(u.x), pick(u.y)], axis=-1),
        health=pick(u.health),
        max_health=pick(u.max_health),
        class_id=jnp.where(known, class_id, 0),
        shield=pick(u.shield),
        stun=pick(u.stun),
        trap=pick(u.trap),
        cooldown=pick(u.cooldown),
        speed=pick(u.speed),
        sees=(u.seen_directly > 0.5) & visible,
        obstacles=obstacles,
        red_zone_depth=pub.red_zone_depth[0],
        roster=pub.roster_class[0] > 0.5,
    )
