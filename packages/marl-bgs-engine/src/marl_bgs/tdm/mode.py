"""Team Deathmatch as a `Mode` (`tdm-v2`), and `make_tdm`, what `marl_bgs.make("tdm", ...)` builds.

The mode object holds only static settings (shared sight, message width), so it is hashable and
every environment with the same settings shares compiled programs; maps, rosters and rule values
are data in the start-state pool.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from marl_bgs.core import arena
from marl_bgs.core.checks import check_bool, check_int, shown
from marl_bgs.core.env import BatchedEnv, RewardFn
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.inputs import check_indices
from marl_bgs.core.mode import ModeSpec
from marl_bgs.core.pool import StartPool, check_spawn_swap
from marl_bgs.core.pytree import batch_states
from marl_bgs.tdm import maps as maps_registry
from marl_bgs.tdm.actions import (
    ActionMasks,
    action_masks,
    can_move,
    flatten,
    sample_legal,
    unflatten,
)
from marl_bgs.tdm.config import MESSAGE_DIM_MAX, RuleValues, parse_rosters
from marl_bgs.tdm.constants import NUM_SLOTS, NUM_TARGETS, NUM_ULTIMATE, TEAM_SIZE
from marl_bgs.tdm.facts import Facts, agent_fact_summary
from marl_bgs.tdm.lifecycle import ended_by_time, terminal_reward
from marl_bgs.tdm.observation_space import observation_bounds
from marl_bgs.tdm.perception import perceive
from marl_bgs.tdm.start import entry_index, pool_from_maps
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.transition import transition
from marl_bgs.tdm.views import (
    AgentView,
    agent_flat_views,
    agent_views,
    flat_views,
    view_field_names,
)

MODE_ID = "tdm-v2"
AGENTS = tuple(f"a_{i}" for i in range(TEAM_SIZE)) + tuple(f"b_{i}" for i in range(TEAM_SIZE))
TEAMS = (tuple(range(TEAM_SIZE)), tuple(range(TEAM_SIZE, NUM_SLOTS)))


@cache
def _spec(message_dim: int) -> ModeSpec:
    """The mode's spec for a message width (built once per width)."""
    size = sum(width for _, width in view_field_names(message_dim))
    return ModeSpec(
        id=MODE_ID,
        agents=AGENTS,
        teams=TEAMS,
        action_heads=(arena.NUM_MOVES, NUM_TARGETS, NUM_ULTIMATE),
        obs_size=size,
        state_size=size,
        message_dim=message_dim,
        head_names=("move", "target", "ultimate"),
    )


