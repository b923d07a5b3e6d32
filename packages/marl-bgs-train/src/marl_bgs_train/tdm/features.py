"""Team Deathmatch's added network inputs: besides the flat observation times `input_scale`,
optionally features worked out from that observation alone (so a policy still reads only its
permitted view).

`free_paths`: how far the agent could walk straight in each of N evenly spaced directions
before its body touches an obstacle or the map border (the engine's exact body sweep over the
obstacles its observation lists), as a fraction of the map's width. A network reading raw
obstacle slots must learn geometry from coordinates; these distances say where the way is open.

`route_field`: how far the agent has to walk to reach the enemy's side of the map (the field's
last column in its own frame, where the enemy spawns), and how much nearer or farther each of
its eight moves would take it. The walking distances come from the scripted teams' route grid
(`marl_bgs.tdm.scripted.route`) built from the obstacles the observation lists; they are a
constant of the map, so each game's field is worked out on its first tick and kept in the
team's feature memory (`remember_route`), and every tick reads it at the agent's position.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import BODY_RADIUS, MAP_WIDTH, MAX_OBSTACLES, MOVE_VECTORS
from marl_bgs.core.geometry import (
    Obstacles,
    length,
    make_obstacles,
    near_obstacles,
    sweep_reach,
)
from marl_bgs.core.movement import path_past
from marl_bgs.tdm.scripted import route
from marl_bgs.tdm.views import view_field_names
from marl_bgs_train.tdm.game import TDMGame


def _offsets() -> dict[str, int]:
    """Where each block of the flat observation starts."""
    names = view_field_names()
    starts = np.cumsum([0] + [width for _, width in names])
    return {name: int(start) for (name, _), start in zip(names, starts[:-1], strict=True)}


_AT = _offsets()
UNITS = 10  # unit rows of a view


def _block(obs: jax.Array, name: str, width: int) -> jax.Array:
    return obs[..., _AT[name] : _AT[name] + width]


def _obstacles(obs: jax.Array) -> Obstacles:
    """The obstacles a flat observation [..., D] lists, in the agent's own frame."""
    lead = obs.shape[:-1]
    kind = _block(obs, "public.obstacle_kind", MAX_OBSTACLES).astype(jnp.int32)
    pairs = lambda name: _block(obs, name, 2 * MAX_OBSTACLES).reshape(*lead, MAX_OBSTACLES, 2)  # noqa: E731
    return make_obstacles(
        kind, pairs("public.obstacle_center"), pairs("public.obstacle_size"),
        _block(obs, "public.obstacle_theta", MAX_OBSTACLES),
    )  # fmt: skip


def _own(obs: jax.Array, name: str) -> jax.Array:
    """The agent's own value [...] of a unit block (`units.x`, say) of flat observations."""
    return jnp.sum(_block(obs, "units.is_self", UNITS) * _block(obs, name, UNITS), axis=-1)


def _position(obs: jax.Array) -> jax.Array:
    """The agent's own position [..., 2] (its frame) from flat observations [..., D]."""
    return jnp.stack([_own(obs, "units.x"), _own(obs, "units.y")], axis=-1)


def free_paths(obs: jax.Array, directions: int) -> jax.Array:
    """float32 [..., directions] from flat observations [..., D]: the share of the map's width
    the agent's body can travel from where it stands in each direction (angle 2 pi k /
    directions in the agent's own frame, k = 0 east, counter-clockwise) before it touches an
    obstacle or the border."""
    at = _position(obs)
    lead = obs.shape[:-1]
    angle = 2.0 * jnp.pi * jnp.arange(directions) / directions
    px = jnp.broadcast_to(jnp.cos(angle) * MAP_WIDTH, (*lead, directions))
    py = jnp.broadcast_to(jnp.sin(angle) * MAP_WIDTH, (*lead, directions))
    return sweep_reach(at[..., 0], at[..., 1], px, py, _obstacles(obs))


ROUTE_WIDTH = len(MOVE_VECTORS)  # the distance here, then its change for each of moves 1-8
ROUTE_LIMIT = 1.5  # changes are clipped to +-1.5 map units (more than a tick's move at any speed)
_ROUTE_ROUNDS = 64  # at most 64 x `route.SWEEPS` sweeps (a route of up to 256 cells)
# A cell of the route grid stands where a body fits: its centre, the middles of its edges, the
# scripted teams' four points around the centre, its corners (a gap that a body passes only
# along a cell's edge, as Causeway's between two pillars, stays open).
ROUTE_OFFSETS = np.concatenate([
    route.OFFSETS[:1],
    np.array([(0, 0.5), (0, -0.5), (0.5, 0), (-0.5, 0)], np.float32),
    route.OFFSETS[1:],
    np.array([(0.5, 0.5), (-0.5, 0.5), (0.5, -0.5), (-0.5, -0.5)], np.float32),
])  # fmt: skip
_AROUND = tuple((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1))

# One game's route memory: each cell's point [20, 10, 2], its walking distance [20, 10] and the
# obstacles near it [20, 10, 12] (`geometry.near_table`).
RouteMemory = tuple[jax.Array, jax.Array, jax.Array]


def route_memory() -> RouteMemory:
    """One game's route memory before its field is worked out (nothing reachable)."""
    points, _, near = route.empty_terrain()
    return points, route.start_field(), near


