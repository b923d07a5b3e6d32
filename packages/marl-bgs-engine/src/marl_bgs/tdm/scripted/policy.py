"""The scripted teams as team policies under the engine's team contract (see `marl_bgs.core.team`).

Each reads only its team's `TeamInputs` (views and masks), is deterministic (keys unused) and
keeps a small memory per game: the enemy health it saw last tick (to spot healed targets) and
its agents' steering memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.checks import did_you_mean, shown
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.geometry import length
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.core.team import Policy, TeamInputs
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.scripted import combat, route, steering
from marl_bgs.tdm.scripted.picture import Picture, obstacles_seen, picture
from marl_bgs.tdm.scripted.styles import STYLES, Style, style_numbers


@pytree_dataclass
class Memory(PyTree):
    """One game's memory of a scripted team."""

    last_health: jnp.ndarray  # float32 [10]: health of each row last tick, -1 where unseen
    enemy_pos: jnp.ndarray  # float32 [10, 2]: where each row was last seen alive
    enemy_age: jnp.ndarray  # int32 [10]: ticks since then (FORGET: not remembered)
    quiet: jnp.ndarray  # int32 []: ticks in a row without any enemy to fight or hunt
    steering: steering.Steering
    ready: jnp.ndarray  # bool []: `grid` has been worked out for this game's map
    grid: route.Terrain  # the map's points and passable steps (`route.terrain`)
    field: jnp.ndarray  # float32 [20, 10]: walking distance to the team's goal


# Enemies seen this many ticks ago are no longer hunted where they were.
FORGET = 20
# After this many quiet ticks a team searches the enemy's end of the map.
QUIET = 25
# Agents this close to where an enemy was last seen would see it if it were still there.
ARRIVED = 2.0


def _start(key: jax.Array) -> Memory:
    del key
    return Memory(
        last_health=jnp.full(10, -1.0, jnp.float32),
        enemy_pos=jnp.zeros((10, 2), jnp.float32),
        enemy_age=jnp.full(10, FORGET, jnp.int32),
        quiet=jnp.int32(0),
        steering=steering.start_steering(),
        ready=jnp.bool_(False),
        grid=route.empty_terrain(),
        field=route.start_field(),
    )


def _remember(p: Picture, memory: Memory) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """(enemy_pos, enemy_age, lead): last sightings updated, and the freshest one to hunt
    ([2], NaN when none)."""
    seen = p.enemy & p.alive & (p.shield == 0)
    pos = jnp.where(seen[:, None], p.pos, memory.enemy_pos)
    age = jnp.where(seen, 0, jnp.minimum(memory.enemy_age + 1, FORGET))
    mine = p.alive & ~p.enemy
    gap = length(pos[:, None] - p.pos[None, :])
    visited = jnp.any(mine[None, :] & (gap < ARRIVED), axis=1) & ~seen
    age = jnp.where(visited | (p.known & ~p.alive) | ~p.enemy, FORGET, age)
    fresh = jnp.argmin(age)
    lead = jnp.where(age[fresh] < FORGET, pos[fresh], jnp.nan)
    return pos, age, lead


def decide(
    style: Style, p: Picture, masks: Any, memory: Memory, ends: jax.Array
) -> tuple[jax.Array, Memory]:  # fmt: skip
    """One game's actions [5, 3] (own frame) and memory from the team's picture, its action
    masks and where each move would end (`steering.move_ends`), without the game axis."""
    target, ult = combat.choose(p, masks.pair, memory.last_health, style)
    enemy_pos, enemy_age, lead = _remember(p, memory)
    calm = ~jnp.any(combat.threats(p)) & jnp.isnan(lead[0])
    quiet = jnp.where(calm, jnp.minimum(memory.quiet + 1, QUIET), 0)
    goal, wanted, team_goal = steering.goals(p, style, lead, quiet >= QUIET)
    field = route.relax(memory.field, memory.grid, team_goal)
    move, steer = steering.choose(
        p, masks.move, memory.steering, style, goal, wanted, team_goal, field, memory.grid, ends
    )
    seen = jnp.where(p.known, p.health, -1.0)
    actions = jnp.stack([move, target, ult], axis=-1)
    kept = (steer, memory.ready, memory.grid, field)
    return actions, Memory(seen, enemy_pos, enemy_age, quiet, *kept)