@dataclass(frozen=True)
class TeamDeathmatch:
    """The Team Deathmatch rules as a `Mode`; `shared_sight` and `message_dim` are static."""

    shared_sight: bool = True
    message_dim: int = 0

    @property
    def spec(self) -> ModeSpec:
        return _spec(self.message_dim)

    def start(self, key: jax.Array, state: GameState) -> GameState:
        """A pool entry is a complete start (map, rosters, spawn ends): nothing to draw."""
        del key
        return state

    def transition(
        self, state: GameState, actions: jax.Array, messages: jax.Array | None = None
    ) -> tuple[GameState, Facts]:
        return transition(state, actions, messages)

    def reward(self, state: GameState, next_state: GameState, facts: Facts) -> jax.Array:
        return terminal_reward(state, next_state, facts)

    def truncated(self, state: GameState) -> jax.Array:
        return ended_by_time(state)

    def observe(self, state: GameState, full: bool = False) -> jax.Array:
        return flat_views(state, self.shared_sight, full)

    def observe_agents(self, state: GameState, full: bool = False) -> tuple[jax.Array, ...]:
        return agent_flat_views(state, self.shared_sight, full)

    def views(self, state: GameState) -> AgentView:
        return agent_views(state, self.shared_sight)

    def masks(self, state: GameState) -> ActionMasks:
        return action_masks(state, perceive(state))

    def sample_legal(self, key: jax.Array, masks: ActionMasks) -> jax.Array:
        return sample_legal(key, masks)

    def flatten_actions(self, actions: jax.Array) -> jax.Array:
        return flatten(actions)

    def unflatten_actions(self, flat: jax.Array) -> jax.Array:
        return unflatten(flat)

    def observation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return observation_bounds(self.message_dim)

    def agent_facts(self, facts: Facts) -> dict[str, jax.Array]:
        return agent_fact_summary(facts)

    def tick_invariants(
        self, state: GameState, next_state: GameState, facts: Facts
    ) -> dict[str, jax.Array]:
        u, n = state.units, next_state.units
        masks = action_masks(state, perceive(state))
        running = state.outcome == 0
        padded = u.class_id == 0
        still_dead = ~u.alive & ~facts.respawned
        moved = jnp.any(n.pos != u.pos, axis=-1)
        may_move = jnp.any(masks.move[:, 1:], axis=-1)
        rows, acc, req = jnp.arange(NUM_SLOTS), facts.accepted, facts.requested
        accepted_legal = masks.move[rows, acc[:, 0]] & masks.pair[rows, acc[:, 1], acc[:, 2]]
        heads = jnp.asarray(self.spec.action_heads)
        in_range = (req >= 0) & (req < heads)
        move_legal = in_range[:, 0] & masks.move[rows, jnp.clip(req[:, 0], 0, heads[0] - 1)]
        pair_legal = (
            in_range[:, 1]
            & in_range[:, 2]
            & masks.pair[rows, jnp.clip(req[:, 1], 0, heads[1] - 1), jnp.clip(req[:, 2], 0, 1)]
        )
        return {
            "stay is always legal": jnp.all(masks.move[:, 0]),
            "(none, no Ultimate) is always legal": jnp.all(masks.pair[:, 0, 0]),
            "the target head is the union of legal pairs": jnp.all(
                masks.target == masks.pair.any(-1)
            ),
            "the ultimate head is the union of legal pairs": jnp.all(
                masks.ultimate == masks.pair.any(-2)
            ),
            "only agents that can move may move": ~jnp.any(may_move & ~can_move(state)),
            "accepted actions are legal": ~jnp.any(~accepted_legal & running),
            "a move is repaired exactly when it is illegal": ~jnp.any(
                (facts.move_rejected == move_legal) & running
            ),
            "a pair is repaired exactly when it is illegal": ~jnp.any(
                (facts.combat_rejected == pair_legal) & running
            ),
            "dead agents never move": ~jnp.any(still_dead & moved),
            "padded slots keep no class": ~jnp.any(padded & (n.class_id != 0)),
            "padded slots never come alive": ~jnp.any(padded & n.alive),
        }


def load_maps(map_id: Any) -> list[maps_registry.MapSpec]:
    """Validated maps from an id, name, path or `MapSpec`, or a non-empty list of them."""
    refs = list(map_id) if isinstance(map_id, list | tuple) else [map_id]
    if not refs:
        raise ConfigError("map_id: expected a map or a non-empty list of maps")
    return [maps_registry.load(r) for r in refs]


def tdm_pool(
    map_id: Any = 0, rosters: Any = None, rules: RuleValues | None = None, *,
    message_dim: int = 0, weights: Any = None,
) -> StartPool:  # fmt: skip
    """A validated pool over maps (an id, name, path or list) x roster pairs, with rule values."""
    specs = load_maps(map_id)
    obstacles = batch_states([s.to_obstacles() for s in specs])
    ids = [s.record_id for s in specs]
    rules = rules or RuleValues()
    return pool_from_maps(
        obstacles, ids, parse_rosters(rosters), rules.to_rules(), message_dim=message_dim,
        weights=weights,
    )  # fmt: skip


