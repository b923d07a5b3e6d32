"""The batched Team Deathmatch environment: JaxMARL-style calls with a leading `num_envs` axis.

The environment owns no rule: it batches `transition`, builds views, masks and rewards from the
engine's functions, and restarts finished games in place. Compiled programs are shared between
environments with the same shapes, so a new map, roster, score limit or spawn swap never
recompiles.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from marl_bgs import maps as maps_registry
from marl_bgs.actions import ActionMasks, action_masks, flatten, sample_legal, unflatten
from marl_bgs.config import SPAWN_SWAPS, ConfigError, RuleValues, parse_rosters
from marl_bgs.constants import NUM_ACTIONS, NUM_MOVES, NUM_SLOTS, NUM_TARGETS, NUM_ULTIMATE
from marl_bgs.observation_space import observation_bounds
from marl_bgs.perception import perceive
from marl_bgs.reset import draw_start, start_from_pool, start_pool
from marl_bgs.spaces import Box, Discrete, MultiDiscrete
from marl_bgs.state import GameState
from marl_bgs.transition import transition
from marl_bgs.views import AgentView, agent_views, flat_views

AGENTS = tuple(f"a_{i}" for i in range(5)) + tuple(f"b_{i}" for i in range(5))


@partial(jax.jit, static_argnames=("shared_sight", "full"))
def _observe(state: GameState, shared_sight: bool, full: bool = False) -> jnp.ndarray:
    return jax.vmap(lambda s: flat_views(s, shared_sight, full))(state)


@partial(jax.jit, static_argnames=("shared_sight",))
def _views(state: GameState, shared_sight: bool) -> AgentView:
    return jax.vmap(lambda s: agent_views(s, shared_sight))(state)


@jax.jit
def _masks(state: GameState) -> ActionMasks:
    return jax.vmap(lambda s: action_masks(s, perceive(s)))(state)


@jax.jit
def _sample(key: jax.Array, state: GameState) -> jnp.ndarray:
    # Game g's key depends only on (key, g), never on the batch size.
    keys = jax.vmap(lambda g: jax.random.fold_in(key, g))(jnp.arange(state.tick.shape[0]))
    return jax.vmap(sample_legal)(keys, _masks(state))


@partial(jax.jit, static_argnames=("num_envs", "spawn_swap", "message_dim"))
def _reset(key, pool, num_envs, spawn_swap, message_dim):
    games = jnp.arange(num_envs)
    return jax.vmap(lambda g: draw_start(key, pool, g, jnp.int32(0), spawn_swap, message_dim))(
        games
    )


@partial(jax.jit, static_argnames=("spawn_swap", "message_dim"))
def _reset_done(key, state, pool, spawn_swap, message_dim):
    games = jnp.arange(state.tick.shape[0])
    fresh = jax.vmap(lambda g, e: draw_start(key, pool, g, e + 1, spawn_swap, message_dim))(
        games, state.episode
    )
    done = state.outcome != 0
    pick = lambda new, old: jnp.where(done.reshape(-1, *[1] * (old.ndim - 1)), new, old)  # noqa: E731
    return jax.tree.map(pick, fresh, state)


@partial(jax.jit, static_argnames=("message_dim",))
def _start(pool, map_index, roster_index, swap, episode, message_dim):
    def one(m, r, w, e):
        return start_from_pool(pool, m, r, w, e, message_dim)

    return jax.vmap(one)(map_index, roster_index, swap, episode)


_step = jax.jit(jax.vmap(transition))


class TeamDeathmatch:
    """Team Deathmatch (`tdm-v1`): `num_envs` games of up to 5 v 5 agents, stepped together."""

    mode = "tdm-v1"
    agents: tuple[str, ...] = AGENTS
    num_agents = NUM_SLOTS

    def __init__(
        self,
        *,
        map_id: Any = 0,
        num_envs: int = 1,
        rosters: Any = None,
        winning_score: int = 20,
        tick_limit: int = 300,
        red_zone_depth: float = 5.0,
        wave_period: int = 5,
        shield_ticks: int = 3,
        shield_speed: float = 2.0,
        spawn_swap: str = "half",
        shared_sight: bool = True,
        message_dim: int = 0,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ConfigError(f"num_envs: expected a positive integer, got {num_envs!r}")
        if spawn_swap not in SPAWN_SWAPS:
            raise ConfigError(
                f"spawn_swap: expected one of {list(SPAWN_SWAPS)}, got {spawn_swap!r}"
            )
        if not isinstance(shared_sight, bool):
            raise ConfigError(f"shared_sight: expected True or False, got {shared_sight!r}")
        if (
            isinstance(message_dim, bool)
            or not isinstance(message_dim, int)
            or not (0 <= message_dim <= 64)
        ):
            raise ConfigError(f"message_dim: expected an integer in [0, 64], got {message_dim!r}")
        refs = list(map_id) if isinstance(map_id, list | tuple) else [map_id]
        if not refs:
            raise ConfigError("map_id: expected a map or a non-empty list of maps")
        self.maps = [maps_registry.load(r) for r in refs]
        self.rule_values = RuleValues(
            winning_score=winning_score,
            tick_limit=tick_limit,
            red_zone_depth=red_zone_depth,
            wave_period=wave_period,
            shield_ticks=shield_ticks,
            shield_speed=shield_speed,
        )
        self.rosters = parse_rosters(rosters)
        self.num_envs = num_envs
        self.spawn_swap = spawn_swap
        self.shared_sight = shared_sight
        self.message_dim = message_dim
        obstacles = maps_registry.stack_obstacles(self.maps)
        obstacles = jax.tree.map(jnp.asarray, obstacles)
        self.pool = start_pool(
            obstacles,
            map_ids=jnp.asarray(
                [m.id if m.split != "custom" else -1 for m in self.maps], jnp.int32
            ),
            rosters=jnp.asarray(self.rosters),
            rules=self.rule_values.to_rules(),
        )
        low, high = observation_bounds(message_dim)
        self._obs_space = Box(low=low, high=high)

    # --- spaces -------------------------------------------------------------------------------
    @property
    def obs_size(self) -> int:
        """Length of each agent's flat observation vector."""
        return self._obs_space.shape[0]

    def observation_space(self, agent: str) -> Box:
        """The flat observation's bounds (the same for every agent)."""
        self._check_agent(agent)
        return self._obs_space

    def action_space(self, agent: str) -> MultiDiscrete:
        """Three heads: move (9), target (11), ultimate (2)."""
        self._check_agent(agent)
        return MultiDiscrete((NUM_MOVES, NUM_TARGETS, NUM_ULTIMATE))

    def flat_action_space(self, agent: str) -> Discrete:
        """The flattened 198-way action: (move * 11 + target) * 2 + ultimate."""
        self._check_agent(agent)
        return Discrete(NUM_ACTIONS)

    def _check_agent(self, agent: str) -> None:
        if agent not in self.agents:
            raise ConfigError(f"agent: expected one of {list(self.agents)}, got {agent!r}")

    # --- dict <-> stacked ---------------------------------------------------------------------
    def to_dict(self, stacked: jnp.ndarray) -> dict[str, jnp.ndarray]:
        """[num_envs, 10, ...] -> {agent: [num_envs, ...]}."""
        return {a: stacked[:, i] for i, a in enumerate(self.agents)}

    def stack(self, per_agent: dict[str, jnp.ndarray]) -> jnp.ndarray:
        """{agent: [num_envs, ...]} -> [num_envs, 10, ...]."""
        missing = [a for a in self.agents if a not in per_agent]
        if missing:
            raise ConfigError(f"actions: missing agent(s) {missing}")
        return jnp.stack([jnp.asarray(per_agent[a]) for a in self.agents], axis=1)

    def _action_array(self, actions: Any) -> jnp.ndarray:
        arr = self.stack(actions) if isinstance(actions, dict) else jnp.asarray(actions)
        if arr.ndim == 2:
            arr = unflatten(arr)
        if arr.shape != (self.num_envs, NUM_SLOTS, 3):
            raise ConfigError(
                f"actions: expected shape ({self.num_envs}, 10, 3) heads or ({self.num_envs}, 10)"
                f" flat indices (or a dict of agents), got {tuple(arr.shape)}"
            )
        return arr.astype(jnp.int32)

    # --- the API ------------------------------------------------------------------------------
    def reset(self, key: jax.Array) -> tuple[dict[str, jnp.ndarray], GameState]:
        """Start `num_envs` games: (obs, state)."""
        state = _reset(key, self.pool, self.num_envs, self.spawn_swap, self.message_dim)
        return self.get_obs(state), state

    def step(
        self, key: jax.Array, state: GameState, actions: Any, messages: jnp.ndarray | None = None
    ) -> tuple[dict, GameState, dict, dict, dict]:
        """Advance every game one tick: (obs, state, reward, done, info), JaxMARL's order.

        `actions`: {agent: [num_envs, 3] or [num_envs]} or an array [num_envs, 10, 3] (heads) or
        [num_envs, 10] (flat). `messages` [num_envs, 10, message_dim] reach teammates next tick.
        A finished game does not change until `reset_done`. The key is unused (the rules are
        deterministic) and kept for the JaxMARL signature.
        """
        del key
        arr = self._action_array(actions)
        if messages is None and self.message_dim > 0:
            # No messages sent this tick: teammates receive none next tick (not stale ones).
            messages = jnp.zeros((self.num_envs, NUM_SLOTS, self.message_dim), jnp.float32)
        if messages is None:
            nxt, reward, facts = _step(state, arr)
        else:
            shape = (self.num_envs, NUM_SLOTS, self.message_dim)
            if tuple(messages.shape) != shape:
                raise ConfigError(f"messages: expected shape {shape}, got {tuple(messages.shape)}")
            nxt, reward, facts = _step(state, arr, messages)
        done = nxt.outcome != 0
        dones = dict.fromkeys(self.agents, done) | {"__all__": done}
        info = {"facts": facts, "outcome": nxt.outcome, "episode": nxt.episode, "tick": nxt.tick}
        return self.get_obs(nxt), nxt, self.to_dict(reward), dones, info

    def reset_done(self, key: jax.Array, state: GameState) -> tuple[dict, GameState]:
        """Restart only finished games (next episode, spawn ends per `spawn_swap`): (obs, state)."""
        nxt = _reset_done(key, state, self.pool, self.spawn_swap, self.message_dim)
        return self.get_obs(nxt), nxt

    def start_games(
        self,
        map_index: jnp.ndarray,
        roster_index: jnp.ndarray,
        swap: jnp.ndarray,
        episode: jnp.ndarray | None = None,
    ) -> GameState:
        """Start states chosen per game [num_envs]: an index into this env's maps and rosters,
        and the spawn swap. For evaluation schedules that fix every game's setting."""
        n = self.num_envs
        ep = jnp.zeros(n, jnp.int32) if episode is None else jnp.asarray(episode, jnp.int32)
        args = [jnp.asarray(a) for a in (map_index, roster_index, swap)]
        for name, a in zip(("map_index", "roster_index", "swap"), args, strict=True):
            if a.shape != (n,):
                raise ConfigError(f"{name}: expected shape ({n},), got {tuple(a.shape)}")
        return _start(
            self.pool, args[0].astype(jnp.int32), args[1].astype(jnp.int32),
            args[2].astype(bool), ep, self.message_dim,
        )  # fmt: skip

    def get_obs(self, state: GameState) -> dict[str, jnp.ndarray]:
        """Each agent's flat permitted observation {agent: [num_envs, obs_size]}."""
        return self.to_dict(self.observe(state))

    def observe(self, state: GameState) -> jnp.ndarray:
        """Stacked flat observations [num_envs, 10, obs_size]."""
        return _observe(state, self.shared_sight)

    def views(self, state: GameState) -> AgentView:
        """Structured views of every agent [num_envs, 10, ...] (the flat vector's source)."""
        return _views(state, self.shared_sight)

    def team_views(self, state: GameState, team: int) -> AgentView:
        """Structured views of one team's agents [num_envs, 5, ...] (0: team A, 1: team B)."""
        if team not in (0, 1):
            raise ConfigError(f"team: expected 0 (team A) or 1 (team B), got {team!r}")
        return jax.tree.map(lambda a: a[:, 5 * team : 5 * team + 5], self.views(state))

    def global_state(self, state: GameState) -> jnp.ndarray:
        """Critic-only state [num_envs, 10, obs_size]: each agent's frame, every unit visible."""
        return _observe(state, self.shared_sight, full=True)

    def action_masks(self, state: GameState) -> ActionMasks:
        """Exact legal-action masks [num_envs, 10, ...] in each agent's own frame."""
        return _masks(state)

    def get_avail_actions(self, state: GameState) -> dict[str, jnp.ndarray]:
        """Legal flat actions {agent: bool [num_envs, 198]} (JaxMARL's name)."""
        return self.to_dict(self.action_masks(state).flat)

    def sample_actions(self, key: jax.Array, state: GameState) -> dict[str, jnp.ndarray]:
        """Uniform random legal actions {agent: [num_envs, 3]} (move; then a legal pair)."""
        return self.to_dict(_sample(key, state))

    @staticmethod
    def flatten_actions(actions: jnp.ndarray) -> jnp.ndarray:
        """Heads [..., 3] -> flat indices [...]."""
        return flatten(actions)


def batch_states(states: list[GameState]) -> GameState:
    """Stack single-game states (e.g. authored ones) into a batch [len(states), ...]."""
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *states)