def _obstacles(views: Any) -> Any:
    return obstacles_seen(views.public)


def _style(name: str) -> Style:
    if name not in STYLES:
        hint = did_you_mean(name, STYLES)
        raise ConfigError(
            f"name: unknown scripted team {shown(name)}{hint}; allowed: {sorted(STYLES)}"
        )
    return STYLES[name]


def _act_as(style: Style) -> Callable[[jax.Array, Memory, TeamInputs], tuple[jax.Array, Memory]]:
    """The team policy's `act` for `style`, whose numbers may be constants or traced arrays."""

    def act(keys: jax.Array, memory: Memory, inputs: TeamInputs) -> tuple[jax.Array, Memory]:
        del keys
        grid = route.prepare(memory.ready, memory.grid, jax.vmap(_obstacles)(inputs.views))
        memory = memory.replace(ready=jnp.ones_like(memory.ready), grid=grid)
        p = jax.vmap(picture)(inputs.views)
        me, speed = p.pos[:, :TEAM_SIZE], p.speed[:, :TEAM_SIZE]
        ends = steering.move_ends(me, speed, p.obstacles, grid[2])
        return jax.vmap(lambda *a: decide(style, *a))(p, inputs.masks, memory, ends)

    return act


def scripted_policy(name: str) -> Policy:
    """The scripted team `name`: "tdm-alpha", "tdm-beta", "tdm-gamma" or "rush" (its style's
    numbers are constants of the compiled program)."""
    return Policy(name=name, act=_act_as(_style(name)), init=_start)


# The scripted teams that differ only in their style's numbers (all but rush).
SHARED = tuple(name for name, style in STYLES.items() if not style.rush)


def scripted_numbers(name: str) -> dict[str, np.ndarray]:
    """The numbers of the scripted team `name` (one of `SHARED`), for `scripted_act`."""
    style = _style(name)
    if style.rush:
        raise ConfigError(f"name: {name!r} plays by its own rules; expected one of {list(SHARED)}")
    return style_numbers(style)


def scripted_act(
    numbers: dict[str, Any], keys: jax.Array, memory: Memory, inputs: TeamInputs
) -> tuple[jax.Array, Memory]:  # fmt: skip
    """A scripted team's `act` whose style is `numbers` (`scripted_numbers`, possibly traced):
    one compiled program plays TDM-Alpha, TDM-Beta and TDM-Gamma, each given its numbers, and
    plays each exactly as `scripted_policy` does."""
    _check_numbers(numbers)
    style = replace(STYLES[SHARED[0]], name="scripted", **numbers)
    return _act_as(style)(keys, memory, inputs)


def _check_numbers(numbers: dict[str, Any]) -> None:
    """Refuse numbers that are not a style's: other names, or other shapes than
    `scripted_numbers` gives (a short `class_bonus` would be read past its end)."""
    want = style_numbers(STYLES[SHARED[0]])
    if not isinstance(numbers, dict) or set(numbers) != set(want):
        got = sorted(numbers) if isinstance(numbers, dict) else type(numbers).__name__
        raise ConfigError(f"numbers: expected a dict of {list(want)}, got {got}")
    for k, v in want.items():
        if np.shape(numbers[k]) != v.shape:
            raise ConfigError(f"numbers.{k}: expected shape {v.shape}, got {np.shape(numbers[k])}")


def scripted_init(numbers: dict[str, Any], key: jax.Array) -> Memory:
    """One game's memory of the team `scripted_act` plays (the same for every style)."""
    del numbers
    return _start(key)