class TDMEnv(BatchedEnv):
    """The batched Team Deathmatch env: a `BatchedEnv` that remembers its maps, rosters and rule
    values (what evaluation schedules and records need)."""

    def __init__(
        self, mode: TeamDeathmatch, pool: StartPool, *, maps: list[maps_registry.MapSpec],
        rosters: np.ndarray, rule_values: RuleValues, **kwargs: Any,
    ) -> None:  # fmt: skip
        super().__init__(mode, pool, **kwargs)
        self.maps, self.rosters, self.rule_values = maps, rosters, rule_values
        self.shared_sight, self.message_dim = mode.shared_sight, mode.message_dim

    def entry(self, map_index: Any, roster_index: Any) -> jax.Array:
        """The pool entry of each (map index, roster index) of this env's lists."""
        return entry_index(map_index, roster_index, len(self.rosters))

    def start_games(
        self, map_index: Any, roster_index: Any, swap: Any, episode: Any = None
    ) -> GameState:
        """Start states chosen per game [num_envs]: an index into this env's maps and rosters,
        and whether team A spawns on the right edge. For schedules that fix every game."""
        n = self.num_envs
        maps = check_indices(map_index, n, len(self.maps), "map_index")
        rosters = check_indices(roster_index, n, len(self.rosters), "roster_index")
        return self.start_entries(self.entry(maps, rosters), swap, episode)


def make_tdm(
    *,
    map_id: Any = 0,
    num_envs: int = 1,
    rosters: Any = None,
    winning_score: int = RuleValues.winning_score,
    tick_limit: int = RuleValues.tick_limit,
    red_zone_depth: float = RuleValues.red_zone_depth,
    wave_period: int = RuleValues.wave_period,
    shield_ticks: int = RuleValues.shield_ticks,
    shield_speed: float = RuleValues.shield_speed,
    spawn_swap: str = "half",
    shared_sight: bool = True,
    message_dim: int = 0,
    weights: Any = None,
    reward_fn: RewardFn | None = None,
    mesh: Mesh | None = None,
    mesh_axis: str | None = None,
    **unknown: Any,
) -> TDMEnv:
    """Team Deathmatch with `num_envs` games; every keyword is validated, errors name the field.

    `map_id`: a map id, name or file, or a list to draw from; `rosters`: a pair like
    ("MWHRP", "MWHRP") or a list of pairs; `weights`: one per (map, roster pair), map-major;
    `reward_fn(state, next_state, facts) -> [10]` shapes rewards (default: the official one);
    `mesh` (a `jax.sharding.Mesh`) splits the games over the devices of its `mesh_axis`.
    """
    if "scenario" in unknown:
        raise ConfigError(
            "scenario: not a setting of make; a scenario env (team A's agents, the scenario's "
            "controller folded in) has its own entry point: marl_bgs.make_scenario("
            f"{shown(unknown['scenario'])}, num_envs=...)"
        )
    if unknown:
        known = [k for k in inspect.signature(make_tdm).parameters if k != "unknown"]
        raise ConfigError(f"{next(iter(unknown))[:60]}: not a setting of tdm; allowed {known}")
    spawn_swap = check_spawn_swap(spawn_swap)
    shared_sight = check_bool(shared_sight, "shared_sight")
    message_dim = check_int(message_dim, "message_dim", 0, MESSAGE_DIM_MAX)
    rule_values = RuleValues(
        winning_score=winning_score, tick_limit=tick_limit, red_zone_depth=red_zone_depth,
        wave_period=wave_period, shield_ticks=shield_ticks, shield_speed=shield_speed,
    )  # fmt: skip
    specs = load_maps(map_id)
    pool = tdm_pool(specs, rosters, rule_values, message_dim=message_dim, weights=weights)
    mode = TeamDeathmatch(shared_sight=shared_sight, message_dim=message_dim)
    return TDMEnv(
        mode, pool, maps=specs, rosters=parse_rosters(rosters),
        rule_values=rule_values, num_envs=num_envs, spawn_swap=spawn_swap, reward_fn=reward_fn,
        mesh=mesh, mesh_axis=mesh_axis,
    )  # fmt: skip