def route_of(obs: jax.Array) -> RouteMemory:
    """One game's route memory from one agent's flat observation [D]: the grid's points and
    the walking distance from each to the enemy's side (a point of the last column is its
    straight distance to the line where the enemy's pads stand), relaxed until it settles."""
    grid = route.terrain(_obstacles(obs), ROUTE_OFFSETS)
    points, steps, _ = grid
    edge = MAP_WIDTH - BODY_RADIUS
    goal = (points[..., 0] >= MAP_WIDTH - 1.0) & jnp.any(steps < route.FAR, axis=-1)
    seed = jnp.where(goal, jnp.maximum(edge - points[..., 0], 0.0), route.FAR)

    def go_on(carry: tuple[jax.Array, jax.Array, jax.Array]) -> jax.Array:
        _, changed, rounds = carry
        return changed & (rounds < _ROUTE_ROUNDS)

    def one_round(carry: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[Any, ...]:
        field, _, rounds = carry
        after = route.sweep(field, grid, seed, route.SWEEPS)
        return after, jnp.any(after < field), rounds + 1

    start = (route.start_field(), jnp.bool_(True), jnp.int32(0))
    field, _, _ = jax.lax.while_loop(go_on, one_round, start)
    return points, field, grid[2]


def remember_route(memory: RouteMemory, start: jax.Array, obs: jax.Array) -> RouteMemory:
    """Games' route memory [n, ...] with the games that `start` [n] worked out from their
    first agent's observation (obs [n, A, D]); no work on a tick where no game starts."""
    return route.refresh(start, memory, route_of, obs[:, 0])


def route_features(obs: jax.Array, memory: RouteMemory) -> jax.Array:
    """float32 [n, A, ROUTE_WIDTH] from flat observations [n, A, D] and the games' route
    memory: the walking distance from the agent to the enemy's side as a share of the map's
    width, then for each move 1-8 (north ... southwest, own frame) how much that distance
    changes over the tick's move at the agent's speed, past the obstacles as the engine moves
    a body (`movement.path_past`: straight, else sliding; other bodies ignored), in map units,
    clipped to +-`ROUTE_LIMIT` (negative: nearer; a move that ends where no route is known
    reads +`ROUTE_LIMIT`). An agent with no walkable route reads zeros."""
    at = _position(obs)  # [n, A, 2]
    speed = _own(obs, "units.speed")
    n, agents = at.shape[:2]
    steps = jnp.asarray(MOVE_VECTORS[1:]) * speed[..., None, None]  # [n, A, 8, 2]
    starts = jnp.broadcast_to(at[..., None, :], steps.shape).reshape(n, -1, 2)
    obstacles = _obstacles(obs[:, 0])
    points, field, near = memory

    def ends(start: jax.Array, step: jax.Array, obs: Obstacles, near: jax.Array) -> jax.Array:
        vx, vy, reach = path_past(start, step, obs, near)
        return start + reach[:, None] * jnp.stack([vx, vy], axis=-1)

    end = jax.vmap(ends)(starts, steps.reshape(n, -1, 2), obstacles, near)
    walk = jax.vmap(_walking)
    here = walk(points, field, near, obstacles, at)
    there = walk(points, field, near, obstacles, end).reshape(n, agents, -1)
    reach = here < route.FAR
    change = jnp.clip(there - here[..., None], -ROUTE_LIMIT, ROUTE_LIMIT)
    out = jnp.concatenate([(here / MAP_WIDTH)[..., None], change], axis=-1)
    return jnp.where(reach[..., None], out, 0.0)


def _walking(
    points: jax.Array, field: jax.Array, near: jax.Array, obstacles: Obstacles, at: jax.Array
) -> jax.Array:
    """One game: the walking distance [...] from points `at` [..., 2] to the enemy's side, through
    the best point of its cell and the eight around it that a body at `at` walks to straight
    without touching an obstacle (FAR where none: `at` inside an obstacle, say)."""
    base = jnp.floor(at).astype(jnp.int32)
    local = near_obstacles(at[..., 0], at[..., 1], obstacles, near)
    best = jnp.full(at.shape[:-1], route.FAR, jnp.float32)
    for ox, oy in _AROUND:
        i = jnp.clip(base[..., 0] + ox, 0, points.shape[0] - 1)
        j = jnp.clip(base[..., 1] + oy, 0, points.shape[1] - 1)
        hop = points[i, j] - at
        clear = sweep_reach(at[..., 0], at[..., 1], hop[..., :1], hop[..., 1:], local)[..., 0]
        through = field[i, j] + length(hop)
        best = jnp.minimum(best, jnp.where(clear >= 1.0, through, route.FAR))
    return best


def feature_width(game: TDMGame) -> int:
    """The width of the inputs `features` adds."""
    return game.free_paths + (ROUTE_WIDTH if game.route_field else 0)


def feature_memory(game: TDMGame) -> Any:
    """One game's empty feature memory for one team: the route's, or none."""
    return route_memory() if game.route_field else ()


def remember(game: TDMGame, memory: Any, start: jax.Array, obs: jax.Array) -> Any:
    """The feature memory with the games that start this tick worked out (`TrainParts`)."""
    return remember_route(memory, start, obs) if game.route_field else memory


def features(obs: jax.Array, game: TDMGame, memory: Any) -> jax.Array:
    """The inputs a network reads besides the scaled observation [n, A, D]: the free paths in
    `game.free_paths` directions, then the route inputs with `game.route_field`
    (`TrainParts.features`)."""
    parts = [free_paths(obs, game.free_paths)]
    if game.route_field:
        parts.append(route_features(obs, memory))
    return jnp.concatenate(parts, axis=-1)
